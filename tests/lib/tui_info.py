#!/usr/bin/env python3
"""tests/tui/info.test: the info view (I) and the replay warning against
`snapview check --json` and `snapview stats --json`.

usage: tui_info.py WORKDIR
"""
import json, os, re, sys
work = sys.argv[1]
ok = True
def fail(m):
    global ok
    print("FAIL: " + m); ok = False
def load(n):
    return json.load(open(os.path.join(work, n)))
def lines(n):
    return open(os.path.join(work, n)).read().split("\n")
bad = load("bad-check.json")["devices"][0]
n = "{:,}".format(bad["mismatch_count"])
if bad["ok"] or bad["mismatch_count"] == 0:
    fail("the inconsistent file checks OK?")
if "! %s mismatches" % n not in lines("bad-start.screen")[-2]:
    fail("no warning: " + lines("bad-start.screen")[-2])
first = min(m["event"] for m in bad["mismatches"] if isinstance(m["event"], int))
ev = "#{:,}".format(first)
if not any(re.match("─ (Active Memory )?Timeline - dev 0 - %s " % ev, l)
           for l in lines("bad-first.screen")):
    fail("! did not go to %s" % ev)
if not lines("bad-first.screen")[-2].startswith("mismatch 1 of %d at %s: " %
                                                 (bad["mismatch_count"], ev)):
    fail("!: " + lines("bad-first.screen")[-2])
info = "\n".join(lines("bad-info.txt"))
if "Check: INCONSISTENT - %s mismatches" % n not in info:
    fail("bad info: no INCONSISTENT line")
# the consistent file
good = load("good-check.json")["devices"][0]
st = load("good-stats.json")
if not good["ok"]:
    fail("the CUDA file does not check OK")
if "mismatch" in lines("good-start.screen")[-2]:
    fail("a warning on a consistent file: " + lines("good-start.screen")[-2])
info = "\n".join(lines("good-info.txt"))
if "Check: OK" not in info:
    fail("good info: no OK")
for k, v in st["allocator_settings"].items():
    if not re.search(r"^  %s +%s$" % (re.escape(k), re.escape(v or "(empty)")),
                     info, re.M):
        fail("setting %s = %r not listed" % (k, v))
dev = st["devices"][0]
if "Device        0 of 1: {:,} events".format(dev["events"]) not in info:
    fail("events")
for a, c in dev["actions"].items():
    if c and "%s %s" % (a, "{:,}".format(c)) not in info:
        fail("action %s %d not listed" % (a, c))
sys.exit(0 if ok else 1)
