#!/usr/bin/env python3
"""snapview cut on one snapshot: every cut loads in Python, passes
snapview check, and answers for its window what the original answers.

usage: cut.py SNAPVIEW SNAPSHOT.pickle TMPDIR

For the default device (and every device of a multi-device file), the
windows: the whole trace, the middle third, the first event, the last
event, step 2 (when there are steps), a time window (when there are
times), and the last instance of the first phase (--phase NAME@K, when
there are phases: the cut holds that instance's events). For each cut:

  - Python's pickle loads it (any class refused), and each event of the
    window equals the original's event (action, addr or device_free,
    size, stream, time_us, compile_context, user_metadata, frames with
    every string byte for byte): strings are written as read;
  - snapview check exits 0 on it (4 when the original's does);
  - stats on the cut equals stats --at TO on the original for the state
    (segments, blocks, reserved, allocated, active, free, largest free
    block), its action counts equal the window's, and its timeline total
    after its events -1, its middle and its last equals the original's
    after the same events (less the blocks pending free at the end that
    no event of the cut allocated: pending_before()); its peak is a
    total the original has inside the window.

A file whose own check fails (its events are impossible) gives cuts
that fail it too (exit 4), and load, and answer the same.

Also: -o refuses a file that exists (exit 1, file untouched) and
--force replaces it.
"""
import collections
import json
import os
import pickle
import subprocess
import sys


class Plain(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("class %s.%s" % (module, name))


FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg)


def run(sv, *args):
    p = subprocess.run([sv] + list(args), capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


def load(path):
    with open(path, "rb") as f:
        return Plain(f).load()


def stats(sv, path, d, at=None):
    args = ["stats", "--json", "--no-cache", "--device", str(d), path]
    if at is not None:
        args += ["--at", str(at)]
    rc, out, err = run(sv, *args)
    if rc != 0:
        raise SystemExit("stats %s failed: %s" % (args, err))
    return [x for x in json.loads(out)["devices"] if x["device"] == d][0]


STATE = ("segments", "blocks", "reserved", "allocated", "allocated_blocks",
         "active", "pending_free", "free_internal", "free_external",
         "largest_free_block")
# the top-level keys snapview reads (others it skips, and so cannot
# write back)
TOP = ("segments", "device_traces", "allocator_settings",
       "external_annotations")
ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc",
           "segment_free", "segment_map", "segment_unmap", "snapshot", "oom",
           "workspace_snapshot", "annotate")
EV_KEYS = ("action", "addr", "device_free", "size", "stream", "time_us",
           "compile_context", "user_metadata", "frames")


def pending_before(cut, d):
    """Requested bytes of the blocks pending free at the cut's end that
    no event of the cut allocated: the original counts each until its
    free_completed, after the window; memory_viz's rule (and so the
    cut's timeline) adds only active_allocated blocks alive at the end
    (doc/snapshot-format.md, 10.2), so the cut's totals are lower by
    these bytes all along its window."""
    allocated = {e["addr"] for e in cut["device_traces"][d]
                 if e["action"] == "alloc"}
    return sum(b.get("requested_size", b["size"])
               for s in cut["segments"] if s.get("device", 0) == d
               for b in s["blocks"]
               if b["state"] == "active_pending_free"
               and b.get("address") not in allocated)


def phase_window(sv, path, d):
    """--phase for the cut of the last instance of the device's first
    phase (NAME@K, or NAME when it has one), and its events; None when
    the device has no phase."""
    rc, out, err = run(sv, "phases", "--json", "--no-cache", "--device",
                       str(d), path)
    if rc != 0:
        fail("%s: phases: rc %d %s" % (path, rc, err.strip()))
        return None
    dev = [x for x in json.loads(out)["devices"] if x["device"] == d][0]
    if not dev["phases"]:
        return None
    p = dev["phases"][0]
    k = p["instances"] - 1
    inst = [i for i in dev["instances"] if i["phase"] == p["name"] and
            i["iteration"] == k][0]
    spec = p["name"] if k == 0 else "%s@%d" % (p["name"], k)
    return ["--phase", spec], (inst["first_event"], inst["last_event"])


def one_cut(sv, path, orig, d, args, tmp, name, inconsistent):
    out = os.path.join(tmp, name + ".pickle")
    if os.path.exists(out):
        os.unlink(out)
    rc, o, err = run(sv, "cut", "--json", "--no-cache", "--device", str(d),
                     path, "-o", out, *args)
    if rc != 0:
        fail("%s: cut %s: rc %d %s" % (path, args, rc, err.strip()))
        return
    info = json.loads(o)
    lo, hi = info["from"], info["to"]
    try:
        cut = load(out)
    except Exception as e:  # noqa: BLE001 - any failure to load fails
        fail("%s: cut %s does not load: %s" % (path, args, e))
        return
    want = orig["device_traces"][d][lo:hi + 1]
    got = cut["device_traces"][d]
    if len(got) != len(want):
        fail("%s %s: %d events, want %d" % (path, args, len(got),
                                              len(want)))
        return
    for i, (g, w) in enumerate(zip(got, want)):
        for k in EV_KEYS:
            if k in w and w.get(k) != g.get(k) and \
                    not (k == "frames" and not w[k] and not g.get(k)):
                fail("%s %s: event %d key %s: %r, want %r" %
                     (path, args, lo + i, k, g.get(k), w.get(k)))
                return
    if sorted(cut) != sorted(k for k in orig if k in TOP):
        fail("%s %s: keys %s, want %s" % (path, args, sorted(cut),
                                           sorted(orig)))
    rc, o, err = run(sv, "check", "--no-cache", out)
    if rc != (4 if inconsistent else 0):
        fail("%s %s: check on the cut: rc %d\n%s" % (path, args, rc, o))
    c = stats(sv, out, d)
    a = stats(sv, path, d, hi)
    for k in STATE:
        if c.get(k) != a.get(k):
            fail("%s %s: stats %s %s, original at %d: %s" %
                 (path, args, k, c.get(k), hi, a.get(k)))
    counts = collections.Counter(e["action"] if e["action"] in ACTIONS
                                 else "unknown" for e in want)
    if {k: v for k, v in c["actions"].items() if v} != dict(counts):
        fail("%s %s: actions %s, want %s" % (path, args, c["actions"],
                                             dict(counts)))
    n = hi - lo + 1
    pend = pending_before(cut, d)
    for k in sorted({-1, (n - 1) // 2, n - 1}):
        ct = stats(sv, out, d, k)["timeline_total_at"] + pend
        ot = stats(sv, path, d, lo + k)["timeline_total_at"]
        if ct != ot:
            fail("%s %s: total after cut event %d: %d, original after %d:"
                 " %d" % (path, args, k, ct, lo + k, ot))
    if c["peak_event"] >= 0:
        ot = stats(sv, path, d, lo + c["peak_event"])["timeline_total_at"]
        if ot != c["peak"] + pend:
            fail("%s %s: peak %d at cut event %d, original there %d" %
                 (path, args, c["peak"], c["peak_event"], ot))
    print("ok: %s device %d cut %s: events %d..%d, %d bytes" %
          (path, d, " ".join(args) or "(all)", lo, hi, info["bytes"]))
    return info


def main():
    sv, path, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
    orig = load(path)
    if not isinstance(orig, dict) or not any(orig.get("device_traces")
                                             or []):
        rc, _, err = run(sv, "cut", "--no-cache", path, "-o",
                         os.path.join(tmp, "none.pickle"))
        if rc != 1 or "no trace" not in err:
            fail("%s: no trace: rc %d %s" % (path, rc, err.strip()))
        else:
            print("ok: %s: no trace to cut" % path)
        return 1 if FAILS else 0
    rc, _, _ = run(sv, "check", "--no-cache", path)
    incons = rc == 4
    for d, tr in enumerate(orig["device_traces"]):
        if not tr:
            continue
        n = len(tr)
        wins = [[], ["--from", str(n // 3), "--to", str(2 * n // 3)],
                ["--from", "0", "--to", "0"],
                ["--from", str(n - 1), "--to", str(n - 1)]]
        rc, out, _ = run(sv, "leaks", "--json", "--no-cache", "--device",
                         str(d), path)
        if "time_us" in tr[0] and tr[-1]["time_us"] > tr[0]["time_us"]:
            span = tr[-1]["time_us"] - tr[0]["time_us"]
            wins.append(["--from", "%dus" % (span // 4),
                         "--to", "%.3fms" % (span * 3 / 4 / 1000)])
        rc, _, _ = run(sv, "cut", "--no-cache", "--device", str(d), path,
                       "-o", os.path.join(tmp, "s2.pickle"), "--step", "2")
        if rc == 0:
            os.unlink(os.path.join(tmp, "s2.pickle"))
            wins.append(["--step", "2"])
        ph = phase_window(sv, path, d)
        if ph is not None:
            wins.append(ph[0])
        for i, w in enumerate(wins):
            info = one_cut(sv, path, orig, d, w, tmp, "cut%d-%d" % (d, i),
                           incons)
            if ph is not None and w is ph[0] and info is not None and \
                    (info["from"], info["to"]) != ph[1]:
                fail("%s %s: events %d..%d, the instance's %d..%d" %
                     ((path, w, info["from"], info["to"]) + ph[1]))
    # -o never replaces a file without --force
    out = os.path.join(tmp, "exists.pickle")
    with open(out, "wb") as f:
        f.write(b"mine")
    rc, _, err = run(sv, "cut", "--no-cache", path, "-o", out)
    if rc != 1 or open(out, "rb").read() != b"mine" or \
            "--force" not in err:
        fail("%s: -o over a file: rc %d, %s" % (path, rc, err.strip()))
    rc, _, err = run(sv, "cut", "--no-cache", path, "-o", out, "--force")
    if rc != 0 or open(out, "rb").read() == b"mine":
        fail("%s: --force: rc %d, %s" % (path, rc, err.strip()))
    os.unlink(out)
    leftovers = [x for x in os.listdir(tmp) if x.startswith(".")]
    if leftovers:
        fail("%s: temporary files left: %s" % (path, leftovers))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
