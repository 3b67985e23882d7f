#!/bin/bash
# What the lead runs for RDMA unit tests: "test/vm/run -- ctest --test-dir
# BUILD -L rdma --output-on-failure" from the host's cwd.  Builds a small
# probe project on the host (a verbs program, an environment check that
# writes into the build tree, a Unix socket in TMPDIR) and runs it that way.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

[ -f /usr/include/infiniband/verbs.h ] || skip "libibverbs-dev is not installed"
work=$(mktemp -d "${TMPDIR:-/tmp}/ibmsg-vm-ctest.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! { cmake -S "$vm_dir/tests/ctest-project" -B build && cmake --build build; } >build.log 2>&1; then
	cat build.log
	die "cannot build the probe project"
fi

IBMSG_PROBE='x y' GTEST_COLOR=no vm_expect 0 "$vm_run" -- ctest --test-dir build -L rdma --output-on-failure
grep -q '100% tests passed, 0 tests failed out of 3' <<<"$out" || die "not all 3 probe tests passed"
[ "$(cat build/written)" = guest-wrote ] || die "the guest did not write into the build tree"
[ -f build/Testing/Temporary/LastTest.log ] || die "ctest's log is not on the host"
echo PASS
