#!/bin/bash
# The runner's contract: the command's exit status, separate stdout and
# stderr, the caller's cwd and environment, a writable cwd on the 9p root,
# and a timed-out guest is a failure (124), never a pass.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/ibmsg-vm-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# shellcheck disable=SC2016 # expanded in the guest
IBMSG_X='a b$c' GTEST_FILTER='Foo.*' vm_expect 3 "$vm_run" -- sh -c '
	echo "cwd=$PWD"
	echo "env=$IBMSG_X|$GTEST_FILTER"
	echo "on stderr" >&2
	echo written >file
	exit 3'
grep -qx "cwd=$work" <<<"$out" || die "cwd not propagated"
# shellcheck disable=SC2016 # a literal dollar
grep -qxF 'env=a b$c|Foo.*' <<<"$out" || die "environment not propagated"
[ "$(cat file)" = written ] || die "file written in the guest is not on the host"

err=$("$vm_run" -- sh -c 'echo out; echo err >&2' 2>&1 >/dev/null)
[ "$err" = err ] || die "stderr not kept apart from stdout: '$err'"

start=$SECONDS
# The kept per-run directory of this failure goes away with $work.
TMPDIR=$work vm_expect 124 "$vm_run" --timeout 3 -- sleep 600
grep -q 'guest timed out after 3 s' <<<"$out" || die "no timeout message"
[ $((SECONDS - start)) -lt 30 ] || die "timeout took $((SECONDS - start)) s"
echo PASS
