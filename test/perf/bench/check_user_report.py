#!/usr/bin/env python3
"""perf/bench/compare_report.py on a results directory of compare --unprivileged made here with
known numbers: each tool as an ordinary user against itself as root, paired by round (medians,
their ratio, the median and range of the per-round ratios; n/a where every run failed), and no
table for a tool that did not run as a user."""
import os
import sys
import tempfile

from report_check import expect, section
import report_check

SIZES = (65536, 1048576)
# Per tool, repetitions 1..3: bandwidth MB/s, typical latency us. ibmsg's user runs pair with its
# root runs as 11/12, 13/13, 16/14 (bandwidth) and 22/20, 21/21, 20/22 (latency).
MBPS = {"ibmsg": (12, 13, 14), "ibmsg_user": (11, 13, 16), "perftest": (10, 10, 10),
        "perftest_user": (5, 5, 5), "ucx": (8, 9, 10)}
TYP = {"ibmsg": (20, 21, 22), "ibmsg_user": (22, 21, 20), "perftest": (30, 30, 30),
       "perftest_user": (60, 60, 60), "ucx": (40, 41, 42)}


def cells(text, size, measure):
    """The cells after size and measure of the row of the first table in text that has them."""
    want = size.split() + measure.split()
    for line in text.splitlines():
        if line.split()[:len(want)] == want:
            return line.split()[len(want):]
    sys.exit("FAIL: no row %s %s in\n%s" % (size, measure, text))


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "users")
    # At 1 MiB every run of perftest as the user failed (e.g. over the locked-memory limit).
    report_check.write_runs(out, SIZES, MBPS, TYP, failed={("perftest_user", 1048576)})
    report_check.write_env(out)
    with open(os.path.join(out, "env.txt"), "a") as e:
        e.write("user uid 65534 (nobody), no capabilities, ulimit -l 65536\n")
    text = report_check.report(sys.argv[1], out, "--no-plots")
    users = section(text, "As an ordinary user (uid 65534 (nobody), no capabilities, ulimit -l "
                          "65536) against root")
    ibmsg = section(users, "ibmsg:")
    expect(ibmsg.splitlines()[1].split(),
           ["size", "measure", "user", "root", "ratio", "of", "medians", "per-round", "ratio",
            "median", "(range)", "rounds"], text)
    expect(cells(ibmsg, "64 KiB", "MB/s"),
           ["13.00", "13.00", "1.00", "1.000", "(0.917..1.143)", "3"], text)
    expect(cells(ibmsg, "64 KiB", "latency us"),
           ["21.00", "21.00", "1.00", "1.000", "(0.909..1.100)", "3"], text)
    expect(cells(ibmsg, "1 MiB", "kmsg/s"),
           ["0.04", "0.04", "1.00", "1.000", "(1.000..1.000)", "3"], text)
    perftest = section(users, "perftest:")
    expect(cells(perftest, "64 KiB", "MB/s"),
           ["5.00", "10.00", "0.50", "0.5", "(0.5..0.5)", "3"], text)
    expect(cells(perftest, "64 KiB", "latency us"),
           ["60.00", "30.00", "2.00", "2.000", "(2.000..2.000)", "3"], text)
    expect(cells(perftest, "1 MiB", "MB/s"), ["n/a", "10.00", "n/a", "n/a", "0"], text)
    if "\nUCX:" in users:
        sys.exit("FAIL: a table for UCX, which did not run as a user, in\n" + text)
    # The main table and the targets stay root's.
    expect(cells(text, "64 KiB", ""), ["13.00", "10.00", "9.00", "1.30", "1.44", "0.04", "0.04",
                                       "0.04", "3/3/3"], text)
print("perf_compare_user_report: ok")
