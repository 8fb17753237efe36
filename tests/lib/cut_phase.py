#!/usr/bin/env python3
"""snapview cut --phase on gensnap's rl scenario, against its truth.

usage: cut_phase.py SNAPVIEW SNAPSHOT.pickle TRUTH_JSON|- TMPDIR

For the third instance (iteration 2) of every phase of the truth
(contrib/gensnap_rl.py: computed while generating, never from the file),
`cut --phase NAME@2`:
  - says it cut that phase's iteration 2, complete, and its events are
    the truth's first to last event (JSON), and says so in text;
  - passes snapview check;
  - answers `phases` on the cut as the truth answers for the instance:
    one complete instance of the phase from the cut's first event to its
    last, the same peak (and where it falls, less the events before the
    window), the same bytes live at its start and freed in it, allocated,
    left behind (by call site), allocated and reserved at its end;
  - answers `stats` as the original does after the instance's last event.
With - for the truth (a real file), the last complete instance of each
phase that `phases` finds in the file is cut and answered the same way,
against `phases` on the whole file. And on the rl file --phase refuses,
with a line saying what to give instead: a phase of several instances
without @K, an iteration it does not have, a name that is no phase,
--phase with --step.
"""
import json
import os
import subprocess
import sys

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg)


def run(sv, *args):
    p = subprocess.run([sv] + list(args), capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


def eq(what, got, want):
    if got != want:
        fail("%s: snapview %r, truth %r" % (what, got, want))
        return False
    return True


STATE = ("segments", "blocks", "reserved", "allocated", "active",
         "largest_free_block", "timeline_total_at")
SAME = ("peak_bytes", "alive_before_bytes", "freed_inside_bytes",
        "freed_inside_count", "allocated_bytes", "allocated_count",
        "left_bytes", "left_count", "allocated_end_bytes",
        "reserved_end_bytes")


def stats(sv, path, at=None):
    args = ["stats", "--json", "--no-cache", path]
    if at is not None:
        args += ["--at", str(at)]
    rc, out, err = run(sv, *args)
    if rc != 0:
        raise SystemExit("stats %s: %s" % (args, err))
    return json.loads(out)["devices"][0]


def one(sv, path, t, tmp):
    name = t["phase"]
    spec = "%s@%d" % (name, t["iteration"])
    out = os.path.join(tmp, "%s-%d.pickle" % (name, t["iteration"]))
    rc, o, err = run(sv, "cut", "--json", "--no-cache", path, "-o", out,
                     "--phase", spec)
    if rc != 0:
        fail("cut --phase %s: rc %d %s" % (spec, rc, err.strip()))
        return
    info = json.loads(o)
    first, last = t["first_event"], t["last_event"]
    eq("%s: window" % spec, (info["from"], info["to"]), (first, last))
    eq("%s: phase" % spec, (info["phase"], info["iteration"],
                            info["complete"]), (name, t["iteration"], True))
    rc, o, err = run(sv, "check", "--no-cache", out)
    eq("%s: check on the cut" % spec, rc, 0)
    rc, o, err = run(sv, "phases", "--json", "--no-cache", out)
    if rc != 0:
        fail("%s: phases on the cut: rc %d %s" % (spec, rc, err.strip()))
        return
    got = [i for i in json.loads(o)["devices"][0]["instances"]
           if i["phase"] == name and i["first_event"] == 0]
    if not eq("%s: instances of %s from the cut's start" % (spec, name),
              len(got), 1):
        return
    g = got[0]
    eq("%s: last event" % spec, g["last_event"], last - first)
    eq("%s: complete" % spec, g["complete"], True)
    eq("%s: peak event" % spec, g["peak_event"], t["peak_event"] - first)
    for k in SAME:
        eq("%s: %s" % (spec, k), g[k], t[k])
    eq("%s: left sites" % spec,
       {s["site"]: s["bytes"] for s in g["left_sites"]}, t["left_sites"])
    c, a = stats(sv, out), stats(sv, path, last)
    for k in STATE:
        if k == "timeline_total_at":
            c = stats(sv, out, last - first)
        eq("%s: stats %s" % (spec, k), c.get(k), a.get(k))
    # the same cut in text names the phase and its iteration
    rc, o, err = run(sv, "cut", "--no-cache", "--force", path, "-o", out,
                     "--phase", spec)
    if rc != 0 or ", phase %s iteration %d, events %d..%d " % (
            name, t["iteration"], first, last) not in o:
        fail("%s: text: rc %d %r" % (spec, rc, o))
    print("ok: cut --phase %s: events %d..%d" % (spec, first, last))


def refused(sv, path, tmp, args, want):
    out = os.path.join(tmp, "refused.pickle")
    rc, o, err = run(sv, "cut", "--no-cache", path, "-o", out, *args)
    if rc != 1 or want not in err or os.path.exists(out):
        fail("cut %s: rc %d, %r (want %r)" % (" ".join(args), rc,
                                              err.strip(), want))
    else:
        print("ok: cut %s refused" % " ".join(args))


def from_file(sv, path):
    """A truth from `phases` on the file itself (a real file, whose
    phases no generator knows): the last instance of each phase."""
    rc, out, err = run(sv, "phases", "--json", "--no-cache", path)
    if rc != 0:
        raise SystemExit("phases %s: %s" % (path, err))
    dev = json.loads(out)["devices"][0]
    last = {}
    for i in dev["instances"]:
        if i["complete"]:
            last[i["phase"]] = dict(i, left_sites={
                s["site"]: s["bytes"] for s in i["left_sites"]})
    return list(last.values())


def main():
    sv, path, truth, tmp = sys.argv[1:5]
    if truth == "-":
        insts = from_file(sv, path)
        if not insts:
            fail("%s: no complete phase instance" % path)
        for t in insts:
            one(sv, path, t, tmp)
        return 1 if FAILS else 0
    truth = json.load(open(truth))
    insts = [t for t in truth["phases"] if t["iteration"] == 2]
    names = {t["phase"] for t in truth["phases"]}
    eq("phases of iteration 2", sorted(t["phase"] for t in insts),
       sorted(names))
    for t in insts:
        one(sv, path, t, tmp)
    n = sum(t["phase"] == "rollout" for t in truth["phases"])
    refused(sv, path, tmp, ["--phase", "rollout"],
            "phase 'rollout' has %d instances on device 0: name one, "
            "--phase 'rollout@K'" % n)
    refused(sv, path, tmp, ["--phase", "rollout@%d" % n],
            "K from 0 to %d" % (n - 1))
    refused(sv, path, tmp, ["--phase", "nope"],
            "device 0 has no phase 'nope' (its phases: rollout, ")
    refused(sv, path, tmp, ["--phase", "rollout@1", "--step", "2"],
            "--phase or --step or --from/--to, one of them")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
