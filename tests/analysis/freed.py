#!/usr/bin/env python3
"""Blocks allocated before the trace and freed in it, on a real file,
against an independent reading of the pickle (restricted unpickler).

usage: freed.py SNAPVIEW SNAPSHOT_PICKLE

A free_completed with no alloc of its address before it (since the last
free of that address) frees a block the trace never saw allocated; its
only stack is the free's. At the event halfway between the first and
the last such free, the blocks still to be freed are alive: snapview's
top (--json) must hold exactly them in its free_stack sites, and leaks
--to that event too (a window from before the trace); no other site may
be free_stack, no such site may be named by an allocator frame, and the
text output marks them.
"""
import json
import pickle
import subprocess
import sys


class Safe(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))


sv, path = sys.argv[1:3]
snap = Safe(open(path, "rb")).load()
traces = snap["device_traces"]
dev = max(range(len(traces)), key=lambda d: len(traces[d]))
alive, frees = set(), []
for i, e in enumerate(traces[dev]):
    if e["action"] == "alloc":
        alive.add(e["addr"])
    elif e["action"] == "free_completed":
        if e["addr"] in alive:
            alive.discard(e["addr"])
        else:
            frees.append((i, e["size"]))
if not frees:
    print("no block of %s was allocated before the trace and freed in it"
          % path)
    sys.exit(1)
at = (frees[0][0] + frees[-1][0]) // 2
want = [(i, size) for i, size in frees if i > at]
count, size = len(want), sum(s for _, s in want)
errors = []


def run(*args):
    return subprocess.run([sv, "--no-cache", "-q"] + list(args) + [path],
                          check=True, capture_output=True,
                          text=True).stdout


def check(what, sites):
    got = [s for s in sites if s["free_stack"]]
    n, b = sum(s["count"] for s in got), sum(s["bytes"] for s in got)
    if (n, b) != (count, size):
        errors.append("%s: %d blocks, %d bytes freed in the trace and "
                      "allocated before it; the pickle says %d, %d"
                      % (what, n, b, count, size))
    for s in got:
        if "CachingAllocator" in s["site"]:
            errors.append("%s: named by an allocator frame: %s"
                          % (what, s["site"]))


top = json.loads(run("top", "--json", "--at", str(at), "--device",
                     str(dev)))["devices"][0]
check("top --at %d" % at, top["sites"])
leaks = json.loads(run("leaks", "--json", "--to", str(at), "--device",
                       str(dev)))["devices"][0]
check("leaks --to %d" % at, leaks["sites"])
text = run("top", "--at", str(at), "--device", str(dev))
if "(freed here; allocated before the trace)" not in text:
    errors.append("top's text does not mark them")
for e in errors:
    print("FAIL: " + e)
print("%s: %d blocks allocated before the trace alive at #%d" %
      (path, count, at))
sys.exit(1 if errors else 0)
