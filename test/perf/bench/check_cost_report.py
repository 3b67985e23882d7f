#!/usr/bin/env python3
"""perf/bench/compare_report.py --counters-cost (and --events-cost) on a results directory made here
with known numbers:
the medians, the per-repetition ratios, the instructions per message (difference of the 2000-
and 6000-message runs), bench_counters' update cost and the estimate, exactly; a failed
callgrind run gives n/a for its side, without instructions.tsv that part is absent, and fewer
than 3 runs of a build decide nothing."""
import os
import subprocess
import sys
import tempfile

REPORT = os.path.join(sys.argv[1], "perf", "bench", "compare_report.py")

TABLE = """---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 8          20000            0.50               0.48                 %.6f
---------------------------------------------------------------------------------------
"""
BENCH = """# update cost, ns per update per thread (2 threads: the slower thread)
variant        1 thread  2 threads  2-thr scaling  1-thr over none
none              0.800      0.834          1.98x           +0.000
shard             1.800      1.734          2.00x           +1.000
atomic            8.424     71.279          0.24x           +7.598
"""
BENCH_EVENTS = """501 repetitions of 1000 raises; ns per raise site
case                                            median       min       p90
listened, no valid callback (dropped)            63.79     60.69     90.77
delivered to one callback (reads an element)    115.39     69.57    145.45
not listened to (the inline test)                 0.66      0.56      0.77
"""


def make(out, ir_rows, with_bench=True, reps=3, tools=("ibmsg", "ibmsg_off")):
    os.makedirs(os.path.join(out, "raw"))
    # Rates (msg/s) on and off per repetition; per-repetition ratios 0.98, 1.00, 0.95.
    rates = {1: (49000, 50000), 2: (60000, 60000), 3: (38000, 40000)}
    rates = {r: rates[r] for r in range(1, reps + 1)}
    with open(os.path.join(out, "runs.tsv"), "w") as runs:
        for rep, (on, off) in rates.items():
            for tool, rate in ((tools[0], on), (tools[1], off)):
                f = "raw/r%d_%s_bw_8" % (rep, tool)
                with open(os.path.join(out, f + ".client.out"), "w") as o:
                    o.write(TABLE % (rate / 1e6))
                runs.write("%d\t%d\t%s\tbw\t8\t20000\t0\t1000\t%s\n" % (rep, rep - 1, tool, f))
    with open(os.path.join(out, "env.txt"), "w") as e:
        e.write("device rxe0 gid_index 1\nib_active_mtu 4096 (5)\nkernel 6.1\ncpus 2\n")
    if ir_rows is not None:
        with open(os.path.join(out, "instructions.tsv"), "w") as t:
            t.writelines("\t".join(str(x) for x in r) + "\n" for r in ir_rows)
    if with_bench and tools[0] == "ibmsg":
        with open(os.path.join(out, "bench_counters.txt"), "w") as b:
            b.write(BENCH)
    elif with_bench:
        with open(os.path.join(out, "bench_events.txt"), "w") as b:
            b.write(BENCH_EVENTS)


def report(out, mode="--counters-cost"):
    r = subprocess.run([sys.executable, REPORT, out, mode], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: compare_report.py exited %d: %s" % (r.returncode, r.stderr))
    return r.stdout


def expect(text, line):
    if line not in text:
        sys.exit("FAIL: expected the line\n  %s\nin\n%s" % (line, text))


def main():
    ir = [("ibmsg", "sender", 2000, 10000000, 0), ("ibmsg", "sender", 6000, 13040000, 0),
          ("ibmsg_off", "sender", 2000, 9000000, 0), ("ibmsg_off", "sender", 6000, 11900000, 0),
          ("ibmsg", "receiver", 2000, 8000000, 0), ("ibmsg", "receiver", 6000, 10480000, 0),
          ("ibmsg_off", "receiver", 2000, 7000000, 0), ("ibmsg_off", "receiver", 6000, 9240000, 0)]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "a")
        make(out, ir)
        text = report(out)
        expect(text, "ratio on/off of the medians: 0.9800 (-2.00%)")
        expect(text, "median of the 3 per-repetition ratios on/off: 0.9800 (from 0.950 to 1.000)")
        expect(text, "sender   counting on 760, off 725: +35 instructions per message")
        expect(text, "receiver counting on 620, off 560: +60 instructions per message")
        expect(text, "1.800 ns per loop iteration with a shard update, 0.800 without "
                     "(+1.000 ns per update)")
        # 60 instructions at 1 ns against 1e9 / 49000 = 20408 ns per message.
        expect(text, "60 instructions are 60 ns = 0.29% of the 20408 ns per message")
        expect(text, "target: within 1%: not decidable in this boot: runs of one build differ "
                     "by up to 22.4%")

        # A failed callgrind run: its side is n/a, the other side still counts.
        out = os.path.join(d, "b")
        make(out, [r if r[:3] != ("ibmsg_off", "receiver", 6000) else r[:4] + (124,) for r in ir])
        text = report(out)
        expect(text, "receiver n/a (a run failed: see raw/ir_*)")
        expect(text, "35 instructions are 35 ns")

        # No instructions measured (no valgrind): the timed part alone.
        out = os.path.join(d, "c")
        make(out, None, with_bench=False, reps=2)
        text = report(out)
        expect(text, "ratio on/off of the medians: 0.9909 (-0.91%)")
        expect(text, "target: within 1%: not decidable: 2 run(s) of a build (the noise shows "
                     "from 3)")
        if "instructions" in text:
            sys.exit("FAIL: an instructions part without instructions.tsv:\n" + text)

        # --events-cost: the same with the events' tools, ibmsg_tag_isend alone, bench_events.
        ev = [(("ibmsg_ev" if t == "ibmsg" else "ibmsg_noev"),) + r[1:] for r in ir
              for t in (r[0],)]
        ev += [("ibmsg_ev", "isend", 2000, 400000, 0), ("ibmsg_ev", "isend", 6000, 1200000, 0),
               ("ibmsg_noev", "isend", 2000, 400000, 0), ("ibmsg_noev", "isend", 6000, 1196000, 0)]
        out = os.path.join(d, "e")
        make(out, ev, tools=("ibmsg_ev", "ibmsg_noev"))
        text = report(out, "--events-cost")
        expect(text, "Cost of the events' raise sites: ibmsg_send_bw -s 8, 3 alternating pairs")
        expect(text, "ibmsg, events compiled in, none registered   median 49000 msg/s")
        expect(text, "ratio on/off of the medians: 0.9800 (-2.00%)")
        expect(text, "sender   events in 760, out 725: +35 instructions per message (ratio 1.0483)")
        expect(text, "ibmsg_tag_isend alone (no polling in it) events in 200, out 199: +1 "
                     "instructions per message (ratio 1.0050)")
        expect(text, "delivered to one callback (reads an element)    115.39     69.57    145.45")
        if "bench_counters" in text:
            sys.exit("FAIL: bench_counters in the events' report:\n" + text)
    print("check_cost_report: ok")


if __name__ == "__main__":
    main()
