#!/usr/bin/env python3
"""Writes the small hand-made snapshot fixtures in tests/data/fixtures/.

Standard library only, deterministic. For each fixture NAME.pickle it also
writes NAME.expect: a plain-text dump of what a correct reader must find
(computed here from the Python objects, independently of snapview), in the
format tests/unit/check_load.c prints. Files named bad_*.pickle must be
refused; their .expect holds the error code and a fragment of the message.

usage: mkfixtures.py [OUTDIR]
"""
import io
import json
import os
import pickle
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "fixtures")

ACTIONS = ["alloc", "free_requested", "free_completed", "segment_alloc",
           "segment_free", "segment_map", "segment_unmap", "snapshot", "oom",
           "workspace_snapshot", "annotate"]
STATES = {"inactive": 0, "active_allocated": 1, "active_pending_free": 2}
U64 = (1 << 64) - 1
HOST_DEVICE = 1024  # SNAP_HOST_DEVICE


def frame(name, filename, line):
    return {"name": name, "filename": filename, "line": line}


def stack_text(frames):
    return "|".join("%s@%s:%d" % (f["name"], f["filename"], f["line"])
                    for f in frames)


def expect_text(obj):
    """The dump check_load.c compares with."""
    if isinstance(obj, list):
        segs, traces = obj, []
    else:
        segs, traces = obj.get("segments", []), obj.get("device_traces", [])
    if isinstance(obj, dict) and ("host_segments" in obj or
                                  "host_traces" in obj):
        # pinned host memory is device HOST_DEVICE, after the others
        segs = segs + [dict(s, device=HOST_DEVICE)
                       for s in obj.get("host_segments", [])]
        traces = traces + [[]] * (HOST_DEVICE - len(traces)) + \
            [obj.get("host_traces", [])]
    lines = ["segments %d" % len(segs)]
    for s in segs:
        lines.append("segment dev=%d addr=%d total=%d stream=%d large=%d "
                     "expandable=%d blocks=%d stack=%s" % (
                         s.get("device", 0), s["address"], s["total_size"],
                         s.get("stream", 0) & U64,
                         1 if s.get("segment_type") == "large" else 0,
                         1 if s.get("is_expandable") else 0,
                         len(s["blocks"]), stack_text(s.get("frames", []))))
        addr = s["address"]
        for b in s["blocks"]:
            a = b.get("address", addr)
            req = b.get("requested_size")
            frames = b.get("frames", [])
            hist = b.get("history")
            if hist:
                if req is None:
                    req = hist[0].get("real_size", 0)
                if not frames:
                    frames = hist[0].get("frames", [])
            lines.append("block addr=%d size=%d req=%d state=%d stack=%s" % (
                a, b["size"], req or 0, STATES.get(b["state"], 3),
                stack_text(frames)))
            addr = a + b["size"]
    lines.append("traces %d" % len(traces))
    for d, t in enumerate(traces):
        lines.append("trace %d events=%d" % (d, len(t)))
        for e in t:
            act = e["action"]
            addr = e.get("addr", e.get("device_free", 0))
            lines.append("event %s addr=%d size=%d stream=%d time=%s "
                         "stack=%s" % (act, addr & U64, e.get("size", 0),
                                       e.get("stream", 0) & U64,
                                       e.get("time_us", "-"),
                                       stack_text(e.get("frames", []))))
    return "\n".join(lines) + "\n"


def small_snapshot(with_time=True, extra=False):
    f_train = frame("train_step", "/work/train.py", 112)
    f_metrics = frame("collect_metrics", "/work/metrics/tracker.py", 47)
    f_cpp = frame("c10::cuda::CUDACachingAllocator::malloc", "??", U64)
    st_a = [f_metrics, f_train]
    st_b = [f_cpp, f_train]
    seg_a, seg_b = 0x7f3a00000000, 0x7f3a01400000
    stream = 94823749283000
    blocks_a = [
        {"address": seg_a, "size": 1024, "requested_size": 1000,
         "state": "active_allocated", "frames": st_a},
        {"address": seg_a + 1024, "size": 2048, "requested_size": 2048,
         "state": "active_pending_free", "frames": st_b},
        {"address": seg_a + 3072, "size": 2097152 - 3072,
         "requested_size": 0, "state": "inactive", "frames": []},
    ]
    blocks_b = [
        {"address": seg_b, "size": 20971520, "requested_size": 123,
         "state": "inactive", "frames": []},
    ]
    segments = [
        {"device": 0, "address": seg_a, "total_size": 2097152,
         "allocated_size": 1024, "active_size": 3072,
         "requested_size": 3048, "stream": 0, "segment_type": "small",
         "segment_pool_id": (0, 0), "is_expandable": False,
         "frames": st_a, "blocks": blocks_a},
        {"device": 0, "address": seg_b, "total_size": 20971520,
         "allocated_size": 0, "active_size": 0, "requested_size": 0,
         "stream": stream, "segment_type": "large",
         "segment_pool_id": (1, 2), "is_expandable": True,
         "frames": [], "blocks": blocks_b},
    ]
    t0 = 1700000000000000
    trace = [
        {"action": "segment_alloc", "addr": seg_a, "size": 2097152,
         "stream": 0, "frames": st_a},
        {"action": "alloc", "addr": seg_a, "size": 1000, "stream": 0,
         "frames": st_a},
        {"action": "alloc", "addr": seg_a + 1024, "size": 2048,
         "stream": 0, "frames": st_b},
        {"action": "free_requested", "addr": seg_a + 1024, "size": 2048,
         "stream": 0, "frames": st_b},
        {"action": "segment_map", "addr": seg_b, "size": 20971520,
         "stream": stream, "frames": st_b},
        {"action": "oom", "device_free": 4096, "size": 41943040,
         "stream": 0, "frames": st_b},
        {"action": "snapshot", "addr": 0, "size": 3072, "stream": 0},
        {"action": "mystery_action", "addr": 5, "size": 6, "stream": 0},
    ]
    if with_time:
        for i, e in enumerate(trace):
            e["time_us"] = t0 + 10 * i
    if extra:
        for e in trace:
            e["compile_context"] = "N/A"
            e["user_metadata"] = ""
    snap = {"segments": segments, "device_traces": [trace, []]}
    if extra:
        snap["allocator_settings"] = {
            "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
            "max_split_size": -1, "garbage_collection_threshold": 0.0,
            "expandable_segments": True,
            "roundup_power2_divisions": {"1": 0, "2": 0}}
        snap["external_annotations"] = [
            {"name": "ProfilerStep#0", "stage": "START", "device": 0,
             "time_us": t0},
            {"name": "ProfilerStep#0", "stage": "END", "device": 0,
             "time_us": t0 + 100}]
        snap["some_future_key"] = {"x": [1, 2, 3]}
    return snap


def annotated():
    """PyTorch 2.14: annotate events (pytorch#190575) on live allocations,
    several on one, one with a stack, one on an address nothing holds;
    the alloc-time user_metadata stays; an unknown key and an unknown
    action pass through."""
    snap = small_snapshot(with_time=True, extra=True)
    tr = snap["device_traces"][0]
    seg_a = tr[0]["addr"]
    t0 = tr[0]["time_us"]
    st = tr[2]["frames"]
    tr[1]["user_metadata"] = "alloc-time"
    ann = [
        (2, {"action": "annotate", "addr": seg_a, "size": 1000,
             "stream": 0, "time_us": t0 + 11,
             "user_metadata": "{'phase': 'forward'}"}),
        (4, {"action": "annotate", "addr": seg_a + 1024, "stream": 0,
             "time_us": t0 + 31, "user_metadata": "kv-cache",
             "frames": st, "annotation_source": "tensor"}),
        (5, {"action": "annotate", "addr": seg_a, "stream": 0,
             "time_us": t0 + 32, "user_metadata": "step 2"}),
        (6, {"action": "annotate", "addr": 12345, "stream": 0,
             "time_us": t0 + 33, "user_metadata": "nobody"}),
    ]
    for k, (pos, e) in enumerate(ann):
        tr.insert(pos + k, e)
    return snap


def no_trace(key):
    """include_traces=False (pytorch#172672, #173949): the segments, no
    trace entries; device_traces an empty list (key True) or missing."""
    snap = small_snapshot(with_time=True, extra=True)
    if key:
        snap["device_traces"] = []
    else:
        del snap["device_traces"]
    return snap


def ring_overflowed():
    """allocator_settings' ring buffer keys (pytorch#179276), one value per
    device as a list: device 0's ring of 8 entries overflowed (it kept 8
    of more events), device 1's did not."""
    snap = small_snapshot(with_time=True, extra=True)
    snap["allocator_settings"]["trace_alloc_overflowed"] = [True, False]
    snap["allocator_settings"]["trace_alloc_max_entries"] = [8, 8]
    return snap


def event_pools():
    """pool_id on every trace entry (pytorch#177717), the form of
    segment_pool_id: a CUDA graph's private pool (3, 4) whose segment was
    freed before the dump, so no final segment names it; one entry with
    a pool_id that is not two ints (read as none)."""
    snap = small_snapshot(with_time=True, extra=True)
    tr = snap["device_traces"][0]
    seg_c = 0x7f3a08000000
    t0 = tr[0]["time_us"]
    st = tr[1]["frames"]
    graph = [
        {"action": "segment_alloc", "addr": seg_c, "size": 2097152},
        {"action": "alloc", "addr": seg_c, "size": 4096},
        {"action": "free_requested", "addr": seg_c, "size": 4096},
        {"action": "free_completed", "addr": seg_c, "size": 4096},
        {"action": "segment_free", "addr": seg_c, "size": 2097152},
    ]
    for k, e in enumerate(graph):
        e.update({"stream": 0, "time_us": t0 + 1 + k, "frames": st,
                  "pool_id": (3, 4)})
    for e in tr:
        e["pool_id"] = (1, 2) if e["action"] == "segment_map" else (0, 0)
    tr[-1]["pool_id"] = ("x", 1)
    tr[1:1] = graph
    return snap


def host_memory(cuda=True):
    """Pinned host memory (pytorch#182407, record_pinned_host_memory=True):
    host_segments and host_traces beside the CUDA ones (cuda=False:
    record_cuda=False, host memory only). The host allocator rounds a
    request up to a power of two: the blocks are larger than asked."""
    snap = small_snapshot(with_time=True, extra=True) if cuda else \
        {"segments": [], "device_traces": []}
    f = frame("pin_memory", "/work/loader.py", 33)
    h1, h2, h3 = 0x7f0000000000, 0x7f0000100000, 0x7f0000300000
    t0 = 1700000000000000
    snap["host_segments"] = [
        {"address": h1, "total_size": 4096, "allocated_size": 4096,
         "active_size": 4096, "requested_size": 3000, "stream": 0,
         "segment_type": "large", "segment_pool_id": (0, 0),
         "blocks": [{"address": h1, "size": 4096, "requested_size": 3000,
                     "state": "active_allocated", "frames": [f]}]},
        {"address": h2, "total_size": 1048576, "allocated_size": 1048576,
         "active_size": 1048576, "requested_size": 600000, "stream": 0,
         "segment_type": "large", "segment_pool_id": (0, 0),
         "blocks": [{"address": h2, "size": 1048576,
                     "requested_size": 600000,
                     "state": "active_allocated", "frames": [f]}]},
    ]
    tr = []
    for a, z, r in ((h1, 4096, 3000), (h2, 1048576, 600000),
                    (h3, 2048, 2000)):
        tr.append({"action": "segment_alloc", "addr": a, "size": z})
        tr.append({"action": "alloc", "addr": a, "size": r})
    tr += [{"action": "free_requested", "addr": h3, "size": 2000},
           {"action": "free_completed", "addr": h3, "size": 2000},
           {"action": "segment_free", "addr": h3, "size": 2048}]
    for i, e in enumerate(tr):
        e.update({"stream": 0, "time_us": t0 + 5 * i, "frames": [f]})
    snap["host_traces"] = tr
    return snap


def xpu():
    """An Intel XPU's snapshot (pytorch#168262): the same format; the file
    says XPU only through its allocator's configuration key."""
    snap = small_snapshot(with_time=True, extra=True)
    st = snap["allocator_settings"]
    st["PYTORCH_XPU_ALLOC_CONF"] = st.pop("PYTORCH_CUDA_ALLOC_CONF")
    return snap


def skip_actions(skip):
    """_record_memory_history(skip_actions=[...]) (pytorch#168183, 2.11):
    whole actions left out. The allocations' history, complete: a 2 MiB
    segment, x (1000 B) kept, y (2048 B) allocated and freed (its block
    merged back into the free tail)."""
    f = frame("step", "/work/train.py", 7)
    seg = 0x7f3b00000000
    trace = [
        {"action": "segment_alloc", "addr": seg, "size": 2097152},
        {"action": "alloc", "addr": seg, "size": 1000},
        {"action": "alloc", "addr": seg + 1024, "size": 2048},
        {"action": "free_requested", "addr": seg + 1024, "size": 2048},
        {"action": "free_completed", "addr": seg + 1024, "size": 2048},
    ]
    for i, e in enumerate(trace):
        e.update({"stream": 0, "time_us": 1700000000000000 + i,
                  "frames": [f]})
    segs = [{"device": 0, "address": seg, "total_size": 2097152,
             "allocated_size": 1024, "active_size": 1024,
             "requested_size": 1000, "stream": 0, "segment_type": "small",
             "segment_pool_id": (0, 0), "is_expandable": False,
             "frames": [f], "blocks": [
                 {"address": seg, "size": 1024, "requested_size": 1000,
                  "state": "active_allocated", "frames": [f]},
                 {"address": seg + 1024, "size": 2097152 - 1024,
                  "requested_size": 0, "state": "inactive",
                  "frames": []}]}]
    return {"segments": segs, "device_traces": [
        [e for e in trace if e["action"] not in skip]]}


def legacy_113():
    f = frame("forward", "/work/model.py", 10)
    return [{"device": 0, "address": 0x7f0000000000, "total_size": 2097152,
             "allocated_size": 512, "active_size": 512, "stream": 0,
             "segment_type": "small",
             "blocks": [
                 {"size": 512, "state": "active_allocated",
                  "history": [{"addr": 0x7f0000000000, "real_size": 100,
                               "frames": [f]},
                              {"addr": 0x7f0000000000, "real_size": 300}]},
                 {"size": 2097152 - 512, "state": "inactive"}]}]


def legacy_20():
    f = frame("forward", "/work/model.py", 11)
    seg = {"device": 0, "address": 0x7f0000200000, "total_size": 2097152,
           "allocated_size": 1024, "active_size": 1024, "requested_size": 1000,
           "stream": 0, "segment_type": "small",
           "blocks": [{"size": 1024, "requested_size": 1000,
                       "state": "active_allocated",
                       "history": [{"addr": 0x7f0000200000,
                                    "real_size": 1000, "frames": [f]}]},
                      {"size": 2097152 - 1024, "requested_size": 0,
                       "state": "inactive"}]}
    trace = [{"action": "alloc", "addr": 0x7f0000200000, "size": 1000,
              "stream": 0}]
    return {"segments": [seg], "device_traces": [trace]}


def single_items():
    """One-element lists and one-key dicts: APPEND and SETITEM, no MARK."""
    f = frame("f", "/a.py", 1)
    return {"segments": [{"device": 0, "address": 4096, "total_size": 512,
                          "stream": 0, "segment_type": "small",
                          "blocks": [{"address": 4096, "size": 512,
                                      "requested_size": 512,
                                      "state": "active_allocated",
                                      "frames": [f]}]}],
            "device_traces": [[{"action": "alloc", "addr": 4096,
                                "size": 512, "stream": 0,
                                "frames": [f]}]]}


def snapshot_only():
    """A trace whose only entry is the `snapshot` marker: history was
    switched on just before the dump. Every block was allocated before the
    trace, so the peak is the state before it (event -1), and no OOM can
    show in one entry. 60 MiB reserved in three segments, 40 MiB of it
    allocated; the largest free block is 12 MiB."""
    f = frame("load_model", "/work/serve.py", 31)
    big, big2, small = 0x7f5000000000, 0x7f5002000000, 0x7f5004000000
    mib = 1 << 20

    def blk(addr, size, state):
        b = {"address": addr, "size": size,
             "requested_size": size if state != "inactive" else 0,
             "state": state, "frames": [f] if state != "inactive" else []}
        return b

    def seg(addr, total, stype, blocks):
        alloc = sum(b["size"] for b in blocks if b["state"] != "inactive")
        return {"device": 0, "address": addr, "total_size": total,
                "allocated_size": alloc, "active_size": alloc,
                "requested_size": alloc, "stream": 0,
                "segment_type": stype, "segment_pool_id": (0, 0),
                "is_expandable": False, "frames": [f], "blocks": blocks}

    segments = [
        seg(big, 32 * mib, "large",
            [blk(big, 20 * mib, "active_allocated"),
             blk(big + 20 * mib, 12 * mib, "inactive")]),
        seg(big2, 26 * mib, "large",
            [blk(big2, 18 * mib, "active_allocated"),
             blk(big2 + 18 * mib, 8 * mib, "inactive")]),
        seg(small, 2 * mib, "small",
            [blk(small, 2 * mib, "active_allocated")]),
    ]
    trace = [{"action": "snapshot", "addr": 0, "size": 40 * mib,
              "stream": 0, "time_us": 1700000000000000, "frames": []}]
    return {"segments": segments, "device_traces": [trace]}


def two_traces():
    e = {"action": "alloc", "addr": 8192, "size": 100, "stream": 0}
    return {"segments": [],
            "device_traces": [[], [dict(e)], [], [dict(e), dict(e, size=7)]]}


def big_ints():
    return {"segments": [{"device": 0, "address": (1 << 63) + 4096,
                          "total_size": 512, "stream": U64,
                          "segment_type": "small",
                          "blocks": [{"address": (1 << 63) + 4096,
                                      "size": 512, "requested_size": 1,
                                      "state": "inactive",
                                      "frames": [frame("x", "y", U64)]}]}],
            "device_traces": [[{"action": "alloc", "addr": U64 - 511,
                                "size": 1 << 40, "stream": (1 << 63) - 1,
                                "time_us": -5}]]}


# Strings a hostile file could use to drive a terminal (issue 9): SGR,
# clear screen, OSC 52 (clipboard), OSC 8 (hyperlink), BEL, CR, DEL, C1
# controls (U+009B is CSI as one code point, U+0085 NEL), a lone surrogate
# (pickle writes it as the invalid UTF-8 bytes ED B3 BF) and long text.
HOSTILE = {
    "sgr": "evil\x1b[31mRED\x1b[0m",
    "clear": "\x1b[2J\x1b[Hcleared",
    "osc52": "\x1b]52;c;ZWNobyBwd25lZA==\x07clip",
    "osc8": "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\",
    "bel_cr": "ring\x07\x07over\rwrite",
    "c1": "csi\u009b31mC1\u0085nel\x7fdel",
    "newline_tab": "two\nlines\tand tab",
    "invalid": "bad\udcffutf8",
    "long": "L" * 5000 + "\x1b[31mtail",
}


def hostile_strings():
    """Every string the program shows, made hostile. The strings also go
    to hostile_strings.json so tests know what the escaped form must
    decode to."""
    h = HOSTILE
    f1 = frame(h["sgr"], h["osc8"], 1)
    f2 = frame(h["clear"], h["osc52"], 2)
    f3 = frame(h["c1"] + h["invalid"], h["bel_cr"], 3)
    f4 = frame(h["long"], h["newline_tab"], 4)
    stack = [f1, f2, f3, f4]
    seg = 0x7f0000000000
    segments = [{"device": 0, "address": seg, "total_size": 2097152,
                 "allocated_size": 1024, "active_size": 1024,
                 "requested_size": 1000, "stream": 0,
                 "segment_type": "small", "frames": stack,
                 "blocks": [{"address": seg, "size": 1024,
                             "requested_size": 1000,
                             "state": "active_allocated", "frames": stack},
                            {"address": seg + 1024, "size": 2097152 - 1024,
                             "requested_size": 0, "state": "inactive",
                             "frames": []}]}]
    trace = [
        {"action": "segment_alloc", "addr": seg, "size": 2097152,
         "stream": 0, "frames": stack, "time_us": 1000},
        {"action": "alloc", "addr": seg, "size": 1000, "stream": 0,
         "frames": stack, "time_us": 1001,
         "compile_context": h["osc52"], "user_metadata": h["sgr"]},
        {"action": h["sgr"], "addr": 1, "size": 2, "stream": 0,
         "time_us": 1002, "compile_context": h["clear"],
         "user_metadata": h["c1"]},
    ]
    return {"segments": segments, "device_traces": [trace],
            "allocator_settings": {h["osc52"]: h["sgr"],
                                   "plain": h["c1"] + h["invalid"],
                                   h["bel_cr"]: {h["clear"]: 1}},
            "external_annotations": [
                {"name": h["osc8"], "stage": "START", "device": 0,
                 "time_us": 1000},
                {"name": h["bel_cr"], "stage": "END", "device": 0,
                 "time_us": 1002}],
            h["clear"]: h["osc8"]}


def html_frame():
    """A frame name and a file name that are HTML: snapview report must
    escape them (every call site, legend and tooltip is one). Two
    allocations at the hostile site, alive at the peak, one never
    freed; ProfilerStep annotations mark two steps."""
    evil = frame("<script>alert(1)</script>", "/work/<b>x</b>&amp;.py", 7)
    main = frame("main", "/work/train.py", 3)
    st = [evil, main]
    seg = 0x7f0000000000
    t0 = 1700000000000000
    trace = [
        {"action": "segment_alloc", "addr": seg, "size": 2097152,
         "stream": 0, "frames": st},
        {"action": "alloc", "addr": seg, "size": 4096, "stream": 0,
         "frames": st},
        {"action": "alloc", "addr": seg + 4096, "size": 8192, "stream": 0,
         "frames": st},
        {"action": "free_requested", "addr": seg + 4096, "size": 8192,
         "stream": 0, "frames": st},
        {"action": "free_completed", "addr": seg + 4096, "size": 8192,
         "stream": 0, "frames": st},
    ]
    for i, e in enumerate(trace):
        e["time_us"] = t0 + 10 * i
    blocks = [
        {"address": seg, "size": 4096, "requested_size": 4096,
         "state": "active_allocated", "frames": st},
        {"address": seg + 4096, "size": 2097152 - 4096,
         "requested_size": 8192, "state": "inactive", "frames": []},
    ]
    segments = [
        {"device": 0, "address": seg, "total_size": 2097152,
         "allocated_size": 4096, "active_size": 4096,
         "requested_size": 4096, "stream": 0, "segment_type": "small",
         "segment_pool_id": (0, 0), "is_expandable": False,
         "frames": st, "blocks": blocks}]
    ann = [{"name": "ProfilerStep#1", "stage": "START", "device": 0,
            "time_us": t0 + 10},
           {"name": "ProfilerStep#2", "stage": "START", "device": 0,
            "time_us": t0 + 30}]
    return {"segments": segments, "device_traces": [trace],
            "allocator_settings": {"expandable_segments": False},
            "external_annotations": ann}


def write(name, obj, protocol=4):
    path = os.path.join(OUT, name + ".pickle")
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)
    with open(os.path.join(OUT, name + ".expect"), "w") as f:
        f.write(expect_text(obj))


def write_raw(name, data, expect):
    with open(os.path.join(OUT, name + ".pickle"), "wb") as f:
        f.write(data)
    with open(os.path.join(OUT, name + ".expect"), "w") as f:
        f.write(expect + "\n")


def long4_unicode8():
    """LONG4 and BINUNICODE8/BINBYTES8 are legal but CPython only emits
    them for huge objects: write them by hand."""
    out = io.BytesIO()
    out.write(b"\x80\x04}(")
    key = b"segments"
    out.write(b"\x8d" + struct.pack("<Q", len(key)) + key)   # BINUNICODE8
    out.write(b"](}(")                                        # list, dict
    for k, v in (("device", 0), ("total_size", 512), ("stream", 0)):
        kb = k.encode()
        out.write(b"\x8c" + bytes([len(kb)]) + kb + b"M" +
                  struct.pack("<H", v))                       # BININT2
    kb = b"address"
    out.write(b"\x8c" + bytes([len(kb)]) + kb)
    vb = (8192).to_bytes(16, "little")                        # LONG4, padded
    out.write(b"\x8b" + struct.pack("<I", len(vb)) + vb)
    kb = b"blocks"
    out.write(b"\x8c" + bytes([len(kb)]) + kb + b"]")
    kb = b"segment_type"
    out.write(b"\x8c" + bytes([len(kb)]) + kb + b"\x8e" +
              struct.pack("<Q", 5) + b"small")                # BINBYTES8
    out.write(b"ue")                                          # SETITEMS, APPENDS
    kb = b"device_traces"
    out.write(b"\x8c" + bytes([len(kb)]) + kb + b"]")
    out.write(b"u.")
    snap = {"segments": [{"device": 0, "total_size": 512, "stream": 0,
                          "address": 8192, "blocks": [],
                          "segment_type": b"small"}],
            "device_traces": []}
    got = pickle.loads(out.getvalue())
    assert got == snap, got
    return out.getvalue(), snap


def main():
    os.makedirs(OUT, exist_ok=True)
    snap = small_snapshot()
    for p in (2, 3, 4, 5):
        write("small_p%d" % p, snap, protocol=p)
    write("newest", small_snapshot(with_time=True, extra=True))
    write("notime", small_snapshot(with_time=False))
    write("annotate", annotated())
    write("notrace_empty", no_trace(True))
    write("notrace_missing", no_trace(False))
    write("ring_overflowed", ring_overflowed())
    write("event_pools", event_pools())
    write("host_memory", host_memory())
    write("host_only", host_memory(cuda=False))
    write("xpu", xpu())
    write("skip_none", skip_actions([]))
    write("skip_free_requested", skip_actions(["free_requested"]))
    write("skip_frees", skip_actions(["free_requested", "free_completed"]))
    write("legacy_113", legacy_113(), protocol=2)
    write("legacy_20", legacy_20())
    write("single_items", single_items())
    write("two_traces", two_traces())
    write("snapshot_only", snapshot_only())
    write("big_ints", big_ints())
    write("empty_dict_snapshot", {"segments": [], "device_traces": []})
    write("html_frame", html_frame())
    with open(os.path.join(OUT, "hostile_strings.pickle"), "wb") as f:
        pickle.dump(hostile_strings(), f, protocol=4)
    with open(os.path.join(OUT, "hostile_strings.json"), "w") as f:
        json.dump(HOSTILE, f, indent=1, sort_keys=True)
        f.write("\n")
    data, obj = long4_unicode8()
    with open(os.path.join(OUT, "long4.pickle"), "wb") as f:
        f.write(data)
    with open(os.path.join(OUT, "long4.expect"), "w") as f:
        f.write(expect_text(obj))
    # inputs that must be refused
    write_raw("bad_global", b"\x80\x02cos\nsystem\n(S'echo hi'\ntR.",
              "2 GLOBAL (0x63) imports or calls code")
    write_raw("bad_stack_global",
              b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x02os"
              b"\x8c\x06system\x93.", "2 STACK_GLOBAL (0x93) imports")
    write_raw("bad_reduce", b"\x80\x04}\x94R.", "2 REDUCE (0x52)")
    write_raw("bad_truncated", pickle.dumps(snap, protocol=4)[:-40],
              "2 cut off (the dump did not finish?)")
    # a dump killed after its first frame: ends between two opcodes
    whole = pickle.dumps(small_snapshot(), protocol=4)
    write_raw("bad_cut_between", whole[:whole.index(b"device_traces") + 13],
              "2 cut off (the dump did not finish?): the file ends before "
              "STOP")
    write_raw("bad_not_pickle", b"PK\x03\x04 this is a zip file",
              "2 not a pickle")
    write_raw("bad_empty", b"",
              "2 empty file (a dump that did not finish?)")
    write_raw("bad_wrong_shape", pickle.dumps({"a": 1}, protocol=4),
              "2 not a memory snapshot")
    write_raw("bad_int_top", pickle.dumps(12345, protocol=4),
              "2 not a memory snapshot")
    write_raw("bad_memo", b"\x80\x04]\x94j\xff\xff\x00\x00a.",
              "2 memo index 65535 not set")
    write_raw("bad_proto6", b"\x80\x06}.", "2 protocol 6")
    write_raw("bad_text_proto", b"(dp0\nS'segments'\np1\n(lp2\nsS.",
              "2 text protocols")


if __name__ == "__main__":
    main()
