#!/bin/sh
# Rendezvous bandwidth with and without the registration cache and memory windows, interleaved
# in one boot so the runs share the machine's state: ibmsg_send_bw at 64 KiB (-n 2000) and
# 1 MiB (-n 200) in each set-up, as each user, with each build, RUNS rounds (default 3); one line
# per run, MB/s ("failed" when the run failed). The set-ups (SETUPS, default all three, "cache,windows"):
#   1,1  the default: cached registrations, a window per transfer
#   0,1  every registration for one transfer, a window per transfer
#   1,0  sources registered exactly per transfer (no windows), destinations cached
# USERS (default "root"): "nobody" runs both sides as an ordinary user (uid 65534, no
# capabilities, ulimit -l 65536), whose cache cannot read page frames (docs/hardware.md).
# BUILDS (default BUILD_DIR): build directories to compare, e.g. one of an older commit.
# Usage (no device on the host): test/vm/run -- perf/bench/bench_reg_cache.sh [BUILD_DIR] [RUNS]
#   USERS="root nobody" SETUPS=1,1 BUILDS="build-before/obj build" test/vm/run -- perf/bench/...
set -eu
runs=${2:-3}
builds=${BUILDS:-${1:-build}}
port=$((23000 + $$ % 10000))
as_user() { # root|nobody command...
    if [ "$1" = root ]; then
        shift
        "$@"
    else
        shift
        (ulimit -l 65536 && setpriv --reuid=65534 --regid=65534 --clear-groups \
            --inh-caps=-all --bounding-set=-all -- "$@")
    fi
}
one() { # build user cache windows size iters
    bin=$1/perf/ibmsg_send_bw
    export IBMSG_VERBS_REG_CACHE="$3" IBMSG_CORE_RNDV_WINDOWS="$4"
    as_user "$2" "$bin" -p "$port" -s "$5" -n "$6" --output=bandwidth >/dev/null &
    sleep 1
    r=$(as_user "$2" "$bin" -p "$port" -s "$5" -n "$6" --output=bandwidth 127.0.0.1) || r=failed
    wait || true
    port=$((port + 1))
    echo "size=$5 build=$1 user=$2 cache=$3 windows=$4 iters=$6 MB/s=$r"
}
i=0
while [ "$i" -lt "$runs" ]; do
    for size in 65536 1048576; do
        iters=2000
        [ "$size" = 1048576 ] && iters=200
        for build in $builds; do
            for user in ${USERS:-root}; do
                for setup in ${SETUPS:-1,1 0,1 1,0}; do
                    one "$build" "$user" "${setup%,*}" "${setup#*,}" "$size" "$iters"
                done
            done
        done
    done
    i=$((i + 1))
done
