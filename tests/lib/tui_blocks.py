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
whole = {"parameter", "gradient", "optimizer", "activation", "temporary",
         "workspace", "other"}
if set(n) - whole:
    fail("categories cut: %r" % sorted(set(n) - whole))
# blocks allocated before the trace and freed in it: "freed at" the site
# of their free, as many as top counts under such sites
top = json.load(open(os.path.join(work, "top.json")))["devices"][0]
freed = sum(s["count"] for s in top["sites"] if s.get("free_stack"))
rows = open(os.path.join(work, "by-size.txt")).read().split("\n")[2:]
got = sum(1 for l in rows if re.search(r"  freed at \S", l))
if freed == 0 or got != freed:
    fail("%d rows say 'freed at', top counts %d such blocks" % (got, freed))
# after a sort (from the last row) the selection is in the middle of the
# rows shown
scr = open(os.path.join(work, "sorted.screen")).read().split("\n")
sel = [l for l in scr if l.startswith("\u2500 Block ")][0].split()[2]
top_i = [i for i, l in enumerate(scr) if l.startswith("\u2500 Blocks @ ")][0]
shown = []
for l in scr[top_i + 2:]:
    if not l.startswith(" 0x"):
        break
    shown.append(l.split()[0])
order = [l.split()[0] for l in
         open(os.path.join(work, "sorted.txt")).read().split("\n")[2:] if l]
k, rows = order.index(sel), len(shown)
if k < rows // 2:
    want_at = k
elif len(order) - k <= rows - rows // 2:
    want_at = rows - (len(order) - k)
else:
    want_at = rows // 2
if sel not in shown or shown.index(sel) != want_at:
    fail("after the sort the selection %s is row %s of %r, want row %d" %
         (sel, shown.index(sel) if sel in shown else None, shown, want_at))
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
