#!/usr/bin/env python3
"""perf/bench/compare_pool.py on six boots made here with known numbers: the pooled per-round
ratios, their count on the target's side, the count of boots on it, and the verdict, which needs
both sign tests to decide the same way (met, NOT met, undecided)."""
import os
import subprocess
import sys
import tempfile

from report_check import expect, row
import report_check

SIZES = (65536, 262144, 1048576, 4194304)
# Three rounds a boot. Bandwidth: ibmsg over perftest 1.2, 1.3, 1.4 in every boot (18 of 18
# rounds, p = 7.6e-6; 6 of 6 boots, p = 2/64: met). Over UCX the same in boots 1-5 and 0.8,
# 0.867, 0.933 in boot 6: 15 of 18 rounds (p = 0.0075) but 5 of 6 boots (p = 0.22): undecided.
# Latency over UCX 1.25, 1.1, 1.1 in every boot (0 of 18, 0 of 6: NOT met).
MBPS = {"perftest": (10, 10, 10), "ucx": (10, 10, 10), "ibmsg": (12, 13, 14)}
MBPS_LAST = {"perftest": (10, 10, 10), "ucx": (15, 15, 15), "ibmsg": (12, 13, 14)}
TYP = {"perftest": (30, 31, 32), "ucx": (40, 50, 40), "ibmsg": (50, 55, 44)}

with tempfile.TemporaryDirectory() as tmp:
    outs = []
    for boot in range(1, 7):
        out = os.path.join(tmp, "boot%d" % boot)
        report_check.write_runs(out, SIZES, MBPS if boot < 6 else MBPS_LAST, TYP)
        report_check.write_env(out)
        outs.append(out)
    script = os.path.join(sys.argv[1], "perf", "bench", "compare_pool.py")
    r = subprocess.run([sys.executable, script] + outs, capture_output=True, text=True)
    text = r.stdout + r.stderr
    expect(r.returncode, 0, text)
    for size in ("256 KiB", "1 MiB", "4 MiB"):
        expect(row(text, "bandwidth %s >= perftest" % size),
               ["18", "18/18", "1.300", "1.297", "1.200..1.400", "7.63e-06", "6/6", "0.0312",
                "met"] + ["1.300"] * 6, text)
        expect(row(text, "bandwidth %s >= UCX" % size),
               ["18", "15/18", "1.300", "1.213", "0.800..1.400", "0.00754", "5/6", "0.219",
                "undecided"] + ["1.300"] * 5 + ["0.867"], text)
    for size in ("64 KiB", "1 MiB"):
        expect(row(text, "latency %s <= UCX" % size),
               ["18", "0/18", "1.100", "1.148", "1.100..1.250", "7.63e-06", "0/6", "0.0312",
                "NOT", "met"] + ["1.100"] * 6, text)
    # Two boots decide nothing, however many of their rounds agree (2 of 2 boots: p = 0.5).
    r = subprocess.run([sys.executable, script] + outs[:2], capture_output=True, text=True)
    text = r.stdout + r.stderr
    expect(row(text, "bandwidth 1 MiB >= perftest"),
           ["6", "6/6", "1.300", "1.297", "1.200..1.400", "0.0312", "2/2", "0.5", "undecided",
            "1.300", "1.300"], text)
    r = subprocess.run([sys.executable, script], capture_output=True, text=True)
    expect(r.returncode, 2, r.stderr)
print("perf_compare_pool_report: ok")
