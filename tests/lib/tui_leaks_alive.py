#!/usr/bin/env python3
"""tests/tui/views.test: the leak view of a run too short to judge a leak
(fewer than two complete steps), written with w, against `snapview top
--by category --json` at the last event: the note that no leak can be
judged comes first, then what is alive at the end, one row per category
with its bytes and blocks, the most bytes first.

usage: tui_leaks_alive.py EXPORT.txt TOP.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svfmt import size_short  # noqa: E402

lines = open(sys.argv[1]).read().split("\n")
cats = json.load(open(sys.argv[2]))["devices"][0]["categories"]
want = [(size_short(c["bytes"]), "{:,}".format(c["count"]),
         c["category"].replace("_", " "))
        for c in sorted(cats, key=lambda c: -c["bytes"]) if c["count"] > 0]
ok = True
if not lines[0].startswith("No leak judged (1 complete step) - alive at "
                           "the end: "):
    print("title: %r" % lines[0]); ok = False
if not lines[1].startswith("Fewer than 2 complete steps: leaks cannot be "
                           "judged."):
    print("no note first: %r" % lines[1]); ok = False
got = []
for l in lines[3:]:
    f = l.split()
    if len(f) >= 4:
        got.append((f[0], f[1], " ".join(f[3:])))
if got != want:
    print("rows %r\n want %r" % (got, want)); ok = False
sys.exit(0 if ok else 1)
