#!/usr/bin/env python3
"""frag's and oom's explanations on fixtures whose story is known.

usage: explain.py SNAPVIEW TOP_SRCDIR

- npu_leak_expandable.pickle (real torch_npu) already uses expandable
  segments (segment_map events): no expandable_segments hint, and the
  allocator variable is torch_npu's; its segment allocs are measured in
  the pool their request needed (small requests: the small pool only).
- npu_leak_empty_cache.pickle: a fixed-size resnet, no variable-length
  inputs: no bucketing hint.
- gen/frag.pickle: gensnap varies the sequence length every step: the
  bucketing hint, and every segment alloc's state is looked at.
- gen/oom.pickle: gensnap caps the process at 3 GiB while the device
  reports 13.2 GiB free for a 3.1 GiB request that is never retried: the
  device had enough, the causes are the cap (memory fraction) or other
  processes, not the pool; the request failed.
"""
import json
import subprocess
import sys

sv, top = sys.argv[1:3]
errors = []


def run(cmd, path):
    out = subprocess.run([sv, cmd, "--json", "--no-cache", "--quiet",
                          top + "/tests/data/" + path],
                         capture_output=True, check=True)
    return json.loads(out.stdout)["devices"][0]


def check(what, cond):
    if not cond:
        errors.append(what)


d = run("frag", "real/npu_leak_expandable.pickle")
kinds = [h["kind"] for h in d["hints"]]
check("expandable in use", d["expandable_in_use"])
check("no expandable hint: %s" % kinds, "expandable_segments" not in kinds)
check("torch_npu variable", d["alloc_conf_env"] == "PYTORCH_NPU_ALLOC_CONF")
for a in d["segment_allocs"]:
    if a["request"] is None or a["pool_free"] is None:
        continue
    check("pool of %d" % a["event"],
          a["request_pool"] == ("small" if a["request"] <= 1 << 20
                                else "large"))
    check("pool free <= stream free at %d" % a["event"],
          a["pool_free"] <= a["stream_free"])
d = run("frag", "real/npu_leak_empty_cache.pickle")
check("no bucketing on fixed sizes",
      "bucketing" not in [h["kind"] for h in d["hints"]])
check("nothing changes size per step", d["varying_sites"] == 0)
d = run("frag", "gen/frag.pickle")
check("bucketing on variable lengths",
      "bucketing" in [h["kind"] for h in d["hints"]])
check("every segment alloc looked at",
      d["examined_segment_allocs"] == d["n_segment_allocs"])
check("CUDA variable", d["alloc_conf_env"] == "PYTORCH_CUDA_ALLOC_CONF")
o = run("oom", "gen/oom.pickle")["ooms"][0]
causes = [c["cause"] for c in o["causes"]]
check("enough free", o["enough_free"])
check("causes %s" % causes, "memory_fraction" in causes and
      "other_processes" in causes and "pool" not in causes)
check("segment of the request", o["segment_size"] ==
      (o["request"] + (2 << 20) - 1) // (2 << 20) * (2 << 20))
check("not retried", o["retry_event"] == -1)
check("live by category", sum(c["bytes"] for c in o["live_categories"]) ==
      o["live_bytes"])
for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
