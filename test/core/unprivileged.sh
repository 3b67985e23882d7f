#!/usr/bin/env bash
# The core's RDMA tests as an ordinary user runs them: an unprivileged user (nobody, every
# capability dropped) with a locked-memory limit of 64 MiB (ulimit -l 65536), where the tests
# usually run as root (CAP_IPC_LOCK lifts the limit, CAP_SYS_ADMIN shows page frames).
#
# Every test runs, those that count registration-cache hits too: without CAP_SYS_ADMIN
# /proc/self/pagemap hides page frames, so the cache learns of freed memory through release
# events (userfaultfd, verbs/release_watch.h) instead; checked here by its message.
#
# Usage: unprivileged.sh TEST_BINARY... (the core's RDMA test binaries). Needs root (to drop privileges), setpriv
# and an RDMA device the unprivileged user may open: without one it exits 77 (skip), but fails in
# the test guest (IBMSG_VM=1), which provides them all.
set -euo pipefail
unmet() { # why
    if [ "${IBMSG_VM:-0}" = 1 ]; then
        echo "FAIL: $1 (the test guest provides it)"
        exit 1
    fi
    echo "SKIP: $1"
    exit 77
}
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    unmet "needs root and setpriv to drop to an unprivileged user"
fi
devs=(/dev/infiniband/uverbs*)
if [ ! -e "${devs[0]}" ]; then
    unmet "no RDMA device (run it through test/vm/run)"
fi
if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "${devs[0]}" -a -w "${devs[0]}"; then
    unmet "${devs[0]} is not open to other users (udev's rule makes it 0666)"
fi
log=$(mktemp "${TMPDIR:-/tmp}/unprivileged.XXXXXX")
trap 'rm -f "$log"' EXIT
cd "${TMPDIR:-/tmp}"
ulimit -l 65536 # soft and hard, set as root: the user cannot raise it again
status=0
for t in "$@"; do
    if ! setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
        -- env IBMSG_LOG_LEVEL=info "$t" --gtest_brief=1 >>"$log" 2>&1; then
        status=1
    fi
done
if ! grep -q 'may pin 65536 KiB of registered memory (RLIMIT_MEMLOCK' "$log"; then
    echo "the locked-memory limit was not reported at start-up"
    status=1
fi
if ! grep -q 'registration cache: page frames hidden; freed memory is seen through release' "$log"; then
    echo "expected the registration cache to use release events (frames hidden from nobody)"
    status=1
fi
if grep -q 'registration cache disabled' "$log"; then
    echo "the registration cache disabled itself"
    status=1
fi
[ $status = 0 ] || grep -v '^ibmsg \(info\|warn\|error\)' "$log" | tail -60
grep -E '^\[  (PASSED|FAILED) |FAILED  \]' "$log" || true
exit $status
