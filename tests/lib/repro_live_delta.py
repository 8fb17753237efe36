#!/usr/bin/env python3
"""tests/harden/repro.test: diff --json's live_delta is exactly b - a for
every site, past 2^63 too (it went through int64_t).

usage: repro_live_delta.py DIFF.json...
"""
import json, sys
for path in sys.argv[1:]:
    for s in json.load(open(path))["sites"]:
        a, b = s["a"]["live_bytes"], s["b"]["live_bytes"]
        if s["live_delta"] != b - a:
            print("FAIL: %s: live_delta %d, want %d" % (path, s["live_delta"], b - a))
            sys.exit(1)
