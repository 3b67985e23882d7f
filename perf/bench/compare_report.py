#!/usr/bin/env python3
"""perf/bench/compare's report: reads what perf/bench/compare_run left in OUT (runs.tsv, raw/, env.txt),
writes OUT/samples.csv (every run, one row each), OUT/table.txt (medians and ratios, also
printed) and, unless --no-plots, OUT/bandwidth.png and OUT/latency.png (gnuplot).

Numbers are taken as each tool prints them; MB is 2^20 bytes in all three (perftest's and
ibmsg's MB/sec, UCX's MB/s). A run that failed, that a tool refused (ibmsg above its eager
limit) or whose numbers are not finite and positive (perftest's rdtsc calibration fails under
emulation now and then: 0.00 or inf) gives no sample; its reason is kept in the CSV."""
import csv
import math
import os
import re
import statistics
import subprocess
import sys

TOOLS = ["ibmsg", "perftest", "ucx"]
LABEL = {"ibmsg": "ibmsg", "perftest": "perftest", "ucx": "UCX",
         "ibmsg_off": "ibmsg, counting compiled out", "ibmsg_base": "ibmsg, baseline build",
         "ibmsg_ev": "ibmsg, events compiled in, none registered",
         "ibmsg_noev": "ibmsg, events compiled out"}
# What a cost mode compares: its title, the tools of the two builds and what the first one has.
COST = {"counters": ("Cost of counting", "ibmsg", "ibmsg_off",
                     "ibmsg, counting on (+ --counters session)"),
        "events": ("Cost of the events' raise sites", "ibmsg_ev", "ibmsg_noev",
                   LABEL["ibmsg_ev"])}
# The latency ladder (--steps, perf/bench/compare_run's steps_rungs): what each rung adds.
STEPS = [("step_verbs", "bare verbs: one buffer, SEND, every send signalled (ib_send_lat's loop)"),
         ("step_imm", "+ SEND_WITH_IMM (the compact header)"),
         ("step_buffers", "+ 64 receive buffers, a ring of 128 send buffers"),
         ("step_copy_send", "+ the sender's copy into its send buffer"),
         ("step_copy_recv", "+ the receiver's copy out of its receive buffer"),
         ("step_send_cq", "+ a send CQ of its own, one signal per 16 sends (= ibmsg's set)"),
         ("ibmsg", "ibmsg_send_lat --counters (the library: matching, requests, credits)"),
         ("perftest", "ib_send_lat, for reference")]
FIELDS = ["rep", "round", "tool", "test", "size", "iters", "status", "wall_ms", "valid",
          "bw_MBps", "msg_rate_Mps", "lat_typical_us", "lat_avg_us", "lat_p99_us", "note"]


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def number(s):
    try:
        return float(s)
    except ValueError:
        return math.nan


def perftest_row(text, key):
    """The first row under the table header containing key (perftest's and ibmsg's tables)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and key in line:
            for row in lines[i + 1:]:
                fields = row.split()
                if fields and re.match(r"^\d+$", fields[0]):
                    return [number(f) for f in fields]
            break
    return None


def ucx_row(text):
    lines = [l.strip() for l in text.splitlines()]
    for i, line in enumerate(lines):
        if line.startswith("iterations,") and i + 1 < len(lines):
            names = line.split(",")
            values = [number(v) for v in lines[i + 1].split(",")]
            if len(values) == len(names):
                return dict(zip(names, values))
    return None


def parse_run(out, run):
    rep, rnd, tool, test, size, iters, status, wall_ms, f = run
    s = {"rep": rep, "round": rnd, "tool": tool, "test": test, "size": int(size),
         "iters": int(iters), "status": int(status), "wall_ms": wall_ms, "valid": 0, "note": ""}
    text = read(os.path.join(out, f + ".client.out"))
    err = read(os.path.join(out, f + ".client.err")) + read(os.path.join(out, f + ".server.err"))
    if s["status"] != 0:
        if "eager limit" in err:
            s["note"] = "refused: above the eager limit (rendezvous not available)"
        else:
            last = [l for l in err.strip().splitlines() if l.strip()]
            s["note"] = "failed (status %d): %s" % (s["status"], last[-1][:120] if last else "")
        return s
    if tool in ("ucx", "ucx_user"):
        u = ucx_row(text)
        if u is None:
            s["note"] = "no result line in the output"
            return s
        if test == "bw":
            s["bw_MBps"], s["msg_rate_Mps"] = u.get("overall_bw"), u.get("overall_mr", 0) / 1e6
        else:
            s["lat_typical_us"] = u.get("50.0_percentile_lat")
            s["lat_avg_us"] = u.get("overall_lat")
    else:
        if test == "bw":
            r = perftest_row(text, "BW average")
            if r is None or len(r) < 5:
                s["note"] = "no result row in the output"
                return s
            s["bw_MBps"], s["msg_rate_Mps"] = r[3], r[4]
        else:
            r = perftest_row(text, "t_typical")
            if r is None or len(r) < 8:
                s["note"] = "no result row in the output"
                return s
            s["lat_typical_us"], s["lat_avg_us"], s["lat_p99_us"] = r[4], r[5], r[7]
    key = "msg_rate_Mps" if test == "bw" else "lat_typical_us"
    v = s.get(key)
    if v is None or not math.isfinite(v) or v <= 0:
        s["note"] = "result not finite and positive (%s): clock calibration failed?" % v
        return s
    s["valid"] = 1
    return s


def fmt(v, digits=2):
    if v is None:
        return "n/a"
    if v >= 100:
        return "%.0f" % v
    if v >= 1:
        return "%.*f" % (digits, v)
    return "%.*g" % (3, v)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "n/a"
    r = a / b
    # Two decimals, or three significant digits for a ratio below 0.01 (one outlier of a tool,
    # e.g. a 4 ms Soft-RoCE retransmission in its median, must not print as 0.00).
    return "%.2f" % r if r >= 0.01 else "%.3g" % r


def human(size):
    for unit, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= n and size % n == 0:
            return "%d %s" % (size // n, unit)
    return "%d B" % size


def medians(samples, test, key):
    med, count = {}, {}
    for s in samples:
        if s["test"] == test and s["valid"]:
            med.setdefault((s["tool"], s["size"]), []).append(s[key])
    for k, v in med.items():
        count[k] = len(v)
        med[k] = statistics.median(v)
    return med, count


def table(rows, header):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w) for c, w in zip(r, widths))
    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def compare_tables(samples, sizes, env, reps):
    bw, bw_n = medians(samples, "bw", "bw_MBps")
    mr, _ = medians(samples, "bw", "msg_rate_Mps")
    lat, lat_n = medians(samples, "lat", "lat_typical_us")
    out = ["ibmsg vs perftest vs UCX, one boot, tools interleaved, %d repetition(s); medians" % reps]
    out += ["  " + l for l in env]
    out.append("")
    out.append("Bandwidth, one way (ib_send_bw / ucx_perftest -t tag_bw / ibmsg_send_bw --counters);"
               " MB/s = 2^20 B/s, msg rate in thousands/s")
    rows = []
    for z in sizes:
        g = lambda t, d=bw: d.get((t, z))
        k = lambda t: None if mr.get((t, z)) is None else mr[(t, z)] * 1e3
        rows.append([human(z), fmt(g("ibmsg")), fmt(g("perftest")), fmt(g("ucx")),
                     ratio(g("ibmsg"), g("perftest")), ratio(g("ibmsg"), g("ucx")),
                     fmt(k("ibmsg")), fmt(k("perftest")), fmt(k("ucx")),
                     "/".join(str(bw_n.get((t, z), 0)) for t in TOOLS)])
    out += table(rows, ["size", "ibmsg MB/s", "perftest", "UCX", "ibmsg/perftest", "ibmsg/UCX",
                        "ibmsg kmsg/s", "perftest", "UCX", "runs i/p/u"])
    out.append("")
    out.append("Latency, half round trip, typical (median) in microseconds (ib_send_lat t_typical /"
               " tag_lat 50th percentile / ibmsg_send_lat t_typical); ratio < 1: ibmsg faster")
    rows = []
    for z in sizes:
        g = lambda t: lat.get((t, z))
        rows.append([human(z), fmt(g("ibmsg")), fmt(g("perftest")), fmt(g("ucx")),
                     ratio(g("ibmsg"), g("perftest")), ratio(g("ibmsg"), g("ucx")),
                     "/".join(str(lat_n.get((t, z), 0)) for t in TOOLS)])
    out += table(rows, ["size", "ibmsg us", "perftest", "UCX", "ibmsg/perftest", "ibmsg/UCX",
                        "runs i/p/u"])
    out.append("")
    out.append("Targets (issue 10):")

    def verdict(name, ok_list):
        known = [ok for ok in ok_list if ok is not None]
        if not known:
            return "  %-58s n/a" % name
        state = "met" if all(known) else "NOT met"
        if len(known) < len(ok_list):
            state += " where measured (%d of %d comparisons n/a)" % (len(ok_list) - len(known),
                                                                      len(ok_list))
        return "  %-58s %s" % (name, state)

    def ge(d, z, better_high=True):
        res = []
        for t in ("perftest", "ucx"):
            a, b = d.get(("ibmsg", z)), d.get((t, z))
            res.append(None if a is None or b is None else (a >= b if better_high else a <= b))
        return res

    if 8 in sizes:
        out.append(verdict("message rate at 8 B >= perftest and UCX", ge(mr, 8)))
    big = [z for z in sizes if 4096 <= z <= 1 << 20]
    if big:
        span = human(big[0]) if len(big) == 1 else "%s..%s" % (human(big[0]), human(big[-1]))
        out.append(verdict("bandwidth %s >= perftest and UCX" % span,
                           sum((ge(bw, z) for z in big), [])))
    for z in (8, 4096):
        if z in sizes:
            out.append(verdict("latency at %s <= perftest and UCX" % human(z), ge(lat, z, False)))
    # Issue 27 (large messages): bandwidth at least both tools', half round trip at most UCX's.
    big27 = [z for z in (1 << 18, 1 << 20, 1 << 22) if z in sizes]
    lat27 = [z for z in (1 << 16, 1 << 20) if z in sizes]
    if big27 or lat27:
        out.append("Targets (issue 27):")
    if big27:
        out.append(verdict("bandwidth %s >= perftest and UCX" % ", ".join(map(human, big27)),
                           sum((ge(bw, z) for z in big27), [])))
        out += rounds_say(samples, [("bw", "bw_MBps", z, t) for z in big27
                                    for t in ("perftest", "ucx")])
    for z in lat27:
        out.append(verdict("latency at %s <= UCX" % human(z), ge(lat, z, False)[1:]))
        out += rounds_say(samples, [("lat", "lat_typical_us", z, "ucx")])
    if any(s["tool"] == "ibmsg_base" for s in samples):
        out.append("")
        out += baseline_table(samples, sizes, env)
    if any(s["tool"].startswith("ibmsg_c") for s in samples):
        out.append("")
        out += chunk_tables(samples, sizes, bw, lat)
    if any(s["tool"].endswith("_user") for s in samples):
        out.append("")
        out += user_tables(samples, sizes, env)
    notes = sorted({"%s %s %s: %s" % (s["tool"], s["test"], human(s["size"]), s["note"])
                    for s in samples if not s["valid"]})
    if notes:
        out.append("")
        out.append("Runs without a sample (n/a above when no run of a size had one):")
        out += ["  " + n for n in notes]
    return out, bw, lat


def rounds_say(samples, comparisons):
    """Under a target's verdict (which the medians give): what the rounds say, each comparison's
    per-round ratio of ibmsg to the other tool, median (range), and whether every round is on the
    target's side, none is, or they split. Only a target that every round meets (or every round
    misses) is decided by this boot; a split says its median moves with the draw of the runs."""
    cells, states = [], []
    for test, key, z, other in comparisons:
        r = round_ratios(by_round(samples, test, key, z, ("ibmsg", other)), "ibmsg", other)
        if not r:
            cells.append("%s /%s n/a" % (human(z), LABEL[other]))
            continue
        on_side = [(x >= 1) if test == "bw" else (x <= 1) for x in r]
        state = "every round" if all(on_side) else "no round" if not any(on_side) else "split"
        states.append(state)
        cells.append("%s /%s %.3f (%.3f..%.3f) %s" % (human(z), LABEL[other],
                                                      statistics.median(r), r[0], r[-1], state))
    if not states:
        said = "no rounds with both tools"
    elif all(st == "every round" for st in states):
        said = "met in every round"
    elif any(st == "no round" for st in states):
        said = "NOT met, by every round of %d of %d comparisons" % (states.count("no round"),
                                                                    len(states))
    else:
        said = "undecided (the rounds split in %d of %d comparisons)" % (states.count("split"),
                                                                        len(states))
    return ["    rounds: %s; ibmsg over the other, per round: median (range)" % said] + \
        ["      " + c for c in cells]


def chunk_tables(samples, sizes, bw, lat):
    """ibmsg with each rendezvous READ size (compare --rndv-chunks: tools ibmsg_cC, run with
    IBMSG_CORE_RNDV_CHUNK=C) next to the default build's settings, perftest and UCX: medians of
    bandwidth and half round trip, and each over the best of perftest and UCX."""
    chunks = sorted({int(s["tool"][len("ibmsg_c"):]) for s in samples
                     if s["tool"].startswith("ibmsg_c")})
    tools = ["perftest", "ucx", "ibmsg"] + ["ibmsg_c%d" % c for c in chunks]
    names = ["perftest", "UCX", "ibmsg"] + ["c=" + (human(c) if c else "0 (one READ)").replace(" ", "")
                                            for c in chunks]
    out = []
    for what, d, best in (("Bandwidth MB/s", bw, max), ("Latency us (half round trip)", lat, min)):
        out.append("%s by rendezvous READ size (core_rndv_chunk c; ibmsg: its default); "
                   "(x): over the best of perftest and UCX" % what)
        rows = []
        for z in sizes:
            ref = [d[(t, z)] for t in ("perftest", "ucx") if (t, z) in d]
            ref = best(ref) if ref else None
            row = [human(z)]
            for t in tools:
                v = d.get((t, z))
                row.append("n/a" if v is None else
                           fmt(v) + ("" if ref is None or t in ("perftest", "ucx")
                                     else " (%s)" % ratio(v, ref)))
            rows.append(row)
        out += table(rows, ["size"] + names)
        out.append("")
    return out[:-1]


def by_round(samples, test, key, z, tools):
    """{round: {tool: value}} of the valid runs of tools at size z (msg_rate_Mps in thousands)."""
    rounds = {}
    for s in samples:
        if s["test"] == test and s["size"] == z and s["valid"] and s["tool"] in tools:
            rounds.setdefault(s["round"], {})[s["tool"]] = \
                s[key] * (1e3 if key == "msg_rate_Mps" else 1)
    return rounds


def round_ratios(rounds, now, was):
    """Sorted now / was of the rounds where both ran."""
    return sorted(v[now] / v[was] for v in rounds.values() if now in v and was in v and v[was] > 0)


def paired_rows(samples, sizes, now, was):
    """Tool now against tool was, which ran in the same rounds, per size and measure: both
    medians, their ratio, and the median and range of the per-round ratios (the two runs of a
    round ran within seconds of each other: slow drifts of the guest cancel)."""
    rows = []
    for z in sizes:
        for test, key, name in (("bw", "msg_rate_Mps", "kmsg/s"), ("bw", "bw_MBps", "MB/s"),
                                ("lat", "lat_typical_us", "latency us")):
            rounds = by_round(samples, test, key, z, (now, was))
            a = [v[now] for v in rounds.values() if now in v]
            b = [v[was] for v in rounds.values() if was in v]
            paired = round_ratios(rounds, now, was)
            m_a = statistics.median(a) if a else None
            m_b = statistics.median(b) if b else None
            rows.append([human(z), name, fmt(m_a), fmt(m_b), ratio(m_a, m_b),
                         "%s (%s..%s)" % (fmt(statistics.median(paired), 3), fmt(paired[0], 3),
                                          fmt(paired[-1], 3)) if paired else "n/a",
                         str(len(paired))])
    return rows


def baseline_table(samples, sizes, env):
    """This build (ibmsg) against an earlier one (ibmsg_base, --baseline) in the same rounds."""
    base = [l.split(" ", 1)[1] for l in env if l.startswith("baseline ")]
    out = ["This build against the baseline%s, same rounds; > 1 is better for rate and bandwidth,"
           " < 1 is better for latency" % (" (" + base[0] + ")" if base else "")]
    out += table(paired_rows(samples, sizes, "ibmsg", "ibmsg_base"),
                 ["size", "measure", "this build", "baseline", "ratio of medians",
                  "per-round ratio median (range)", "rounds"])
    return out


def user_tables(samples, sizes, env):
    """Each tool as an ordinary user (compare --unprivileged: tools T_user) against the same tool
    as root in the same rounds: what a user of the site gets."""
    limit = [l.split(" ", 1)[1] for l in env if l.startswith("user ")]
    out = ["As an ordinary user (%s) against root, same rounds; > 1: the user is faster for rate "
           "and bandwidth, < 1 for latency" % (limit[0] if limit else "uid 65534")]
    for t in TOOLS:
        if not any(s["tool"] == t + "_user" for s in samples):
            continue
        out.append("")
        out.append(LABEL[t] + ":")
        out += table(paired_rows(samples, sizes, t + "_user", t),
                     ["size", "measure", "user", "root", "ratio of medians",
                      "per-round ratio median (range)", "rounds"])
    return out


def steps_table(samples, sizes, env, reps):
    lat, count = medians(samples, "lat", "lat_typical_us")
    out = ["Latency ladder: bare verbs with ibmsg's ingredients added one at a time, then ibmsg;"
           " one boot, interleaved, %d repetition(s)" % reps]
    out += ["  " + l for l in env]
    out.append("Half round trip, typical (median of the runs' t_typical), microseconds; step:"
               " the change from the rung above")
    rows = []
    for i, (tool, what) in enumerate(STEPS):
        row = [what]
        for z in sizes:
            v = lat.get((tool, z))
            above = lat.get((STEPS[i - 1][0], z)) if 0 < i and tool != "perftest" else None
            row += [fmt(v), "" if v is None or above is None else "%+.2f" % (v - above),
                    str(count.get((tool, z), 0))]
        rows.append(row)
    header = ["rung"]
    for z in sizes:
        header += [human(z), "step", "runs"]
    out += table(rows, header)
    for z in sizes:
        same, ours, pt = (lat.get((t, z)) for t in ("step_send_cq", "ibmsg", "perftest"))
        if same is not None and ours is not None:
            out.append("  %s: ibmsg less bare verbs with the same ingredients: %+.2f us (the "
                       "library's own code)%s" % (human(z), ours - same, "" if pt is None else
                                                  "; ibmsg / ib_send_lat %s" % ratio(ours, pt)))
    notes = sorted({"%s %s: %s" % (s["tool"], human(s["size"]), s["note"])
                    for s in samples if not s["valid"]})
    if notes:
        out += ["", "Runs without a sample:"] + ["  " + n for n in notes]
    return out


def cost_table(samples, env, reps, out_dir, kind):
    title, on, off, on_label = COST[kind]
    rates = {t: [s["msg_rate_Mps"] * 1e6 for s in samples if s["tool"] == t and s["valid"]]
             for t in (on, off)}
    out = ["%s: ibmsg_send_bw -s 8, %d alternating pairs, one boot" % (title, reps)]
    out += ["  " + l for l in env]
    for t in (on, off):
        v = rates[t]
        out.append("  %-44s median %s msg/s over %d runs (%s)" % (
            on_label if t == on else LABEL[t],
            "%.0f" % statistics.median(v) if v else "n/a", len(v),
            " ".join("%.0f" % x for x in v)))
    if rates[on] and rates[off]:
        r = statistics.median(rates[on]) / statistics.median(rates[off])
        spread = [abs(a / statistics.median(v) - 1) for v in rates.values() for a in v]
        out.append("  ratio on/off of the medians: %.4f (%+.2f%%); run-to-run spread up to %.1f%%"
                   % (r, (r - 1) * 100, max(spread) * 100))
        # The two runs of one repetition ran back to back: their ratio is free of slow drifts.
        by_rep = {}
        for x in samples:
            if x["tool"] in (on, off) and x["valid"]:
                by_rep.setdefault(x["rep"], {})[x["tool"]] = x["msg_rate_Mps"]
        paired = sorted(v[on] / v[off] for v in by_rep.values() if len(v) == 2)
        if paired:
            out.append("  median of the %d per-repetition ratios on/off: %.4f (from %.3f to %.3f)"
                       % (len(paired), statistics.median(paired), paired[0], paired[-1]))
        runs = min(len(v) for v in rates.values())
        if runs < 3:
            out.append("  target: within 1%%: not decidable: %d run(s) of a build (the noise "
                       "shows from 3)" % runs)
        elif max(spread) > 0.01:
            out.append("  target: within 1%%: not decidable in this boot: runs of one build "
                       "differ by up to %.1f%% (noise of the emulated guest on its host)"
                       % (max(spread) * 100))
        else:
            out.append("  target: within 1%%: %s" % ("met" if abs(r - 1) <= 0.01 else "NOT met"))
    out += instructions_table(out_dir, rates[on], kind)
    return out


# The target of --counters-cost: counting on costs at most this much more per message.
COST_TARGET_PCT = 2.0
# The lines, as compare_run's cost_lines measure them: (on tool, test, size, label).
COST_LINES = [("ibmsg", "bw", 8, "send_bw 8 B"), ("ibmsg", "lat", 8, "send_lat 8 B"),
              ("ibmsg", "bw", 65536, "send_bw 64 KiB (rendezvous)"),
              ("ibmsg_idle", "bw", 8, "send_bw 8 B, idle session")]


# The library's progress call, out of line: core_progress (core/core.h) tests the context's
# rare conditions (a hook, the timer) and calls one of these.
PROGRESS_FNS = ("core_progress_plain", "core_progress_hooked", "core_progress_timed")


def progress_calls(path):
    """Calls of the progress call (PROGRESS_FNS) in a callgrind output (None without the file):
    how often a side polled. Runs that waited differently (a side that ran dry spins) differ
    here."""
    try:
        f = open(path, errors="replace")
    except OSError:
        return None
    ids, calls, cur = set(), 0, False
    with f:
        for line in f:
            if line.startswith(("fn=", "cfn=")):  # a name is given once, with its first id
                m = re.match(r"c?fn=\((\d+)\)(?: (\S+))?", line)
                if m and m.group(2) in PROGRESS_FNS:
                    ids.add(m.group(1))
                cur = line.startswith("cfn=") and bool(m) and m.group(1) in ids
            elif cur and line.startswith("calls="):
                calls += int(line.split()[0][6:])
                cur = False
    return calls


# Progress calls per message of the two builds differing by more than this: they waited
# differently, and the spinning, not the counting, decides the difference.
WAIT_SPREAD = 0.10


def callgrind_calls(path):
    """The calls in a callgrind output (None without the file): {(caller, callee): [calls,
    inclusive Ir]}, summed over the call sites. A name is given once, with its first id."""
    try:
        f = open(path, errors="replace")
    except OSError:
        return None
    names, calls, fn, cfn, pending = {}, {}, None, None, False
    with f:
        for line in f:
            if pending:  # the line after calls=: its position and the calls' inclusive cost
                calls.setdefault((fn, cfn), [0, 0])[1] += int(line.split()[-1])
                pending = False
                continue
            m = re.match(r"(c?fn)=\((\d+)\)(?: (\S+))?", line)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                name = names.get(m.group(2), m.group(2))
                if m.group(1) == "fn":
                    fn = name
                else:
                    cfn = name
            elif line.startswith("calls="):
                calls.setdefault((fn, cfn), [0, 0])[0] += int(line.split()[0][6:])
                pending = True
    return calls


# Instructions by which an empty progress call made by a test outside the tools' perf_spin (a
# wait's first test in perf_await, a tool's own test loop, ibmsg_request_wait's) may differ from
# one of the --empty-polls loop (perf_spin's): the loops' own instructions differed by 2.4 to 2.7
# per call in send_lat (callgrind, 2026-11-26), when its waits were ibmsg_request_wait's.
WAIT_LOOP_RESIDUE = 3.0

# The tools' spin (the waiting of every wait in the interval under --empty-polls, and the empty
# polls after it), the library function it calls, and the one every empty progress call makes.
EMPTY_LOOP, EMPTY_TEST, EMPTY_MARK = "perf_spin", "ibmsg_request_test", "core_keepalive_idle"

# The work a progress call defers to one that finds no arrival (the shared receive queue's
# refill, a held repost): how many buffers each call posts depends on how the side waited. When
# the builds' calls of it per message differ by more than this share, the line leaves those
# calls out of both builds at their own (inclusive) cost, as it leaves out the empty calls: the
# reposting itself is the same work per message in both, and its counting is per call (the
# send_bw lines, whose refills batch alike, keep it).
DEFERRED = ("core_srq_refill", "core_ep_repost")
DEFERRED_SPREAD = 0.10

# The growth of a pool that grows once per level of concurrency reached (a rendezvous send's
# memory window, core/rndv.c): how far a run's sends ran ahead of their FINs sets how many it
# allocates, the same work in both builds and none once the level is reached. Every line leaves
# those calls out of both builds at their own (inclusive) cost and says so.
GROWTH = ("window_new",)


def waiting(path):
    """(empty progress calls in the interval, instructions of one, the loop's tests, tests in
    the interval made outside perf_spin, calls of the deferred work in it, their inclusive
    instructions, calls of a pool's growth in it, their inclusive instructions) of a run with
    --empty-polls, or None: the calls of core_keepalive_idle in the
    interval's dump (path + ".1"), and the loop of empty polls in the second dump (each of its
    calls finds nothing: the peer is done) divided by its tests. An empty call of a test in
    perf_spin costs exactly what one of the loop's does; only those of the tests outside it leave
    a residue."""
    interval, loop = callgrind_calls(path + ".1"), callgrind_calls(path + ".2")
    if interval is None or not loop:
        return None
    empty = sum(c[0] for (_, callee), c in interval.items() if callee == EMPTY_MARK)
    cost = sum(c[1] for (_, callee), c in loop.items() if callee == EMPTY_LOOP)
    tests = loop.get((EMPTY_LOOP, EMPTY_TEST), [0, 0])[0]
    if tests == 0 or cost == 0:
        return None
    outside = sum(c[0] for (caller, callee), c in interval.items()
                  if callee == EMPTY_TEST and caller != EMPTY_LOOP)
    deferred = [c for (_, callee), c in interval.items() if callee in DEFERRED]
    growth = [c for (_, callee), c in interval.items() if callee in GROWTH]
    return (empty, cost / float(tests), tests, outside, sum(c[0] for c in deferred),
            sum(c[1] for c in deferred), sum(c[0] for c in growth), sum(c[1] for c in growth))


def bench_events_lines(out_dir):
    """bench_events in the guest: ns per raise site, nobody listening, dropped, delivered."""
    lines = read(os.path.join(out_dir, "bench_events.txt")).splitlines()
    rows = [l for l in lines if l[:1].isalpha() and not l.startswith(("case", "bench"))]
    rows = [l for l in rows if len(l.split()) > 3 and "repetitions" not in l]
    if not rows:
        return []
    return ["  bench_events in this guest (ns per raise site: median, min, p90):"] + \
        ["    " + l for l in rows]


def per_message(ir, tool, side, test, size):
    """Instructions per message from the two runs of a line (None without both)."""
    runs = ir.get((tool, side, test, size), {})
    if len(runs) < 2:
        return None
    n1, n2 = min(runs), max(runs)
    return (runs[n2] - runs[n1]) / float(n2 - n1)


def events_instructions(ir, on_tool, off_tool, out_dir):
    """--events-cost: send_bw at 8 B, the events' raise sites compiled in against out."""
    out = ["User-space instructions per message (callgrind on one side, difference of runs of "
           "2000 and 6000 messages), send_bw 8 B:"]
    for side in ("sender", "receiver", "isend"):
        on, off = (per_message(ir, t, side, "bw", 8) for t in (on_tool, off_tool))
        label = "ibmsg_tag_isend alone (no polling in it)" if side == "isend" else side
        if on is None or off is None:
            out.append("  %-8s n/a (a run failed: see raw/ir_*)" % label)
            continue
        out.append("  %-8s events in %.0f, out %.0f: %+.0f instructions per message (ratio %.4f)"
                   % (label, on, off, on - off, on / off))
    return out + bench_events_lines(out_dir)


def waiting_free(ir, out_dir, tools, side, test, size):
    """Instructions per message with the waiting left out, of each of tools: ((per message,
    empty calls per message, instructions of an empty call, tests outside perf_spin per message,
    calls of the deferred work per message, their instructions per message, calls of a pool's
    growth per message, their instructions per message) or None, ...);
    None when the runs have no --empty-polls dumps (two runs of n1 and n2 messages measured
    everything: the old method). A run's interval less its empty calls times the cost of one,
    divided by its messages; with two runs, the difference of those over the difference of the
    messages."""
    result, probed = [], False
    for t in tools:
        runs = ir.get((t, side, test, size), {})
        adj = {}
        for n in sorted(runs):
            w = waiting(os.path.join(out_dir, "raw", "ir_%s_%s_%s_%d_%d.callgrind"
                                     % (t, side, test, size, n)))
            if w is not None:
                probed = True
                adj[n] = (runs[n] - w[0] * w[1], w[0], w[1], w[3], w[4], w[5], w[6], w[7])
        if not adj or len(adj) < len(runs):
            result.append(None)
            continue
        ns = sorted(adj)
        n1, n2 = ns[0], ns[-1]

        def rate(k):  # field k per message: of one run, or of two runs' difference
            if n1 == n2:
                return adj[n1][k] / float(n1)
            return (adj[n2][k] - adj[n1][k]) / float(n2 - n1)

        per, e, o, dw, di, gw, gi = (rate(k) for k in (0, 1, 3, 4, 5, 6, 7))
        result.append((per, e, statistics.mean(a[2] for a in adj.values()), o, dw, di, gw, gi))
    if not probed:
        return None
    runs = [sorted(ir.get((t, side, test, size), {})) for t in tools]
    if any(r != runs[0] for r in runs):  # one build's single run against the other's two
        return tuple(None for _ in tools)
    return tuple(result)


def instructions_table(out_dir, rates_on, kind):
    """The deterministic side: instructions per message (instructions.tsv), against the target,
    and the cost of one counter update (bench_counters.txt) or raise site (bench_events.txt) in
    the guest."""
    _, on_tool, off_tool, _ = COST[kind]
    path = os.path.join(out_dir, "instructions.tsv")
    if not os.path.exists(path):
        return []
    ir = {}
    with open(path) as f:
        for line in f:
            tool, side, test, size, n, count, status = line.split()
            if status == "0" and int(count) > 0:
                ir.setdefault((tool, side, test, int(size)), {})[int(n)] = int(count)
    if kind == "events":
        return events_instructions(ir, on_tool, off_tool, out_dir)
    out = ["User-space instructions per message (callgrind on one side: the measured interval "
           "less its progress calls that found nothing, each at the cost of the --empty-polls "
           "after it, per message (with two runs of n1 and n2 messages, their difference); "
           "send_lat: per iteration, a message each way), counting on (--counters; idle: "
           "--idle-session, every handle started, never read) against compiled out; target at "
           "most +%.0f%%:" % COST_TARGET_PCT]
    per = {}
    for tool, test, size, label in COST_LINES:
        for side in ("sender", "receiver"):
            name = "%-30s %-8s" % (label, side)
            got = waiting_free(ir, out_dir, (tool, off_tool), side, test, size)
            if got is not None:
                if None in got:
                    out.append("  %s n/a (a run failed, was not made or has no empty polls: see "
                               "raw/ir_*)" % name)
                    continue
                ((on, e_on, c_on, o_on, d_on, i_on, g_on, gi_on),
                 (off, e_off, c_off, o_off, d_off, i_off, g_off, gi_off)) = got
                deferred = ""
                if abs(d_on - d_off) > DEFERRED_SPREAD * max(abs(d_on), abs(d_off)):
                    on, off = on - i_on, off - i_off
                    deferred = ("; the deferred refills and reposts left out too (they batched "
                                "differently: %.3f calls per message on, %.3f off; %.0f and %.0f "
                                "instructions per message)" % (d_on, d_off, i_on, i_off))
                if g_on != 0 or g_off != 0:
                    on, off = on - gi_on, off - gi_off
                    deferred += ("; the windows' pool growth left out (%.3f new windows per "
                                 "message on, %.3f off; %.0f and %.0f instructions per message)"
                                 % (g_on, g_off, gi_on, gi_off))
                per[(tool, test, size, side)] = (on, off)
                pct = (on - off) / off * 100
                verdict = "met" if pct <= COST_TARGET_PCT else "NOT met"
                # What the subtraction leaves: an empty call of a test outside perf_spin costs a
                # few instructions more or less than one of the empty polls' (at most as many
                # such calls as there were empty calls, or tests outside perf_spin).
                residue = WAIT_LOOP_RESIDUE * (min(abs(e_on), abs(o_on)) +
                                               min(abs(e_off), abs(o_off)))
                if abs(on - off - COST_TARGET_PCT / 100 * off) <= residue:
                    verdict += " (not decided: within the residue)"
                out.append("  %s on %6.0f, off %6.0f: %+5.0f instructions, %+6.2f%%: %s; left "
                           "out: %.2f empty calls per message on (%.0f instructions each), "
                           "%.2f off (%.0f); residue +-%.0f%s" % (name, on, off, on - off, pct,
                                                                  verdict, e_on, c_on, e_off,
                                                                  c_off, residue, deferred))
                continue
            vals, polls = {}, {}
            for t in (tool, off_tool):
                runs = ir.get((t, side, test, size), {})
                if len(runs) >= 2:
                    n1, n2 = min(runs), max(runs)
                    vals[t] = per_message(ir, t, side, test, size)
                    c = [progress_calls(os.path.join(out_dir, "raw", "ir_%s_%s_%s_%d_%d.callgrind"
                                                     % (t, side, test, size, n))) for n in (n1, n2)]
                    if None not in c:
                        polls[t] = (c[1] - c[0]) / float(n2 - n1)
            on, off = vals.get(tool), vals.get(off_tool)
            if on is None or off is None:
                if ir:
                    out.append("  %s n/a (a run failed or was not made: see raw/ir_*)" % name)
                continue
            per[(tool, test, size, side)] = (on, off)
            pct = (on - off) / off * 100
            verdict = "met" if pct <= COST_TARGET_PCT else "NOT met"
            note = ""
            if len(polls) == 2:
                p_on, p_off = polls[tool], polls[off_tool]
                note = "; progress calls per message %.2f on, %.2f off" % (p_on, p_off)
                if abs(p_on - p_off) > WAIT_SPREAD * max(p_on, p_off, 1e-9):
                    verdict = "undecidable, the runs waited differently (%s as measured)" % verdict
            out.append("  %s on %6.0f, off %6.0f: %+5.0f instructions, %+6.2f%%: %s%s"
                       % (name, on, off, on - off, pct, verdict, note))
    loop = {}
    for line in read(os.path.join(out_dir, "bench_counters.txt")).splitlines():
        f = line.split()
        if len(f) == 5 and f[0] in ("none", "shard"):
            loop[f[0]] = float(f[1])  # ns per iteration of the update loop, one thread
    if len(loop) == 2:
        out.append("  bench_counters in this guest: %.3f ns per loop iteration with a shard "
                   "update, %.3f without (%+.3f ns per update)"
                   % (loop["shard"], loop["none"], loop["shard"] - loop["none"]))
    deltas = [per[k][0] - per[k][1] for k in per if k[:3] == ("ibmsg", "bw", 8)]
    if deltas and rates_on and "none" in loop:
        ns = 1e9 / statistics.median(rates_on)
        worst = max(deltas)
        # A loop iteration of several instructions takes loop["none"] ns here: 1 ns per added
        # instruction is generous (it does not bound cache misses, which shard updates to a
        # line only this thread writes do not have in a steady stream).
        out.append("  estimate, at 1 ns per added instruction (more than a whole iteration "
                   "of that loop, %.2f ns): %.0f instructions are %.0f ns = %.2f%% of the "
                   "%.0f ns per message at the measured median rate"
                   % (loop["none"], worst, worst, worst / ns * 100, ns))
    return out


def plot(out, sizes, med, test):
    tools = [t for t in TOOLS if any((t, z) in med for z in sizes)]
    if not tools:
        return None
    for t in tools:
        with open(os.path.join(out, "median_%s_%s.dat" % (test, t)), "w") as f:
            for z in sizes:
                if (t, z) in med:
                    f.write("%d %.6g\n" % (z, med[(t, z)]))
    png = os.path.join(out, "bandwidth.png" if test == "bw" else "latency.png")
    title = ("Send bandwidth, one way (medians)" if test == "bw" else
             "Send latency, half round trip, typical (medians)")
    ylabel = "MB/s (2^{20} B/s)" if test == "bw" else "microseconds"
    script = [
        "set terminal png size 900,600",
        "set output '%s'" % png,
        "set title '%s'" % title,
        "set logscale x 2", "set logscale y",
        "set xlabel 'message size (bytes)'", "set ylabel '%s'" % ylabel,
        "set grid", "set key top left",
        "set xrange [%g:%g]" % (sizes[0] / 1.5, sizes[-1] * 1.5),
        "set xtics (%s)" % ", ".join("'%s' %d" % (human(z).replace(" ", ""), z) for z in sizes),
        "plot " + ", ".join("'%s' using 1:2 with linespoints lw 2 title '%s'" % (
            os.path.join(out, "median_%s_%s.dat" % (test, t)), LABEL[t]) for t in tools),
    ]
    subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True, check=True)
    return png


def atomics_table(samples, env, reps):
    """ibmsg_atomic_lat / _bw against ib_atomic_lat / _bw (8-byte fetch-and-add): medians and
    ratios."""
    bw, n_bw = medians(samples, "bw", "msg_rate_Mps")
    lat, n_lat = medians(samples, "lat", "lat_typical_us")
    out = ["Remote atomics: ibmsg vs perftest, one boot, tools interleaved, %d repetition(s);"
           " medians" % reps]
    out += ["  " + l for l in env]
    g = lambda d, t: d.get((t, 8))
    k = lambda t: None if g(bw, t) is None else g(bw, t) * 1e3
    rows = [["fetch-and-add rate, thousands/s (ib_atomic_bw / ibmsg_atomic_bw --counters)",
             fmt(k("ibmsg")), fmt(k("perftest")), ratio(k("ibmsg"), k("perftest")),
             "%d/%d" % (n_bw.get(("ibmsg", 8), 0), n_bw.get(("perftest", 8), 0))],
            ["fetch-and-add latency, round trip, t_typical us (ib_atomic_lat / ibmsg_atomic_lat)",
             fmt(g(lat, "ibmsg")), fmt(g(lat, "perftest")),
             ratio(g(lat, "ibmsg"), g(lat, "perftest")),
             "%d/%d" % (n_lat.get(("ibmsg", 8), 0), n_lat.get(("perftest", 8), 0))]]
    out += table(rows, ["", "ibmsg", "perftest", "ibmsg/perftest", "runs i/p"])
    notes = sorted({"%s %s: %s" % (s["tool"], s["test"], s["note"])
                    for s in samples if not s["valid"]})
    if notes:
        out += ["", "Runs without a sample:"] + ["  " + n for n in notes]
    return out


def samples_of(out):
    """Every run compare_run listed in OUT/runs.tsv, parsed (parse_run)."""
    with open(os.path.join(out, "runs.tsv")) as f:
        runs = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    return [parse_run(out, r) for r in runs]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print("usage: compare_report.py OUT [--no-plots] [--counters-cost | --events-cost | "
              "--steps | --atomics]",
              file=sys.stderr)
        return 2
    out = args[0]
    samples = samples_of(out)
    with open(os.path.join(out, "samples.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for s in samples:
            w.writerow({k: ("" if s.get(k) is None else s.get(k)) for k in FIELDS})
    env = [l for l in read(os.path.join(out, "env.txt")).splitlines() if l]
    mtu = [l for l in env if l.startswith("ib_active_mtu") or l.startswith("netdev")]
    env_lines = ["set-up: " + "; ".join(l for l in env if l.startswith("device")) +
                 "; " + "; ".join(mtu) + " (veth MTU 9000 gives IB MTU 4096)",
                 "versions: " + "; ".join(l for l in env if l.startswith(("perftest", "ucx",
                                                                         "kernel", "cpus")))]
    env_lines += [l for l in env if l.startswith(("baseline ", "user ", "pinned: ", "qp timeout"))]
    reps = max([int(s["rep"]) for s in samples] or [0])
    if "--counters-cost" in sys.argv:
        lines = cost_table(samples, env_lines, reps, out, "counters")
    elif "--events-cost" in sys.argv:
        lines = cost_table(samples, env_lines, reps, out, "events")
    elif "--atomics" in sys.argv:
        lines = atomics_table(samples, env_lines, reps)
    elif "--steps" in sys.argv:
        lines = steps_table(samples, sorted({s["size"] for s in samples}), env_lines, reps)
    else:
        sizes = sorted({s["size"] for s in samples})
        lines, bw, lat = compare_tables(samples, sizes, env_lines, reps)
        if "--no-plots" not in sys.argv:
            made = [p for p in (plot(out, sizes, bw, "bw"), plot(out, sizes, lat, "lat")) if p]
            lines += ["", "Plots (log-log, one line per tool): " + ", ".join(made)]
        lines += ["Raw samples: " + os.path.join(out, "samples.csv")]
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
