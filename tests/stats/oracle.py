#!/usr/bin/env python3
"""Independent reference for `snapview stats --json`.

Loads a snapshot with Python's own unpickler (globals refused) and computes,
per device, the numbers snapview reports, following the definitions in
doc/snapshot-format.md: _memory_viz.py stats for free space
(doc/snapshot-format.md §11) and the Active Memory Timeline of memory_viz
for the peak (doc/snapshot-format.md §10.2). Prints JSON.
"""
import json
import pickle
import sys

HOST_DEVICE = 1024  # SNAP_HOST_DEVICE: host_segments, host_traces

ACTIONS = ["alloc", "free_requested", "free_completed", "segment_alloc",
           "segment_free", "segment_map", "segment_unmap", "snapshot", "oom",
           "workspace_snapshot", "annotate"]


class Safe(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global refused")


def load(path):
    with open(path, "rb") as f:
        data = Safe(f).load()
    if isinstance(data, list):
        return {"segments": data, "device_traces": []}
    if "host_segments" in data or "host_traces" in data:
        # pinned host memory: one more device, numbered HOST_DEVICE
        data["segments"] = list(data.get("segments", [])) + [
            dict(s, device=HOST_DEVICE) for s in data.get("host_segments", [])]
        tr = list(data.get("device_traces") or [])
        data["device_traces"] = tr + [[]] * (HOST_DEVICE - len(tr)) + [
            data.get("host_traces", [])]
    return data


def device_stats(data, d):
    segs = [s for s in data.get("segments", []) if s.get("device", 0) == d]
    traces = data.get("device_traces") or []
    trace = traces[d] if d < len(traces) else []
    out = {"device": d, "events": len(trace), "segments": len(segs),
           "blocks": 0, "reserved": 0, "allocated": 0, "allocated_blocks": 0,
           "active": 0, "pending_free": 0, "free_internal": 0,
           "free_external": 0, "largest_free_block": 0}
    actions = {}
    for e in trace:
        a = e["action"] if e["action"] in ACTIONS else "unknown"
        actions[a] = actions.get(a, 0) + 1
    out["actions"] = actions
    for s in segs:
        out["reserved"] += s["total_size"]
        for b in s["blocks"]:
            out["blocks"] += 1
            req = b.get("requested_size")
            if req is None and b.get("history"):
                req = b["history"][0].get("real_size", 0)
            req = req or 0
            if b["state"] == "active_allocated":
                out["allocated"] += req
                out["allocated_blocks"] += b["size"]
                out["active"] += b["size"]
                out["free_internal"] += max(b["size"] - req, 0)
            elif b["state"] == "active_pending_free":
                out["active"] += b["size"]
                out["pending_free"] += b["size"]
                out["free_external"] += b["size"]
            else:
                out["free_external"] += b["size"]
                out["largest_free_block"] = max(out["largest_free_block"],
                                                b["size"])
    # Active Memory Timeline (memory_viz, doc/snapshot-format.md §10.2)
    live = {}
    base = 0
    deltas = []
    pre = 0
    for e in trace:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            deltas.append(e["size"])
        elif e["action"] == "free_completed":
            if e["addr"] in live:
                deltas.append(-live.pop(e["addr"]))
            else:
                pre += 1
                base += e["size"]
                deltas.append(-e["size"])
        else:
            deltas.append(0)
    ghosts = 0
    for s in segs:
        addr = s["address"]
        for b in s["blocks"]:
            a = b.get("address", addr)
            if b["state"] == "active_allocated" and a not in live:
                ghosts += 1
                req = b.get("requested_size")
                if req is None and b.get("history"):
                    req = b["history"][0].get("real_size", 0)
                base += req or 0
            addr = a + b["size"]
    # the first point that reaches the highest total, the state before
    # the trace (-1) first: a trace that leaves the total where it was (a
    # lone snapshot marker) peaks before its first event
    cur = base
    peak, peak_ev = base, -1
    for i, dlt in enumerate(deltas):
        cur += dlt
        if cur > peak:
            peak, peak_ev = cur, i
    out.update(peak=peak, peak_event=peak_ev, frees_without_alloc=pre,
               blocks_before_trace=ghosts)
    return out


def main():
    data = load(sys.argv[1])
    devs = set(s.get("device", 0) for s in data.get("segments", []))
    for i, t in enumerate(data.get("device_traces") or []):
        if t:
            devs.add(i)
    print(json.dumps({"devices": [device_stats(data, d)
                                  for d in sorted(devs)]}, indent=1))


if __name__ == "__main__":
    main()
