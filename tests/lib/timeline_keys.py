#!/usr/bin/env python3
"""tests/timeline/keys.test's oracles: what the timeline's screens must
show, worked out from `snapview top --json` and from the pickle itself
(read by Python's pickle: the snapshot files are plain dicts and lists).

usage: timeline_keys.py CHECK ARGS...
  picked TOP.json I LINE        the I-th band K picks (bottom up) is the
                                I-th site of top (equal bytes: any order)
  enter-site TOP.json PICKLE AT prints "RANK #EVENT": the first user-code
                                site among top's 8 with a block alive at
                                AT allocated in the trace, and the alloc
                                event of its largest (equal: earliest)
  y-zoom LO HI                  three > narrowed the y range eightfold
  y-around TITLE LO HI          the cursor's total (TITLE) is in LO..HI
  y-data TITLE LO HI            Y's range: above 0, the cursor's total
                                and the peak in it, narrower than the fit
  alloc-bands PICKLE PICKS.txt  each picked allocation band is a block
                                alive at #2,141 allocated where it says,
                                in stacking order
  annotations PICKLE            prints "#EVENT STAGE NAME" per START/END
                                annotation of device 0, sorted: a START
                                goes to the first event at or after its
                                time, an END to the last at or before it
  ann-jumps ANN.txt             prints "K #EVENT NAME" for the four
                                jumps }}}{ from event 0
"""
import json
import pickle
import re
import sys


def picked(top_json, i, line):
    top = json.load(open(top_json))["devices"][0]["sites"]
    i = int(i) - 1
    want = top[i]
    ok = [s for s in top if s["bytes"] == want["bytes"]]
    if not line.startswith("\u2500 Call site "):
        sys.exit("pick %d: not a call-site band: %s" % (i + 1, line))
    # blocks allocated before the trace are named by their free (top
    # says free_stack), "freed at SITE"; a long path may lose its
    # directories ("…/file.py:73 step") to fit the title
    def label(s):
        return ("freed at " if s.get("free_stack") else "") + s["site"]

    def shown(title, lab):
        if title.endswith(" - " + lab):
            return True
        head, _, short = title.rpartition(" - ")
        pre = "freed at " if lab.startswith("freed at ") else ""
        if pre and not short.startswith(pre):
            return False
        short = short[len(pre):]
        if short.startswith("\u2026"):
            return lab.endswith(short[1:]) and "/" in lab
        return False
    if not any(shown(line.split(" \u2500")[0], label(s)) for s in ok):
        sys.exit("pick %d: %s\n  want %s" % (i + 1, line, label(want)))


def live_allocs(trace, upto):
    """Address -> (event, alloc) of the blocks alive after event upto."""
    live = {}
    for i, e in enumerate(trace[:upto + 1]):
        if e["action"] == "alloc":
            live[e["addr"]] = (i, e)
        elif e["action"] in ("free_completed", "free"):
            live.pop(e["addr"], None)
    return live


def enter_site(top_json, path, at):
    top = json.load(open(top_json))["devices"][0]["sites"]
    tr = pickle.load(open(path, "rb"))["device_traces"][0]
    live = live_allocs(tr, int(at))
    for r, s in enumerate(top[:8]):
        if not s["user_code"]:
            continue
        f, best = s["frames"][0], None
        for i, e in live.values():
            if any(x["filename"] == f["filename"] and x["line"] == f["line"]
                   and x["name"] == f["name"] for x in e.get("frames", [])):
                k = (-e["size"], i)
                best = k if best is None or k < best else best
        if best is not None:
            print(r + 1, "#{:,}".format(best[1]))
            break


def y_zoom(lo, hi):
    u = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    v = lambda x: float(x[:-1]) * u[x[-1]]
    full = 6.7 * (1 << 30)
    if not v(hi) - v(lo) < full / 6:
        sys.exit("three > should narrow the range eightfold: %s..%s"
                 % (lo, hi))


UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def size_of(x):
    """'4.7G' or '4.7 GiB' in bytes."""
    m = re.match(r"([0-9.]+) ?([BKMGT])", x)
    return float(m.group(1)) * UNITS[m.group(2)]


def title_sizes(title):
    """The total at the cursor and the peak of a timeline title."""
    m = re.search(r" - #[0-9,]+ ([0-9.]+ [BKMGT]i?B) - peak ([0-9.]+ "
                  r"[BKMGT]i?B) ", title)
    if not m:
        sys.exit("no total and peak in %r" % title)
    return size_of(m.group(1)), size_of(m.group(2))


def y_around(title, lo, hi):
    tot, _ = title_sizes(title)
    if not size_of(lo) <= tot <= size_of(hi):
        sys.exit("> with no pick left the cursor's %s out of %s..%s"
                 % (tot, lo, hi))


def y_data(title, lo, hi):
    tot, peak = title_sizes(title)
    # the labels are rounded to a tenth of their unit
    slack = 0.05 * UNITS[hi[-1]]
    if not (0 < size_of(lo) <= tot + slack and size_of(hi) + slack >= peak
            and size_of(hi) - size_of(lo) < 6.7 * (1 << 30) * 0.6):
        sys.exit("Y: %s..%s for a total of %d at the cursor, peak %d"
                 % (lo, hi, tot, peak))


def alloc_bands(path, picks):
    tr = pickle.load(open(path, "rb"))["device_traces"][0]
    live = {a: i for a, (i, _) in live_allocs(tr, 2141).items()}
    prev, n = -2, 0
    for line in open(picks):
        m = re.match(r"\u2500 Allocation 0x([0-9a-f]+) .* - alloc "
                     r"(#[0-9,]+|before the trace),", line)
        if not m:
            continue
        n += 1
        addr = int(m.group(1), 16)
        ev = (-1 if m.group(2).startswith("before")
              else int(m.group(2)[1:].replace(",", "")))
        if live.get(addr, -1) != ev:
            sys.exit("%s: not a live block allocated at %d"
                     % (line.strip(), ev))
        if ev < prev:
            sys.exit("bands out of stacking order at " + line.strip())
        prev = ev
    if n < 5:
        sys.exit("only %d allocation bands" % n)
    print("%d allocation bands in stacking order" % n)


def annotations(path):
    snap = pickle.load(open(path, "rb"))
    t = [e["time_us"] for e in snap["device_traces"][0]]
    out = []
    for a in snap.get("external_annotations", []):
        if a.get("device", 0) != 0 or a["stage"] not in ("START", "END"):
            continue
        if a["stage"] == "START":
            ev = next((i for i, x in enumerate(t) if x >= a["time_us"]),
                      len(t) - 1)
        else:
            ev = max([i for i, x in enumerate(t) if x <= a["time_us"]] or [0])
        out.append((ev, a["time_us"], a["stage"] == "END", a["stage"],
                    a["name"]))
    for o in sorted(out):
        print("#{:,}".format(o[0]), o[3], o[4])


def ann_jumps(path):
    lines = [l.split() for l in open(path)]
    after0 = [i for i, l in enumerate(lines) if l[0] != "#0"][0]
    for k, i in enumerate([after0, after0 + 1, after0 + 2, after0 + 1]):
        print(k + 1, lines[i][0], lines[i][2])


CHECKS = {"picked": picked, "enter-site": enter_site, "y-zoom": y_zoom,
          "alloc-bands": alloc_bands, "annotations": annotations,
          "ann-jumps": ann_jumps, "y-around": y_around, "y-data": y_data}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHECKS:
        sys.exit(__doc__)
    CHECKS[sys.argv[1]](*sys.argv[2:])
