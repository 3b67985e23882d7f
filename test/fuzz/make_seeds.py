#!/usr/bin/env python3
"""Write the seed corpus of the fuzz harnesses (test/fuzz/corpus/<target>/): valid inputs of
every shape the parsers accept and a few near misses. Re-run after a format change; the
outputs are checked in."""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(here, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def verbs_addr(qpn=0x11, psn=0x123456, lid=0, mtu=5, link=2, gid=b"\0" * 10 + b"\xff\xff" + bytes([192, 168, 77, 1])):
    return bytes([1, 0]) + struct.pack(">HIIHBB", 32, qpn, psn, lid, mtu, link) + gid


def ep_addr(credits=64, limit=8192, resp=16, init=16, **kw):
    return (bytes([5, 0, 0, 48]) + struct.pack(">II", credits, limit) + bytes([resp, init, 0, 0])
            + verbs_addr(**kw))


write("fuzz_ep_addr", "roce", ep_addr())
write("fuzz_ep_addr", "ib", ep_addr(lid=7, link=1, gid=b"\0" * 16))
write("fuzz_ep_addr", "bad_credits", ep_addr(credits=1))
write("fuzz_ep_addr", "read_depths", ep_addr(resp=1, init=2))
write("fuzz_ep_addr", "bad_read_depth", ep_addr(resp=0))
write("fuzz_ep_addr", "verbs_only", verbs_addr())
write("fuzz_ep_addr", "truncated", ep_addr()[:44])


def rkey(access=3, key=0x1234, base=0x7F0000001000, length=1 << 20):
    return bytes([1, access]) + struct.pack(">HIQQ", 24, key, base, length)


write("fuzz_rkey", "rw", rkey())
write("fuzz_rkey", "read_only_top", rkey(access=1, base=(1 << 64) - 4096, length=4096))
write("fuzz_rkey", "with_access", rkey() + struct.pack("<QQ", 0x7F0000001000 + 100, 4096))
write("fuzz_rkey", "wraps", rkey(base=(1 << 64) - 10, length=11))


def hdr(typ, seq, tag, length, credits=0, flags=0):
    return struct.pack("<BBHIQII", typ, flags, credits, seq, tag, length, 0)


def record(op, msg, post=None):
    r = bytes([op]) + struct.pack("<H", len(msg))
    if post is not None:
        tag, exact, rlen = post
        r = bytes([op | 1]) + struct.pack("<H", len(msg)) + struct.pack("<IBI", tag, exact, rlen)
    return r + msg


setup = struct.pack("<HBB", 8192, 10, 0)
stream = setup
stream += record(0, hdr(1, 0, 5, 16) + b"x" * 16, post=(5, 1, 16))          # expected, exact fit
stream += record(0, hdr(1, 1, 6, 100) + b"y" * 100)                          # unexpected
stream += record(0, hdr(2, 2, 0, 0, credits=3))                              # credit return
stream += record(0, hdr(1, 3, 6, 64) + b"z" * 64, post=(6, 1, 8))           # truncating match
write("fuzz_wire", "stream", stream)
write("fuzz_wire", "fixups", setup + record(6, hdr(1, 9, 1, 9) + b"q" * 40, post=(1, 0, 100)))
write("fuzz_wire", "bad_type", setup + record(0, hdr(3, 0, 0, 0)))
write("fuzz_wire", "short", setup + record(0, b"\x01\x00\x00"))
rndv_body = struct.pack("<QQII", 0x7F0000001000, 1 << 20, 0x8000123, 0)
write("fuzz_wire", "rts_window", setup + record(0, hdr(3, 0, 7, 24, flags=1) + rndv_body)
      + record(0, hdr(4, 1, 0, 24, flags=1) + rndv_body))                    # window RTS; FIN: bad
write("fuzz_wire", "fin_invalidated", setup + record(0, hdr(4, 0, 0, 24, flags=2) + rndv_body)
      + record(0, hdr(4, 1, 0, 24, flags=3) + rndv_body))                    # FIN bit; both: bad


def imm(tag, credits=0):
    return struct.pack("<I", (1 << 31) | (credits << 23) | tag)


write("fuzz_wire", "compact", setup + record(8, imm(5, credits=2) + b"c" * 16, post=(5, 1, 16))
      + record(8, imm(0x7FFFFF) + b"d" * 4096)                            # unexpected, largest tag
      + record(0, hdr(1, 2, 9, 0) + b"")                                   # empty: full header
      + record(8, struct.pack("<I", 5) + b"e")                             # format bit clear: bad
      + record(8, imm(6) + b""))                                           # empty compact: bad
