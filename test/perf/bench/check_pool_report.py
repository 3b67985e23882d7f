#!/usr/bin/env python3
"""perf/bench/compare_pool.py on two boots made here with known numbers: the pooled per-round
ratios, their count on the target's side and the sign test's verdict (met, NOT met, undecided)."""
import os
import subprocess
import sys
import tempfile

from report_check import expect, row
import report_check

SIZES = (65536, 262144, 1048576, 4194304)
# The same three rounds in each boot. Bandwidth: ibmsg over perftest 1.2, 1.3, 1.4 (6 of 6 on
# the target's side: p = 2/64, met); over UCX 1.2, 0.929, 1.4 (4 of 6: undecided). Latency over
# UCX 1.25, 1.1, 1.1 (0 of 6: NOT met).
MBPS = {"perftest": (10, 10, 10), "ucx": (10, 14, 10), "ibmsg": (12, 13, 14)}
TYP = {"perftest": (30, 31, 32), "ucx": (40, 50, 40), "ibmsg": (50, 55, 44)}

with tempfile.TemporaryDirectory() as tmp:
    outs = []
    for boot in ("a", "b"):
        out = os.path.join(tmp, boot)
        report_check.write_runs(out, SIZES, MBPS, TYP)
        report_check.write_env(out)
        outs.append(out)
    script = os.path.join(sys.argv[1], "perf", "bench", "compare_pool.py")
    r = subprocess.run([sys.executable, script] + outs, capture_output=True, text=True)
    text = r.stdout + r.stderr
    expect(r.returncode, 0, text)
    for size in ("256 KiB", "1 MiB", "4 MiB"):
        expect(row(text, "bandwidth %s >= perftest" % size),
               ["6", "6/6", "1.300", "1.297", "1.200..1.400", "0.0312", "met", "1.300", "1.300"],
               text)
        expect(row(text, "bandwidth %s >= UCX" % size),
               ["6", "4/6", "1.200", "1.160", "0.929..1.400", "0.688", "undecided", "1.200",
                "1.200"], text)
    for size in ("64 KiB", "1 MiB"):
        expect(row(text, "latency %s <= UCX" % size),
               ["6", "0/6", "1.100", "1.148", "1.100..1.250", "0.0312", "NOT", "met", "1.100",
                "1.100"], text)
    r = subprocess.run([sys.executable, script], capture_output=True, text=True)
    expect(r.returncode, 2, r.stderr)
print("perf_compare_pool_report: ok")
