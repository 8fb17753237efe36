#!/usr/bin/env python3
"""Compares `snapview stats --json` with a gensnap ground-truth sidecar.

usage: truth.py SNAPVIEW_JSON TRUTH_JSON
The truth comes from the simulator that wrote the snapshot, not from a
reading of the file, so it checks the reader end to end.
"""
import json
import sys

PAIRS = [("events", "events"), ("segments", "segments"),
         ("reserved", "reserved"), ("allocated", "allocated"),
         ("allocated_blocks", "allocated_block_bytes"),
         ("largest_free_block", "largest_free_block"),
         ("peak", "timeline_peak"), ("peak_event", "timeline_peak_event"),
         ("frees_without_alloc", "unmatched_frees"),
         ("blocks_before_trace", "ghost_blocks"), ("actions", "actions")]

got = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
gd = {d["device"]: d for d in got["devices"]}
if truth.get("format") == "1.13":
    # a 1.13 file has no trace: only the final segments can be compared
    PAIRS = [p for p in PAIRS if p[0] in ("segments", "reserved", "allocated",
                                          "allocated_blocks",
                                          "largest_free_block")]
errors = []
for t in truth["devices"]:
    g = gd.get(t["device"])
    if g is None:
        errors.append("device %d missing" % t["device"])
        continue
    for gk, tk in PAIRS:
        if tk in t and g.get(gk) != t[tk]:
            errors.append("device %d %s: snapview %r, truth %r"
                          % (t["device"], gk, g.get(gk), t[tk]))
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
