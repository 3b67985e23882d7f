#include <math.h>
#include <string.h>

#include "perf/tools/lib/report.h"

#define PERF_DASHES \
    "---------------------------------------------------------------------------------------\n"
#define PERF_MB (1024.0 * 1024.0) /* perftest's MB */

static bool perf_is_bw(const perf_result_t *r)
{
    return !perf_test_is_lat(r->opts->test);
}

void perf_report_header(const perf_result_t *r, FILE *out)
{
    const perf_options_t *o = r->opts;
    bool bw = perf_is_bw(r);

    fputs(PERF_DASHES, out);
    if (perf_test_is_atomic(o->test)) {
        fprintf(out, "                    Atomic %s %s Test (%s)\n",
                o->atomic_type == PERF_ATOMIC_CMP_AND_SWAP ? "CMP_AND_SWAP" : "FETCH_AND_ADD",
                bw ? "BW" : "Latency",
                o->atomic_type == PERF_ATOMIC_CMP_AND_SWAP ? "ibmsg_atomic_cswap64"
                                                           : "ibmsg_atomic_fetch_add64");
    } else {
        fprintf(out, "                    %s\n",
                o->test == PERF_TEST_WRITE_BW ? "RDMA Write BW Test (ibmsg_put)"
                : bw                          ? "Send BW Test (ibmsg tagged messages)"
                                              : "Send Latency Test (ibmsg tagged messages)");
    }
    fprintf(out, " Role            : %s\t\tTransport       : %s\n",
            o->host != NULL ? "client" : "server",
            o->test == PERF_TEST_WRITE_BW || perf_test_is_atomic(o->test) ? "ibmsg one-sided"
                                                                          : "ibmsg eager/rndv");
    fprintf(out, " Device          : %s\t\tib port         : %d\n", r->attr.device, r->attr.port);
    fprintf(out, " GID index       : %d\t\tMtu             : %u[B]\n", r->attr.gid_index,
            r->attr.path_mtu);
    fprintf(out, " Eager limit     : %zu[B]\tMax inline data : %zu[B]\n", r->attr.eager_limit,
            r->attr.inline_limit);
    if (bw) {
        fprintf(out, " TX depth        : %d\t\tRX depth        : %d\n", o->tx_depth, o->rx_depth);
    }
    if (o->test == PERF_TEST_SEND_BW) {
        if (o->post_list > 0) {
            fprintf(out, " Post List       : %d\n", o->post_list);
        } else {
            fprintf(out, " Post List       : library default (core_send_batch)\n");
        }
    }
    if (o->cq_mod > 0 || bw) {
        fprintf(out, " Credits         : %u\t\tCQ Moderation   : %d\n", r->attr.credits,
                o->cq_mod > 0 ? o->cq_mod : PERF_DEFAULT_CQ_MOD);
    } else {
        fprintf(out, " Credits         : %u\t\tCQ Moderation   : library default\n",
                r->attr.credits);
    }
    if (o->duration > 0) {
        fprintf(out, " Duration        : %d[s]\t\tTimer           : CLOCK_MONOTONIC\n",
                o->duration);
    } else {
        fprintf(out, " Iterations      : %ld\t\tTimer           : CLOCK_MONOTONIC\n", o->iters);
    }
    fprintf(out, " Counters        : %s\n", o->counters ? "on (--counters)" : "off");
    fputs(PERF_DASHES, out);
    if (bw) {
        fprintf(out, " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
                o->report_gbits ? "Gb/sec" : "MB/sec", o->report_gbits ? "Gb/sec" : "MB/sec");
    } else {
        fprintf(out, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
                     "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% "
                     "percentile[usec] \n");
    }
    fflush(out);
}

static double perf_bw_units(const perf_result_t *r, double bytes_per_s)
{
    return r->opts->report_gbits ? bytes_per_s * 8.0 / 1e9 : bytes_per_s / PERF_MB;
}

void perf_row_rate(perf_row_t *row, size_t bytes, long iters, double seconds, double best)
{
    row->bytes = bytes;
    row->iters = iters;
    row->seconds = seconds;
    row->msg_rate = (double)iters / seconds;
    row->bw_avg = row->msg_rate * (double)bytes;
    row->bw_peak = best > 0 ? (double)bytes / best : row->bw_avg;
}

void perf_report_row(const perf_result_t *r, const perf_row_t *row, FILE *out)
{
    if (perf_is_bw(r)) {
        fprintf(out, " %-7zu    %-7ld          %-7.2f            %-7.2f\t\t   %-7.6f\n", row->bytes,
                row->iters, perf_bw_units(r, row->bw_peak), perf_bw_units(r, row->bw_avg),
                row->msg_rate / 1e6);
    } else {
        const perf_lat_stats_t *s = &row->lat;
        fprintf(
            out,
            " %-7zu %-7ld          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f"
            "\t\t%-7.2f \t\t%-7.2f\n",
            row->bytes, row->iters, s->min, s->max, s->typical, s->avg, s->stdev, s->p99, s->p999);
    }
    fflush(out);
}

void perf_report_footer(const perf_result_t *r, FILE *out)
{
    (void)r;
    fputs(PERF_DASHES, out);
}

void perf_report_output(const perf_result_t *r, FILE *out)
{
    for (int i = 0; i < r->num_rows; i++) {
        const perf_row_t *row = &r->rows[i];
        switch (r->opts->output) {
        case PERF_OUTPUT_BANDWIDTH:
            fprintf(out, "%.2f\n", perf_bw_units(r, row->bw_avg));
            break;
        case PERF_OUTPUT_MESSAGE_RATE:
            fprintf(out, "%.6f\n", row->msg_rate / 1e6);
            break;
        default:
            fprintf(out, "%.2f\n", row->lat.typical);
            break;
        }
    }
}

static double perf_per_msg(const perf_result_t *r, unsigned long long delta)
{
    return r->total_iters > 0 ? (double)delta / (double)r->total_iters : 0.0;
}

void perf_report_counters(const perf_result_t *r, FILE *out)
{
    const perf_counters_t *pc = r->counters;
    long long pkts;
    int zero = 0;

    fprintf(out,
            " Counters over the measured interval%s (%d handles in one session, started and\n"
            " stopped at one instant); per message = delta / %ld iterations\n",
            r->num_rows > 1 ? "s" : "", pc->num, r->total_iters);
    fprintf(out, " %-8s %-40s %18s %14s\n", "source", "variable", "delta", "per message");
    for (int i = 0; i < pc->num; i++) {
        const perf_counter_t *c = &pc->c[i];
        if (c->delta == 0) {
            zero++;
            continue;
        }
        fprintf(out, " %-8s %-40s %18llu %14.3f\n", c->category, c->name, c->delta,
                perf_per_msg(r, c->delta));
    }
    if (zero > 0) {
        fprintf(out, " (%d more counters did not change)\n", zero);
    }
    fprintf(out, " this process, measured interval: %lld messages sent, %lld received\n",
            r->msgs_sent, r->msgs_recvd);
    pkts = perf_counters_get(pc, "nic_port_xmit_packets");
    if (pkts < 0) {
        pkts = perf_counters_get(pc, "nic_sent_pkts");
    }
    if (pkts >= 0) {
        fprintf(out, " NIC packets sent per message     : %.3f (%s%s)\n",
                perf_per_msg(r, (unsigned long long)pkts), pc->port_name,
                r->opts->host != NULL && strncmp(pc->port_name, "rxe", 3) == 0
                    ? "; in loopback both processes share the port"
                    : "");
    } else {
        fprintf(out, " NIC packets sent per message     : unavailable (no port counter%s%s)\n",
                pc->port_name[0] != '\0' ? " on " : "", pc->port_name);
    }
    fprintf(out, " (the kernel caches hw_counters for nic_hw_counters_lifespan ms: intervals that\n"
                 "  short read NIC values up to that old)\n");
    pkts = perf_counters_get(pc, "papi_tot_ins");
    if (pkts >= 0) {
        fprintf(out, " Instructions per message         : %.1f (PAPI_TOT_INS, this thread)\n",
                perf_per_msg(r, (unsigned long long)pkts));
    } else {
        fprintf(out, " Instructions per message         : unavailable (PAPI: %s)\n",
                pc->papi_note[0] != '\0' ? pc->papi_note : "PAPI_TOT_INS not counted");
    }
    fputs(PERF_DASHES, out);
}

static void perf_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            fprintf(out, "\\%c", ch);
        } else if (ch < 0x20) {
            fprintf(out, "\\u%04x", ch);
        } else {
            fputc(ch, out);
        }
    }
    fputc('"', out);
}

static void perf_json_number(FILE *out, double v)
{
    if (isfinite(v)) {
        fprintf(out, "%.6g", v);
    } else {
        fputs("null", out);
    }
}

int perf_report_json(const perf_result_t *r, FILE *out)
{
    const perf_options_t *o = r->opts;
    bool bw = perf_is_bw(r);

    fprintf(out, "{\n  \"tool\": ");
    perf_json_string(out, o->prog);
    fprintf(out, ",\n  \"test\": \"%s\",\n  \"role\": \"%s\",\n  \"device\": ",
            o->test == PERF_TEST_WRITE_BW     ? "write_bw"
            : o->test == PERF_TEST_ATOMIC_BW  ? "atomic_bw"
            : o->test == PERF_TEST_ATOMIC_LAT ? "atomic_lat"
            : bw                              ? "send_bw"
                                              : "send_lat",
            o->host != NULL ? "client" : "server");
    perf_json_string(out, r->attr.device);
    fprintf(out,
            ",\n  \"port\": %d,\n  \"gid_index\": %d,\n  \"eager_limit\": %zu,\n"
            "  \"inline_limit\": %zu,\n  \"timer\": \"CLOCK_MONOTONIC\",\n  \"results\": [",
            r->attr.port, r->attr.gid_index, r->attr.eager_limit, r->attr.inline_limit);
    for (int i = 0; i < r->num_rows; i++) {
        const perf_row_t *row = &r->rows[i];
        fprintf(out, "%s\n    {\"bytes\": %zu, \"iterations\": %ld, \"seconds\": ", i ? "," : "",
                row->bytes, row->iters);
        perf_json_number(out, row->seconds);
        if (bw) {
            fprintf(out, ", \"bw_peak_MBps\": ");
            perf_json_number(out, row->bw_peak / PERF_MB);
            fprintf(out, ", \"bw_average_MBps\": ");
            perf_json_number(out, row->bw_avg / PERF_MB);
            fprintf(out, ", \"msg_rate_Mpps\": ");
            perf_json_number(out, row->msg_rate / 1e6);
        } else {
            const perf_lat_stats_t *s = &row->lat;
            const double v[] = {s->min, s->max, s->typical, s->avg, s->stdev, s->p99, s->p999};
            const char *k[] = {"t_min_us",   "t_max_us", "t_typical_us", "t_avg_us",
                               "t_stdev_us", "p99_us",   "p99_9_us"};
            for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
                fprintf(out, ", \"%s\": ", k[j]);
                perf_json_number(out, v[j]);
            }
        }
        fputc('}', out);
    }
    fprintf(out, "\n  ],\n  \"messages_sent\": %lld,\n  \"messages_received\": %lld", r->msgs_sent,
            r->msgs_recvd);
    if (r->counters != NULL) {
        const perf_counters_t *pc = r->counters;
        fprintf(out, ",\n  \"counters\": {\n    \"port\": ");
        perf_json_string(out, pc->port_name);
        fprintf(out, ",\n    \"iterations\": %ld,\n    \"papi_note\": ", r->total_iters);
        perf_json_string(out, pc->papi_note);
        fprintf(out, ",\n    \"deltas\": [");
        for (int i = 0; i < pc->num; i++) {
            fprintf(out, "%s\n      {\"source\": \"%s\", \"name\": ", i ? "," : "",
                    pc->c[i].category);
            perf_json_string(out, pc->c[i].name);
            fprintf(out, ", \"delta\": %llu, \"per_message\": ", pc->c[i].delta);
            perf_json_number(out, perf_per_msg(r, pc->c[i].delta));
            fputc('}', out);
        }
        fprintf(out, "\n    ]\n  }");
    }
    fprintf(out, "\n}\n");
    return ferror(out) ? -1 : 0;
}
