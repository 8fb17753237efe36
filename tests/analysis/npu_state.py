#!/usr/bin/env python3
"""Pins a state inside the trace of npu_all_freed.pickle, derived from the
trace alone (restricted unpickler, no torch), against snapview state.

usage: npu_state.py SNAPVIEW SNAPSHOT_PICKLE

The trace opens with a segment_alloc of a 2 MiB small-pool segment and a
run of allocs carved one after another from it (model construction), no
free in between. The address gaps of that run are the block sizes
torch_npu gave: request + 32 rounded up to 512 (a 16,384-byte request
takes 16,896 bytes); CUDA's rule (the request rounded to 512) fits none
of the gaps that tell the two apart. So after the run's last alloc the
segment holds exactly those blocks, then one free block to its end.
"""
import json
import pickle
import subprocess
import sys


class Safe(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))


def npu(n):
    n += 32
    return max(512, (n + 511) // 512 * 512)


def cuda(n):
    return max(512, (n + 511) // 512 * 512)


sv, path = sys.argv[1:3]
trace = Safe(open(path, "rb")).load()["device_traces"][0]
errors = []
seg = trace[0]
assert seg["action"] == "segment_alloc" and seg["size"] == 2 << 20
run = []
for i, e in enumerate(trace[1:], 1):
    if e["action"] != "alloc":
        break
    run.append((i, e["addr"], e["size"]))
# the run is carved front to back: each gap is the previous block
npu_only = cuda_only = 0
for (_, a, q), (_, b, _) in zip(run, run[1:]):
    gap = b - a
    if gap != npu(q) and gap != cuda(q):
        errors.append("gap %d after a %d-byte request fits no rule" % (gap, q))
    npu_only += gap == npu(q) and gap != cuda(q)
    cuda_only += gap == cuda(q) and gap != npu(q)
if npu_only == 0 or cuda_only != 0:
    errors.append("gaps: %d fit torch_npu's rule only, %d CUDA's only"
                  % (npu_only, cuda_only))
last = run[-1][0]
want = [(a, npu(q), "active_allocated", q) for _, a, q in run]
end = run[-1][1] + npu(run[-1][2])
want.append((end, seg["addr"] + seg["size"] - end, "inactive", None))
out = subprocess.run([sv, "state", "--at", str(last), "--json", "--no-cache",
                      "--quiet", path], capture_output=True, check=True)
st = json.loads(out.stdout)
segs = [s for s in st["segments"] if s["address"] == seg["addr"]]
if len(segs) != 1:
    errors.append("segment %#x not in the state" % seg["addr"])
else:
    got = [(b["address"], b["size"], b["state"],
            b["requested_size"] if b["state"] != "inactive" else None)
           for b in segs[0]["blocks"]]
    if got != want:
        errors.append("state after #%d differs:\n  got  %s\n  want %s"
                      % (last, got[:8], want[:8]))
    # the example: a 16,384-byte request is a 16,896-byte block
    b16 = [b for b in got if b[3] == 16384]
    if not b16 or any(b[1] != 16896 for b in b16):
        errors.append("16384-byte requests: blocks %s" % [b[1] for b in b16])
for e in errors:
    print(e)
print("after #%d: %d blocks from the trace, %d gaps fit torch_npu's rule "
      "only" % (last, len(run), npu_only))
sys.exit(1 if errors else 0)
