#!/usr/bin/env python3
"""perf/bench/compare_report.py --steps on a results directory made here with known numbers: the
median of each rung's typical latencies, each rung's step from the one above, the runs per
cell, the library's own share (ibmsg less the last verbs rung) and the ratio to ib_send_lat;
a run without a sample shows in the notes and not in the medians."""
import os
import sys
import tempfile

from report_check import expect, row
import report_check


TABLE = """ #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]
 %d       2000          1.00          99.00          %.2f          %.2f          1.00          50.00          90.00
"""

# Typical latency per rung at 8 B and 4 KiB for repetitions 1..3 (medians: the middle value).
LAT = {
    "step_verbs": ((12.0, 13.0, 14.0), (48.0, 50.0, 52.0)),
    "step_imm": ((13.5, 13.5, 12.0), (50.0, 49.0, 51.0)),
    "step_buffers": ((13.0, 14.0, 15.0), (51.0, 52.0, 53.0)),
    "step_copy_send": ((14.0, 14.0, 14.0), (52.0, 53.0, 54.0)),
    "step_copy_recv": ((14.5, 14.0, 14.5), (56.0, 57.0, 58.0)),
    "step_send_cq": ((14.0, 15.0, 16.0), (57.0, 58.0, 59.0)),
    "ibmsg": ((17.0, 17.0, 17.5), (59.5, 60.0, 61.0)),
    "perftest": ((12.5, 12.5, 12.5), (48.0, 48.0, 48.0)),
}


def make(out, failed=None):
    os.makedirs(os.path.join(out, "raw"))
    with open(os.path.join(out, "runs.tsv"), "w") as runs:
        for tool, per_size in LAT.items():
            for size, values in zip((8, 4096), per_size):
                for rep, v in enumerate(values, 1):
                    f = "raw/r%d_%s_lat_%d" % (rep, tool, size)
                    status = 1 if (tool, size, rep) == failed else 0
                    with open(os.path.join(out, f + ".client.out"), "w") as o:
                        o.write(TABLE % (size, v, v + 1))
                    if status:
                        with open(os.path.join(out, f + ".client.err"), "w") as e:
                            e.write("bench_verbs_steps: completion error: retry exceeded\n")
                    runs.write("%d\t0\t%s\tlat\t%d\t2000\t%d\t100\t%s\n"
                               % (rep, tool, size, status, f))
    report_check.write_env(out)


def report(out):
    return report_check.report(sys.argv[1], out, "--steps")



with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "all")
    make(out)
    text = report(out)
    # rung: 8 B median, step, runs, 4 KiB median, step, runs
    expect(row(text, "bare verbs: one buffer, SEND, every send signalled (ib_send_lat's loop)"),
           ["13.00", "3", "50.00", "3"], text)
    expect(row(text, "+ SEND_WITH_IMM (the compact header)"),
           ["13.50", "+0.50", "3", "50.00", "+0.00", "3"], text)
    expect(row(text, "+ 64 receive buffers, a ring of 128 send buffers"),
           ["14.00", "+0.50", "3", "52.00", "+2.00", "3"], text)
    expect(row(text, "+ the receiver's copy out of its receive buffer"),
           ["14.50", "+0.50", "3", "57.00", "+4.00", "3"], text)
    expect(row(text, "+ a send CQ of its own, one signal per 16 sends (= ibmsg's set)"),
           ["15.00", "+0.50", "3", "58.00", "+1.00", "3"], text)
    expect(row(text, "ibmsg_send_lat --counters (the library: matching, requests, credits)"),
           ["17.00", "+2.00", "3", "60.00", "+2.00", "3"], text)
    expect(row(text, "ib_send_lat, for reference"), ["12.50", "3", "48.00", "3"], text)
    for line in ("  8 B: ibmsg less bare verbs with the same ingredients: +2.00 us (the "
                 "library's own code); ibmsg / ib_send_lat 1.36",
                 "  4 KiB: ibmsg less bare verbs with the same ingredients: +2.00 us (the "
                 "library's own code); ibmsg / ib_send_lat 1.25"):
        if line not in text:
            sys.exit("FAIL: expected the line\n%s\nin\n%s" % (line, text))
    # A failed run: no sample (2 runs, median of 14.0 and 16.0), and a note says why.
    out = os.path.join(tmp, "failed")
    make(out, failed=("step_send_cq", 8, 2))
    text = report(out)
    expect(row(text, "+ a send CQ of its own, one signal per 16 sends (= ibmsg's set)"),
           ["15.00", "+0.50", "2", "58.00", "+1.00", "3"], text)
    if "step_send_cq 8 B: failed (status 1): bench_verbs_steps: completion error: retry " \
       "exceeded" not in text:
        sys.exit("FAIL: no note for the failed run in\n%s" % text)
print("perf_compare_steps_report: ok")
