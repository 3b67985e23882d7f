/*
 * Command line of the perf tools: perftest's letters and meanings, strictly checked. A flag
 * perftest has but that cannot mean anything for ibmsg (or for this test) is refused with the
 * reason rather than silently ignored, so a result never looks like it used a setting it did not.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "perf/tools/lib/perf.h"

enum {
    OPT_REPORT_GBITS = 256,
    OPT_OUTPUT,
    OPT_COUNTERS,
    OPT_IDLE_SESSION,
    OPT_JSON,
    OPT_EMPTY_POLLS,
};

static const struct option perf_long_options[] = {
    {"ib-dev", required_argument, NULL, 'd'},
    {"ib-port", required_argument, NULL, 'i'},
    {"gid-index", required_argument, NULL, 'x'},
    {"qp-timeout", required_argument, NULL, 'u'},
    {"port", required_argument, NULL, 'p'},
    {"size", required_argument, NULL, 's'},
    {"iters", required_argument, NULL, 'n'},
    {"all", no_argument, NULL, 'a'},
    {"duration", required_argument, NULL, 'D'},
    {"tx-depth", required_argument, NULL, 't'},
    {"rx-depth", required_argument, NULL, 'r'},
    {"cq-mod", required_argument, NULL, 'Q'},
    {"inline_size", required_argument, NULL, 'I'},
    {"post_list", required_argument, NULL, 'l'},
    {"CPU-freq", no_argument, NULL, 'F'},
    {"help", no_argument, NULL, 'h'},
    {"report_gbits", no_argument, NULL, OPT_REPORT_GBITS},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"counters", optional_argument, NULL, OPT_COUNTERS},
    {"idle-session", no_argument, NULL, OPT_IDLE_SESSION},
    {"json", required_argument, NULL, OPT_JSON},
    {"empty-polls", required_argument, NULL, OPT_EMPTY_POLLS},
    {"atomic_type", required_argument, NULL, 'A'},
    {"outs", required_argument, NULL, 'o'},
    {NULL, 0, NULL, 0},
};

/* The atomic tools' usage: perftest's ib_atomic_lat / ib_atomic_bw flags. */
static void perf_atomic_usage(perf_test_t test, const char *prog, FILE *out)
{
    bool bw = test == PERF_TEST_ATOMIC_BW;

    fprintf(out,
            "Usage:\n"
            "  %s [options]          start a server and wait for a client\n"
            "  %s [options] <host>   connect to the server on <host>\n"
            "\n"
            "%s, perftest's flags:\n"
            "  -d, --ib-dev=<dev>       RDMA device (default: the first ACTIVE port)\n"
            "  -i, --ib-port=<port>     device port (default: the first ACTIVE one)\n"
            "  -x, --gid-index=<index>  GID index (default: RoCE v2 IPv4-mapped GID)\n"
            "  -u, --qp-timeout=<t>     RC local ACK timeout, 4.096 us * 2^t, 1..31 (ibmsg\n"
            "                           verbs_timeout; default 14)\n"
            "  -p, --port=<port>        TCP port of the out-of-band exchange (default %d)\n"
            "  -A, --atomic_type=<type> FETCH_AND_ADD (default) or CMP_AND_SWAP\n"
            "  -s, --size=<bytes>       8 only (the atomics are 64-bit)\n"
            "  -n, --iters=<n>          iterations (default %d)\n",
            prog, prog,
            bw ? "Remote atomic bandwidth through ibmsg_atomic_fetch_add64 / _cswap64 (the\n"
                 "server maps a word for remote atomics and sends its key; the client operates\n"
                 "on it, and the server checks the final word)"
               : "Remote atomic latency (full round trip) through ibmsg_atomic_fetch_add64 /\n"
                 "_cswap64 (one in flight; every result is checked)",
            PERF_DEFAULT_TCP_PORT, PERF_DEFAULT_ITERS);
    if (bw) {
        fprintf(out,
                "  -D, --duration=<s>       run for s seconds instead of -n iterations\n"
                "  -t, --tx-depth=<n>       atomics in flight (default 128; ibmsg core_sq_depth)\n"
                "  -o, --outs=<n>           atomics outstanding at the device, 1..16 (ibmsg\n"
                "                           verbs_max_rd_atomic; default the device's)\n"
                "  -Q, --cq-mod=<n>         one atomic in n carries a request (default 100, at\n"
                "                           most half of -t); the others complete with it\n"
                "      --report_gbits      bandwidth in Gb/s instead of MB/s\n");
    }
    fprintf(out,
            "  -F, --CPU-freq           accepted for perftest compatibility; no effect: times\n"
            "                           come from clock_gettime(CLOCK_MONOTONIC), not rdtsc\n"
            "      --output=<what>      print only %s\n"
            "      --counters[=CAT,...] after the table, the deltas over the measured interval\n"
            "                           of the ibmsg counters (categories core, verbs), the NIC\n"
            "                           port counters (nic) and PAPI events (papi); default all\n"
            "      --idle-session       start a handle of every variable of core, verbs, nic\n"
            "                           and papi (every class), never read: an idle tool's cost\n"
            "      --json=<file|->      write results and counters as JSON (\"-\": stdout, the\n"
            "                           report then goes to stderr)\n"
            "  -h, --help               this text\n"
            "Not for atomics: -a (one size), -r, -l, -I%s.\n"
            "Both sides must be given the same -A/-n/-D (checked at connection).\n",
            bw ? "bandwidth or message_rate" : "latency (t_typical)",
            bw ? "" : ", -D, -t, -o, -Q, --report_gbits (one atomic in flight)");
}

void perf_options_usage(perf_test_t test, const char *prog, FILE *out)
{
    bool bw = !perf_test_is_lat(test), write = test == PERF_TEST_WRITE_BW;

    if (perf_test_is_atomic(test)) {
        perf_atomic_usage(test, prog, out);
        return;
    }

    fprintf(out,
            "Usage:\n"
            "  %s [options]          start a server and wait for a client\n"
            "  %s [options] <host>   connect to the server on <host>\n"
            "\n"
            "%s, perftest's flags:\n"
            "  -d, --ib-dev=<dev>       RDMA device (default: the first ACTIVE port)\n"
            "  -i, --ib-port=<port>     device port (default: the first ACTIVE one)\n"
            "  -x, --gid-index=<index>  GID index (default: RoCE v2 IPv4-mapped GID)\n"
            "  -u, --qp-timeout=<t>     RC local ACK timeout, 4.096 us * 2^t, 1..31 (ibmsg\n"
            "                           verbs_timeout; default 14)\n"
            "  -p, --port=<port>        TCP port of the out-of-band exchange (default %d)\n"
            "  -s, --size=<bytes>       message size (default %d); up to 8 MiB\n"
            "  -n, --iters=<n>          iterations (default %d)\n"
            "  -a, --all                sizes 2 .. 2^23%s\n"
            "  -D, --duration=<s>       run each size for s seconds instead of -n iterations\n",
            prog, prog,
            write ? "RDMA write bandwidth through ibmsg_put (one-sided: the server maps a buffer\n"
                    "and sends its key over the TCP connection; the client puts)"
            : bw  ? "Send bandwidth through ibmsg tagged messages (eager, rendezvous above the\n"
                    "eager limit)"
                  : "Send latency (half round trip) through ibmsg tagged messages (eager,\n"
                    "rendezvous above the eager limit)",
            PERF_DEFAULT_TCP_PORT, bw ? 65536 : 2, PERF_DEFAULT_ITERS,
            write ? "" : " (above the eager limit: rendezvous)");
    if (write) {
        fprintf(out,
                "  -t, --tx-depth=<n>       puts in flight (default 128; ibmsg core_sq_depth)\n"
                "      --report_gbits      bandwidth in Gb/s instead of MB/s\n");
    } else if (bw) {
        fprintf(out,
                "  -t, --tx-depth=<n>       sends in flight (default 128; ibmsg core_sq_depth)\n"
                "  -r, --rx-depth=<n>       receives posted by the server (default 512; ibmsg\n"
                "                           core_credits: receive buffers per endpoint)\n"
                "  -l, --post_list=<n>      sends posted together, 1..64 (ibmsg core_send_batch,\n"
                "                           default 32: messages started back to back are held\n"
                "                           and posted as one list; perftest posts one by one)\n"
                "      --report_gbits      bandwidth in Gb/s instead of MB/s\n");
    }
    fprintf(out,
            "  -Q, --cq-mod=<n>         signal one %s in n (ibmsg core_signal_interval; bw\n"
            "                           default 100 as perftest, at most half the send queue)\n"
            "  -I, --inline_size=<n>    largest inline %s (ibmsg core_inline_limit)\n"
            "  -F, --CPU-freq           accepted for perftest compatibility; no effect: times\n"
            "                           come from clock_gettime(CLOCK_MONOTONIC), not rdtsc\n"
            "      --output=<what>      print only %s\n"
            "      --counters[=CAT,...] after the table, the deltas over the measured interval\n"
            "                           of the ibmsg counters (categories core, verbs), the NIC\n"
            "                           port counters (nic) and PAPI events (papi); default all\n"
            "      --idle-session       start a handle of every variable of core, verbs, nic\n"
            "                           and papi (every class), never read: an idle tool's cost\n"
            "      --json=<file|->      write results and counters as JSON (\"-\": stdout, the\n"
            "                           report then goes to stderr)\n"
            "      --empty-polls=<n>    after the interval, 2n progress calls that find nothing;\n"
            "                           under callgrind the interval and the last n are\n"
            "                           dumped apart, each from zero (perf/bench/compare\n"
            "                           --counters-cost: what an empty call costs)\n"
            "  -h, --help               this text\n"
            "%s"
            "Both sides must be given the same -s/-n/-a/-D (checked at connection).\n",
            write ? "put" : "send", write ? "put" : "send",
            bw ? "bandwidth or message_rate" : "latency (t_typical)",
            write ? "Not for writes: -r (the server posts no receives), -l (puts are posted at\n"
                    "once).\n"
            : bw  ? ""
                  : "Not for latency (one message in flight): -t, -r, -l, --report_gbits.\n");
}

static int perf_parse_long(const char *flag, const char *arg, long min, long max, long *out,
                           FILE *err)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(arg, &end, 0);
    if (errno != 0 || end == arg || *end != '\0' || v < min || v > max) {
        fprintf(err, "invalid value '%s' for %s: expected an integer in %ld..%ld\n", arg, flag, min,
                max);
        return -1;
    }
    *out = v;
    return 0;
}

static void perf_options_defaults(perf_options_t *o, perf_test_t test, const char *prog)
{
    memset(o, 0, sizeof(*o));
    o->test = test;
    o->prog = prog;
    o->ib_port = -1;
    o->gid_index = -1;
    o->qp_timeout = -1;
    o->tcp_port = PERF_DEFAULT_TCP_PORT;
    o->size = perf_test_is_atomic(test) ? 8 : test != PERF_TEST_SEND_LAT ? 65536 : 2;
    o->iters = PERF_DEFAULT_ITERS;
    o->tx_depth = 128;
    o->rx_depth = 512;
    o->cq_mod = -1;
    o->inline_size = -1;
    o->post_list = -1;
    o->atomic_type = PERF_ATOMIC_FETCH_AND_ADD;
    o->outs = -1;
}

/* A flag an atomic test refuses (why: what it would mean). */
static int perf_not_atomic(const char *prog, const char *flag, const char *why, FILE *err)
{
    fprintf(err, "%s: %s does not apply to an atomic test (%s)\n", prog, flag, why);
    return PERF_PARSE_ERROR;
}

static int perf_check_categories(const char *list, FILE *err)
{
    static const char *known[] = {"core", "verbs", "nic", "papi"};
    char buf[256];
    char *save = NULL;

    if (strlen(list) >= sizeof(buf)) {
        fprintf(err, "--counters: list too long\n");
        return -1;
    }
    strcpy(buf, list);
    for (char *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        bool ok = false;
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
            ok = ok || strcmp(t, known[i]) == 0;
        }
        if (!ok) {
            fprintf(err, "--counters: unknown category '%s' (known: core, verbs, nic, papi)\n", t);
            return -1;
        }
    }
    return 0;
}

int perf_options_parse(perf_options_t *o, perf_test_t test, int argc, char **argv, FILE *out,
                       FILE *err)
{
    const char *prog = argc > 0 ? argv[0] : "ibmsg_perf";
    const char *p = strrchr(prog, '/');
    bool bw = !perf_test_is_lat(test), atomic = perf_test_is_atomic(test);
    bool output_set = false;
    long v;
    int c;

    prog = p != NULL ? p + 1 : prog;
    perf_options_defaults(o, test, prog);
    opterr = 0;
    optind = 0; /* 0, not 1: glibc then also forgets a previous scan's state */
    while ((c = getopt_long(argc, argv, ":d:i:x:u:p:s:n:aD:t:r:Q:I:l:FhA:o:", perf_long_options,
                            NULL)) != -1) {
        switch (c) {
        case 'd':
            if (optarg[0] == '\0' || strlen(optarg) >= 64) {
                fprintf(err, "%s: invalid device name for -d\n", prog);
                return PERF_PARSE_ERROR;
            }
            o->device = optarg;
            break;
        case 'i':
            if (perf_parse_long("-i", optarg, 1, 255, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->ib_port = (int)v;
            break;
        case 'x':
            if (perf_parse_long("-x", optarg, 0, 255, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->gid_index = (int)v;
            break;
        case 'u':
            if (perf_parse_long("-u", optarg, 1, 31, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->qp_timeout = (int)v;
            break;
        case 'p':
            if (perf_parse_long("-p", optarg, 1, 65535, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->tcp_port = (uint16_t)v;
            break;
        case 's':
            if (perf_parse_long("-s", optarg, 1, (long)PERF_MAX_SIZE, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            if (atomic && v != 8) {
                fprintf(err, "%s: -s must be 8 for an atomic test (64-bit atomics)\n", prog);
                return PERF_PARSE_ERROR;
            }
            o->size = (size_t)v;
            o->size_set = true;
            break;
        case 'n':
            /* Latency needs more than the two dropped samples. */
            if (perf_parse_long("-n", optarg, bw ? 1 : 5, 100000000, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->iters = v;
            o->iters_set = true;
            break;
        case 'a':
            if (atomic) {
                return perf_not_atomic(prog, "-a", "one size: 8 bytes", err);
            }
            o->all_sizes = true;
            break;
        case 'A':
            if (!atomic) {
                fprintf(err, "%s: -A applies to the atomic tests only\n", prog);
                return PERF_PARSE_ERROR;
            }
            if (strcmp(optarg, "FETCH_AND_ADD") == 0) {
                o->atomic_type = PERF_ATOMIC_FETCH_AND_ADD;
            } else if (strcmp(optarg, "CMP_AND_SWAP") == 0) {
                o->atomic_type = PERF_ATOMIC_CMP_AND_SWAP;
            } else {
                fprintf(err, "%s: -A must be FETCH_AND_ADD or CMP_AND_SWAP, not '%s'\n", prog,
                        optarg);
                return PERF_PARSE_ERROR;
            }
            break;
        case 'o':
            if (test != PERF_TEST_ATOMIC_BW) {
                fprintf(err, "%s: -o applies to ibmsg_atomic_bw only\n", prog);
                return PERF_PARSE_ERROR;
            }
            if (perf_parse_long("-o", optarg, 1, 16, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->outs = (int)v;
            break;
        case 'D':
            if (test == PERF_TEST_ATOMIC_LAT) {
                return perf_not_atomic(prog, "-D", "the latency test counts iterations", err);
            }
            if (perf_parse_long("-D", optarg, 1, 3600, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->duration = (int)v;
            break;
        case 't':
        case 'r':
            if (!bw) {
                fprintf(err, "%s: -%c does not apply to a latency test (one message in flight)\n",
                        prog, c);
                return PERF_PARSE_ERROR;
            }
            if (c == 'r' && atomic) {
                return perf_not_atomic(prog, "-r", "the server posts no receives", err);
            }
            if (c == 'r' && test == PERF_TEST_WRITE_BW) {
                fprintf(err,
                        "%s: -r does not apply to a write test (the server posts no "
                        "receives)\n",
                        prog);
                return PERF_PARSE_ERROR;
            }
            if (perf_parse_long(c == 't' ? "-t" : "-r", optarg, 1, PERF_MAX_DEPTH, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            *(c == 't' ? &o->tx_depth : &o->rx_depth) = (int)v;
            break;
        case 'Q':
            if (test == PERF_TEST_ATOMIC_LAT) {
                return perf_not_atomic(prog, "-Q", "one atomic in flight", err);
            }
            if (perf_parse_long("-Q", optarg, 1, 1024, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->cq_mod = (int)v;
            break;
        case 'I':
            if (atomic) {
                return perf_not_atomic(prog, "-I", "atomics carry no inline data", err);
            }
            if (perf_parse_long("-I", optarg, 0, 1024, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->inline_size = (int)v;
            break;
        case 'l':
            if (atomic) {
                return perf_not_atomic(prog, "-l", "atomics are posted at once", err);
            }
            if (test != PERF_TEST_SEND_BW) {
                fprintf(err, "%s: -l does not apply to a %s\n", prog,
                        bw ? "write test (puts are posted at once)"
                           : "latency test (one message in flight)");
                return PERF_PARSE_ERROR;
            }
            if (perf_parse_long("-l", optarg, 1, 64, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->post_list = (int)v;
            break;
        case 'F':
            o->cpu_freq_ok = true;
            break;
        case 'h':
            perf_options_usage(test, prog, out);
            return PERF_PARSE_HELP;
        case OPT_REPORT_GBITS:
            if (!bw) {
                fprintf(err, "%s: --report_gbits does not apply to a latency test\n", prog);
                return PERF_PARSE_ERROR;
            }
            o->report_gbits = true;
            break;
        case OPT_OUTPUT:
            if (strcmp(optarg, "bandwidth") == 0) {
                o->output = PERF_OUTPUT_BANDWIDTH;
            } else if (strcmp(optarg, "message_rate") == 0) {
                o->output = PERF_OUTPUT_MESSAGE_RATE;
            } else if (strcmp(optarg, "latency") == 0) {
                o->output = PERF_OUTPUT_LATENCY;
            } else {
                fprintf(err, "%s: --output must be bandwidth, message_rate or latency, not '%s'\n",
                        prog, optarg);
                return PERF_PARSE_ERROR;
            }
            if (bw == (o->output == PERF_OUTPUT_LATENCY)) {
                fprintf(err, "%s: --output=%s does not apply to a %s test\n", prog, optarg,
                        bw ? "bandwidth" : "latency");
                return PERF_PARSE_ERROR;
            }
            output_set = true;
            break;
        case OPT_COUNTERS:
            o->counters = true;
            if (optarg != NULL) {
                if (perf_check_categories(optarg, err) != 0) {
                    return PERF_PARSE_ERROR;
                }
                strcpy(o->counter_categories, optarg);
            }
            break;
        case OPT_IDLE_SESSION:
            o->idle_session = true;
            break;
        case OPT_EMPTY_POLLS:
            if (test != PERF_TEST_SEND_BW && test != PERF_TEST_SEND_LAT) {
                fprintf(err, "%s: --empty-polls applies to send_bw and send_lat only\n", prog);
                return PERF_PARSE_ERROR;
            }
            if (perf_parse_long("--empty-polls", optarg, 1, 10000000, &v, err) != 0) {
                return PERF_PARSE_ERROR;
            }
            o->empty_polls = v;
            break;
        case OPT_JSON:
            if (optarg[0] == '\0') {
                fprintf(err, "%s: --json needs a file name or -\n", prog);
                return PERF_PARSE_ERROR;
            }
            o->json_path = optarg;
            break;
        case ':':
            fprintf(err, "%s: option %s needs a value\n", prog, argv[optind - 1]);
            return PERF_PARSE_ERROR;
        default:
            if (optopt != 0) {
                fprintf(err, "%s: unknown option -%c (see -h)\n", prog, optopt);
            } else {
                fprintf(err, "%s: unknown option %s (see -h)\n", prog, argv[optind - 1]);
            }
            return PERF_PARSE_ERROR;
        }
    }
    if (optind < argc) {
        o->host = argv[optind++];
    }
    if (optind < argc) {
        fprintf(err, "%s: unexpected argument '%s' (one host at most)\n", prog, argv[optind]);
        return PERF_PARSE_ERROR;
    }
    if (o->idle_session && o->counters) {
        fprintf(err, "%s: --idle-session and --counters conflict (an idle session reads nothing)\n",
                prog);
        return PERF_PARSE_ERROR;
    }
    if (o->all_sizes && o->size_set) {
        fprintf(err, "%s: -a and -s conflict (-a runs every size)\n", prog);
        return PERF_PARSE_ERROR;
    }
    if (o->duration > 0 && o->iters_set) {
        fprintf(err, "%s: -D and -n conflict (a run is timed or counted, not both)\n", prog);
        return PERF_PARSE_ERROR;
    }
    if (o->duration > 0 && o->all_sizes) {
        fprintf(err, "%s: -D and -a conflict (perftest refuses it too)\n", prog);
        return PERF_PARSE_ERROR;
    }
    if (output_set && o->json_path != NULL && strcmp(o->json_path, "-") == 0) {
        fprintf(err, "%s: --output and --json=- both want stdout\n", prog);
        return PERF_PARSE_ERROR;
    }
    return 0;
}

static int perf_hint(ibmsg_info_t info, const char *key, long value)
{
    return ibmsg_info_set_int(info, key, value);
}

int perf_options_info(const perf_options_t *o, ibmsg_info_t *info_out)
{
    ibmsg_info_t info;
    int ret = ibmsg_info_create(&info);

    if (ret != IBMSG_OK) {
        return ret;
    }
    if (o->device != NULL) {
        ret = ibmsg_info_set_string(info, "device", o->device);
    }
    if (ret == IBMSG_OK && o->ib_port > 0) {
        ret = perf_hint(info, "port", o->ib_port);
    }
    if (ret == IBMSG_OK && o->gid_index >= 0) {
        ret = perf_hint(info, "gid_index", o->gid_index);
    }
    if (ret == IBMSG_OK && o->qp_timeout > 0) {
        ret = perf_hint(info, "verbs_timeout", o->qp_timeout);
    }
    /* perftest's meanings: -r receives posted (ibmsg: the credits, receive buffers posted per
     * endpoint), -t sends in flight (the send queue), -Q one completion per n sends (default
     * 100, capped by the library at half the send queue). The latency test has one message in
     * flight and keeps the library's defaults. */
    if (ret == IBMSG_OK && o->test == PERF_TEST_SEND_BW) {
        ret = perf_hint(info, "core_credits", o->rx_depth < 4 ? 4 : o->rx_depth);
        if (ret == IBMSG_OK) {
            ret = perf_hint(info, "core_sq_depth", o->tx_depth < 8 ? 8 : o->tx_depth);
        }
        if (ret == IBMSG_OK) {
            ret = perf_hint(info, "core_signal_interval",
                            o->cq_mod > 0 ? o->cq_mod : PERF_DEFAULT_CQ_MOD);
        }
    } else if (ret == IBMSG_OK && o->test == PERF_TEST_ATOMIC_BW) {
        /* -t atomics in flight (the send queue), -o those the device has outstanding. */
        ret = perf_hint(info, "core_sq_depth", o->tx_depth < 8 ? 8 : o->tx_depth);
        if (ret == IBMSG_OK && o->outs > 0) {
            ret = perf_hint(info, "verbs_max_rd_atomic", o->outs);
        }
    } else if (ret == IBMSG_OK && o->cq_mod > 0) {
        ret = perf_hint(info, "core_signal_interval", o->cq_mod);
    }
    if (ret == IBMSG_OK && o->inline_size >= 0) {
        ret = perf_hint(info, "core_inline_limit", o->inline_size);
    }
    if (ret == IBMSG_OK && o->post_list > 0) {
        ret = perf_hint(info, "core_send_batch", o->post_list);
    }
    if (ret != IBMSG_OK) {
        ibmsg_info_free(&info);
        return ret;
    }
    *info_out = info;
    return IBMSG_OK;
}
