#!/usr/bin/env python3
"""Issue 27's targets read over the rounds of several boots: compare_pool.py OUT [OUT ...].

Each OUT is a directory perf/bench/compare left (runs.tsv, raw/). One boot's rounds often split
on a target (compare_report.py says "undecided"): a run's figures move by up to 1.6x under
emulation, and the runs of a round by less. Pooled over boots, each comparison's per-round ratio
of ibmsg to the other tool is counted on the target's side or not, and an exact two-sided sign
test says whether the count could be a draw of a tie. The rounds of one boot are not independent
draws, though: they share the boot's conditions (where the guest's memory lies, what the host
runs), and on 2026-11-28 UCX led ibmsg at 1 MiB in 22 of 30 paired rounds of one boot and
trailed it in 11 of 15 of the next. So each boot counts once as well, on the target's side when
the median of its rounds is, with the same test over the boots. A target is decided (met, or NOT
met) only when both tests give p < 0.05 the same way, which takes at least six boots, all one
way; otherwise it stays undecided. Also printed: the median and geometric mean of the ratios,
their range, and each boot's median."""
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_report as cr  # noqa: E402  (the report's parsing and round pairing)

# (test, value, size, other tool, side): side +1 when ibmsg must be at least the other, -1 at most.
COMPARISONS = [("bw", "bw_MBps", z, t, 1) for z in (1 << 18, 1 << 20, 1 << 22)
               for t in ("perftest", "ucx")] + \
              [("lat", "lat_typical_us", z, "ucx", -1) for z in (1 << 16, 1 << 20)]
DECIDED = 0.05


def sign_test(k, n):
    """Two-sided exact binomial p of k of n on one side when either side is as likely."""
    if n == 0:
        return 1.0
    m = min(k, n - k)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(m + 1)) / 2 ** n)


def verdict(k, n, p):
    """met, NOT met or undecided for k of n on the target's side at sign-test p."""
    if p >= DECIDED:
        return "undecided"
    return "met" if 2 * k > n else "NOT met"


def pooled(boots, test, key, z, other, side):
    """Per boot the sorted per-round ratios ibmsg / other; then the pooled line's cells."""
    per_boot = [cr.round_ratios(cr.by_round(s, test, key, z, ("ibmsg", other)), "ibmsg", other)
                for s in boots]
    r = sorted(x for b in per_boot for x in b)
    name = "%s %s %s %s" % ("bandwidth" if test == "bw" else "latency", cr.human(z),
                            ">=" if side > 0 else "<=", cr.LABEL[other])
    if not r:
        return [name, "0", "n/a", "", "", "", "", "", "", "no rounds with both tools", ""]
    on_side = (lambda x: x >= 1) if side > 0 else (lambda x: x <= 1)
    k = sum(1 for x in r if on_side(x))
    p = sign_test(k, len(r))
    medians = [statistics.median(b) for b in per_boot if b]
    kb = sum(1 for m in medians if on_side(m))
    pb = sign_test(kb, len(medians))
    said = verdict(k, len(r), p)
    if verdict(kb, len(medians), pb) != said:
        said = "undecided"
    geo = math.exp(statistics.mean(math.log(x) for x in r))
    boots_said = " ".join("%.3f" % statistics.median(b) if b else "-" for b in per_boot)
    return [name, str(len(r)), "%d/%d" % (k, len(r)), "%.3f" % statistics.median(r), "%.3f" % geo,
            "%.3f..%.3f" % (r[0], r[-1]), "%.3g" % p, "%d/%d" % (kb, len(medians)), "%.3g" % pb,
            said, boots_said]


def main():
    outs = sys.argv[1:]
    if not outs:
        print("usage: compare_pool.py OUT [OUT ...]", file=sys.stderr)
        return 2
    boots = [cr.samples_of(o) for o in outs]
    rows = [pooled(boots, *c) for c in COMPARISONS]
    print("Issue 27's targets over the rounds of %d boot(s) (%s): per round ibmsg over the "
          "other; on side: rounds on the target's side; p: exact two-sided sign test; boots: "
          "boots whose median round is on the target's side, p boots: the same test over them; "
          "decided when both p < %.2f agree" % (len(outs), ", ".join(outs), DECIDED))
    print("\n".join(cr.table(rows, ["target", "rounds", "on side", "median", "geomean", "range",
                                    "p", "boots", "p boots", "verdict", "median per boot"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
