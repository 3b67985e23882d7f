/*
 * ibmsg_send_lat: perftest's ib_send_lat over ibmsg tagged messages. Server: ibmsg_send_lat
 * [options]; client: ibmsg_send_lat [options] <server>. Options and output: perf/tools/lib (run
 * with -h).
 */
#include "perf/tools/lib/perf.h"

int main(int argc, char **argv)
{
    perf_options_t opts;
    int ret = perf_options_parse(&opts, PERF_TEST_SEND_LAT, argc, argv, stdout, stderr);

    if (ret != 0) {
        return ret == PERF_PARSE_HELP ? 0 : 1;
    }
    return perf_run(&opts);
}
