#!/usr/bin/env python3
"""Checks snapview leaks --json on a real leak-demo snapshot against an
independent reading of the pickle (restricted unpickler, no torch).

usage: real.py SNAPVIEW_JSON SNAPSHOT_PICKLE
Expected from the file: the surviving allocations of the trace grouped by
first user frame; the site with the fewest surviving blocks spread over
the trace (one per step) must be rank 1 even though another site holds
more bytes.
"""
import json
import pickle
import sys


class Safe(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))


def user_frame(frames):
    for f in frames:
        fn = f["filename"].replace("\\", "/")
        if (fn.endswith(".py") and "/torch/" not in fn
                and "site-packages/" not in fn):
            return (fn, f["line"], f["name"])
    return None


got = json.load(open(sys.argv[1]))
snap = Safe(open(sys.argv[2], "rb")).load()
trace = max(snap["device_traces"], key=len)
live = {}
for i, e in enumerate(trace):
    if e["action"] == "alloc":
        live[e["addr"]] = (i, e)
    elif e["action"] == "free_completed":
        live.pop(e["addr"], None)
sites = {}
for i, e in live.values():
    s = sites.setdefault(user_frame(e.get("frames", [])), [])
    s.append((i, e["size"]))
# the per-step site: its blocks are spread over more than half the trace
n = len(trace)
spread = {k: v for k, v in sites.items()
          if len(v) >= 2 and max(x[0] for x in v) - min(x[0] for x in v) > n / 2}
bulk = max(sites.items(), key=lambda kv: sum(x[1] for x in kv[1]))
errors = []
if len(spread) != 1:
    errors.append("expected one spread-out site in the file, found %d"
                  % len(spread))
else:
    (key, blocks), = spread.items()
    top = got["devices"][0]["sites"][0]
    if (top["filename"], top["line"], top["name"]) != key:
        errors.append("rank 1 is %s:%s %s, expected %s:%s %s"
                      % ((top["filename"], top["line"], top["name"]) + key))
    if top["count"] != len(blocks) or top["bytes"] != sum(x[1] for x in blocks):
        errors.append("rank 1 count/bytes %d/%d, expected %d/%d"
                      % (top["count"], top["bytes"], len(blocks),
                         sum(x[1] for x in blocks)))
    if not top["periodic"]:
        errors.append("rank 1 not marked periodic")
    if top["per_step_bytes"] != 40 << 20:
        errors.append("rank 1 per step %d, expected 40 MiB"
                      % top["per_step_bytes"])
    dev = got["devices"][0]
    if (dev["steps_source"], dev["steps"]) != ("pattern", len(blocks)):
        errors.append("steps %s/%d, expected pattern/%d"
                      % (dev["steps_source"], dev["steps"], len(blocks)))
    if sum(x[1] for x in bulk[1]) <= sum(x[1] for x in blocks):
        errors.append("file no longer has a larger one-off site")
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
