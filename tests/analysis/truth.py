#!/usr/bin/env python3
"""Compares snapview leaks/frag/oom --json with gensnap ground truth.

usage: truth.py KIND SNAPVIEW_JSON TRUTH_JSON
KIND is leak, frag or oom. The truth comes from the simulator that wrote
the snapshot (contrib/gensnap.py), not from reading the file.
"""
import json
import sys

kind, got_path, truth_path = sys.argv[1:4]
got = json.load(open(got_path))
truth = json.load(open(truth_path))
errors = []


def eq(what, g, t):
    if g != t:
        errors.append("%s: snapview %r, truth %r" % (what, g, t))


dev = got["devices"][0]
if kind == "leak":
    t = truth["leak"]
    top = dev["sites"][0]
    eq("rank-1 filename", top["filename"], t["filename"])
    eq("rank-1 line", top["line"], t["line"])
    eq("rank-1 name", top["name"], t["name"])
    eq("rank-1 count", top["count"], t["count"])
    eq("rank-1 bytes", top["bytes"], t["total_requested"])
    eq("rank-1 rounded_bytes", top["rounded_bytes"], t["total_rounded"])
    eq("rank-1 periodic", top["periodic"], True)
    c = top["caller"] or {}
    eq("rank-1 caller", (c.get("filename"), c.get("line"), c.get("name")),
       (t["caller"]["filename"], t["caller"]["line"], t["caller"]["name"]))
    # the once-allocated state is bigger than the leak, and still ranks
    # below it
    if t.get("optimizer_state_bytes"):
        if not any(s["bytes"] >= t["total_requested"] and not s["periodic"]
                   for s in dev["sites"][1:]):
            print("note: no larger one-off site in this file")
elif kind == "frag":
    t = truth["frag"]
    last = dev["last_segment_alloc"]
    eq("last segment_alloc event", last["event"],
       t["last_segment_alloc_event"])
    eq("reserved_before", last["reserved_before"], t["reserved_before"])
    eq("allocated_before", last["allocated_before"], t["allocated_before"])
    eq("gap", last["gap"], t["gap"])
    eq("request", last["request"], t["request"])
    eq("segment size", last["size"], t["segment_size"])
    eq("first (worst) has the largest gap", dev["segment_allocs"][0]["gap"],
       max(a["gap"] for a in dev["segment_allocs"]))
elif kind == "oom":
    t = truth["oom"]
    ooms = [o for d in got["devices"] for o in d["ooms"]]
    eq("oom count", len(ooms), 1)
    o = ooms[0]
    eq("event", o["event"], t["event_index"])
    eq("request", o["request"], t["request"])
    eq("device_free", o["device_free"], t["device_free"])
    eq("reserved", o["reserved"], t["reserved"])
    eq("allocated", o["allocated"], t["allocated"])
    got_sites = [("%s:%s:%s" % (s["filename"], s["line"], s["name"]),
                  s["bytes"]) for s in o["live_sites"][:len(t["top_sites"])]]
    eq("top sites", got_sites, [(s["site"], s["bytes"])
                                for s in t["top_sites"]])
else:
    errors.append("unknown kind " + kind)
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
