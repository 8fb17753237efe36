#!/usr/bin/env python3
"""Reads the viewer's pool mode off a screen (tmux capture at 80x24, the
cursor on the last event, the legend in full) and checks each
(pool, stream) envelope's height in the legend against the reserved bytes
gensnap's truth gives it at the end (the pools scenario), and that the
title names the mode.

usage: screen_pools.py SCREEN TRUTH_JSON
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svfmt import size_short  # noqa: E402

screen = open(sys.argv[1]).read().split("\n")
truth = json.load(open(sys.argv[2]))["pools"]["pool_streams"]
errors = []
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
