#!/bin/sh
# Rendezvous bandwidth with and without the registration cache and memory windows, interleaved
# in one boot so the runs share the machine's state: ibmsg_send_bw at 64 KiB (-n 2000) and
# 1 MiB (-n 200) in three set-ups, RUNS rounds (default 3); one line per run, MB/s:
#   cache=1 windows=1  the default: cached registrations, a window per transfer
#   cache=0 windows=1  every registration for one transfer, a window per transfer
#   cache=1 windows=0  sources registered exactly per transfer (no windows), destinations cached
# Usage (no device on the host): test/vm/run -- perf/bench/bench_reg_cache.sh [BUILD_DIR] [RUNS]
set -eu
bin=${1:-build}/perf/ibmsg_send_bw
runs=${2:-3}
port=$((23000 + $$ % 10000))
one() { # cache windows size iters
    export IBMSG_VERBS_REG_CACHE="$1" IBMSG_CORE_RNDV_WINDOWS="$2"
    "$bin" -p "$port" -s "$3" -n "$4" --output=bandwidth >/dev/null &
    sleep 1
    r=$("$bin" -p "$port" -s "$3" -n "$4" --output=bandwidth 127.0.0.1)
    wait
    port=$((port + 1))
    echo "size=$3 cache=$1 windows=$2 iters=$4 MB/s=$r"
}
i=0
while [ "$i" -lt "$runs" ]; do
    for size in 65536 1048576; do
        iters=2000
        [ "$size" = 1048576 ] && iters=200
        one 1 1 "$size" "$iters"
        one 0 1 "$size" "$iters"
        one 1 0 "$size" "$iters"
    done
    i=$((i + 1))
done
