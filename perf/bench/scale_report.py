#!/usr/bin/env python3
"""perf/bench/compare --scale's report: reads OUT/runs.txt (perf/bench/scale_run: one line per
run, "LIB N create_us connect_us rss0_kib rss_kib pin0_kib pin_kib lat_med_us lat_p90_us"),
writes OUT/scale.md (medians over the repetitions, also printed) and, unless --no-plots,
OUT/scale_memory.png (gnuplot): resident and pinned memory against endpoints, both libraries.

Per endpoint: (memory with N connected - memory before any endpoint) / N, each run's own
difference, then the median over the runs."""
import os
import statistics
import subprocess
import sys

LIBS = ["ibmsg", "ucx"]
LABEL = {"ibmsg": "ibmsg", "ucx": "UCX (ucp, rc_v)"}


def load(path):
    runs, failed = {}, {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and w[2] == "failed":
                failed[(w[0], int(w[1]))] = failed.get((w[0], int(w[1])), 0) + 1
                continue
            if len(w) != 10 or w[0] not in LIBS:
                continue
            n = int(w[1])
            v = [float(x) for x in w[2:]]
            runs.setdefault((w[0], n), []).append({
                "create_us": v[0], "connect_us": v[1], "rss0": v[2], "rss": v[3],
                "pin0": v[4], "pin": v[5], "lat": v[6], "lat90": v[7],
                "rss_ep": (v[3] - v[2]) / n, "pin_ep": (v[5] - v[4]) / n})
    return runs, failed


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    plots = "--no-plots" not in sys.argv
    if len(args) != 1:
        print("usage: scale_report.py OUT [--no-plots]", file=sys.stderr)
        return 2
    out = args[0]
    runs, failed = load(os.path.join(out, "runs.txt"))
    counts = sorted({n for (_, n) in list(runs) + list(failed)})
    lines = ["| library | endpoints | runs | VmRSS KiB: before / with N | per endpoint KiB | "
             "VmPin KiB: before / with N | pinned per endpoint KiB | create us/ep | "
             "connect us/ep | 8 B latency us: median (p90) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    data = {}
    for lib in LIBS:
        for n in counts:
            rows = runs.get((lib, n), [])
            nf = failed.get((lib, n), 0)
            if not rows:
                if nf:
                    lines.append(f"| {LABEL[lib]} | {n} | 0 ({nf} failed) | | | | | | | |")
                continue
            m = {k: med(rows, k) for k in rows[0]}
            data[(lib, n)] = m
            runs_s = f"{len(rows)}" + (f" ({nf} failed)" if nf else "")
            lines.append(
                f"| {LABEL[lib]} | {n} | {runs_s} | {m['rss0']:.0f} / {m['rss']:.0f} | "
                f"{m['rss_ep']:.1f} | {m['pin0']:.0f} / {m['pin']:.0f} | {m['pin_ep']:.1f} | "
                f"{m['create_us']:.0f} | {m['connect_us']:.0f} | {m['lat']:.1f} "
                f"({m['lat90']:.1f}) |")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(out, "scale.md"), "w") as f:
        f.write(table)
    print(table)
    if not plots or not data:
        return 0
    dat = os.path.join(out, "scale_memory.dat")
    with open(dat, "w") as f:
        for lib in LIBS:
            f.write(f"# {lib}: endpoints rss_kib pin_kib\n")
            for n in counts:
                if (lib, n) in data:
                    m = data[(lib, n)]
                    f.write(f"{n} {m['rss'] / 1024:.2f} {m['pin'] / 1024:.2f}\n")
            f.write("\n\n")
    png = os.path.join(out, "scale_memory.png")
    script = f"""set terminal pngcairo size 900,560
set output '{png}'
set title 'Client memory with N connected endpoints in one context / worker (medians)'
set xlabel 'endpoints'
set ylabel 'MiB'
set logscale x 2
set key top left
set grid
plot '{dat}' index 0 using 1:2 with linespoints lw 2 title 'ibmsg resident (VmRSS)', \\
     '{dat}' index 0 using 1:3 with linespoints lw 2 dt 2 title 'ibmsg pinned (VmPin)', \\
     '{dat}' index 1 using 1:2 with linespoints lw 2 title 'UCX resident (VmRSS)', \\
     '{dat}' index 1 using 1:3 with linespoints lw 2 dt 2 title 'UCX pinned (VmPin)'
"""
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        print("scale_report: gnuplot failed: " + r.stderr, file=sys.stderr)
        return 1
    print(f"plot: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
