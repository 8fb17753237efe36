#!/usr/bin/env python3
"""tests/index/cache.test: `snapview cache --json` names the directory,
the default limit, the three entries (the last used last) with their
sizes and use times as the files have them, and their total.

usage: cache_list.py LIST.json CACHE_DIR
"""
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["dir"] == sys.argv[2], d
assert d["limit"] == 10 << 30, d
names = [e["name"] for e in d["entries"]]
assert len(names) == 3 and names[2].endswith("-snap.pickle.snapidx"), names
assert d["total"] == sum(e["size"] for e in d["entries"]), d
for e in d["entries"]:
    st = os.stat(os.path.join(sys.argv[2], e["name"]))
    assert e["size"] == st.st_size and e["last_used"] == int(st.st_mtime), e
