#!/usr/bin/env bash
# Run test/world/world_alltoall under Open MPI's mpirun (PMIx) with 4 ranks.
# Usage: world_mpirun.sh PROGRAM alltoall|alltoall-eager|ring-on-demand|early-exit|ring
# (ring: examples/ring.c; the others: test/world/world_alltoall.c; on-demand wireup is the default)
# Exits 77 (skip) without an RDMA device or without mpirun; a hang is a failure (timeout).
set -euo pipefail
prog=$1 mode=$2
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    echo "SKIP: no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma"
    exit 77
fi
if ! command -v mpirun >/dev/null; then
    echo "SKIP: no mpirun: scripts/deps test (openmpi-bin)"
    exit 77
fi
# Open MPI and PMIx make Unix sockets: TMPDIR must be a file system that allows them (the
# guest's root is 9p, which does not).
export TMPDIR=${TMPDIR:-/dev/shm}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
env=()
case "$mode" in
alltoall) args=(-n 50 -s 100) want='^rank [0-3]/4 ' ;;
alltoall-eager) args=(-n 50 -s 100 -e) want='^rank [0-3]/4 ' env=(-x IBMSG_WORLD_WIREUP=0) ;;
ring-on-demand) args=(-r -n 100) want='^ring rank [0-3]/4: 100 msgs' ;;
early-exit) args=(-x 3) want='^rank [0-2]: rank 3 reported failed' ;;
ring) args=(-n 100 -s 64) want='^ring: 4 ranks, 100 laps of 64 B' ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
rc=0
timeout 240 mpirun --allow-run-as-root --oversubscribe -np 4 "${env[@]}" "$prog" "${args[@]}" \
    >"$out" 2>&1 ||
    rc=$?
cat "$out"
if [ "$rc" -ne 0 ]; then
    echo "FAIL: mpirun exited with $rc$([ "$rc" -eq 124 ] && echo ' (timed out: a hang)')"
    exit 1
fi
got=$(grep -c "$want" "$out" || true)
case "$mode" in alltoall* | ring-on-demand) expect=4 ;; early-exit) expect=3 ;; ring) expect=1 ;; esac
if [ "$got" -ne "$expect" ]; then
    echo "FAIL: $got ranks reported success, expected $expect"
    exit 1
fi
echo "PASS: $mode with 4 ranks"
