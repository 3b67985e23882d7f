#!/usr/bin/env bash
# What failure detection costs on the hot path: ibmsg_send_bw and ibmsg_send_lat (8 B) from a
# build before it (BASE, e.g. a worktree of the parent commit) and this one, with
# core_keepalive_ms 0 and the default 1000, interleaved round by round (boot-to-boot noise is
# large under emulation: compare within one run only). Run in the guest:
#   test/vm/run --timeout 900 -- test/core/keepalive_cost.sh BASE_BUILD build [rounds]
set -euo pipefail
base=$1
ours=$2
rounds=${3:-2}
dev=${IBMSG_TEST_DEVICE:-rxe0}
port=18700
run() { # build tool keepalive_ms args...
    local build=$1 tool=$2 ka=$3
    shift 3
    port=$((port + 1))
    IBMSG_CORE_KEEPALIVE_MS=$ka "$build/perf/$tool" -d "$dev" -p $port "$@" >/dev/null 2>&1 &
    sleep 0.5
    IBMSG_CORE_KEEPALIVE_MS=$ka "$build/perf/$tool" -d "$dev" -p $port "$@" 127.0.0.1 |
        grep -E '^ *[0-9]' | tail -1
    wait
}
for r in $(seq "$rounds"); do
    for variant in "base $base 1000" "ours $ours 0" "ours $ours 1000"; do
        set -- $variant
        printf 'round %s %-4s keepalive %4s ms  bw  8 B: %s\n' "$r" "$1" "$3" \
            "$(run "$2" ibmsg_send_bw "$3" -s 8 -n 10000)"
        printf 'round %s %-4s keepalive %4s ms  lat 8 B: %s\n' "$r" "$1" "$3" \
            "$(run "$2" ibmsg_send_lat "$3" -s 8 -n 2000)"
    done
done
