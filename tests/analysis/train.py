#!/usr/bin/env python3
"""Checks snapview on cuda_train_one_step.pickle against an independent
reading of the pickle (restricted unpickler, no torch).

usage: train.py SNAPVIEW SNAPSHOT_PICKLE TMPDIR

From the file itself: its one Optimizer.step START/END pair; gradients
are the allocations alive at the end that the autograd engine's thread
made (a torch::autograd::Engine frame); optimizer state is what the
optimizer step window allocated and left alive; the blocks alive in the
final segments that the trace never allocated are the parameters (each
has a gradient of its size: matched one to one) and a few others: two of
exactly cuBLAS's default workspace size (8,519,680 bytes, no gradient
has it) and five small ones (RNG state and the like, which snapview may
count as parameters: nothing tells them apart). snapview must find the
gradient and optimizer state bytes exactly, the two workspaces, parameter
bytes between the matched ones and all the others, one step from the
optimizer's annotation, no site growing every step and no site named by
an allocator frame; and the issue's figures must hold: optimizer state
2x the parameters (AdamW), gradients 1x, each within 3%.
"""
import json
import pickle
import subprocess
import sys


class Safe(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))


sv, path, tmp = sys.argv[1:4]
snap = Safe(open(path, "rb")).load()
errors = []


def eq(what, got, want):
    if got != want:
        errors.append("%s: snapview %r, expected %r" % (what, got, want))


def run(*args):
    out = subprocess.run([sv] + list(args) + ["--json", "--no-cache",
                         "--quiet", path], capture_output=True, check=True)
    return json.loads(out.stdout)


ann = [a for a in snap["external_annotations"]
       if a["name"].startswith("Optimizer.step#")]
start = [a["time_us"] for a in ann if a["stage"] == "START"]
end = [a["time_us"] for a in ann if a["stage"] == "END"]
assert len(start) == 1 and len(end) == 1, "the file has one optimizer step"
trace = snap["device_traces"][0]
live = {}
for e in trace:
    if e["action"] == "alloc":
        live[e["addr"]] = e
    elif e["action"] == "free_completed":
        live.pop(e["addr"], None)
pre = []
for seg in snap["segments"]:
    addr = seg["address"]
    for b in seg["blocks"]:
        if b["state"] == "active_allocated" and addr not in live:
            pre.append(b["requested_size"])
        addr += b["size"]
grad_sizes = [e["size"] for e in live.values()
              if any("torch::autograd::Engine::" in f["name"]
                     for f in e["frames"])]
grads = sum(grad_sizes)
# parameters: pre-trace blocks matched one to one with gradients by size
left = list(pre)
params = 0
for g in grad_sizes:
    if g in left:
        left.remove(g)
        params += g
WS = 2 * 4096 * 1024 + 8 * 16 * 1024
workspace = WS * left.count(WS)
others = sum(left) - workspace
state = sum(e["size"] for e in live.values()
            if start[0] <= e["time_us"] <= end[0])

top = run("top", "--by", "category")["devices"][0]
cats = {c["category"]: c["bytes"] for c in top["categories"]}
eq("steps source (top)", top["steps_source"], "optimizer")
eq("steps (top)", top["steps"], 1)
p = cats.get("parameter", 0)
if not params <= p <= params + others:
    errors.append("parameter bytes %d, expected %d..%d"
                  % (p, params, params + others))
eq("workspace bytes", cats.get("workspace"), workspace)
eq("gradient bytes", cats.get("gradient"), grads)
eq("optimizer state bytes", cats.get("optimizer_state"), state)
if p:
    r = cats.get("optimizer_state", 0) / (2.0 * p)
    if abs(r - 1) > 0.03:
        errors.append("optimizer state is %.3f x 2 x parameters" % r)
    r = cats.get("gradient", 0) / float(p)
    if abs(r - 1) > 0.03:
        errors.append("gradients are %.3f x parameters" % r)

leaks = run("leaks")["devices"][0]
eq("steps source (leaks)", leaks["steps_source"], "optimizer")
eq("steps (leaks)", leaks["steps"], 1)
eq("judged", leaks["judged"], False)
grow = [s["site"] for s in leaks["sites"] if s["periodic"]]
eq("sites growing every step", grow, [])
sites = [s["site"] for s in leaks["sites"]]
sites += [s["site"] for s in run("top")["devices"][0]["sites"]]
for s in sites:
    if "Allocator" in s or "malloc" in s:
        errors.append("site named by an allocator frame: " + s)
for e in errors:
    print(e)
print("parameters %d (snapview %d), gradients %d (%.4f x), optimizer "
      "state %d (%.4f x 2), workspace %d"
      % (params, p, grads, grads / float(p), state, state / (2.0 * p),
         workspace))
sys.exit(1 if errors else 0)
