/*
 * ibmsg_pvars: the variable browser. Walks the tool interface (include/ibmsg/tool.h) as any tool
 * would, through the public API only: the category tree from its roots with every control and
 * performance variable under each category that holds it, and, with --read, the values of the
 * variables bound to no object or to NIC ports (counters as their sources' totals). --json gives
 * the same as one JSON document.
 *
 * --mpit walks the standard MPI_T instead, as an MPI_T tool sees it with libibmsg-mpit preloaded
 * (the MPI library's variables and ibmsg's in one view): the browser re-executes itself with
 * LD_PRELOAD=<libibmsg-mpit-VARIANT>:<the variant's libmpi> and calls the MPI_T_* functions it
 * then finds in the process (perf/pvars_mpit.c). --watch SECONDS starts a handle on every
 * numeric variable bound to no object (natively also on every variable bound to a NIC port, on
 * every port: "name@dev/port") and prints, every interval, what the counters counted in it and
 * the current value of the other classes, until interrupted (or --count intervals).
 *
 * Exit status: 0 on success, 1 when a tool interface call fails (the message names the call and
 * gives ibmsg_status_string), 2 on a bad command line. A variable whose source is not accessible
 * now (IBMSG_T_ERR_NOT_ACCESSIBLE / NOT_SUPPORTED, for example PAPI without perf events) is shown
 * as unavailable with the reason; that is the variable's state, not an error of the browser.
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>
#include <ibmsg/version.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "browser/pvars.h"

static void pvars_usage(FILE *out)
{
    fprintf(out,
            "usage: ibmsg_pvars [--mpit[=VARIANT]] [--read | --watch SECONDS [--count N]]\n"
            "                   [--filter TEXT] [--json] [-h]\n"
            "       ibmsg_pvars --events [--json]\n"
            "       ibmsg_pvars --follow [--json] -- COMMAND [ARGS...]\n"
            "Lists ibmsg's control and performance variables by category (a variable in\n"
            "several categories shows under each), with class, datatype, binding, flags,\n"
            "scope, description and enumerations.\n"
            "  -r, --read   print the values of the variables bound to no object and of\n"
            "               those bound to NIC ports, on every port: counters as totals\n"
            "               since their source began, as rdma statistic or ethtool -S\n"
            "               show them (NIC: the port's counter; ibmsg's: since the process\n"
            "               started; PAPI: since the thread began counting); other classes\n"
            "               their current value. With --mpit (MPI_T has no totals) counters\n"
            "               count from the read's own start\n"
            "  -j, --json   the same as one JSON document (with --read: including values;\n"
            "               with --watch: one JSON object per line and interval)\n"
            "  -m, --mpit[=VARIANT]  the standard MPI_T view an MPI_T tool sees with\n"
            "               libibmsg-mpit-VARIANT preloaded (mpich or ompi; default: the first\n"
            "               built): the MPI library's variables and ibmsg's; the browser\n"
            "               re-executes itself with LD_PRELOAD=<layer>:<libmpi> (the layer's\n"
            "               path can be given in IBMSG_PVARS_MPIT_LAYER)\n"
            "  -w, --watch SECONDS  every SECONDS (a fraction is fine) print what the started\n"
            "               counters, aggregates and timers counted in the interval and the\n"
            "               current value of the other classes (numeric variables bound to\n"
            "               no object, and to NIC ports as NAME@DEV/PORT; with --mpit the\n"
            "               layer serves ports as variables of their own), until SIGINT /\n"
            "               SIGTERM, with a final line\n"
            "  -c, --count N  stop watching after N intervals\n"
            "  -f, --filter TEXT  only variables whose name contains TEXT (--watch)\n"
            "  -e, --events  list the timestamp sources and the event types, each with\n"
            "               its binding, categories, elements and their enumeration\n"
            "  -F, --follow -- COMMAND [ARGS...]  run COMMAND and print its events as\n"
            "               they happen, one line each: timestamp, pid, source, event,\n"
            "               element=value... (--json: one JSON object per line); every\n"
            "               process of COMMAND that loads the shared libibmsg is followed\n"
            "               (an agent is preloaded into it), its standard output goes to\n"
            "               standard error; the exit status is COMMAND's\n"
            "  -h, --help   this text\n"
            "Exit status: 0 ok, 1 a tool interface call failed, 2 bad usage.\n");
}

static int pvars_parse(int argc, char **argv, pvars_state_t *st)
{
    static const struct option options[] = {
        {"read", no_argument, NULL, 'r'},         {"mpit", optional_argument, NULL, 'm'},
        {"watch", required_argument, NULL, 'w'},  {"count", required_argument, NULL, 'c'},
        {"filter", required_argument, NULL, 'f'}, {"json", no_argument, NULL, 'j'},
        {"events", no_argument, NULL, 'e'},       {"follow", no_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    int c;

    opterr = 0; /* our own message, which names the program and the option */
    bool follow = false;

    while ((c = getopt_long(argc, argv, "+:rjheFm::w:c:f:", options, NULL)) != -1) {
        char *end = NULL;

        switch (c) {
        case 'm':
            st->mpit = optarg != NULL ? optarg : "";
            break;
        case 'w':
            st->watch = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(st->watch > 0) || st->watch > 86400) {
                fprintf(stderr,
                        "ibmsg_pvars: --watch: '%s' is not a number of seconds in "
                        "(0, 86400]\n",
                        optarg);
                return 2;
            }
            break;
        case 'c':
            errno = 0;
            st->count = strtol(optarg, &end, 10);
            if (end == optarg || *end != '\0' || errno != 0 || st->count < 1) {
                fprintf(stderr, "ibmsg_pvars: --count: '%s' is not a positive integer\n", optarg);
                return 2;
            }
            break;
        case 'f':
            st->filter = optarg;
            break;
        case ':':
            fprintf(stderr, "ibmsg_pvars: option '%s' needs an argument\n", argv[optind - 1]);
            pvars_usage(stderr);
            return 2;
        case 'r':
            st->read = true;
            break;
        case 'e':
            st->events = true;
            break;
        case 'F':
            follow = true;
            break;
        case 'j':
            st->json = true;
            break;
        case 'h':
            pvars_usage(stdout);
            return 0;
        default: {
            const char *word = argv[optind - 1];

            /* optopt: 0 for an unknown long option, else the option (short, or long with an
             * argument it does not take, which only "--name=value" can give). */
            if (optopt != 0 && strncmp(word, "--", 2) == 0 && strchr(word, '=') != NULL) {
                fprintf(stderr, "ibmsg_pvars: option '%s' takes no argument\n", word);
            } else if (optopt == 0) {
                fprintf(stderr, "ibmsg_pvars: unknown option '%s'\n", word);
            } else {
                fprintf(stderr, "ibmsg_pvars: unknown option '-%c'\n", optopt);
            }
            pvars_usage(stderr);
            return 2;
        }
        }
    }
    if (follow) {
        if (optind >= argc) {
            fprintf(stderr, "ibmsg_pvars: --follow needs a command: --follow -- COMMAND\n");
            return 2;
        }
        if (st->read || st->watch > 0 || st->mpit != NULL || st->events) {
            fprintf(stderr, "ibmsg_pvars: --follow goes with --json only\n");
            return 2;
        }
        st->follow_argv = &argv[optind];
        return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "ibmsg_pvars: unexpected argument '%s'\n", argv[optind]);
        pvars_usage(stderr);
        return 2;
    }
    if (st->events && (st->read || st->watch > 0 || st->mpit != NULL)) {
        fprintf(stderr, "ibmsg_pvars: --events goes with --json only\n");
        return 2;
    }
    if (st->watch > 0 && st->read) {
        fprintf(stderr, "ibmsg_pvars: --read and --watch exclude each other\n");
        return 2;
    }
    if ((st->count > 0 || st->filter != NULL) && st->watch == 0) {
        fprintf(stderr, "ibmsg_pvars: --count and --filter go with --watch\n");
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    pvars_state_t st = {0};
    int provided, rc, status;

    status = pvars_parse(argc, argv, &st);
    if (status >= 0) {
        return status;
    }
    if (st.follow_argv != NULL) {
        /* The events are the command's: this process needs no tool interface of its own. */
        rc = pvars_follow(&st, &status);
        return rc == IBMSG_OK ? status : 1;
    }
    if (st.mpit != NULL && pvars_mpit_setup(&st, argv) != IBMSG_OK) {
        return 1;
    }
    rc = pvars_api->init_thread(IBMSG_T_THREAD_SINGLE, &provided);
    if (rc != IBMSG_OK) {
        pvars_fail(rc, "%s: init_thread", pvars_api->name);
        return 1;
    }
    if (st.events) {
        rc = pvars_events(&st);
    } else {
        rc = pvars_load(&st);
    }
    if (rc == IBMSG_OK && !st.events && st.watch > 0) {
        rc = pvars_watch(&st);
    } else if (rc == IBMSG_OK && !st.events && st.read) {
        rc = pvars_cvars_read(&st);
        if (rc == IBMSG_OK) {
            rc = pvars_pvars_read(&st);
        }
    }
    if (rc == IBMSG_OK && !st.events && st.watch == 0) {
        if (st.json) {
            rc = pvars_json(&st);
        } else if (st.read) {
            pvars_text_values(&st);
        } else {
            rc = pvars_text_tree(&st);
        }
    }
    pvars_cleanup(&st);
    status = rc == IBMSG_OK ? 0 : 1;
    rc = pvars_api->finalize();
    if (rc != IBMSG_OK) {
        pvars_fail(rc, "%s: finalize", pvars_api->name);
        status = 1;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ibmsg_pvars: writing the output failed\n");
        status = 1;
    }
    return status;
}
