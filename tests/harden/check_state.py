#!/usr/bin/env python3
"""Checks that `snapview state --json` describes a possible allocator
state, whatever file it came from (issue 18): segments sorted, apart and
inside the 64-bit address space; blocks tiling their segment exactly,
each of a non-zero size; a requested size never above its block; totals
equal to the sums of the blocks.

usage: check_state.py STATE.json...     (exit 1 and one line per fault)
"""
import json
import sys

U64 = (1 << 64) - 1


def check(doc):
    bad = []
    prev_end = 0
    tot = {"reserved": 0, "allocated": 0, "active": 0}
    for sg in doc["segments"]:
        a, n = sg["address"], sg["total_size"]
        if n == 0 or a + n > U64:
            bad.append("segment 0x%x of %d bytes passes 2^64" % (a, n))
        if a < prev_end:
            bad.append("segment 0x%x overlaps the one before" % a)
        prev_end = a + n
        off = a
        for b in sg["blocks"]:
            if b["address"] != off or b["size"] == 0:
                bad.append("block 0x%x (%d bytes) does not tile segment "
                           "0x%x" % (b["address"], b["size"], a))
            if b["requested_size"] > b["size"]:
                bad.append("block 0x%x requested %d > size %d" % (
                    b["address"], b["requested_size"], b["size"]))
            off = b["address"] + b["size"]
            if b["state"] == "active_allocated":
                tot["allocated"] += b["size"]
            if b["state"] != "inactive":
                tot["active"] += b["size"]
        if off != a + n:
            bad.append("blocks of segment 0x%x end at 0x%x" % (a, off))
        tot["reserved"] += n
    for k, v in tot.items():
        if doc["totals"][k] != v:
            bad.append("totals.%s %d, blocks say %d" % (
                k, doc["totals"][k], v))
    return bad


def main():
    rc = 0
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in check(json.load(f)):
                print("%s: %s" % (path, line))
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
