#!/usr/bin/env python3
"""tests/tui/mouse.test: what clicks and the wheel did to the headless
viewer's screens (cursor column, block under a bar, tree rows, table
sorting, list selection, timeline zoom).

usage: tui_mouse.py WORKDIR
"""
import os, re, sys
work = sys.argv[1]
ok = True
def fail(m):
    global ok
    print("FAIL: " + m); ok = False
def screen(n):
    return open(os.path.join(work, n)).read().split("\n")
def title(n, prefix):
    return [l for l in screen(n) if l.startswith(prefix)][0]
# the timeline: the cursor's mark on the axis row is in the clicked column
axis = [l for l in screen("tl.screen") if l.startswith("      └")][0]
if axis[30] != "┼":
    fail("the axis marks the cursor at column %d, not 30: %r" %
         (axis.find("┼"), axis))
if title("tl.screen", "─ Timeline") == title("start.screen", "─ Timeline"):
    fail("the click did not move the cursor")
# the segment map: the block under the cell is selected, in that segment
row = screen("seg.screen")[13]
m = re.match(r"^(0x[0-9a-f]+) +(\S+)", row)
blk = re.match(r"^─ Block (0x[0-9a-f]+) ", title("seg.screen", "─ Block"))
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
if not m or not blk:
    fail("no segment row or no block selected: %r" % row)
else:
    lo = int(m.group(1), 16)
    size = float(m.group(2)[:-1]) * units[m.group(2)[-1]]
    if not lo <= int(blk.group(1), 16) < lo + size:
        fail("block %s is not in the segment %s" % (blk.group(1), m.group(1)))
# the tree: a click selects the row, a second opens it
label = screen("row.screen")[16].split(" ", 8)[-1].strip()
d = [l for l in screen("row.screen") if l.startswith("─ ")][-1]
if label.lstrip("▸▾ ").split()[-1] not in d:
    fail("the clicked row %r is not the detail's %r" % (label, d))
if "▾" not in screen("open.screen")[16]:
    fail("a second click did not open the node: %r" % screen("open.screen")[16])
# the wheel: three rows down
d2 = [l for l in screen("wheel.screen") if l.startswith("─ ")][-1]
if d2 == d:
    fail("the wheel did not move the selection")
# the wheel on the timeline zooms in: the axis spans fewer events
def span(n):
    labels = [l for l in screen(n) if re.match(r"^ +#[\d,]+ ", l)][0]
    evs = [int(x.replace(",", "").lstrip("^#")) for x in re.findall(r"\^?#[\d,]+", labels)]
    return evs[-1] - evs[0]
if not span("zoom.screen") < span("start.screen"):
    fail("the wheel did not zoom in: %d vs %d" % (span("zoom.screen"), span("start.screen")))
# a click on the age column's header sorts by age
if "by age" not in title("sort.screen", "─ Blocks"):
    fail("header click: " + title("sort.screen", "─ Blocks"))
sys.exit(0 if ok else 1)
