#!/usr/bin/env bash
# A one-node Slurm cluster for the job-layer tests, in a private directory: munged with its own
# key, slurmctld and slurmd from a generated slurm.conf (this host's name and CPU count,
# MpiDefault=pmix, no accounting), everything as root and on loopback.
#
#   slurm_cluster.sh up DIR     start it (DIR: a new empty directory on a file system that takes
#                               Unix sockets, e.g. under /dev/shm); prints nothing on success,
#                               the daemons' logs on failure. Use it with SLURM_CONF=DIR/slurm.conf.
#   slurm_cluster.sh down DIR   stop the daemons started in DIR (by their recorded pids)
#
# Meant for the Soft-RoCE guest (test/vm/run), which is a machine of its own: the default ports
# 6817/6818 and the hostname guest0 are free there. Exit status: 0, or 1 with the reason.
set -euo pipefail

cmd=${1:?usage: slurm_cluster.sh up|down DIR}
dir=${2:?usage: slurm_cluster.sh up|down DIR}
up_timeout=${IBMSG_SLURM_UP_TIMEOUT:-120} # seconds for the node to become idle (TCG is slow)

die() {
    echo "slurm_cluster: $*" >&2
    exit 1
}

# Ends a daemon by the pid it recorded, then waits for it (it is not our child).
stop_pid() {
    local f=$1 pid i
    [ -s "$f" ] || return 0
    pid=$(cat "$f")
    [[ $pid =~ ^[0-9]+$ ]] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

down() {
    # slurmd first: its steps' slurmstepd processes go with it.
    stop_pid "$dir/slurmd.pid"
    stop_pid "$dir/slurmctld.pid"
    stop_pid "$dir/munged.pid"
}

show_logs() {
    local f
    for f in munged.out munged.log slurmctld.log slurmd.log; do
        if [ -s "$dir/$f" ]; then
            echo "--- $dir/$f (last 30 lines)" >&2
            tail -n 30 "$dir/$f" >&2
        fi
    done
}

up() {
    local host cpus i state
    for p in munged slurmctld slurmd sinfo; do
        command -v "$p" >/dev/null || die "$p not found: scripts/deps test (munge slurmctld slurmd slurm-client)"
    done
    if [ ! -d "$dir" ] || [ -n "$(ls -A "$dir")" ]; then
        die "$dir must be an empty directory"
    fi
    host=$(hostname)
    cpus=$(nproc)
    mkdir -p "$dir/ctld" "$dir/spool" "$dir/tmp"
    chmod 0755 "$dir" # munged's socket must be reachable by all

    # munged insists on a private key file and refuses root without --force.
    head -c 1024 /dev/urandom >"$dir/munge.key"
    chmod 0400 "$dir/munge.key"
    munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
        --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
        --seed-file="$dir/munged.seed" 2>"$dir/munged.out" ||
        {
            show_logs
            die "munged did not start"
        }

    # SlurmctldHost and NodeAddr name loopback: the guest's hostname has no address in
    # /etc/hosts (the host's file). TmpFS: the PMIx plugin puts its clients' Unix sockets there.
    # select/linear gives the job the whole node; srun --overcommit runs more tasks than CPUs.
    cat >"$dir/slurm.conf" <<EOF
ClusterName=ibmsg
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$dir/tmp
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=pmix
SchedulerType=sched/builtin
SelectType=select/linear
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ibmsg Nodes=$host Default=YES MaxTime=30 State=UP OverSubscribe=YES
EOF
    : >"$dir/plugstack.conf"
    # slurmd loads a cgroup plugin even when no cgroup plugin is configured, and autodetection
    # fails where nothing is mounted on /sys/fs/cgroup (the guest); v1 initializes without it.
    echo 'CgroupPlugin=cgroup/v1' >"$dir/cgroup.conf"
    export SLURM_CONF=$dir/slurm.conf

    slurmctld -i >"$dir/slurmctld.out" 2>&1 || {
        show_logs
        die "slurmctld did not start"
    }
    slurmd >"$dir/slurmd.out" 2>&1 || {
        show_logs
        die "slurmd did not start"
    }
    for ((i = 0; i < up_timeout * 2; i++)); do
        state=$(sinfo -h -n "$host" -o %t 2>/dev/null || true)
        if [ "$state" = idle ]; then
            return 0
        fi
        sleep 0.5
    done
    show_logs
    die "node $host not idle after $up_timeout s (state '${state:-none}')"
}

case "$cmd" in
up) up ;;
down) down ;;
*) die "unknown command '$cmd' (up, down)" ;;
esac
