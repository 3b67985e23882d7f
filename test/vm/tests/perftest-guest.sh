#!/bin/bash
# Runs in the guest (via perftest.sh): ib_send_bw and ib_send_lat, server in
# the background, client in the foreground, and checks that each prints its
# result line with a nonzero number.  perftest's rdtsc calibration sometimes
# fails under emulation (0.00 or inf), so a failed run is retried once.
#   perftest-guest.sh [BW_SIZE [LAT_SIZE [ITERS]]]
set -euo pipefail

bw_size=${1:-4096}
lat_size=${2:-8}
iters=${3:-1000}

[ "${IBMSG_VM:-0}" = 1 ] || { echo "run me in the guest: test/vm/run -- $0" >&2; exit 2; }
if [ "$IBMSG_VM_MODE" = two-hosts ]; then
	srv_dev=$IBMSG_VM_DEV_B cli_dev=$IBMSG_VM_DEV_A target=$IBMSG_VM_IP_B
else
	srv_dev=rxe0 cli_dev=rxe0 target=127.0.0.1
fi
port=18515

wait_listen() { # perftest's client gives up at once if the server is not up
	local i
	for ((i = 0; i < 100; i++)); do
		ss -Hltn "sport = :$1" | grep . >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# once TOOL SIZE: one server/client pair; prints the client's output and
# "RESULT tool size value unit" or returns 1.
once() {
	local tool=$1 size=$2 srv_log out value
	srv_log=$(mktemp)
	port=$((port + 1))
	"$tool" -d "$srv_dev" -x 1 -F -p "$port" -s "$size" -n "$iters" >"$srv_log" 2>&1 &
	local srv=$!
	if ! wait_listen "$port"; then
		echo "$tool server did not listen:"
		cat "$srv_log"
		kill "$srv" 2>/dev/null || true
		return 1
	fi
	out=$(timeout 120 "$tool" -d "$cli_dev" -x 1 -F -p "$port" -s "$size" -n "$iters" "$target" 2>&1) || true
	wait "$srv" || true
	echo "$out"
	rm -f "$srv_log"
	# The result line starts with the size; bw: field 4 is the average
	# MB/s, lat: field 5 is t_typical in usec.
	case "$tool" in
	ib_send_bw) value=$(awk -v s="$size" '$1 == s && NF >= 5 { print $4 }' <<<"$out") ;;
	ib_send_lat) value=$(awk -v s="$size" '$1 == s && NF >= 9 { print $5 }' <<<"$out") ;;
	esac
	if [[ ! $value =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! awk -v v="$value" 'BEGIN { exit !(v > 0) }'; then
		echo "$tool: no usable result (got '${value:-nothing}')"
		return 1
	fi
	case "$tool" in
	ib_send_bw) echo "RESULT $tool $size $value MB/s" ;;
	ib_send_lat) echo "RESULT $tool $size $value usec" ;;
	esac
}

tx0=$(cat /sys/class/net/veth0/statistics/tx_bytes)
rc=0
for t in "ib_send_bw $bw_size" "ib_send_lat $lat_size"; do
	# shellcheck disable=SC2086 # tool and size
	once $t || { echo "retrying once"; once $t; } || rc=1
done
tx=$(($(cat /sys/class/net/veth0/statistics/tx_bytes) - tx0))
echo "veth0 sent $tx bytes"
if [ "$IBMSG_VM_MODE" = two-hosts ] && [ "$tx" -lt $((bw_size * iters)) ]; then
	echo "two-hosts: the traffic did not cross the veth pair"
	rc=1
fi
exit "$rc"
