#!/bin/sh
# Rendezvous bandwidth with and without the registration cache, interleaved in one boot so the
# runs share the machine's state: ibmsg_send_bw at 64 KiB (-n 2000) and 1 MiB (-n 200), cache on
# (IBMSG_VERBS_REG_CACHE=1) and off (=0), RUNS rounds (default 3); one line per run, MB/s.
# Usage (no device on the host): test/vm/run -- perf/bench_reg_cache.sh [BUILD_DIR] [RUNS]
set -eu
bin=${1:-build}/perf/ibmsg_send_bw
runs=${2:-3}
port=$((23000 + $$ % 10000))
one() { # cache size iters
    IBMSG_VERBS_REG_CACHE=$1 "$bin" -p "$port" -s "$2" -n "$3" --output=bandwidth >/dev/null &
    sleep 1
    r=$(IBMSG_VERBS_REG_CACHE=$1 "$bin" -p "$port" -s "$2" -n "$3" --output=bandwidth 127.0.0.1)
    wait
    port=$((port + 1))
    echo "size=$2 cache=$1 iters=$3 MB/s=$r"
}
i=0
while [ "$i" -lt "$runs" ]; do
    one 1 65536 2000
    one 0 65536 2000
    one 1 1048576 200
    one 0 1048576 200
    i=$((i + 1))
done
