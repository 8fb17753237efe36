#!/usr/bin/env python3
"""tests/stats/at.test: stats --at N agrees with two independent sources:
at the last event, the final segments (stats without --at); in a trace
without pending frees or pre-trace blocks, the requested bytes of the
allocated blocks after N equal the Active Memory Timeline total after
N.

usage: stats_at.py DIR LAST   (DIR holds end.json, last.json, atN.json)
"""
import json, sys
tmp, last = sys.argv[1], sys.argv[2]
end = json.load(open(tmp + "/end.json"))["devices"][0]
lst = json.load(open(tmp + "/last.json"))["devices"][0]
bad = 0
for k in ("segments", "blocks", "reserved", "allocated", "allocated_blocks",
          "active", "free_internal", "free_external", "largest_free_block"):
    if end[k] != lst[k]:
        print("at last event, %s: %r vs final %r" % (k, lst[k], end[k])); bad = 1
for at in ("-1", "0", "1", "17", "500", "1234", "2047", last):
    d = json.load(open("%s/at%s.json" % (tmp, at)))["devices"][0]
    if d["allocated"] != d["timeline_total_at"]:
        print("at %s: allocated %d != timeline total %d"
              % (at, d["allocated"], d["timeline_total_at"])); bad = 1
    if d["at"] != int(at):
        print("at %s: reported at %r" % (at, d["at"])); bad = 1
sys.exit(bad)
