#!/usr/bin/env python3
"""Checks snapview's private-pool answers against the truth gensnap
wrote for its pools scenario (contrib/gensnap.py --scenario pools): the
reserved bytes per pool (stats), the free memory per (pool, stream) and
the requests that failed while a large enough block sat in another pool
or stream (frag, oom), in --json and in text.

usage: pools_truth.py SNAPVIEW SNAPSHOT TRUTH_JSON
       pools_truth.py --one-pool SNAPVIEW SNAPSHOT
The second form checks a file whose segments are all in the default pool
(the real files): stats lists that one pool and prints no pools line;
frag and oom print no table of pools and streams and find no request
isolated by its pool (streams apart, there is one).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svfmt import size_long  # noqa: E402

one_pool = sys.argv[1] == "--one-pool"
if one_pool:
    sv, path = sys.argv[2:4]
    truth = None
else:
    sv, path, truth_path = sys.argv[1:4]
    truth = json.load(open(truth_path))["pools"]
errors = []


def eq(what, got, want):
    if got != want:
        errors.append("%s: snapview %r, truth %r" % (what, got, want))


def run(*args):
    out = subprocess.run([sv] + list(args) + ["--no-cache", "--quiet",
                                              path],
                         capture_output=True, check=True, text=True)
    return out.stdout


def key(pool_id, stream=None):
    k = "%d,%d" % tuple(pool_id)
    return k if stream is None else "%s/%d" % (k, stream)


def check_stats():
    d = json.loads(run("stats", "--json"))["devices"][0]
    got = {key(p["pool_id"]): p for p in d["pools"]}
    eq("stats pools", sorted(got), sorted(truth["pools"]))
    for k, t in truth["pools"].items():
        g = got.get(k, {})
        eq("stats pool %s reserved" % k, g.get("reserved"), t["reserved"])
        eq("stats pool %s segments" % k, g.get("segments"), t["segments"])
        eq("stats pool %s private" % k, g.get("private"), k != "0,0")
    eq("stats first pool", d["pools"][0]["pool_id"], [0, 0])
    eq("stats private_pool_segments", d["private_pool_segments"],
       sum(t["segments"] for k, t in truth["pools"].items() if k != "0,0"))
    text = run("stats")
    for k, t in truth["pools"].items():
        want = "%s (%s) %s reserved (%d segment%s" % (
            "default" if k == "0,0" else "private", k,
            size_long(t["reserved"]), t["segments"],
            "" if t["segments"] == 1 else "s")
        if want not in text:
            errors.append("stats text lacks %r" % want)


def group_key(g):
    return key(g["pool_id"], g["stream"])


def check_frag():
    d = json.loads(run("frag", "--json"))["devices"][0]
    want = {x["event_index"]: x for x in truth["isolated_segment_allocs"]}
    eq("frag segment allocs", d["n_segment_allocs"], truth["segment_allocs"])
    eq("frag examined", d["examined_segment_allocs"],
       truth["segment_allocs"])
    eq("frag isolated_count", d["isolated_count"], len(want))
    got = {a["event"]: a for a in d["segment_allocs"] if a["isolated"]}
    eq("frag isolated events", sorted(got), sorted(want))
    for ev, w in want.items():
        g = got.get(ev)
        if g is None:
            continue
        eq("frag #%d pool" % ev, g["request_pool_id"], w["pool_id"])
        eq("frag #%d stream" % ev, g["stream"], w["stream"])
        eq("frag #%d request" % ev, g["request"], w["request"])
        eq("frag #%d isolated in" % ev, group_key(g["isolated"]), w["in"])
        eq("frag #%d largest" % ev, g["isolated"]["largest_free_block"],
           w["largest"])
    # the final state per (pool, stream)
    got = {group_key(g): g for g in d["pool_streams"]}
    eq("frag pool_streams", sorted(got), sorted(truth["pool_streams"]))
    for k, t in truth["pool_streams"].items():
        g = got.get(k, {})
        for f, tf in (("reserved", "reserved"), ("segments", "segments"),
                      ("free", "free")):
            eq("frag %s %s" % (k, f), g.get(f), t[tf])
        eq("frag %s largest" % k, max(g.get("largest_free_small", 0),
                                      g.get("largest_free_large", 0)),
           t["largest_free"])
    kinds = [h["kind"] for h in d["hints"]]
    if "pool_stream_isolation" not in kinds:
        errors.append("frag: no isolation hint in %r" % kinds)
    text = run("frag")
    for k, t in truth["pool_streams"].items():
        pool, stream = k.split("/")
        want = "pool (%s)%s, stream %s: %s reserved in %d segment" % (
            pool, " default" if pool == "0,0" else "", stream,
            size_long(t["reserved"]), t["segments"])
        if want not in text:
            errors.append("frag text lacks %r" % want)
    n = text.count("             isolated: a ")
    eq("frag text isolated lines (10 shown)", n, min(10, len(truth[
        "isolated_segment_allocs"])) + (1 if truth[
            "isolated_segment_allocs"][-1]["event_index"] ==
            d["last_segment_alloc"]["event"] else 0))


def check_oom():
    t = truth["oom"]
    e = json.loads(run("oom", "--json"))["devices"][0]["ooms"][0]
    eq("oom request", e["request"], t["request"])
    eq("oom pool", e["request_pool_id"], t["pool_id"])
    eq("oom stream", e["stream"], t["stream"])
    eq("oom isolated in", group_key(e["isolated"]) if e["isolated"] else
       None, t["isolated_in"])
    eq("oom largest elsewhere", e["isolated"]["largest_free_block"] if
       e["isolated"] else 0, t["largest_elsewhere"])
    got = {group_key(g): g for g in e["pool_streams"]}
    eq("oom pool_streams", sorted(got), sorted(t["groups"]))
    for k, tg in t["groups"].items():
        g = got.get(k, {})
        for f in ("reserved", "segments", "free", "largest_free_small",
                  "largest_free_large"):
            eq("oom %s %s" % (k, f), g.get(f), tg[f])
    causes = [c["cause"] for c in e["causes"]]
    if "pool_stream_isolation" not in causes:
        errors.append("oom: no isolation cause in %r" % causes)
    pool, stream = t["isolated_in"].split("/")
    want = "isolation: a %s block sat free in pool (%s) on stream %s" % (
        size_long(t["largest_elsewhere"]), pool, stream)
    if want not in run("oom"):
        errors.append("oom text lacks %r" % want)


def check_one_pool():
    for d in json.loads(run("stats", "--json"))["devices"]:
        eq("stats pools of device %d" % d["device"],
           [p["pool_id"] for p in d["pools"]],
           [[0, 0]] if d["segments"] else [])
    if "\n  pools:" in run("stats"):
        errors.append("stats prints a pools line")
    for d in json.loads(run("frag", "--json"))["devices"]:
        eq("frag private groups", [g for g in d["pool_streams"]
                                   if g["private"]], [])
        for a in d["segment_allocs"]:
            if a["isolated"] and a["isolated"]["pool_id"] != [0, 0]:
                errors.append("frag #%d isolated by a pool" % a["event"])
    for c in ("frag", "oom"):
        text = run(c)
        for w in ("by pool and stream", "request in:", "in pool ("):
            if w in text:
                errors.append("%s prints %r" % (c, w))


if one_pool:
    check_one_pool()
else:
    check_stats()
    check_frag()
    check_oom()
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
