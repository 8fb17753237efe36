#!/usr/bin/env python3
"""snapview check's budgets on one snapshot, on both sides of each limit.

usage: budget.py SNAPVIEW SNAPSHOT.pickle [TRUTH.json]

For every device with events or segments, each budget is set once to
the figure (kept: exit 0, or 4 where the file is inconsistent anyway)
and once just below it (broken: exit 5, and the text names it with its
limit and the place). The figures are checked against what this script
computes itself:

  peak      the truth's timeline_peak and its event (generated files
            with a trace), else stats --json's peak
  reserved  the most reserved bytes, from the file's final segments
            walked back through the segment events (read here with
            pickle, refusing any class)
  growth    the largest total growth of a complete step after the
            first, from stats --json --at at the step's ends; on a
            planted per-step leak (truth "leak"), its per-step bytes
  frag      (reserved - allocated) / reserved from stats --json --at at
            the event of the most reserved
"""
import json
import math
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
    p = subprocess.run([sv] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def reserved_max(data, d):
    """(bytes, event): the most reserved, the first event after which it
    is reached, -1 before the first event."""
    segs = data.get("segments", []) if isinstance(data, dict) else data
    res = sum(s["total_size"] for s in segs if s.get("device", 0) == d)
    traces = data.get("device_traces", []) if isinstance(data, dict) else []
    tr = traces[d] if d < len(traces) else []
    after = [0] * len(tr)
    for i in range(len(tr) - 1, -1, -1):
        after[i] = res
        a = tr[i]["action"]
        if a in ("segment_alloc", "segment_map"):
            res -= tr[i]["size"]
        elif a in ("segment_free", "segment_unmap"):
            res += tr[i]["size"]
    best, ev = res, -1
    for i, v in enumerate(after):
        if v > best:
            best, ev = v, i
    return best, ev


def stats_at(sv, path, d, at):
    rc, out, err = run(sv, "stats", "--json", "--no-cache", "--device",
                       str(d), "--at", str(at), path)
    if rc != 0:
        raise SystemExit("stats --at %d failed: %s" % (at, err))
    for dev in json.loads(out)["devices"]:
        if dev["device"] == d:
            return dev
    raise SystemExit("stats --at %d: no device %d" % (at, d))


def budgets(sv, path, d, opts):
    rc, out, err = run(sv, "check", "--json", "--no-cache", "--device",
                       str(d), path, *opts)
    j = json.loads(out) if out else {}
    devs = [x for x in j.get("devices", []) if x["device"] == d]
    return rc, (devs[0].get("budgets", []) if devs else []), j


def both_sides(sv, path, d, name, opt, keep, brk, inconsistent, where):
    ok_rc = 4 if inconsistent else 0
    rc, b, _ = budgets(sv, path, d, [opt, keep])
    if rc != ok_rc or len(b) != 1 or not b[0]["ok"]:
        fail("%s dev %d: %s %s should keep (rc %d, %s)" %
             (path, d, opt, keep, rc, b))
    rc, out, _ = run(sv, "check", "--no-cache", "--device", str(d), path,
                     opt, brk)
    lines = [l for l in out.splitlines() if "budget %s " % name in l]
    if rc != 5 or len(lines) != 1 or "BROKEN" not in lines[0] \
            or "limit" not in lines[0] or "actual" not in lines[0] \
            or where not in lines[0]:
        fail("%s dev %d: %s %s should break (rc %d, %s)" %
             (path, d, opt, brk, rc, lines))


def main():
    sv, path = sys.argv[1], sys.argv[2]
    truth = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None
    with open(path, "rb") as f:
        data = Plain(f).load()
    rc, out, _ = run(sv, "check", "--json", "--no-cache", path)
    check = json.loads(out)
    for dev in check["devices"]:
        d = dev["device"]
        incons = not dev["ok"]
        rc, b, _ = budgets(sv, path, d, ["--max-peak", "1T",
                                         "--max-reserved", "1T",
                                         "--max-growth-per-step", "1T",
                                         "--max-frag", "100"])
        got = {x["name"]: x for x in b}
        if sorted(got) != ["frag", "growth_per_step", "peak", "reserved"]:
            fail("%s dev %d: budgets %s" % (path, d, sorted(got)))
            continue
        # peak
        p = got["peak"]
        if truth is not None and not dev["no_trace"]:
            t = [x for x in truth["devices"] if x["device"] == d][0]
            want = (t["timeline_peak"], t["timeline_peak_event"])
        else:
            s = stats_at(sv, path, d, -1)
            want = (s["peak"], s["peak_event"])
        if (p["actual"], p["event"]) != want:
            fail("%s dev %d: peak %s at %s, want %s" %
                 (path, d, p["actual"], p["event"], want))
        both_sides(sv, path, d, "peak", "--max-peak", str(p["actual"]),
                   str(p["actual"] - 1), incons, "event")
        # reserved
        r = got["reserved"]
        want = reserved_max(data, d)
        if (r["actual"], r["event"]) != want:
            fail("%s dev %d: reserved %s at %s, want %s" %
                 (path, d, r["actual"], r["event"], want))
        both_sides(sv, path, d, "reserved", "--max-reserved",
                   str(r["actual"]), str(r["actual"] - 1), incons, "device")
        # frag, at the most reserved
        f = got["frag"]
        s = stats_at(sv, path, d, r["event"])
        want = 100.0 * (s["reserved"] - s["allocated"]) / s["reserved"] \
            if s["reserved"] else 0.0
        if abs(f["actual"] - want) > 1e-6 or f["event"] != r["event"]:
            fail("%s dev %d: frag %s at %s, want %s" %
                 (path, d, f["actual"], f["event"], want))
        if f["actual"] >= 0.02:
            both_sides(sv, path, d, "frag", "--max-frag",
                       "%.2f%%" % (math.ceil(f["actual"] * 100) / 100),
                       "%.2f%%" % (math.floor(f["actual"] * 100) / 100
                                   - 0.01), incons, "event")
        # growth per step
        g = got["growth_per_step"]
        if g["judged"]:
            steps = g["step"]
            lo = stats_at(sv, path, d, g["step_first"] - 1)
            hi = stats_at(sv, path, d, g["step_last"])
            want = hi["timeline_total_at"] - lo["timeline_total_at"]
            if g["actual"] != want or g["event"] != g["step_last"]:
                fail("%s dev %d: growth %s in step %s, totals say %s" %
                     (path, d, g["actual"], steps, want))
            if truth is not None and truth.get("leak") and \
                    truth["leak"].get("per_step_requested") and \
                    g["actual"] != truth["leak"]["per_step_requested"]:
                fail("%s dev %d: growth %s, planted leak %s per step" %
                     (path, d, g["actual"],
                      truth["leak"]["per_step_requested"]))
            if g["actual"] >= 1:
                both_sides(sv, path, d, "growth_per_step",
                           "--max-growth-per-step", str(g["actual"]),
                           str(g["actual"] - 1), incons, "step %d" % steps)
        elif g["actual"] is not None or g["ok"] is not True:
            fail("%s dev %d: growth not judged but %s" % (path, d, g))
        print("ok: %s device %d: peak %d, reserved %d, frag %.2f%%, "
              "growth %s" % (path, d, p["actual"], r["actual"],
                             f["actual"], g["actual"]))
    # bad values are usage errors
    for opt, val in (("--max-peak", "70X"), ("--max-frag", "101%"),
                     ("--max-growth-per-step", "-1")):
        rc, _, err = run(sv, "check", "--no-cache", path, opt, val)
        if rc != 1 or opt not in err:
            fail("%s %s: rc %d, %s" % (opt, val, rc, err.strip()))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
