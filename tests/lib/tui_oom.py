#!/usr/bin/env python3
"""tests/tui/oom.test: the OOM view (X), written whole, and the oom
event's detail header against `snapview oom --json`.

usage: tui_oom.py WORKDIR
"""
import json, os, re, sys
work = sys.argv[1]
o = json.load(open(os.path.join(work, "oom.json")))["devices"][0]["ooms"][0]
ok = True
def fail(m):
    global ok
    print("FAIL: " + m); ok = False
def screen(name):
    return open(os.path.join(work, name)).read().split("\n")
def size(n):
    for u, s in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << s:
            return "%.1f %s" % (n / (1 << s), u)
    return "%d B" % n
ev = "#{:,}".format(o["event"])
if not any(l.startswith("─ Timeline - dev 0 - %s " % ev) for l in screen("open.screen")):
    fail("X did not move the cursor to the OOM %s" % ev)
if not any(l.startswith("─ OOM 1/1 @ %s - request %s - %s" % (ev, size(o["request"]),
           "retried" if o["retry_event"] >= 0 else "failed"))
           for l in screen("open.screen")):
    fail("title: %r" % [l for l in screen("open.screen") if "OOM" in l])
text = open(os.path.join(work, "oom.txt")).read()
flat = re.sub(r"\s+", " ", text)
for want in ("request %s (rounded), stream %d" % (size(o["request"]), o["stream"]),
             "device free %s" % size(o["device_free"]),
             "%s reserved, %s allocated" % (size(o["reserved"]), size(o["allocated"])),
             "requested at %s" % o["request_site"]["site"],
             "(%s pool)" % o["request_pool"],
             "%s free in the %s pool of stream %d, largest block %s" % (
                 size(o["pool_free"]), o["request_pool"], o["stream"],
                 size(o["pool_largest_free_block"]))):
    if want not in flat:
        fail("oom.txt lacks %r" % want)
if (o["retry_event"] < 0) != ("the request failed" in flat):
    fail("retry line")
for c in o["causes"]:
    if re.sub(r"\s+", " ", c["text"]) not in flat:
        fail("oom.txt lacks the cause %r" % c["text"][:40])
for s in o["streams"]:
    want = "stream %d %d segments, %s reserved, %s free, largest free block %s" % (
        s["stream"], s["segments"], size(s["reserved"]), size(s["free"]),
        size(s["largest_free_block"]))
    if want not in flat:
        fail("oom.txt lacks %r" % want)
for s in o["live_sites"]:
    row = [l for l in text.split("\n") if l.endswith("  " + s["site"])]
    if not row or int(row[0].split()[2].replace(",", "")) != s["count"]:
        fail("live site %s (%d blocks): %r" % (s["site"], s["count"], row))
if "no later OOM" not in screen("next.screen")[-2]:
    fail("]: " + screen("next.screen")[-2])
# the last row is a live site: the detail pane shows a live site's stack
if not any(l.startswith("─ A live site's stack at the OOM %s" % ev)
           for l in screen("live.screen")):
    fail("G: no live site's stack")
# the detail header of the oom event itself, once the view is closed
if not any(l.startswith("─ Event %s oom - request %s, device free %s " %
           (ev, size(o["request"]), size(o["device_free"])))
           for l in screen("closed.screen")):
    fail("oom event header: %r" % [l for l in screen("closed.screen") if l.startswith("─ Event")])
sys.exit(0 if ok else 1)
