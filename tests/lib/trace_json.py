#!/usr/bin/env python3
"""tests/replay/trace.test: `snapview trace --json` of a window holds the
file's events (read with Python's pickle), the names of the text
listing and the same TOTAL MEM.

usage: trace_json.py SNAPSHOT.pickle TRACE.json TRACE.txt
"""
import json, pickle, re, sys
snap = pickle.load(open(sys.argv[1], "rb"))
raw = open(sys.argv[2]).read()
doc = json.loads(raw)
text = open(sys.argv[3]).read().splitlines()
(dev,) = doc["devices"]
evs = snap["device_traces"][dev["device"]]
assert dev["entries"] == len(dev["events"]) == 1001, dev["entries"]
# one object per line
assert raw.count("\n") >= 1001 + 3
names = {}
for ln in text:
    m = re.match(r"#(\d+) (?:(\w+) = |del |# free completed for |cudaFree\()(\w+)?", ln)
    if m:
        names[int(m.group(1))] = m.group(2) or m.group(3)
for e in dev["events"]:
    i = e["event"]
    want = evs[i]
    assert e["action"] == want["action"], (i, e, want["action"])
    assert e["addr"] == want["addr"] and e["size"] == want["size"], i
    assert e["stream"] == want.get("stream", 0) % (1 << 64), i
    if "time_us" in want:
        assert e["time_us"] == want["time_us"], i
    if i in names and not names[i].isdigit():
        assert e.get("name") == names[i], (i, e.get("name"), names[i])
total = [l for l in text if l.startswith("TOTAL MEM")]
assert dev["total_mem"] is not None and total, total
