#!/usr/bin/env python3
"""tests/analysis/fragcap.test: with more than 256 segment allocations,
frag looks up the allocator state of the 255 with the largest gaps and of
the last one: 256 in all, or 255 when the last is among the largest. The
JSON (frag --json --limit 0) and the text say the same.

usage: frag_examined.py FRAG.json FRAG.txt WANT
WANT: 256 or 255, the count the test expects for this file.
"""
import json
import sys

doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
want = int(sys.argv[3])
d = doc["devices"][0]
allocs, last = d["segment_allocs"], d["last_segment_alloc"]
rc = 0


def bad(msg):
    global rc
    print("FAIL: " + msg)
    rc = 1


if d["n_segment_allocs"] <= 256 or len(allocs) != d["n_segment_allocs"]:
    bad("%d segment allocations, %d listed: need more than 256, all listed"
        % (d["n_segment_allocs"], len(allocs)))
gaps = [a["gap"] for a in allocs]
if gaps != sorted(gaps, reverse=True):
    bad("segment allocations not largest gap first")
stated = {a["event"] for a in allocs if a["stream_free"] is not None}
expect = {a["event"] for a in allocs[:255]} | {last["event"]}
if stated != expect:
    bad("state for %d allocations, want the 255 largest gaps and the "
        "last (%d)" % (len(stated), len(expect)))
if d["examined_segment_allocs"] != len(expect) or len(expect) != want:
    bad("examined_segment_allocs %d, %d by the rule, want %d"
        % (d["examined_segment_allocs"], len(expect), want))
line = ("(free memory at the moment looked up for %d of them: the 255 with "
        "the largest gaps and the last%s)"
        % (want, ", one of them" if want == 255 else ""))
if line not in text:
    bad("text does not say: " + line)
sys.exit(rc)
