#!/usr/bin/env bash
# The job-layer tests under a PMIx launcher: test/world/world_alltoall (or examples/ring.c) with N
# ranks under Open MPI's mpirun or Slurm's srun --mpi=pmix, and the one-node Slurm cluster srun
# needs (a ctest fixture).
#
#   world_job.sh mpirun N PROGRAM MODE
#   world_job.sh srun|sbatch STATE N PROGRAM MODE
#   world_job.sh cluster-up STATE | cluster-down STATE
#
# MODE: alltoall | alltoall-small | alltoall-eager | ring-on-demand | early-exit |
# early-exit-status | connect-timeout | ring (ring:
# examples/ring.c; the others: world_alltoall; on-demand wireup is the default). early-exit-status
# (srun only): the leaving rank exits 3 after finalizing; the others go on, and srun exits 3.
# sbatch runs examples/sbatch_ring.sh with PROGRAM (MODE ring). STATE names the file in which
# cluster-up records the cluster (test/world/slurm_cluster.sh) that srun and sbatch run on.
# Exits 77 (skip) without an RDMA device; the Slurm tests also outside the test guest
# (IBMSG_VM=1), since they start their own slurmctld and slurmd as root. In the guest a missing
# launcher or a cluster that does not start is a failure. A hang is a failure (timeout).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

need_device() {
    if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
        echo "SKIP: no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma"
        exit 77
    fi
}

need_guest() {
    need_device
    if [ "${IBMSG_VM:-0}" != 1 ]; then
        echo "SKIP: starts its own Slurm daemons as root: runs only in the test guest (test/vm/run)"
        exit 77
    fi
}

# Open MPI, PMIx and Slurm make Unix sockets: TMPDIR must be a file system that allows them (the
# guest's root is 9p, which does not).
export TMPDIR=${TMPDIR:-/dev/shm}

launcher=${1:?usage: world_job.sh mpirun|srun|cluster-up|cluster-down ...}
shift
case "$launcher" in
cluster-up)
    need_guest
    state=${1:?cluster-up STATE}
    dir=$(mktemp -d "$TMPDIR/ibmsg-slurm.XXXXXX")
    echo "$dir" >"$state"
    t0=$SECONDS
    "$here/slurm_cluster.sh" up "$dir"
    echo "slurm cluster up in $((SECONDS - t0)) s: SLURM_CONF=$dir/slurm.conf"
    exit 0
    ;;
cluster-down)
    need_guest
    state=${1:?cluster-down STATE}
    [ -s "$state" ] || exit 0
    dir=$(cat "$state")
    "$here/slurm_cluster.sh" down "$dir"
    rm -rf "$dir" "$state"
    exit 0
    ;;
mpirun)
    need_device
    if ! command -v mpirun >/dev/null; then
        echo "SKIP: no mpirun: scripts/deps test (openmpi-bin)"
        exit 77
    fi
    ;;
srun | sbatch)
    need_guest
    state=${1:?srun|sbatch STATE N PROGRAM MODE}
    shift
    if [ ! -s "$state" ]; then
        echo "FAIL: no Slurm cluster ($state is missing: its fixture world_srun_cluster_up failed)"
        exit 1
    fi
    export SLURM_CONF
    SLURM_CONF=$(cat "$state")/slurm.conf
    ;;
*) echo "unknown launcher $launcher" >&2; exit 2 ;;
esac
n=${1:?N} prog=${2:?PROGRAM} mode=${3:?MODE}
last=$((n - 1))
mpi_env=()
want_rc=0
case "$mode" in
alltoall) args=(-n 50 -s 100) want="^rank [0-9]+/$n " expect=$n ;;
alltoall-small) args=(-n 20 -s 100) want="^rank [0-9]+/$n " expect=$n ;; # many ranks, seconds
alltoall-eager)
    args=(-n 50 -s 100 -e) want="^rank [0-9]+/$n " expect=$n
    export IBMSG_WORLD_WIREUP=0 # srun passes the environment on; mpirun needs -x
    mpi_env=(-x IBMSG_WORLD_WIREUP=0)
    ;;
ring-on-demand) args=(-r -n 100) want="^ring rank [0-9]+/$n: 100 msgs" expect=$n ;;
early-exit) args=(-x "$last") want="^rank [0-9]+: rank $last reported failed" expect=$last ;;
early-exit-status)
    args=(-x "$last" -c 3) want="^rank [0-9]+: rank $last reported failed" expect=$last want_rc=3
    ;;
ring) args=(-n 100 -s 64) want="^ring: $n ranks, 100 laps of 64 B" expect=1 ;;
connect-timeout)
    # The last rank answers nothing: the others' connects to it fail after 700 ms (the
    # variable, from the environment) and within 500 ms more. Without the cap of the last resend
    # at the deadline (world/wireup.c) the failure would wait for the resend after it, at
    # 20+40+...+640 = 1260 ms: never inside the bound, however the host is loaded. The margin
    # is for the emulated guest's scheduling: 4-28 ms over were usual, 119 ms seen once (with
    # a 200 ms timeout and a 100 ms margin, which then failed).
    args=(-t "$last" -T 700 -M 500) want="^rank [0-9]+: connect to silent rank $last failed"
    expect=$last
    export IBMSG_WORLD_CONNECT_TIMEOUT_MS=700
    mpi_env=(-x IBMSG_WORLD_CONNECT_TIMEOUT_MS=700)
    ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
case "$launcher" in
mpirun)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    timeout 240 mpirun --allow-run-as-root --oversubscribe -np "$n" "${mpi_env[@]}" "$prog" \
        "${args[@]}" >"$out" 2>&1 || rc=$?
    ;;
srun)
    # --overcommit: more tasks than the node's CPUs. --kill-on-bad-exit=0: a task that exits
    # non-zero does not end its step (Slurm's default, unless slurm.conf says otherwise), so the
    # survivors of early-exit are judged by their own lines. --time bounds the step in Slurm too.
    timeout 300 srun -n "$n" --overcommit --mpi=pmix --time=5 --kill-on-bad-exit=0 \
        "$prog" "${args[@]}" >"$out" 2>&1 || rc=$?
    ;;
sbatch)
    # The example as a user submits it. Its state is read twice a second: sbatch --wait polls at
    # growing intervals and returned 30 s after a job of 15 s had ended.
    job=$(sbatch --parsable -n "$n" --overcommit --time=5 --output="$out" \
        "$here/../../examples/sbatch_ring.sh" "$prog" "${args[1]}" "${args[3]}") || rc=$?
    end=$((SECONDS + 300))
    while [ "$rc" = 0 ]; do
        info=$(scontrol -o show job "$job" 2>&1) || info=
        state=$(sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p' <<<"$info")
        case $state in
        PENDING | CONFIGURING | RUNNING | COMPLETING | "") ;; # "": scontrol did not answer; retried
        COMPLETED) rc=0 && break ;;
        *) # FAILED, CANCELLED, TIMEOUT, ...: the batch script's status (signal: 128 + it)
            code=$(sed -n 's/.* ExitCode=\([0-9]*\):\([0-9]*\).*/\1 \2/p' <<<"$info")
            read -r st sig <<<"$code" || true
            st=${st:-1} sig=${sig:-0}
            rc=$((sig != 0 ? 128 + sig : (st != 0 ? st : 1)))
            echo "sbatch: job $job ended $state (ExitCode $st:$sig)"
            ;;
        esac
        if [ $SECONDS -ge $end ]; then
            scancel "$job"
            rc=124
        fi
        sleep 0.5
    done
    ;;
esac
cat "$out"
if [ "$rc" -ne "$want_rc" ]; then
    echo "FAIL: $launcher exited with $rc, expected $want_rc$([ "$rc" -eq 124 ] && echo ' (timed out: a hang)')"
    exit 1
fi
# srun names a task that exited non-zero; the step went on (--kill-on-bad-exit=0).
if [ "$want_rc" -ne 0 ] && ! grep -q "task $last: Exited with exit code $want_rc" "$out"; then
    echo "FAIL: srun did not report task $last's exit status $want_rc"
    exit 1
fi
got=$(grep -c -E "$want" "$out" || true)
if [ "$got" -ne "$expect" ]; then
    echo "FAIL: $got ranks reported success, expected $expect"
    exit 1
fi
echo "PASS: $mode with $n ranks under $launcher"
