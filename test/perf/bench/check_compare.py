#!/usr/bin/env python3
"""Checks what `perf/bench/compare --quick` left in DIR: the table (both sections, a row per size,
ibmsg's numbers present, every number positive, an n/a only with its reason listed), the IB MTU
line, a CSV with one row per run, and two valid PNG files (signature, IHDR with a size, every
chunk's CRC, IEND last)."""
import csv
import os
import re
import struct
import sys
import zlib

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def png_ok(path):
    try:
        data = open(path, "rb").read()
    except OSError as e:
        return "cannot read: %s" % e
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "no PNG signature"
    pos, chunks = 8, []
    while pos + 12 <= len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if len(body) != length or zlib.crc32(kind + body) & 0xffffffff != crc:
            return "chunk %r: bad length or CRC" % kind
        chunks.append((kind, body))
        pos += 12 + length
    if not chunks or chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND" or pos != len(data):
        return "not IHDR ... IEND"
    w, h = struct.unpack(">II", chunks[0][1][:8])
    if w < 100 or h < 100 or not any(k == b"IDAT" for k, _ in chunks):
        return "image %dx%d without data" % (w, h)
    return None


def section(lines, title_start):
    """Rows (lists of cells) of the table following the line that starts with title_start."""
    for i, line in enumerate(lines):
        if line.startswith(title_start):
            header = re.split(r"\s{2,}", lines[i + 1].strip())
            rows = []
            for row in lines[i + 3:]:
                if not row.strip():
                    break
                rows.append(re.split(r"\s{2,}", row.strip()))
            return header, rows
    return None, []


def main():
    d = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2].split()] if len(sys.argv) > 2 else [8, 4096]
    text = open(os.path.join(d, "table.txt")).read()
    lines = text.splitlines()
    check(re.search(r"ib_active_mtu 4096", text) is not None, "no IB MTU 4096 line in the table")
    check("netdev veth0 mtu 9000" in text or "vm 0" in open(os.path.join(d, "env.txt")).read(),
          "no veth MTU 9000 line")
    check("qp timeout: each tool's default (perftest and ibmsg 14, 67 ms; UCX 1 s)" in text,
          "no line naming the tools' ACK timeouts")
    notes = text.split("Runs without a sample", 1)[1] if "Runs without a sample" in text else ""
    for title, ncols in (("Bandwidth", 10), ("Latency", 7)):
        header, rows = section(lines, title)
        check(header is not None and len(header) == ncols, "%s: header %r" % (title, header))
        check(len(rows) == len(sizes), "%s: %d rows for %d sizes" % (title, len(rows), len(sizes)))
        for row in rows:
            check(len(row) == ncols, "%s: row %r" % (title, row))
            if len(row) != ncols:
                continue
            size = row[0]
            check(row[1] != "n/a", "%s %s: no ibmsg number" % (title, size))
            for tool, cell in zip(["ibmsg", "perftest", "ucx"], row[1:4]):
                if cell == "n/a":
                    check(re.search(r"%s %s %s:" % (tool, "bw" if title == "Bandwidth" else "lat",
                                                    re.escape(size)), notes) is not None,
                          "%s %s %s: n/a without a reason" % (title, tool, size))
                else:
                    check(float(cell) > 0, "%s %s %s: %s not positive" % (title, tool, size, cell))
            for cell in row[4:6]:
                check(cell == "n/a" or float(cell) > 0, "%s %s: ratio %s" % (title, size, cell))
    check("Targets (issue 10):" in text, "no targets section")
    with open(os.path.join(d, "samples.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == len(sizes) * 2 * 3, "samples.csv: %d rows, expected %d" %
          (len(rows), len(sizes) * 6))
    for r in rows:
        if r["tool"] == "ibmsg":
            check(r["valid"] == "1", "samples.csv: ibmsg run not valid: %r" % r)
    for png in ("bandwidth.png", "latency.png"):
        err = png_ok(os.path.join(d, png))
        check(err is None, "%s: %s" % (png, err))
    if failures:
        print("perf/bench/compare check FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        print(text, file=sys.stderr)
        return 1
    print("perf/bench/compare --quick: table, CSV (%d runs) and PNGs ok" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
