#!/bin/bash
# Usage: perf_compare.sh SOURCE_DIR BIN_DIR: perf/bench/compare --quick on the first active RDMA port
# (the Soft-RoCE guest), then check_compare.py on its table, CSV and plots.
set -euo pipefail
src=$1 bin=$2
here=$(cd "$(dirname "$0")" && pwd)
if ! ibv_devinfo 2>/dev/null | grep PORT_ACTIVE >/dev/null; then
    echo "no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma"
    exit 77
fi
for t in ib_send_bw ucx_perftest gnuplot; do
    command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/deps compare)" >&2; exit 1; }
done
out=$(mktemp -d "${TMPDIR:-/tmp}/perf_compare.XXXXXX")
trap 'rm -rf "$out"' EXIT
t0=$SECONDS
# One size: what is tested is the harness (three tools, the table, the CSV, the plots); 4 KiB
# would double the guest's time (106 s with two sizes) for no path of its own.
"$src/perf/bench/compare" --quick --sizes 8 --no-build --bin "$bin" --out "$out" --timeout 850
python3 "$here/check_compare.py" "$out" "8"
echo "perf_compare_quick: $((SECONDS - t0)) s"
