#!/usr/bin/env bash
# perf/bench/bench_verbs_steps as perf/bench/compare --steps runs it. cli: bad command lines are refused
# with exit status 2 and a message (no device needed). run: every rung of the ladder, and the
# ingredients alone, as a server and a client at 8 B and 4 KiB; the bench itself checks that
# every message arrives with its number, and this checks the ib_send_lat-style table.
set -euo pipefail
mode=${1:?usage: $0 cli|run BIN_DIR}
bench=${2:?usage: $0 cli|run BIN_DIR}/bench_verbs_steps

case $mode in
cli)
    refuse() { # expected-message args...
        local want=$1 out rc=0
        shift
        out=$("$bench" "$@" 2>&1) || rc=$?
        if [ "$rc" != 2 ] || ! grep -q -- "$want" <<<"$out"; then
            echo "FAIL: bench_verbs_steps $* gave status $rc and '$out' (expected 2, '$want')" >&2
            exit 1
        fi
    }
    refuse "-s wants 1..1048576" -s 0
    refuse "-n wants 3..100000000" -n 2
    refuse "--recv-bufs wants 1..4096" --recv-bufs 0
    refuse "--signal wants 1..64" --signal 65
    refuse "--signal wants 1..64" --signal x
    refuse "larger than --buf-size 8192" -s 8193
    refuse "unexpected argument 'b'" a b
    refuse "unrecognized option" --bogus
    "$bench" -h | grep "usage: bench_verbs_steps" >/dev/null || { echo "FAIL: -h" >&2; exit 1; }
    echo "verbs_steps cli: ok"
    ;;
run)
    if ! ibv_devinfo 2>/dev/null | grep PORT_ACTIVE >/dev/null; then
        echo "no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma"
        exit 77
    fi
    dev=$(ibv_devinfo | awk '/hca_id:/ { d = $2 } /PORT_ACTIVE/ { print d; exit }')
    gid=${IBMSG_TEST_GID_INDEX:-1}
    port=$((20000 + RANDOM % 20000))
    work=$(mktemp -d "${TMPDIR:-/tmp}/verbs_steps.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    n=200
    for size in 8 4096; do
        for flags in "" "--imm" "--imm --recv-bufs 64 --send-bufs 128" \
            "--imm --recv-bufs 64 --send-bufs 128 --copy-send" \
            "--imm --recv-bufs 64 --send-bufs 128 --copy-send --copy-recv" \
            "--imm --recv-bufs 64 --send-bufs 128 --copy-send --copy-recv --send-cq --signal 16" \
            "--recv-bufs 3 --copy-recv" "--send-bufs 5 --copy-send --signal 4" "--send-cq"; do
            # shellcheck disable=SC2086 # flags is a word list
            timeout 120 "$bench" -d "$dev" -x "$gid" -p "$port" -s $size -n $n $flags \
                >"$work/server" 2>&1 &
            server=$!
            # shellcheck disable=SC2086
            if ! timeout 120 "$bench" -d "$dev" -x "$gid" -p "$port" -s $size -n $n $flags \
                127.0.0.1 >"$work/client" 2>&1 || ! wait "$server"; then
                echo "FAIL: -s $size $flags" >&2
                cat "$work/client" "$work/server" >&2
                exit 1
            fi
            port=$((port + 1))
            # The row: size, iterations, then 7 positive times with min <= typical <= max.
            if ! awk -v s=$size -v n=$n '
                /t_typical/ { header = 1; next }
                header && $1 == s && $2 == n && NF == 9 {
                    for (i = 3; i <= 9; i++) if (!($i > 0)) exit 1
                    if ($3 > $5 || $5 > $4) exit 1
                    ok = 1
                }
                END { exit !ok }' "$work/client"; then
                echo "FAIL: no well-formed result row for -s $size $flags" >&2
                cat "$work/client" >&2
                exit 1
            fi
            [ -s "$work/server" ] && { echo "FAIL: the server printed: $(cat "$work/server")" >&2; exit 1; }
            echo "-s $size $flags: $(awk '/t_typical/ { getline; print $5 " us typical" }' "$work/client")"
        done
    done
    echo "verbs_steps run: ok"
    ;;
*)
    echo "usage: $0 cli|run BIN_DIR" >&2
    exit 2
    ;;
esac
