"""What the checks of compare_report.py's tables share: run the report on a results directory,
find a row by its label, compare."""
import os
import subprocess
import sys


def report(source, out, flag):
    """compare_report.py OUT FLAG's output (source: the source tree); exits on failure."""
    script = os.path.join(source, "perf", "bench", "compare_report.py")
    r = subprocess.run([sys.executable, script, out, flag], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: compare_report.py exited %d: %s" % (r.returncode, r.stderr))
    return r.stdout


def row(text, start):
    """The cells after the label start of the row that begins with it."""
    for line in text.splitlines():
        if line.lstrip().startswith(start):
            return line[len(line) - len(line.lstrip()) + len(start):].split()
    sys.exit("FAIL: no row starting '%s' in\n%s" % (start, text))


def expect(got, want, text):
    if got != want:
        sys.exit("FAIL: expected %s, got %s in\n%s" % (want, got, text))
