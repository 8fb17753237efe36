#!/usr/bin/env python3
"""tests/tui/categories.test: the user's category rules reach the
timeline's bands and legend, the block table and `snapview top --by
category --categories FILE --json` alike.

usage: tui_categories.py WORKDIR
"""
import json, os, re, sys
work = sys.argv[1]
from svfmt import size_short as short
ok = True
def fail(m):
    global ok
    print("FAIL: " + m); ok = False
def cats(name):
    d = json.load(open(os.path.join(work, name)))["devices"][0]
    return {c["category"].replace("_", " "): c for c in d["categories"]}
top = cats("cats.json")
inferred = cats("inferred.json")
if top.get("temporary", {}).get("bytes", 0) <= \
        inferred.get("temporary", {}).get("bytes", 0):
    fail("the rule moved nothing to temporary: %r" % top)
# the legend: "<glyph> <size> <name>" entries after the axis labels
scr = open(os.path.join(work, "legend.screen")).read().split("\n")
if not scr[0].startswith("─ Timeline") or "by category" not in scr[0]:
    fail("not in the category mode: %r" % scr[0])
start = [i for i, l in enumerate(scr) if re.match(r"^ +#0 ", l)][0] + 1
legend = []
for l in scr[start:]:
    if l.startswith("─"):
        break
    for e in re.split(r"  +", l.strip()):
        m = re.match(r"^\S (\S+) (.+)$", e)
        if m:
            legend.append((m.group(2), m.group(1)))
shown = {n: s for n, s in legend if s != "0B"}
want = {n: short(c["bytes"]) for n, c in top.items()}
if shown != want:
    fail("legend %r, top --by category --categories says %r" %
         (shown, want))
if not legend or legend[0][0] != "temporary":
    fail("the legend does not start with the rule's category: %r" % legend)
# the block table: blocks per category (its column holds the first word)
n = {}
for l in open(os.path.join(work, "blocks.txt")).read().split("\n")[2:]:
    m = re.match(r'^0x[0-9a-f]+[ ~] *\S+ +\S+ +\S+ +\S+ +(\S+) ', l)
    if m:
        n[m.group(1)] = n.get(m.group(1), 0) + 1
want = {c.split(" ")[0]: v["count"] for c, v in top.items()}
if n != want:
    fail("block table %r, top --by category --categories says %r" %
         (n, want))
print("legend:", legend)
print("block table:", n)
sys.exit(0 if ok else 1)
