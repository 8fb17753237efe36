#!/usr/bin/env python3
"""Writes the reproducers of tests/harden/files/: small snapshots, each the
smallest file that once crashed, hung or misled snapview (issue 18). The
committed files are what the tests read; this script documents how each
was made and rewrites them (deterministic, standard library only).

usage: mkrepro.py [OUTDIR]
"""
import os
import pickle
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "files")
A = 0x7F0000000000
MIB = 1 << 20
U64 = (1 << 64) - 1
FRAMES = [{"name": "forward", "filename": "/w/model.py", "line": 7}]


def ev(action, addr, size, frames=()):
    return {"action": action, "addr": addr, "size": size, "stream": 0,
            "frames": list(frames)}


def seg(addr, size, blocks, expandable=False):
    return {"device": 0, "address": addr, "total_size": size,
            "allocated_size": 0, "active_size": 0, "requested_size": 0,
            "stream": 0, "segment_type": "large", "frames": [],
            "is_expandable": expandable, "blocks": blocks}


def blk(addr, size, state="inactive", req=0, frames=()):
    return {"address": addr, "size": size, "requested_size": req,
            "state": state, "frames": list(frames)}


def snap(segments, events):
    return {"segments": segments, "device_traces": [events]}


FILES = {
    # A request of 2^64 - 1 bytes: its end wrapped, `state --at 2` indexed
    # a 12-byte string with INT_MIN in segsum_line() (SIGSEGV).
    "alloc_wrap": snap([], [
        ev("segment_alloc", A, 4 * MIB),
        ev("alloc", A, 100),
        ev("alloc", A + 512, U64)]),
    # Segments that run past 2^64, in the file and in the trace, and a
    # block of 2^64 - 1 bytes inside one: every end must saturate.
    "seg_wrap": snap([
        seg(U64 - 8191, MIB, [blk(U64 - 8191, U64, "active_allocated", U64)]),
        seg(A, 2 * MIB, [blk(A, 512, "active_allocated", 1 << 40),
                         blk(A + 512, 2 * MIB, "inactive")])], [
        ev("segment_alloc", U64 - 4095, MIB),
        ev("segment_free", U64 - 4095, MIB),
        ev("alloc", A, 1 << 40)]),
    # An unmap whose end wraps to below its start: it split an expandable
    # segment into two that overlapped.
    "unmap_wrap": snap([], [
        ev("segment_map", A, 2 * MIB),
        ev("segment_unmap", A + 4096, U64 - 1000),
        ev("alloc", A, 512)]),
    # A 2^63-byte block live at the end: `diff --json` printed its
    # live_delta through int64_t (signed overflow).
    "live_2e63": snap([], [
        ev("segment_alloc", A, 1 << 63),
        ev("alloc", A, 1 << 63, FRAMES)]),
    # 3 x 2^62 bytes: through int64_t the delta even changed sign.
    "live_huge": snap([], [
        ev("segment_alloc", A, 3 << 62),
        ev("alloc", A, 3 << 62, FRAMES)]),
    "live_small": snap([], [
        ev("segment_alloc", A, 2 * MIB),
        ev("alloc", A, 512, FRAMES)]),
}


def lists_at():
    """65,536 trace lists in 65 KB, all empty but the last, which holds
    one alloc (issue 34): `state --at 0` and the viewer's open worked out
    the default device once per list, 12 s. Written by hand, as a pickler
    would not: one EMPTY_LIST byte per list, no memo."""
    def s(x):
        return b"\x8c" + bytes([len(x)]) + x.encode()
    last = pickle.dumps([ev("alloc", A, 1)], 4)
    last = last[11:-1] if last[2:3] == b"\x95" else last[2:-1]
    return (b"\x80\x04}(" + s("segments") + b"]" + s("device_traces") +
            b"](" + b"]" * 65535 + last + b"eu.")


# Files whose bytes are written by hand rather than by pickle.dumps().
RAW = {
    "lists_at": lists_at,
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, obj in sorted(FILES.items()):
        with open(os.path.join(OUT, name + ".pickle"), "wb") as f:
            f.write(pickle.dumps(obj, 4))
    for name, make in sorted(RAW.items()):
        with open(os.path.join(OUT, name + ".pickle"), "wb") as f:
            f.write(make())


if __name__ == "__main__":
    main()
