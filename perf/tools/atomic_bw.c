/*
 * ibmsg_atomic_bw: perftest's ib_atomic_bw over ibmsg's remote atomics. Server: ibmsg_atomic_bw
 * [options]; client: ibmsg_atomic_bw [options] <server>. Options and output: perf/tools/lib (-h).
 */
#include "perf/tools/lib/perf.h"

int main(int argc, char **argv)
{
    perf_options_t opts;
    int ret = perf_options_parse(&opts, PERF_TEST_ATOMIC_BW, argc, argv, stdout, stderr);

    if (ret != 0) {
        return ret == PERF_PARSE_HELP ? 0 : 1;
    }
    return perf_run(&opts);
}
