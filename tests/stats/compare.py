#!/usr/bin/env python3
"""Compares `snapview stats --json` output with oracle.py's on the same file.

usage: compare.py SNAPVIEW_JSON ORACLE_JSON
Every key the oracle computes must be equal; exits 1 listing differences.
"""
import json
import sys

got = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
errors = []
gd = {d["device"]: d for d in got["devices"]}
for w in want["devices"]:
    g = gd.get(w["device"])
    if g is None:
        errors.append("device %d missing" % w["device"])
        continue
    for k, v in w.items():
        if g.get(k) != v:
            errors.append("device %d %s: snapview %r, oracle %r"
                          % (w["device"], k, g.get(k), v))
if len(gd) != len(want["devices"]):
    errors.append("device count: snapview %d, oracle %d"
                  % (len(gd), len(want["devices"])))
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
