#!/usr/bin/env python3
"""Where the receiving side's CPU goes in compare --profile's runs: profile_report.py OUT.

compare_run's profile mode ran each tool's bandwidth test with its client under a system-wide
`perf record` (cpu-clock, profile_hz in OUT/env.txt) and left per run OUT/raw/FILE.samples
(`perf script -F pid,time,ip,sym,dso`: every CPU's samples) and FILE.server.pid, the server's
process: the receiving side, which posts the rendezvous READs (ibmsg, UCX) and, on Soft-RoCE
loopback, runs the kernel's work for their bytes in its own system calls. Per run: that
process's samples as CPU time per MiB received (every message the tool moved: ucx_perftest's
warm-up too, its -w in FILE.cmd), split into the kernel, the tool's own code and the rest of user space; and over
the whole seconds in which it kept a CPU busy (at least BUSY of the samples one CPU gives), its
hottest symbols. Rounds pair the tools as compare_report.py does."""
import collections
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_report as cr  # noqa: E402  (runs.tsv and the tools' outputs)

BUSY = 0.85
TOP = 10
# The tool's own code, by the file name of the samples' DSO.
OWN = {"ibmsg": ("libibmsg.", "ibmsg_send_bw"),
       "ucx": ("libucp.", "libuct.", "libuct_", "libucs.", "libucm.", "ucx_perftest"),
       "perftest": ("ib_send_bw",)}
LINE = re.compile(r"^\s*(\d+)\s+([\d.]+):\s+[0-9a-f]+\s+(.*?)\s*\((.*)\)\s*$")


def warm_up(base):
    """The warm-up messages on the server's command line (FILE.cmd's first line, as compare_run
    ran it: ucx_perftest's -w; the other tools have none), which it moved besides -n's."""
    m = re.search(r" -w (\d+)", cr.read(base + ".cmd").split("\n", 1)[0])
    return int(m.group(1)) if m else 0


def kind_of(tool, dso):
    if dso.startswith("[") and dso not in ("[vdso]", "[unknown]", "[vsyscall]"):
        return "kernel"  # [kernel.kallsyms] and modules such as [rdma_rxe]
    if os.path.basename(dso).startswith(OWN.get(tool, ())):
        return "own"
    return "other"


def receiver_samples(path, pid):
    """[(second, symbol, dso)] of pid's samples in a perf script text."""
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m and int(m.group(1)) == pid:
                rows.append((int(float(m.group(2))), m.group(3) or "[unknown]", m.group(4)))
    return rows


def profile_of(out, s, hz):
    """The run's figures, or None without samples."""
    base = os.path.join(out, "raw", "r%s_%s_bw_%d" % (s["rep"], s["tool"], s["size"]))
    try:
        with open(base + ".server.pid") as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if not os.path.exists(base + ".samples"):
        return None
    rows = receiver_samples(base + ".samples", pid)
    if not rows:
        return None
    kinds = collections.Counter(kind_of(s["tool"], d) for _, _, d in rows)
    per_second = collections.Counter(t for t, _, _ in rows)
    busy = {t for t, n in per_second.items() if n >= BUSY * hz}
    syms = collections.Counter(sym for t, sym, _ in rows if t in busy)
    mib = (s["iters"] + warm_up(base)) * s["size"] / (1 << 20)
    return {"ms_per_mib": len(rows) * 1e3 / hz / mib,
            "share": {k: 100.0 * kinds[k] / len(rows) for k in ("kernel", "own", "other")},
            "busy_s": len(busy), "syms": syms}


def report(out):
    env = cr.read(os.path.join(out, "env.txt"))
    m = re.search(r"^profile_hz (\d+)$", env, re.M)
    if not m:
        return ["profile_report.py: no profile_hz in %s/env.txt (not a compare --profile run)"
                % out], 1
    hz = int(m.group(1))
    runs = [s for s in cr.samples_of(out) if s["test"] == "bw"]
    for s in runs:
        s["profile"] = profile_of(out, s, hz) if s["valid"] else None
    tools = [t for t in ("ibmsg", "ucx", "perftest") if any(s["tool"] == t for s in runs)]
    lines = ["The receiving side's CPU (compare --profile, cpu-clock at %d Hz, every CPU): per run "
             "the server process's samples; CPU ms per MiB over every message the tool moved; "
             "busy s: whole seconds in which it had at least %d %% of a CPU" % (hz, BUSY * 100)]
    status = 0
    for z in sorted({s["size"] for s in runs}):
        rows = []
        for t in tools:
            ok = [s for s in runs if s["tool"] == t and s["size"] == z and s["profile"]]
            if not ok:
                rows.append([cr.LABEL[t], "0", "no profiled run", "", "", "", "", ""])
                status = 1
                continue
            med = lambda f: statistics.median(f(s) for s in ok)  # noqa: E731
            rows.append([cr.LABEL[t], str(len(ok)), "%.2f" % med(lambda s: s["bw_MBps"]),
                         "%.2f" % med(lambda s: s["profile"]["ms_per_mib"]),
                         "%.2f" % med(lambda s: s["profile"]["share"]["kernel"]),
                         "%.2f" % med(lambda s: s["profile"]["share"]["own"]),
                         "%.2f" % med(lambda s: s["profile"]["share"]["other"]),
                         "%d" % med(lambda s: s["profile"]["busy_s"])])
        lines += ["", "%s (medians of the runs)" % cr.human(z)]
        lines += cr.table(rows, ["tool", "runs", "MB/s", "CPU ms/MiB", "kernel %", "own code %",
                                 "other %", "busy s"])
        pairs = []
        for other in tools[1:] if tools and tools[0] == "ibmsg" else []:
            for key, name in (("ms_per_mib", "CPU per MiB"), ("bw_MBps", "bandwidth")):
                rounds = {}
                for s in runs:
                    if s["size"] == z and s["profile"] and s["tool"] in ("ibmsg", other):
                        v = s["profile"][key] if key in s["profile"] else s[key]
                        rounds.setdefault(s["round"], {})[s["tool"]] = v
                r = cr.round_ratios(rounds, "ibmsg", other)
                if r:
                    pairs.append(["%s, ibmsg / %s" % (name, cr.LABEL[other]), str(len(r)),
                                  "%.3f" % statistics.median(r), "%.3f..%.3f" % (r[0], r[-1])])
        if pairs:
            lines += ["", "Per round"] + cr.table(pairs, ["ratio", "rounds", "median", "range"])
        cols, header = [], ["rank"]
        for t in tools:
            syms = collections.Counter()
            for s in runs:
                if s["tool"] == t and s["size"] == z and s["profile"]:
                    syms.update(s["profile"]["syms"])
            total = sum(syms.values())
            cols.append(["%s %.1f%%" % (k, 100.0 * v / total) for k, v in syms.most_common(TOP)]
                        if total else [])
            header.append(cr.LABEL[t])
        table = [[str(i + 1)] + [c[i] if i < len(c) else "" for c in cols]
                 for i in range(max([len(c) for c in cols] or [0]))]
        lines += ["", "Hottest symbols of the receiving side in its busy seconds (share of "
                  "those samples)"] + (cr.table(table, header) if table else ["none"])
    return lines, status


def main():
    if len(sys.argv) != 2:
        print("usage: profile_report.py OUT", file=sys.stderr)
        return 2
    lines, status = report(sys.argv[1])
    text = "\n".join(lines) + "\n"
    with open(os.path.join(sys.argv[1], "table.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
