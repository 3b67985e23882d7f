#!/usr/bin/env bash
# perf/bench/compare refuses bad command lines and settings before it builds or boots anything:
# status 2 and a message naming the problem. Usage: compare_args.sh SOURCE_DIR
set -uo pipefail
compare=$1/perf/bench/compare
fail=0
expect_error() { # message env-assignment|- args...
    local want=$1 env=$2 out rc
    shift 2
    if [ "$env" = - ]; then
        out=$("$compare" "$@" 2>&1)
    else
        out=$(env "$env" "$compare" "$@" 2>&1)
    fi
    rc=$?
    if [ $rc != 2 ] || [[ $out != *"$want"* ]]; then
        echo "FAIL: compare $* ($env): status $rc, output '$out', expected status 2 and '$want'"
        fail=1
    fi
}
expect_error "IBMSG_COMPARE_LAT_MIN=3: ibmsg_send_lat needs at least 5 iterations" \
    IBMSG_COMPARE_LAT_MIN=3 --no-build
expect_error "IBMSG_COMPARE_BW_BYTES='1M' is not a positive whole number" IBMSG_COMPARE_BW_BYTES=1M --no-build
expect_error "IBMSG_COMPARE_MEMLOCK_KIB='0' is not a positive whole number" \
    IBMSG_COMPARE_MEMLOCK_KIB=0 --unprivileged --no-build
expect_error "--unprivileged goes with the default comparison or --quick" - --unprivileged --steps
expect_error "--unprivileged goes with the default comparison or --quick" - --unprivileged --counters-cost
expect_error "--unprivileged goes with the default comparison or --quick" - --unprivileged --profile
expect_error "--atomics, --profile and --scale conflict" - --profile --steps
expect_error "--baseline goes with the default comparison or --quick" - --profile --baseline /tmp
expect_error "--rndv-chunks goes with the default comparison or --quick" - --profile --rndv-chunks 0
expect_error "unknown tool 'mpi'" - --tools "ibmsg mpi"
expect_error "bad --pin '0' (S,C: the server's CPU, the client's)" - --pin 0 --no-build
expect_error "bad --pin '0,x' (S,C: the server's CPU, the client's)" - --pin 0,x --no-build
expect_error "--pin goes with the default comparison or --quick" - --pin 0,1 --counters-cost
expect_error "bad --qp-timeout '0' (1..31)" - --qp-timeout 0 --no-build
expect_error "bad --qp-timeout '32' (1..31)" - --qp-timeout 32 --no-build
expect_error "--qp-timeout goes with the default comparison or --quick" - --qp-timeout 18 --steps
expect_error "bad size '0' (1..8388608)" - --sizes "8 0"
expect_error "bad --reps" - --reps 0
expect_error "unknown option '--bogus'" - --bogus
[ $fail = 0 ] && echo "perf_compare_args: ok"
exit $fail
