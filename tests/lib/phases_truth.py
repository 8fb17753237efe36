#!/usr/bin/env python3
"""snapview phases against the truth of gensnap's rl scenario.

usage: phases_truth.py json SNAPVIEW_JSON TRUTH_JSON [PHASE...]
       phases_truth.py text SNAPVIEW_TEXT TRUTH_JSON
       phases_truth.py view EXPORTED_VIEW TRUTH_JSON
       phases_truth.py none SNAPVIEW_JSON STEPS

json: every phase instance of the truth (gensnap_rl.py, computed while
generating, never from the file) with its events, peak and where it
falls, what was live at its start and freed in it, what it allocated and
left behind (bytes by call site), allocated and reserved bytes at its
end; and the one growing site is the planted leak, in its phase, at its
bytes per iteration.  With PHASEs, only their instances are compared
(the phases of --phase rules), and the leak when its phase is one.  text: the report names the leak with its phase and
bytes per iteration, and each instance's row has its events, peak and
what it left behind.  view: the same rows in the viewer's phase table as
`w` writes it.  none: STEPS steps, nothing is growing and no phase is
judged (a forward-only trace, one training step).
"""
import json
import sys

errors = []


def eq(what, g, t):
    if g != t:
        errors.append("%s: snapview %r, truth %r" % (what, g, t))


def size(b):
    """sv_fmt_size (src/util/units.c)."""
    if b < 1024:
        return "%d B" % b
    for unit in range(1, 7):
        d = 1 << (10 * unit)
        t = b // d * 10 + (b % d * 10 + d // 2) // d
        if t < 10240:
            break
    return "%d.%d %s" % (t // 10, t % 10,
                         ("B", "KiB", "MiB", "GiB", "TiB", "PiB")[unit])


def check_json(got, truth, only):
    """With a ring buffer (events dropped) the truth has the instances
    wholly inside the trace and their count of the leaked blocks all
    of them: snapview numbers the cut ones too and counts the blocks it
    saw allocated."""
    dev = got["devices"][0]
    wrapped = truth["devices"][0]["dropped_events"] > 0
    if only:
        truth = dict(truth, phases=[t for t in truth["phases"]
                                    if t["phase"] in only])
    have = {(i["phase"], i["first_event"], i["last_event"]): i
            for i in dev["instances"]}
    eq("complete instances", sum(i["complete"] for i in dev["instances"]),
       len(truth["phases"]))
    for t in truth["phases"]:
        key = (t["phase"], t["iteration"])
        g = have.get((t["phase"], t["first_event"], t["last_event"]))
        if g is None:
            errors.append("%s #%d: missing" % key)
            continue
        if not wrapped:
            eq("%s #%d iteration" % key, g["iteration"], t["iteration"])
        for k in ("first_event", "last_event", "peak_bytes", "peak_event",
                  "alive_before_bytes", "freed_inside_bytes",
                  "freed_inside_count", "allocated_bytes", "allocated_count",
                  "left_bytes", "left_count", "allocated_end_bytes",
                  "reserved_end_bytes"):
            eq("%s #%d %s" % (key + (k,)), g[k], t[k])
        eq("%s #%d complete" % key, g["complete"], True)
        # --limit N lists the N sites that leave the most
        want = sorted(t["left_sites"].items(), key=lambda kv: (-kv[1],
                                                               kv[0]))
        eq("%s #%d left sites" % key, g["n_left_sites"], len(want))
        eq("%s #%d left sites listed" % key,
           {s["site"]: s["bytes"] for s in g["left_sites"]},
           dict(want[:len(g["left_sites"])]))
    leak = truth["leak"]
    # three complete instances are needed to judge (a short ring buffer
    # may hold fewer)
    judged = sum(t["phase"] == leak["phase"] for t in truth["phases"]) >= 3
    if only and leak["phase"] not in only:
        return
    eq("growing", [(x["phase"], x["site"], x["per_iteration_bytes"])
                   for x in dev["growing"]],
       [(leak["phase"], leak["site"], leak["per_iteration_requested"])]
       if judged else [])
    if not wrapped:
        eq("leaked blocks", [x["count"] for x in dev["growing"]],
           [leak["count"]])
    for p in dev["phases"]:
        n = sum(t["phase"] == p["name"] for t in truth["phases"])
        eq("phase %s judged" % p["name"], p["judged"], n >= 3)


def check_text(text, truth):
    leak = truth["leak"]
    want = "%s per iteration in %s: %s" % (size(leak["per_iteration_requested"]),
                                           leak["phase"], leak["site"])
    if want not in text:
        errors.append("the text does not say: %s" % want)
    rows = {}
    phase = None
    for line in text.splitlines():
        if line.startswith("Phase "):
            phase = line.split()[1]
        w = line.split()
        if phase and len(w) >= 2 and w[0].isdigit() and w[1].startswith("#"):
            rows[(phase, int(w[0]))] = line
    for t in truth["phases"]:
        key = (t["phase"], t["iteration"])
        line = rows.get(key)
        if line is None:
            errors.append("%s #%d: no row" % key)
            continue
        for what in ("#%d..#%d" % (t["first_event"], t["last_event"]),
                     size(t["peak_bytes"]), "#%d" % t["peak_event"],
                     size(t["left_bytes"]), size(t["reserved_end_bytes"])):
            if what not in line:
                errors.append("%s #%d: %r not in %r" % (key + (what, line)))


def check_view(text, truth):
    """The phase table as the viewer exports it: one row per instance,
    "phase iteration first..last peak at left reserved"."""
    rows = {}
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 3 and w[1].isdigit() and ".." in w[2]:
            rows[(w[0], int(w[1]))] = line
    for t in truth["phases"]:
        key = (t["phase"], t["iteration"])
        line = rows.get(key)
        if line is None:
            errors.append("view: %s #%d: no row" % key)
            continue
        w = line.split()
        eq("view %s #%d events" % key, w[2],
           "%d..%d" % (t["first_event"], t["last_event"]))
        eq("view %s #%d peak bytes" % key, int(w[3]), t["peak_bytes"])
        eq("view %s #%d peak event" % key, int(w[4]), t["peak_event"])
        eq("view %s #%d left bytes" % key, int(w[5]), t["left_bytes"])
        eq("view %s #%d reserved at end" % key, int(w[6]),
           t["reserved_end_bytes"])
    leak = truth["leak"]
    want = "grows %d bytes per iteration in %s at %s" % (
        leak["per_iteration_requested"], leak["phase"], leak["site"])
    if want not in text:
        errors.append("view: no line '%s'" % want)


def check_none(got, steps):
    for dev in got["devices"]:
        eq("device %d steps" % dev["device"], dev["steps"], steps)
        eq("device %d growing" % dev["device"], dev["growing"], [])
        for p in dev["phases"]:
            eq("phase %s growing" % p["name"], p["growing"], [])
            eq("phase %s judged" % p["name"], p["judged"], False)


def main():
    kind = sys.argv[1]
    if kind == "none":
        check_none(json.load(open(sys.argv[2])), int(sys.argv[3]))
    else:
        truth = json.load(open(sys.argv[3]))
        if kind == "json":
            check_json(json.load(open(sys.argv[2])), truth, sys.argv[4:])
        elif kind == "text":
            check_text(open(sys.argv[2]).read(), truth)
        else:
            check_view(open(sys.argv[2]).read(), truth)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
