#!/usr/bin/env python3
"""tests/gensnap/format2026.test: snapview's answers on the files
contrib/gensnap.py writes with its PyTorch 2.14 options, against the
truth the generator wrote beside each (never a reading of the file).

usage: gensnap2026.py stats TRUTH STATS.json     stats --json, per device
       gensnap2026.py trace TRUTH TRACE.json     trace --json: annotate
                                                 events, pool_id
       gensnap2026.py text TRUTH TRACE.txt       trace: annotate lines
       gensnap2026.py first TRUTH                the first annotate event:
                                                 "EVENT ADDR METADATA"
       gensnap2026.py field TRUTH KEY            device 0's KEY
       gensnap2026.py host TRUTH KEY             the host's KEY
Exits 1 naming every difference.
"""
import json
import sys

HOST = 1024     # SNAP_HOST_DEVICE: the device number stats gives the host
# stats --json key, truth key
PAIRS = [("events", "events"), ("segments", "segments"),
         ("reserved", "reserved"), ("allocated", "allocated"),
         ("allocated_blocks", "allocated_block_bytes"),
         ("largest_free_block", "largest_free_block"),
         ("peak", "timeline_peak"), ("peak_event", "timeline_peak_event"),
         ("frees_without_alloc", "unmatched_frees"),
         ("blocks_before_trace", "ghost_blocks"), ("actions", "actions"),
         ("pending_free", "pending_free"),
         ("rounding_waste", "rounding_waste")]

errors = []


def err(msg):
    errors.append(msg)


def same(what, got, want):
    if got != want:
        err("%s: snapview %r, truth %r" % (what, got, want))


def stats(truth, got):
    gd = {d["device"]: d for d in got["devices"]}
    want = list(truth["devices"])
    if "host" in truth:
        want.append(dict(truth["host"], device=HOST))
        same("host device flag", gd.get(HOST, {}).get("host"), True)
    elif HOST in gd:
        err("a host device the file does not have")
    for t in want:
        g = gd.get(t["device"])
        if g is None:
            err("device %r missing" % t["device"])
            continue
        for gk, tk in PAIRS:
            if tk in t:
                same("device %d %s" % (t["device"], gk), g.get(gk), t[tk])
        for a in truth.get("skip_actions", ()):
            if a in g.get("actions", {}):
                err("device %d: skipped action %s counted" % (t["device"],
                                                              a))
    n = len(truth.get("annotate", ()))
    if "annotate" in truth:
        same("annotate count", sum(d.get("actions", {}).get("annotate", 0)
                                   for d in got["devices"]), n)
    same("device_family", got.get("device_family"),
         truth.get("device_family"))
    same("external annotations", got.get("annotations", 0),
         truth.get("annotations", 0))


def trace(truth, got):
    evs = {}
    for d in got["devices"]:
        evs[d["device"]] = d["events"]
        same("device %d entries" % d["device"], len(d["events"]),
             d["entries"])
    if "annotate" in truth:
        want = {(a["device"], a["event"]): a for a in truth["annotate"]}
        for dev, lst in evs.items():
            for e in lst:
                if e["action"] == "annotate" and \
                        (dev, e["event"]) not in want:
                    err("device %d event %d: an annotate the truth does "
                        "not have" % (dev, e["event"]))
        for (dev, i), a in sorted(want.items()):
            lst = evs.get(dev, [])
            if i >= len(lst):
                err("device %d event %d: missing" % (dev, i))
                continue
            e = lst[i]
            w = "device %d event %d" % (dev, i)
            same(w + " action", e.get("action"), "annotate")
            same(w + " addr", e.get("addr"), a["addr"])
            same(w + " user_metadata", e.get("user_metadata"),
                 a["user_metadata"])
            if a["alloc_event"] >= 0:
                al = lst[a["alloc_event"]]
                same(w + " allocation", (al.get("action"), al.get("addr")),
                     ("alloc", a["addr"]))
                # listed on the allocation it annotates
                same(w + " name", e.get("name"), al.get("name"))
    if "pool_ids" in truth:
        for t in truth["pool_ids"]:
            count = {}
            for e in evs.get(t["device"], []):
                p = tuple(e["pool_id"]) if "pool_id" in e else None
                count[p] = count.get(p, 0) + 1
            same("device %d pool_ids" % t["device"], sorted(
                [list(k) if k else None, v] for k, v in count.items()),
                t["pools"])


def text(truth, lines):
    got = {}
    for ln in lines:
        # "#12 # annotate b: METADATA"
        if ln.startswith("#") and " # annotate " in ln:
            n, rest = ln.split(" # annotate ", 1)
            got[int(n[1:])] = rest.split(": ", 1)[1].rstrip("\n")
    want = {a["event"]: a["user_metadata"] for a in truth["annotate"]
            if a["device"] == 0}
    same("annotate lines", got, want)


def main():
    mode, truth = sys.argv[1], json.load(open(sys.argv[2]))
    if mode == "first":
        a = truth["annotate"][0]
        print("%d %#x %s" % (a["event"], a["addr"], a["user_metadata"]))
        return 0
    if mode in ("field", "host"):
        d = truth["devices"][0] if mode == "field" else truth["host"]
        print(d[sys.argv[3]])
        return 0
    if mode == "text":
        with open(sys.argv[3]) as f:
            text(truth, f.readlines())
    else:
        got = json.load(open(sys.argv[3]))
        {"stats": stats, "trace": trace}[mode](truth, got)
    for e in errors:
        print("FAIL: %s: %s" % (sys.argv[3], e))
    return 1 if errors else 0


sys.exit(main())
