#!/usr/bin/env python3
"""perf/bench/compare_report.py on a results directory of compare --rndv-chunks made here with
known numbers: the tables by READ size (medians of perftest, UCX, ibmsg and each ibmsg_cC, each
ibmsg column over the best of perftest and UCX; n/a where every run failed) and the verdicts of
issue 27's targets."""
import os
import sys
import tempfile

from report_check import expect, row, section
import report_check

SIZES = (262144, 1048576)
# Per tool, repetitions 1..3 (the median is the middle one): bandwidth MB/s, typical latency us.
MBPS = {"perftest": (10, 12, 11), "ucx": (8, 9, 10), "ibmsg": (12, 13, 14),
        "ibmsg_c0": (20, 22, 21), "ibmsg_c131072": (5, 6, 7)}
TYP = {"perftest": (30, 31, 32), "ucx": (40, 41, 42), "ibmsg": (20, 21, 22),
       "ibmsg_c0": (60, 61, 62), "ibmsg_c131072": (25, 26, 27)}


def make(out):
    # At 1 MiB every run of ibmsg_c131072 failed.
    report_check.write_runs(out, SIZES, MBPS, TYP, failed={("ibmsg_c131072", 1048576)})
    report_check.write_env(out)


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "chunks")
    make(out)
    text = report_check.report(sys.argv[1], out, "--no-plots")
    bw = section(text, "Bandwidth MB/s by rendezvous READ size")
    lat = section(text, "Latency us (half round trip) by rendezvous READ size")
    head = bw.splitlines()[1].split()
    expect(head, ["size", "perftest", "UCX", "ibmsg", "c=0(oneREAD)", "c=128KiB"], text)
    # Over the best of perftest and UCX: the higher bandwidth (perftest's 11), the lower latency
    # (perftest's 31).
    expect(row(bw, "256 KiB"),
           ["11.00", "9.00", "13.00", "(1.18)", "21.00", "(1.91)", "6.00", "(0.55)"], text)
    expect(row(bw, "1 MiB"), ["11.00", "9.00", "13.00", "(1.18)", "21.00", "(1.91)", "n/a"], text)
    expect(row(lat, "256 KiB"),
           ["31.00", "41.00", "21.00", "(0.68)", "61.00", "(1.97)", "26.00", "(0.84)"], text)
    expect(row(lat, "1 MiB"), ["31.00", "41.00", "21.00", "(0.68)", "61.00", "(1.97)", "n/a"],
           text)
    targets = section(text, "Targets (issue 27):")
    expect(row(targets, "bandwidth 256 KiB, 1 MiB >= perftest and UCX"), ["met"], text)
    expect(row(targets, "latency at 1 MiB <= UCX"), ["met"], text)
print("perf_compare_chunks_report: ok")
