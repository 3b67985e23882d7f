# shellcheck shell=bash disable=SC2034 # vm_run and out are for the sourcing scripts
# Shared by the test/vm/tests/*.sh checks (sourced, not run).
# Exit 77 means "skipped" (ctest SKIP_RETURN_CODE).

vm_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vm_run=$vm_dir/run
# These tests are about the guest, so never take the native shortcut.
export IBMSG_VM_FORCE=1

skip() {
	echo "SKIP: $*"
	exit 77
}
die() {
	echo "FAIL: $*" >&2
	exit 1
}

# A guest inside the guest would be emulation squared: refuse.
if [ "${IBMSG_VM:-0}" = 1 ]; then
	skip "already inside the test guest"
fi
if [ "$(id -u)" != 0 ] && ! command -v qemu-system-x86_64 >/dev/null; then
	skip "qemu-system-x86_64 is missing and only root may install it"
fi

# vm_expect STATUS CMD...: run CMD (normally $vm_run ...), show its output and
# fail unless it exits with STATUS.  Leaves the output in $out.
vm_expect() {
	local want=$1 rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	printf '%s\n' "$out"
	[ "$rc" = "$want" ] || die "'$*' exited with $rc, expected $want"
}
