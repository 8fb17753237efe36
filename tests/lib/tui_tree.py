#!/usr/bin/env python3
"""tests/tui/tree.test: the top view as a call-stack tree against
`snapview top --json`: roots, callers, blocks, the frames shown with z,
categories first with V, the tree after a cursor move, "freed at"
sites.

usage: tui_tree.py WORKDIR ROW
"""
import json, os, re, sys
work, n = sys.argv[1], int(sys.argv[2])
top = json.load(open(os.path.join(work, "top.json")))["devices"][0]
row_re = re.compile(r'^ +(\S+) +([\d.]+)% +([\d,]+)  ( *)([▸▾ ]) (.*)$')
ok = True
def fail(msg):
    global ok
    print("FAIL: " + msg); ok = False
def screen(name):
    return open(os.path.join(work, name)).read().split("\n")
def rows(name):
    """(depth, blocks, label, marker, selected?) of the tree rows"""
    out, inside = [], False
    for l in screen(name):
        if l.startswith("─ Top @"):
            inside = True; continue
        if inside and l.startswith("─ "):
            break
        m = row_re.match(l) if inside else None
        if m:
            out.append((len(m.group(4)) // 2, int(m.group(3).replace(",", "")),
                        m.group(6), m.group(5)))
    return out
def title(name):
    return [l for l in screen(name) if l.startswith("─ Top @")][0]
def detail(name):
    s = screen(name)
    return [l for l in s if l.startswith("─ ")][-1]
frame = lambda fr: "%s:%s %s" % (fr["filename"], "?" if fr["line"] is None
                                  else fr["line"], fr["name"])

# roots = top's sites, same blocks; the total = top's
roots = rows("tree.screen")
shown = lambda s: ("freed at " if s["free_stack"] else "") + s["site"]
sites = {(shown(s), s["count"]) for s in top["sites"]}
if not any(s["free_stack"] for s in top["sites"]):
    fail("top has no site of blocks freed in the trace at this event")
if len(roots) != len(top["sites"]):
    fail("%d roots, top has %d sites" % (len(roots), len(top["sites"])))
for d, blocks, label, mark in roots:
    if d != 0 or (label, blocks) not in sites:
        fail("root %r (%d blocks) is not a site of top" % (label, blocks))
if sum(r[1] for r in roots) != top["count"]:
    fail("roots hold %d blocks, top %d" % (sum(r[1] for r in roots), top["count"]))
if "live in {:,} blocks".format(top["count"]) not in title("tree.screen"):
    fail("title: " + title("tree.screen"))
# the selected site opens onto its callers, as top gives them
site = top["sites"][n]
if not detail("sel.screen").startswith("─ " + site["site"][-40:][:10]) and \
   site["name"] not in detail("sel.screen"):
    fail("detail of the selected site: " + detail("sel.screen"))
opened = rows("open.screen")
idx = [i for i, r in enumerate(opened) if r[2] == shown(site)][0]
if opened[idx][3] != "▾":
    fail("the site did not open: %r" % (opened[idx],))
kids = []
for r in opened[idx + 1:]:
    if r[0] == 0:
        break
    kids.append((r[2], r[1]))
want = sorted((frame(c["frame"]), c["count"]) for c in site["callers"])
if sorted(kids) != want:
    fail("callers %r, top says %r" % (kids, want))
# Right again: to the first child; Left: back to the parent
if not any(kids[0][0].split()[-1] in l for l in [detail("child.screen")]):
    fail("l on an open node did not select its first child: " + detail("child.screen"))
if site["name"] not in detail("parent.screen"):
    fail("h did not go back to the parent: " + detail("parent.screen"))
# r: only the subtree, under the site; r again: everything
sub = rows("root.screen")
if "under " not in title("root.screen") or sub[0][2] != shown(site) or \
   any(r[0] == 0 and r[2] != shown(site) for r in sub):
    fail("r did not focus the subtree: %s %r" % (title("root.screen"), sub[:3]))
if len([r for r in rows("unroot.screen") if r[0] == 0]) != len(roots):
    fail("r on the focused node did not go back up")
# *: every node open (more rows, callers of every site), then all closed
alltree = rows("all.screen")
if len(alltree) <= len(roots) or any(r[3] == "▸" for r in alltree):
    fail("* did not open every node")
if len(rows("none.screen")) != len(roots):
    fail("* again did not close them all: %d rows" % len(rows("none.screen")))
# z: every frame, innermost first; the blocks are the same
fr = rows("frames.screen")
if "every frame" not in title("frames.screen"):
    fail("z: " + title("frames.screen"))
if sum(r[1] for r in fr if r[0] == 0) != top["count"]:
    fail("z: roots hold %d blocks" % sum(r[1] for r in fr if r[0] == 0))
if any("CachingAllocator" in r[2] for r in fr if r[0] == 0):
    fail("z: a root is an allocator frame: %r" % [r for r in fr if r[0] == 0])
if sum(r[1] for r in fr if r[0] == 0 and r[2].startswith("freed at ")) != \
        sum(s["count"] for s in top["sites"] if s["free_stack"]):
    fail("z: the blocks freed in the trace are not top's free_stack ones")
# V: the categories first, with the blocks top --by category gives them
cats = json.load(open(os.path.join(work, "cats.json")))["devices"][0]
want = sorted(("[%s]" % c["category"].replace("_", " "), c["count"])
              for c in cats["categories"])
got = sorted((r[2], r[1]) for r in rows("cats.screen") if r[0] == 0)
if "by category" not in title("cats.screen") or got != want:
    fail("V: categories %r, top --by category says %r" % (got, want))
# the cursor moved to #4000: the tree is top's there
t4 = json.load(open(os.path.join(work, "top4000.json")))["devices"][0]
mv = rows("moved.screen")
# (the pane shows the first rows only: the largest site comes first)
if "Top @ #4,000 " not in title("moved.screen") or \
   "live in {:,} blocks".format(t4["count"]) not in title("moved.screen") or \
   (mv[0][2], mv[0][1]) not in {(s["site"], s["count"]) for s in t4["sites"]} \
   or mv[0][1] != max(s["count"] for s in t4["sites"]
                      if s["bytes"] == max(x["bytes"] for x in t4["sites"])):
    fail("after the cursor moved: " + title("moved.screen"))
sys.exit(0 if ok else 1)
