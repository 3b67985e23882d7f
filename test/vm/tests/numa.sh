#!/bin/bash
# --numa 2: the guest has two NUMA nodes with one CPU each.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

# shellcheck disable=SC2016 # expanded in the guest
vm_expect 0 "$vm_run" --numa 2 -- sh -c '
	if command -v numactl >/dev/null; then numactl --hardware; fi
	for n in /sys/devices/system/node/node*; do
		echo "${n##*/} cpus $(cat $n/cpulist)"
	done
	echo "IBMSG_VM_NUMA_NODES=$IBMSG_VM_NUMA_NODES"'
[ "$(grep -c '^node[0-9]* cpus ' <<<"$out")" = 2 ] || die "not exactly 2 nodes"
grep -qx 'node0 cpus 0' <<<"$out" || die "node 0 does not have exactly cpu 0"
grep -qx 'node1 cpus 1' <<<"$out" || die "node 1 does not have exactly cpu 1"
grep -qx 'IBMSG_VM_NUMA_NODES=2' <<<"$out" || die "IBMSG_VM_NUMA_NODES"
echo PASS
