#!/usr/bin/env python3
"""perf/bench/profile_report.py on a compare --profile directory made here with known samples:
the receiving side's CPU per MiB, its kernel / own code / other shares, its busy seconds, the
per-round ratios and its hottest symbols; the client's and idle samples left out."""
import os
import subprocess
import sys
import tempfile

from report_check import expect, row
import report_check

SIZE = 1048576
MBPS = {"ibmsg": (30, 32, 34), "ucx": (31, 33, 33)}
TYP = {"ibmsg": (1, 1, 1), "ucx": (1, 1, 1)}
KERNEL, RXE = "[kernel.kallsyms]", "[rdma_rxe]"
LIB = "/work/build/libibmsg.so.0.1.0"
UCP = "/usr/lib/x86_64-linux-gnu/libucp.so.0.0.0"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
# (second, symbol, dso, count) of the server (pid 500), at 100 Hz: a second with 85 or more of
# them is busy. ibmsg: 2 busy seconds of 60 + 20 + 10, then 30 + 11: 221 samples, kernel 190,
# own code 20, other 11; 2.21 s over 64 MiB = 34.53 ms/MiB. UCX: 3 busy seconds of 70 + 20, 270
# samples, kernel 210, own 60; over 64 messages and 7 of warm-up (-w 7 on its command line),
# 2.7 s / 71 MiB = 38.03 ms/MiB.
SERVER = {"ibmsg": [(10, "memcpy_erms", KERNEL, 60), (10, "rxe_responder", RXE, 20),
                    (10, "core_progress_plain", LIB, 10), (11, "memcpy_erms", KERNEL, 60),
                    (11, "rxe_responder", RXE, 20), (11, "core_progress_plain", LIB, 10),
                    (12, "memcpy_erms", KERNEL, 30), (12, "pthread_spin_lock", LIBC, 11)],
          "ucx": [(s, sym, d, n) for s in (20, 21, 22)
                  for sym, d, n in (("memcpy_erms", KERNEL, 70), ("ucp_worker_progress", UCP, 20))]}


def write_samples(path, tool):
    with open(path, "w") as f:
        for second, sym, dso, n in SERVER[tool]:
            for i in range(n):
                f.write("%8d %6d.%06d: %16x %s (%s)\n" % (500, second, i * 1000, 0xffff0000 + i,
                                                          sym, dso))
            # the client (pid 600, spinning) and an idle CPU: not the receiving side's
            f.write("%8d %6d.%06d: %16x %s (%s)\n" % (600, second, 999000, 0x1234, "perf_await",
                                                      "/work/build/perf/ibmsg_send_bw"))
            f.write("%8d %6d.%06d: %16x %s (%s)\n" % (0, second, 999500, 0xffff1, "default_idle",
                                                      KERNEL))
        f.write("%8d %6d.%06d: %16x %s (%s)\n" % (600, 30, 0, 0x1, "operator new(unsigned long)",
                                                  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"))


def make(out, with_ucx_samples=True):
    report_check.write_runs(out, (SIZE,), MBPS, TYP)
    report_check.write_env(out)
    with open(os.path.join(out, "env.txt"), "a") as e:
        e.write("profile_hz 100\n")
    for rep in (1, 2, 3):
        for tool in MBPS:
            base = os.path.join(out, "raw", "r%d_%s_bw_%d" % (rep, tool, SIZE))
            with open(base + ".server.pid", "w") as p:
                p.write("500\n")
            with open(base + ".cmd", "w") as c:  # server, then client, as compare_run writes
                warm = " -w 7" if tool == "ucx" else ""
                c.write(" %s -s %d -n 64%s -p 20000\n perf record -- %s -s %d -n 64%s -p 20000 "
                        "127.0.0.1\n" % (tool, SIZE, warm, tool, SIZE, warm))
            if tool == "ibmsg" or with_ucx_samples:
                write_samples(base + ".samples", tool)


script = os.path.join(sys.argv[1], "perf", "bench", "profile_report.py")
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "p")
    make(out)
    r = subprocess.run([sys.executable, script, out], capture_output=True, text=True)
    text = r.stdout + r.stderr
    expect(r.returncode, 0, text)
    expect(row(text, "ibmsg"), ["3", "32.00", "34.53", "85.97", "9.05", "4.98", "2"], text)
    expect(row(text, "UCX"), ["3", "33.00", "38.03", "77.78", "22.22", "0.00", "3"], text)
    # 34.53 / 38.03 every round; bandwidth 30/31, 32/33, 34/33
    expect(row(text, "CPU per MiB, ibmsg / UCX"), ["3", "0.908", "0.908..0.908"], text)
    expect(row(text, "bandwidth, ibmsg / UCX"), ["3", "0.970", "0.968..1.030"], text)
    # busy seconds only: ibmsg 120 + 40 + 20 of 180, UCX 210 + 60 of 270
    hot = report_check.section(text, "Hottest symbols")
    expect(row(hot, "1 "), ["memcpy_erms", "66.7%", "memcpy_erms", "77.8%"], text)
    expect(row(hot, "2 "), ["rxe_responder", "22.2%", "ucp_worker_progress", "22.2%"], text)
    expect(row(hot, "3 "), ["core_progress_plain", "11.1%"], text)
    with open(os.path.join(out, "table.txt")) as t:
        expect(t.read(), r.stdout, text)

    out = os.path.join(tmp, "q")  # UCX's runs without samples: said, and the status is 1
    make(out, with_ucx_samples=False)
    r = subprocess.run([sys.executable, script, out], capture_output=True, text=True)
    expect(r.returncode, 1, r.stdout + r.stderr)
    expect(row(r.stdout, "UCX"), ["0", "no", "profiled", "run"], r.stdout)

    out = os.path.join(tmp, "r")  # not a --profile directory
    report_check.write_runs(out, (SIZE,), MBPS, TYP)
    report_check.write_env(out)
    r = subprocess.run([sys.executable, script, out], capture_output=True, text=True)
    expect(r.returncode, 1, r.stdout + r.stderr)
    expect("no profile_hz" in r.stdout, True, r.stdout)
    r = subprocess.run([sys.executable, script], capture_output=True, text=True)
    expect(r.returncode, 2, r.stderr)
print("perf_profile_report: ok")
