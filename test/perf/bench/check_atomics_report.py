#!/usr/bin/env python3
"""perf/bench/compare_report.py --atomics on a results directory made here with known numbers:
the medians of ibmsg's and perftest's atomic rate and round-trip latency, their ratios and the
runs per cell; a failed run shows in the notes and not in the medians."""
import os
import sys
import tempfile

from report_check import expect, row
import report_check


LAT = """ #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]
 8       2000          1.00          99.00          %.2f          %.2f          1.00          50.00          90.00
"""
BW = """ #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 8          20000           %.2f               %.2f                 %.6f
"""

# Per tool, repetitions 1..3: message rate in Mpps, typical latency in us (medians: the middle).
RATE = {"ibmsg": (0.050, 0.040, 0.060), "perftest": (0.080, 0.100, 0.090)}
TYP = {"ibmsg": (30.0, 28.0, 29.0), "perftest": (25.0, 24.0, 26.0)}


def make(out, failed=None):
    os.makedirs(os.path.join(out, "raw"))
    with open(os.path.join(out, "runs.tsv"), "w") as runs:
        for tool in ("ibmsg", "perftest"):
            for rep in (1, 2, 3):
                for test in ("bw", "lat"):
                    f = "raw/r%d_%s_%s_8" % (rep, tool, test)
                    status = 1 if (tool, test, rep) == failed else 0
                    with open(os.path.join(out, f + ".client.out"), "w") as o:
                        if test == "bw":
                            m = RATE[tool][rep - 1]
                            o.write(BW % (m * 8, m * 8, m))
                        else:
                            v = TYP[tool][rep - 1]
                            o.write(LAT % (v, v + 1))
                    if status:
                        with open(os.path.join(out, f + ".client.err"), "w") as e:
                            e.write("ib_atomic_bw: Couldn't connect\n")
                    runs.write("%d\t0\t%s\t%s\t8\t2000\t%d\t100\t%s\n"
                               % (rep, tool, test, status, f))
    report_check.write_env(out)


def report(out):
    return report_check.report(sys.argv[1], out, "--atomics")



RATE_ROW = "fetch-and-add rate, thousands/s (ib_atomic_bw / ibmsg_atomic_bw --counters)"
LAT_ROW = "fetch-and-add latency, round trip, t_typical us (ib_atomic_lat / ibmsg_atomic_lat)"
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "all")
    make(out)
    text = report(out)
    # ibmsg, perftest, ibmsg/perftest, runs
    expect(row(text, RATE_ROW), ["50.00", "90.00", "0.56", "3/3"], text)
    expect(row(text, LAT_ROW), ["29.00", "25.00", "1.16", "3/3"], text)
    # A failed perftest bandwidth run: out of the median (of 0.080 and 0.090), named in the notes.
    out = os.path.join(tmp, "failed")
    make(out, failed=("perftest", "bw", 2))
    text = report(out)
    expect(row(text, RATE_ROW), ["50.00", "85.00", "0.59", "3/2"], text)
    if "perftest bw: failed (status 1): ib_atomic_bw: Couldn't connect" not in text:
        sys.exit("FAIL: the failed run is not in the notes:\n" + text)
print("perf_compare_atomics_report: ok")
