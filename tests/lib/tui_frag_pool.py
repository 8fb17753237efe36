#!/usr/bin/env python3
"""tests/tui/views.test: prints what the frag view says of the worst
segment_alloc's pool (free, largest block), from `snapview frag --json`
in the viewer's sizes.

usage: tui_frag_pool.py FRAG.json
"""
import json, sys
from svfmt import size_short
a = json.load(open(sys.argv[1]))["devices"][0]["segment_allocs"][0]
print("%s pool free %s, largest %s" % (a["request_pool"],
      size_short(a["pool_free"]), size_short(a["pool_largest_free_block"])))
