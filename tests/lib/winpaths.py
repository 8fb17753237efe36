#!/usr/bin/env python3
"""Writes a trace whose frames are Windows paths, for
tests/harden/backslash.test: one live allocation per path, each path its
own call site. The paths hold backslashes before letters that name
escapes elsewhere (e, n, r, t), a literal \\x41 and \\u{41} (which must
not read as escapes) and a backslash before an ESC.

usage: winpaths.py OUT.pickle
"""
import pickle
import sys

PATHS = [
    "C:\\Users\\me\\envs\\proj\\train.py",
    "D:\\work\\nn\\x41\\model.py",
    "E:\\src\\u{41}\\data.py",
    "F:\\run\\\x1b[31m.py",
]
trace, segs = [], []
for i, p in enumerate(PATHS):
    a = 0x7f0000000000 + i * 0x200000
    fr = [{"filename": p, "line": 10 + i, "name": "f%d" % i}]
    trace.append({"action": "alloc", "addr": a, "size": 1 << (20 - i),
                  "stream": 0, "frames": fr})
    segs.append({"device": 0, "address": a, "total_size": 2 << 20,
                 "stream": 0, "segment_type": "large",
                 "blocks": [{"address": a, "size": 2 << 20,
                             "requested_size": 1 << (20 - i),
                             "state": "active_allocated", "frames": fr}]})
with open(sys.argv[1], "wb") as f:
    pickle.dump({"segments": segs, "device_traces": [trace]}, f, protocol=4)
