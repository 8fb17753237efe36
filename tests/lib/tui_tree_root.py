#!/usr/bin/env python3
"""tests/tui/tree.test: prints the index among the tree's roots of a call
site with callers whose bytes no other site has (its place does not
depend on the order of equal sites).

usage: tui_tree_root.py TOP.json
"""
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
# roots sorted as the tree sorts them: bytes, largest first; a site with
# callers and bytes no other site has keeps its place whatever the order
# of equal sites
b = [s["bytes"] for s in d["sites"]]
for i, s in enumerate(d["sites"]):
    if s["callers"] and b.count(s["bytes"]) == 1:
        print(i); break
