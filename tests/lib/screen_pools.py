#!/usr/bin/env python3
"""Reads the viewer's pool mode off a screen (tmux capture at 80x24, the
cursor on the last event, the legend in full) and checks each
(pool, stream) envelope's height in the legend against the reserved bytes
gensnap's truth gives it at the end (the pools scenario), and that the
title names the mode.

usage: screen_pools.py SCREEN TRUTH_JSON
       screen_pools.py --oom SCREENS TRUTH_JSON
The second form reads the OOM view's screens, scrolled line by line
(SCREENS: their captures one after the other), and checks the isolation
cause and the free memory of each (pool, stream) at the OOM.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svfmt import size_long, size_short  # noqa: E402

errors = []


def oom_view(screens, t):
    text = open(screens).read()
    pool, stream = t["isolated_in"].split("/")
    want = ["isolation: a %s block sat free in pool (%s) on stream" %
            (size_long(t["largest_elsewhere"]), pool),
            "request pool  (0,0) default, stream %d" % t["stream"]]
    for k, g in sorted(t["groups"].items()):
        pool, stream = k.split("/")
        want.append("(%s) stream %s: %s reserved, %s free," % (
            pool, stream, size_long(g["reserved"]), size_long(g["free"])))
    for w in want:
        if w not in text:
            errors.append("OOM view lacks %r" % w)


if sys.argv[1] == "--oom":
    oom_view(sys.argv[2], json.load(open(sys.argv[3]))["pools"]["oom"])
    for e in errors:
        print("FAIL: " + e)
    sys.exit(1 if errors else 0)
screen = open(sys.argv[1]).read().split("\n")
truth = json.load(open(sys.argv[2]))["pools"]["pool_streams"]
if "by pool" not in screen[0]:
    errors.append("title: %r" % screen[0])
legend = [ln for ln in screen if "stream" in ln and ("pool" in ln)]
for k, t in sorted(truth.items()):
    pool, stream = k.split("/")
    if pool == "0,0":
        label = "default pool, stream %s" % stream
    else:
        label = "pool (%s), stream %s" % (pool, stream)
    want = "%s %s" % (size_short(t["reserved"]), label)
    if not any(ln[2:].startswith(want) for ln in legend):
        errors.append("legend lacks %r in %r" % (want, legend))
if len(legend) != len(truth):
    errors.append("%d legend entries for %d (pool, stream)s" %
                  (len(legend), len(truth)))
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
