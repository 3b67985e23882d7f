/*
 * ibmsg_write_bw: perftest's ib_write_bw over ibmsg one-sided puts. Server: ibmsg_write_bw
 * [options]; client: ibmsg_write_bw [options] <server>. Options and output: perf/tools/lib (-h).
 */
#include "perf/tools/lib/perf.h"

int main(int argc, char **argv)
{
    perf_options_t opts;
    int ret = perf_options_parse(&opts, PERF_TEST_WRITE_BW, argc, argv, stdout, stderr);

    if (ret != 0) {
        return ret == PERF_PARSE_HELP ? 0 : 1;
    }
    return perf_run(&opts);
}
