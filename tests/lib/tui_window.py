#!/usr/bin/env python3
"""tests/tui/window.test: the leak window's marks and the leak view
against `snapview leaks --from A --to B --json`.

usage: tui_window.py WORKDIR A B
"""
import json, os, re, sys
work, A, B = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ok = True
def fail(m):
    global ok
    print("FAIL: " + m); ok = False
def screen(name):
    return open(os.path.join(work, name)).read().split("\n")
def sites(name):
    """(site, blocks, category) of an exported leak list"""
    out = []
    for l in open(os.path.join(work, name)).read().split("\n")[2:]:
        m = re.match(r"^ *\d+ +\S+ +([\d,]+) +\S+  (.{10}) (.*)$", l)
        if m:
            out.append((m.group(3), int(m.group(1).replace(",", "")),
                        m.group(2).strip()))
    return out
def want(name):
    """the same from leaks --json (the column: the label's first 10)"""
    d = json.load(open(os.path.join(work, name)))["devices"][0]
    return [(s["site"], s["count"], (s["category"] or "-")
             .replace("_", " ")[:10].strip()) for s in d["sites"]]
# two marks on the axis row (the cursor elsewhere), nothing else marked
axis = [l for l in screen("marked.screen") if l.startswith("      └")]
if not axis or axis[0].count("▲") != 2:
    fail("b/e: the axis shows %r" % axis)
if "leak window #{:,}..#{:,}".format(A, B) not in screen("ended.screen")[-2]:
    fail("e: " + screen("ended.screen")[-2])
head = open(os.path.join(work, "win.txt")).read().split("\n")[0]
if not head.startswith("Leaks in #{:,}..#{:,} - ".format(A, B)):
    fail("title: " + head)
for got, w in (("win.txt", "win.json"), ("opt.txt", "win.json"),
               ("all.txt", "all.json")):
    if sorted(sites(got)) != sorted(want(w)):
        fail("%s: %r, leaks says %r" % (got, sites(got), want(w)))
if "leak window #1,000..#1,500" not in screen("swapped.screen")[-2]:
    fail("an end before the start: " + screen("swapped.screen")[-2])
sys.exit(0 if ok else 1)
