#!/usr/bin/env python3
"""tests/replay/format2026.test: snapview's stats --json against the truth
contrib/gensnap.py --ring-flag writes: each device's
ring_buffer_overflowed is the generator's (it dropped events or not).

usage: ring_truth.py TRUTH.json STATS.json
"""
import json
import sys

truth = json.load(open(sys.argv[1]))
stats = json.load(open(sys.argv[2]))
got = {d["device"]: d.get("ring_buffer_overflowed") for d in stats["devices"]}
ok = True
for d in truth["devices"]:
    want = d.get("ring_buffer_overflowed")
    if want is None or got.get(d["device"]) is not want:
        print("FAIL: device %d: ring_buffer_overflowed %r, truth %r "
              "(dropped %d)" % (d["device"], got.get(d["device"]), want,
                                d["dropped_events"]))
        ok = False
sys.exit(0 if ok else 1)
