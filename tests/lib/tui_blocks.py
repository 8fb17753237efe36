#!/usr/bin/env python3
"""tests/tui/blocks.test: the block table (B), written whole, against
`snapview state --json` and `snapview top --by category --json` at the
same event: every live block once, the sort orders, the ages, the
categories; Enter selects the block in the segment map.

usage: tui_blocks.py WORKDIR AT
"""
import json, os, re, sys
work, at = sys.argv[1], int(sys.argv[2])
st = json.load(open(os.path.join(work, "state.json")))
cats = json.load(open(os.path.join(work, "cats.json")))["devices"][0]
ok = True
def fail(m):
    global ok
    print("FAIL: " + m); ok = False
live = {}
for s in st["segments"]:
    for b in s["blocks"]:
        if b["state"] in ("active_allocated", "active_pending_free"):
            live[b["address"]] = (b, s)
def table(name):
    """rows of an exported table: (address, age, category)"""
    lines = open(os.path.join(work, name)).read().split("\n")
    if not lines[0].startswith("Blocks @ #{:,} - {:,} live".format(at, len(live))):
        fail("%s: title %r" % (name, lines[0]))
    out = []
    for l in lines[2:]:
        m = re.match(r'^(0x[0-9a-f]+)[ ~] *(\S+) +(\S+) +(\S+) +(\S+) +'
                     r'(\S+) +(.*)$', l)
        if m:
            out.append((int(m.group(1), 16), m.group(4), m.group(6)))
    return out
by_size = table("by-size.txt")
if sorted(a for a, _, _ in by_size) != sorted(live):
    fail("the table's blocks are not the live blocks of state --json "
         "(%d rows, %d live)" % (len(by_size), len(live)))
key = {
    "by-size.txt": lambda a: (-live[a][0]["size"], a),
    "by-req.txt": lambda a: (-live[a][0]["requested_size"], a),
    "by-age.txt": lambda a: (live[a][0]["alloc_event"], a),
}
for name, k in key.items():
    got = [a for a, _, _ in table(name)]
    if got != sorted(live, key=k):
        fail("%s: not in order" % name)
got = [a for a, _, _ in table("by-age-rev.txt")]
if got != sorted(live, key=key["by-age.txt"])[::-1]:
    fail("R did not reverse the order")
for a, age, cat in by_size:
    ev = live[a][0]["alloc_event"]
    want = "pre" if ev < 0 else "{:,}".format(at - ev)
    if age != want:
        fail("block %#x: age %s, want %s" % (a, age, want)); break
n = {}
for _, _, c in by_size:
    n[c] = n.get(c, 0) + 1
# (the column holds the first word: "optimizer" for optimizer state)
want = {c["category"].split("_")[0]: c["count"] for c in cats["categories"]
        if c["count"] > 0}
if n != want:
    fail("categories %r, top --by category says %r" % (n, want))
# Enter: the selected block, selected in the segment map
sel = [l for l in open(os.path.join(work, "sel.screen")).read().split("\n")
       if l.startswith("─ Block ")][0]
addr = sel.split()[2]
scr = open(os.path.join(work, "map.screen")).read().split("\n")
if not any(l.startswith("─ State @ ") for l in scr):
    fail("Enter did not bring the segment map back")
if not any(l.startswith("─ Block %s " % addr) for l in scr):
    fail("Enter did not select block %s in the map" % addr)
sys.exit(0 if ok else 1)
