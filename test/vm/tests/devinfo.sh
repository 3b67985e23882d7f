#!/bin/bash
# The default guest: rxe0 is ACTIVE with IB MTU 4096, the rdma_cm modules are
# loaded and the environment is the one tests rely on.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

# shellcheck disable=SC2016 # expanded in the guest
vm_expect 0 "$vm_run" -- bash -c '
	set -e
	ibv_devinfo -d rxe0
	for m in rdma_rxe rdma_cm rdma_ucm ib_cm iw_cm configfs; do
		test -d /sys/module/$m || { echo "module $m not loaded"; exit 1; }
	done
	echo "hostname=$(hostname) TMPDIR=$TMPDIR IBMSG_VM=$IBMSG_VM dev=$IBMSG_TEST_DEVICE gid=$IBMSG_TEST_GID_INDEX"
	echo "gid1=$(cat /sys/class/infiniband/rxe0/ports/1/gids/1)"
	test -c /dev/infiniband/rdma_cm && echo "rdma_cm device present"
	# Unix sockets (and FIFOs) need the tmpfs TMPDIR, not the 9p root.
	mkfifo "$TMPDIR/fifo" && echo "fifo in TMPDIR ok"
	# Process substitution (test/mpit/check_enum.sh) reads /dev/fd.
	cmp <(echo same) <(echo same) && echo "process substitution ok"
	# python3 is Debian'"'"'s, whatever the caller'"'"'s PATH named first (guest/setup).
	[ "$(readlink -f "$(command -v python3)")" = "$(readlink -f /usr/bin/python3)" ] &&
		echo "python3 is Debian'"'"'s"
'
grep -q 'state:.*PORT_ACTIVE' <<<"$out" || die "rxe0 is not PORT_ACTIVE"
grep -q 'active_mtu:.*4096' <<<"$out" || die "rxe0 active_mtu is not 4096"
grep -q 'hostname=guest0 TMPDIR=/dev/shm IBMSG_VM=1 dev=rxe0 gid=1' <<<"$out" || die "guest environment"
grep -q 'gid1=0000:0000:0000:0000:0000:ffff:c0a8:4d01' <<<"$out" || die "GID index 1 is not ::ffff:192.168.77.1"
grep -q 'rdma_cm device present' <<<"$out" || die "/dev/infiniband/rdma_cm missing"
grep -q 'fifo in TMPDIR ok' <<<"$out" || die "cannot make a FIFO in TMPDIR"
grep -q 'process substitution ok' <<<"$out" || die "no /dev/fd: process substitution fails"
grep -q "python3 is Debian's" <<<"$out" || die "python3 in the guest is not /usr/bin/python3 (seconds more a start)"
echo PASS
