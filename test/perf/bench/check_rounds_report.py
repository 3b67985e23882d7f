#!/usr/bin/env python3
"""perf/bench/compare_report.py's per-round reading of issue 27's targets, on a results
directory made here with known numbers: each comparison's per-round ratio (median, range), and
whether every round meets the target, none does, or the rounds split (the medians' verdict then
depends on the draw of the runs)."""
import os
import sys
import tempfile

from report_check import expect, row, section
import report_check

SIZES = (65536, 262144, 1048576, 4194304)
# Per tool, repetitions 1..3 (one round each per size): bandwidth MB/s, typical latency us.
# Bandwidth: the medians say met (ibmsg 12 against 11 and 10), the rounds split (ibmsg's second
# run is the slowest of its round). Latency: ibmsg above UCX in every round.
MBPS = {"perftest": (10, 12, 11), "ucx": (10, 9, 10), "ibmsg": (12, 8, 14)}
TYP = {"perftest": (30, 31, 32), "ucx": (40, 50, 40), "ibmsg": (50, 55, 44)}
SPLIT_BW = {"perftest": ["1.200", "(0.667..1.273)", "split"],
            "UCX": ["1.200", "(0.889..1.400)", "split"]}

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "rounds")
    report_check.write_runs(out, SIZES, MBPS, TYP)
    report_check.write_env(out)
    text = report_check.report(sys.argv[1], out, "--no-plots")
    targets = section(text, "Targets (issue 27):")
    bw = section(targets, "  bandwidth 256 KiB, 1 MiB, 4 MiB")
    expect(row(bw, "bandwidth 256 KiB, 1 MiB, 4 MiB >= perftest and UCX"), ["met"], text)
    expect(row(bw, "rounds:")[:7],
           ["undecided", "(the", "rounds", "split", "in", "6", "of"], text)
    for size in ("256 KiB", "1 MiB", "4 MiB"):
        for other, cells in SPLIT_BW.items():
            expect(row(bw, "%s /%s" % (size, other)), cells, text)
    lat64 = section(targets, "  latency at 64 KiB <= UCX")
    expect(row(lat64, "latency at 64 KiB <= UCX"), ["NOT", "met"], text)
    expect(row(lat64, "rounds:")[:10],
           ["NOT", "met,", "by", "every", "round", "of", "1", "of", "1", "comparisons;"], text)
    expect(row(lat64, "64 KiB /UCX"), ["1.100", "(1.100..1.250)", "no", "round"], text)
print("perf_compare_rounds_report: ok")
