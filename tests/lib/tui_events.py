#!/usr/bin/env python3
"""tests/tui/events.test: the event table (E) against the file itself,
read with Python's pickle: the rows around the cursor, each filter, G,
Enter, and a filter that matches nothing.

usage: tui_events.py SNAPSHOT.pickle WORKDIR AT
"""
import os, pickle, re, sys
path, work, at = sys.argv[1], sys.argv[2], int(sys.argv[3])
tr = pickle.load(open(path, "rb"))["device_traces"][0]
ok = True
def fail(m):
    global ok
    print("FAIL: " + m); ok = False
row_re = re.compile(r'^ #([\d,]+) +(\S+) +(\S+) +(\S+) +(\S+)  ')
def screen(name):
    return open(os.path.join(work, name)).read().split("\n")
def rows(name):
    out, inside = [], False
    for l in screen(name):
        if l.startswith("─ Events"):
            inside = True; continue
        if inside and l.startswith("─ "):
            break
        m = row_re.match(l) if inside else None
        if m:
            out.append((int(m.group(1).replace(",", "")), m.group(2),
                        m.group(3)))
    return out
def status(name):
    return screen(name)[-2]
def check(name, pred, desc):
    """the rows are consecutive matches of pred (python) around the cursor"""
    r = rows(name)
    want = [i for i, e in enumerate(tr) if pred(e)]
    got = [x[0] for x in r]
    if not got:
        fail("%s: no rows" % desc); return
    k = want.index(got[0]) if got[0] in want else -1
    if k < 0 or want[k:k + len(got)] != got:
        fail("%s: rows %r are not consecutive matches" % (desc, got[:8]))
    for i, act, addr in r:
        e = tr[i]
        if act[:14] != e["action"][:14]:
            fail("%s: #%d is %s, the file says %s" % (desc, i, act, e["action"]))
        if e["action"] != "oom" and int(addr, 16) != e["addr"]:
            fail("%s: #%d address %s, the file says %#x" % (desc, i, addr, e["addr"]))
    return got
MiB = 1 << 20
# no filter: consecutive events, the cursor's among them
g = check("all.screen", lambda e: True, "all")
if g and (at not in g or g != list(range(g[0], g[0] + len(g)))):
    fail("all: rows %r are not the events around #%d" % (g, at))
check("big.screen", lambda e: e["action"] == "alloc" and e["size"] > MiB,
      "alloc >1M")
def frames_have(e, base, line):
    return any(fr["filename"].endswith(base) and fr["line"] == line
               for fr in e.get("frames", []))
g = check("text.screen", lambda e: e["action"] == "alloc" and
          frames_have(e, "memory_leaks_demo.py", 12), "text")
want = [i for i, e in enumerate(tr) if e["action"] == "alloc" and
        frames_have(e, "memory_leaks_demo.py", 12)]
if g != want:
    fail("text: %r, the file has %r" % (g, want))
check("range.screen", lambda e: e["action"] in ("free_requested", "free_completed")
      and 4096 <= e["size"] <= 2 * MiB and e["stream"] == 1276474240, "range")
A = 0x12d321e10010
check("addr.screen", lambda e: e["action"] != "oom" and
      e["addr"] <= A < e["addr"] + max(e["size"], 1), "address")
allocs = [i for i, e in enumerate(tr) if e["action"] == "alloc"]
g = rows("last.screen")
if not g or g[-1][0] != allocs[-1]:
    fail("G: last row %r, the last alloc is #%d" % (g[-1:], allocs[-1]))
# two up from the last alloc, then Enter: the cursor is there
want = "#{:,}".format(allocs[-3])
if not any(re.match("─ (Active Memory )?Timeline - dev 0 - %s " % want, l)
           for l in screen("enter.screen")):
    fail("Enter did not move the cursor to %s" % want)
if "(no matching event in #0..#{:,})".format(len(tr) - 1) not in \
        "\n".join(screen("none.screen")):
    fail("oom filter: no 'no matching event' line")
if "filter: bad size in '5X..3M'" not in status("bad.screen"):
    fail("bad filter: " + status("bad.screen"))
if "all (& filters)" not in [l for l in screen("clear.screen")
                             if l.startswith("─ Events")][0]:
    fail("an empty filter does not clear it")
sys.exit(0 if ok else 1)
