#!/bin/bash
# Usage: perf_tools.sh cli|run BIN_DIR
#   cli: bad command lines of ibmsg_send_bw / ibmsg_send_lat exit 1 with a message naming the
#        problem, -h exits 0; a client without a device or server fails cleanly (host, unit).
#   run: client/server exchanges on the first active RDMA port (the Soft-RoCE guest): bw over
#        every size 2 B .. 8 MiB (eager, then rendezvous) with --counters and --json, lat, and
#        a -D run; check_output.py checks the tables, the numbers and that the counter deltas
#        equal the iteration counts.
set -euo pipefail
mode=$1 bin=$2
here=$(cd "$(dirname "$0")" && pwd)
bw=$bin/ibmsg_send_bw lat=$bin/ibmsg_send_lat wr=$bin/ibmsg_write_bw
alat=$bin/ibmsg_atomic_lat abw=$bin/ibmsg_atomic_bw

expect_error() { # message tool args...
    local msg=$1 out rc=0
    shift
    out=$("$@" 2>&1 >/dev/null) || rc=$?
    if [ $rc -ne 1 ] || [[ $out != *"$msg"* ]]; then
        echo "FAIL: $* gave status $rc, stderr: $out (expected 1 and '$msg')" >&2
        exit 1
    fi
}

case $mode in
cli)
    "$bw" -h | grep -- '--counters' >/dev/null
    "$lat" --help >/dev/null
    expect_error "unknown option -R" "$bw" -R
    expect_error "unknown option --bogus" "$lat" --bogus
    expect_error "-a and -s conflict" "$bw" -a -s 64
    expect_error "-t does not apply to a latency test" "$lat" -t 16
    expect_error "invalid value 'x' for -n" "$bw" -n x
    expect_error "--output must be" "$bw" --output=fast
    expect_error "unknown category" "$bw" --counters=gpu
    expect_error "-l does not apply to a latency test" "$lat" -l 4
    "$wr" -h | grep 'ibmsg_put' >/dev/null
    expect_error "-r does not apply to a write test" "$wr" -r 16
    expect_error "--output=latency does not apply" "$wr" --output=latency
    "$abw" -h | grep 'CMP_AND_SWAP' >/dev/null
    expect_error "-A must be FETCH_AND_ADD or CMP_AND_SWAP" "$abw" -A ADD
    expect_error "-s must be 8" "$alat" -s 16
    expect_error "-a does not apply to an atomic test" "$abw" -a
    expect_error "-o applies to ibmsg_atomic_bw only" "$alat" -o 4
    expect_error "-D does not apply to an atomic test" "$alat" -D 1
    expect_error "-A applies to the atomic tests only" "$wr" -A CMP_AND_SWAP
    if ! ibv_devinfo 2>/dev/null | grep PORT_ACTIVE >/dev/null; then
        # No device: a clear error, not a crash and not a hang.
        expect_error "no usable RDMA device" timeout 30 "$bw" -n 10 127.0.0.1
    fi
    echo "perf_tools_cli: ok"
    ;;
run)
    if ! ibv_devinfo 2>/dev/null | grep PORT_ACTIVE >/dev/null; then
        echo "no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma"
        exit 77
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/perf_tools.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    port=$((20000 + RANDOM % 20000))
    pair() { # name tool args...: server and client with the same arguments
        local name=$1 tool=$2 server t0=$SECONDS
        shift 2
        timeout 120 "$tool" -p "$port" "$@" --json "$work/$name.server.json" \
            >"$work/$name.server.txt" 2>"$work/$name.server.err" &
        server=$!
        if ! timeout 120 "$tool" -p "$port" "$@" --json "$work/$name.client.json" 127.0.0.1 \
            >"$work/$name.client.txt" 2>"$work/$name.client.err"; then
            echo "FAIL: client of $name" >&2
            cat "$work/$name.client.txt" "$work/$name.client.err" >&2
            exit 1
        fi
        if ! wait "$server"; then
            echo "FAIL: server of $name" >&2
            cat "$work/$name.server.txt" "$work/$name.server.err" >&2
            exit 1
        fi
        port=$((port + 1))
        echo "$name: $((SECONDS - t0)) s"
    }
    pair bw_all "$bw" -a -n 20 --counters
    pair lat "$lat" -s 8 -n 200 --counters
    pair bw_duration "$bw" -s 1024 -D 1 --counters=core,verbs
    pair lat_duration "$lat" -s 64 -D 1 --counters=core
    pair bw_list1 "$bw" -s 8 -n 300 -l 1 --counters=core,verbs
    pair bw_list4 "$bw" -s 8 -n 300 -l 4 --counters=core,verbs
    pair write_all "$wr" -a -n 8 --counters=core,verbs
    pair write "$wr" -s 4096 -n 500 --counters
    pair write_duration "$wr" -s 65536 -D 1 --counters=core
    pair atomic_lat "$alat" -n 300 --counters=core,verbs
    pair atomic_lat_cas "$alat" -A CMP_AND_SWAP -n 300 --counters=core,verbs
    pair atomic_bw "$abw" -n 5000 -o 4 --counters=core,verbs
    pair atomic_bw_cas "$abw" -A CMP_AND_SWAP -D 1 --counters=core,verbs
    # One python for all checks (it parses every JSON file): python starts slowly in the guest.
    python3 "$here/check_output.py" "$work"
    cat "$work/bw_all.client.txt" "$work/lat.client.txt" "$work/write.client.txt" \
        "$work/atomic_lat.client.txt" "$work/atomic_bw.client.txt"
    echo "perf_tools_run: ok"
    ;;
*)
    echo "usage: $0 cli|run BIN_DIR" >&2
    exit 2
    ;;
esac
