#!/usr/bin/env python3
"""Compares snapview leaks/frag/oom --json with gensnap ground truth.

usage: truth.py KIND SNAPVIEW_JSON TRUTH_JSON
       truth.py training SNAPVIEW SNAPSHOT TRUTH_JSON
KIND is leak, frag or oom. The truth comes from the simulator that wrote
the snapshot (contrib/gensnap.py), not from reading the file. training
runs snapview itself: the steps (source and count), the bytes of every
category after the last event and at the peak (top --by category, exact),
and with a planted leak the leak site ranked first, growing every step,
as other; without one, no site grows every step.
"""
import subprocess
import json
import sys

kind = sys.argv[1]
errors = []


def eq(what, g, t):
    if g != t:
        errors.append("%s: snapview %r, truth %r" % (what, g, t))


def training(sv, path, truth):
    def run(*args):
        out = subprocess.run([sv] + list(args) + ["--json", "--no-cache",
                             "--quiet", path], capture_output=True,
                             check=True)
        return json.loads(out.stdout)["devices"][0]

    src = {"optimizer annotations": "optimizer",
           "profiler steps": "profiler_step"}
    c = truth["categories"]
    for what, at in (("last event", c["last_event"]),
                     ("peak", c["peak_event"])):
        d = run("top", "--by", "category", "--at", str(at))
        eq("steps source", d["steps_source"],
           src.get(truth["steps"]["source"], truth["steps"]["source"]))
        eq("steps", d["steps"], truth["steps"]["count"])
        want = c["at_last_event" if what == "last event" else "at_peak"]
        got = {x["category"]: x["bytes"] for x in d["categories"]}
        eq("categories at the %s (#%d)" % (what, at), got,
           {k: v for k, v in want.items() if v})
    leaks = run("leaks")
    t = truth.get("leak")
    if t is None:
        eq("sites growing every step",
           [x["site"] for x in leaks["sites"] if x["periodic"]], [])
        return
    top = leaks["sites"][0]
    eq("rank-1 site", (top["filename"], top["line"], top["name"]),
       (t["filename"], t["line"], t["name"]))
    eq("rank-1 count", top["count"], t["count"])
    eq("rank-1 bytes", top["bytes"], t["total_requested"])
    eq("rank-1 rounded_bytes", top["rounded_bytes"], t["total_rounded"])
    eq("rank-1 periodic", top["periodic"], True)
    eq("rank-1 category", top["category"], t["category"])


if kind == "training":
    training(sys.argv[2], sys.argv[3], json.load(open(sys.argv[4])))
    for e in errors:
        print(e)
    sys.exit(1 if errors else 0)
got_path, truth_path = sys.argv[2:4]
got = json.load(open(got_path))
truth = json.load(open(truth_path))
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
