#!/usr/bin/env python3
"""tests/tui/totals.test: the segment map's title at event AT is
`snapview stats --at AT --json`'s totals, in the viewer's sizes.

usage: tui_totals.py WORKDIR AT   (WORKDIR holds stats.json, t.screen)
"""
import json, os, re, sys
from svfmt import size_short
work, at = sys.argv[1], int(sys.argv[2])
d = json.load(open(os.path.join(work, "stats.json")))["devices"][0]
want = "reserved %s alloc %s - free int %s ext %s - largest %s - %d seg%s" % (
    size_short(d["reserved"]), size_short(d["allocated_blocks"]),
    size_short(d["free_internal"]), size_short(d["free_external"]),
    size_short(d["largest_free_block"]), d["segments"],
    "" if d["segments"] == 1 else "s")
line = [l for l in open(os.path.join(work, "t.screen")).read().split("\n")
        if l.startswith("─ Allocator state @ ")]
if not line or (" - %s " % want) not in line[0] + " ":
    print("FAIL at %d (pending free %d): %r, stats --at says %r" %
          (at, d["pending_free"], line, want))
    sys.exit(1)
print("#%d (pending free %d): %s" % (at, d["pending_free"], want))
