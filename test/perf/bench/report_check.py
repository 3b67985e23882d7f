"""What the checks of compare_report.py's tables share: the results directory's environment file
and runs with known numbers, run the report on it, find a row by its label, compare."""
import os
import subprocess
import sys


def write_env(out):
    """OUT/env.txt as compare_run writes it in the guest."""
    with open(os.path.join(out, "env.txt"), "w") as e:
        e.write("device rxe0 gid_index 1\nib_active_mtu 4096 (5)\nkernel 6.1\ncpus 2\n")


BW = """ #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 %d          64           %.2f               %.2f                 0.000040
"""
LAT = """ #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]
 %d       8          1.00          99999.00          %.2f          %.2f          1.00          50.00          90.00
"""
UCX = """iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr
64,%.3f,1.0,1.0,%.2f,%.2f,40,40
"""


def write_runs(out, sizes, mbps, typ, failed=()):
    """OUT/runs.tsv and OUT/raw as compare_run leaves them: repetitions 1..3, every tool of mbps
    at every size, bandwidth and latency; mbps[tool] and typ[tool] give each repetition's MB/s and
    typical latency (us). A round is one size of one repetition, as compare_run rotates them.
    Every run of a (tool, size) in failed failed (status 1, an error line)."""
    os.makedirs(os.path.join(out, "raw"))
    with open(os.path.join(out, "runs.tsv"), "w") as runs:
        for rep in (1, 2, 3):
            for k, size in enumerate(sizes):
                for tool in mbps:
                    for test in ("bw", "lat"):
                        f = "raw/r%d_%s_%s_%d" % (rep, tool, test, size)
                        status = 1 if (tool, size) in failed else 0
                        b, t = mbps[tool][rep - 1], typ[tool][rep - 1]
                        with open(os.path.join(out, f + ".client.out"), "w") as o:
                            if tool.startswith("ucx"):
                                o.write(UCX % (t, b, b))
                            elif test == "bw":
                                o.write(BW % (size, b, b))
                            else:
                                o.write(LAT % (size, t, t + 1))
                        if status:
                            with open(os.path.join(out, f + ".client.err"), "w") as e:
                                e.write("%s: cannot connect\n" % tool)
                        runs.write("%d\t%d\t%s\t%s\t%d\t64\t%d\t100\t%s\n"
                                   % (rep, (rep - 1) * len(sizes) + k, tool, test, size, status, f))


def section(text, title):
    """The report from the line starting with title on."""
    at = text.find(title)
    if at < 0:
        sys.exit("FAIL: no '%s' in\n%s" % (title, text))
    return text[at:]


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
