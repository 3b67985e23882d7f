#!/bin/bash
# perftest ib_send_bw and ib_send_lat between two processes in the guest:
#   perftest.sh            both on rxe0 (rxe loops back internally)
#   perftest.sh --two-hosts  rxe0 -> rxe1, packets cross the veth pair
# Extra arguments after the mode are passed to perftest-guest.sh (sizes).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

opts=()
if [ "${1:-}" = --two-hosts ]; then
	opts=(--two-hosts)
	shift
fi
command -v ib_send_bw >/dev/null || skip "perftest is not installed (apt-get install perftest)"

vm_expect 0 "$vm_run" "${opts[@]}" -- "$vm_dir/tests/perftest-guest.sh" "$@"
grep -q '^RESULT ib_send_bw ' <<<"$out" || die "no ib_send_bw result"
grep -q '^RESULT ib_send_lat ' <<<"$out" || die "no ib_send_lat result"
echo PASS
