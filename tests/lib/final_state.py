#!/usr/bin/env python3
"""The replay's state after the last event equals the segments the file
holds (doc/snapshot-format.md: `segments` is the allocator's state when
the snapshot was taken, after the last trace event).

usage: final_state.py SNAPSHOT.pickle STATE.json
       final_state.py --devices CHECK.json

The second form prints "DEVICE EVENTS OK" for each device with events
in `snapview check --json` (OK: 1 when check finds it consistent).

STATE.json is `snapview state --json --at LAST` of one device. The file
is read with Python's pickle, refusing any class (a snapshot is plain
dicts, lists, tuples, strings and numbers), so the two sides share no
code. Every segment of that device must be there, in address order, with
its sizes, stream, pool, type and blocks (address, size, state, and the
requested size of the blocks that are not inactive: an inactive block's
is stale in the file, doc/snapshot-format.md); the totals must be the
sums of the file's blocks. Exit 1 with one line per difference.

Two rules of doc/snapshot-format.md shape what the file's segments say:
a block without an address (older formats) starts where the one before
it ends; and torch_npu's workspace pools (§16.4), the triples of
workspace_snapshot, segment_alloc and alloc at the head of a device's
trace, are one allocated block of the whole segment, whatever the file
shows for them (one inactive block).
"""
import json
import pickle
import sys

SEG_KEYS = ("address", "total_size", "allocated_size", "active_size",
            "requested_size", "stream", "segment_type", "is_expandable")
BLOCK_KEYS = ("address", "size", "requested_size", "state")


class Plain(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("class %s.%s in a snapshot" % (module, name))


def devices(path):
    for d in json.load(open(path))["devices"]:
        if d["events"] > 0:
            print(d["device"], d["events"], int(d["ok"]))
    return 0


def main():
    if sys.argv[1] == "--devices":
        return devices(sys.argv[2])
    with open(sys.argv[1], "rb") as f:
        snap = Plain(f).load()
    with open(sys.argv[2]) as f:
        got = json.load(f)
    dev = got["device"]
    want = sorted((s for s in snap["segments"] if s.get("device", 0) == dev),
                  key=lambda s: s["address"])
    for sg in want:
        off = sg["address"]
        for b in sg["blocks"]:
            b.setdefault("address", off)
            off = b["address"] + b["size"]
    traces = snap.get("device_traces") or []
    trace = traces[dev] if dev < len(traces) else []
    for i in range(0, len(trace) - 2, 3):
        t = trace[i:i + 3]
        if [e.get("action") for e in t] != ["workspace_snapshot",
                                            "segment_alloc", "alloc"]:
            break
        a, n = t[0]["addr"], t[0]["size"]
        for sg in want:
            if sg["address"] == a and sg["total_size"] == n:
                for k in ("allocated_size", "active_size", "requested_size"):
                    sg[k] = n
                sg["blocks"] = [{"address": a, "size": n,
                                 "requested_size": t[2]["size"],
                                 "state": "active_allocated"}]
    bad = []
    if len(got["segments"]) != len(want):
        bad.append("%d segments, the file holds %d" % (len(got["segments"]),
                                                       len(want)))
    for g, w in zip(got["segments"], want):
        where = "segment 0x%x" % w["address"]
        for k in SEG_KEYS:
            if k in w and g.get(k) != w[k]:
                bad.append("%s: %s %r, the file says %r" % (where, k, g.get(k), w[k]))
        if "segment_pool_id" in w and list(g["segment_pool_id"]) != list(w["segment_pool_id"]):
            bad.append("%s: pool %r, the file says %r" % (where, g["segment_pool_id"],
                                                          w["segment_pool_id"]))
        if len(g["blocks"]) != len(w["blocks"]):
            bad.append("%s: %d blocks, the file holds %d" % (where, len(g["blocks"]),
                                                             len(w["blocks"])))
        for gb, wb in zip(g["blocks"], w["blocks"]):
            for k in BLOCK_KEYS:
                if k not in wb or (k == "requested_size" and
                                   wb["state"] == "inactive"):
                    continue
                if gb.get(k) != wb[k]:
                    bad.append("%s: block 0x%x: %s %r, the file says %r" % (
                        where, wb["address"], k, gb.get(k), wb[k]))
    tot = {"segments": len(want), "reserved": sum(s["total_size"] for s in want),
           "blocks": sum(len(s["blocks"]) for s in want),
           "allocated": sum(b["size"] for s in want for b in s["blocks"]
                            if b["state"] == "active_allocated")}
    for k, v in tot.items():
        if got["totals"][k] != v:
            bad.append("totals.%s %d, the file's segments say %d" % (k, got["totals"][k], v))
    for line in bad[:20]:  # (enough to see what went wrong)
        print(line)
    if len(bad) > 20:
        print("... %d more" % (len(bad) - 20))
    if not want:
        print("the file holds no segment of device %d: nothing compared" % dev)
        return 1
    if not bad:
        print("state after event %d: %d segments, %d blocks, as the file holds"
              % (got["at"], tot["segments"], tot["blocks"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
