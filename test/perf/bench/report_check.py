"""What the checks of compare_report.py's tables share: the results directory's environment file,
run the report on it, find a row by its label, compare."""
import os
import subprocess
import sys


def write_env(out):
    """OUT/env.txt as compare_run writes it in the guest."""
    with open(os.path.join(out, "env.txt"), "w") as e:
        e.write("device rxe0 gid_index 1\nib_active_mtu 4096 (5)\nkernel 6.1\ncpus 2\n")


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
