#!/usr/bin/env python3
"""perf/bench/compare --scale's report (perf/bench/scale_report.py) on runs with known numbers:
medians over the runs, per-endpoint memory as each run's own difference over N, failed runs
counted beside the others. Usage: check_scale_report.py SOURCE_DIR"""
import os
import subprocess
import sys
import tempfile

RUNS = """ibmsg 16 10 20 1000 1160 2560 2560 40 50
ibmsg 16 30 40 1000 1320 2560 2560 60 70
ibmsg 16 20 30 2000 2240 2560 2560 50 60
ucx 16 100 200 8000 88000 532 76308 45 55
ucx 16 failed
ucx 1 failed
"""


def main():
    src = sys.argv[1]
    with tempfile.TemporaryDirectory() as out:
        with open(os.path.join(out, "runs.txt"), "w") as f:
            f.write(RUNS)
        r = subprocess.run([sys.executable, os.path.join(src, "perf/bench/scale_report.py"), out,
                            "--no-plots"], capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            return 1
        table = open(os.path.join(out, "scale.md")).read()
    want = [
        # rss per endpoint: (160, 320, 240) / 16 -> median 15.0; the others medians of 3
        "| ibmsg | 16 | 3 | 1000 / 1320 | 15.0 | 2560 / 2560 | 0.0 | 20 | 30 | 50.0 (60.0) |",
        "| UCX (ucp, rc_v) | 1 | 0 (1 failed) | | | | | | | |",
        "| UCX (ucp, rc_v) | 16 | 1 (1 failed) | 8000 / 88000 | 5000.0 | 532 / 76308 | 4736.0 | 100 "
        "| 200 | 45.0 (55.0) |",
    ]
    bad = [w for w in want if w not in table.splitlines()]
    for w in bad:
        print("missing row: " + w)
    if bad:
        print(table)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
