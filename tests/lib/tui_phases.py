#!/usr/bin/env python3
"""tests/tui/phases.test: the viewer's phases on gensnap's rl scenario
against its truth (contrib/gensnap_rl.py).

usage: tui_phases.py WORKDIR TRUTH_JSON N
The spans under the axis name the phases; ' goes to the first instance
(its start, named on the status line); the phase view's title names the
planted leak's phase and bytes per iteration, and its export (w) has
every instance's events, peak and where it falls, what it leaves behind
and the reserved bytes at its end (phases_truth.py view); W on instance
N (in event order) makes it the leak window, and the leak view (U) then
lists exactly the sites that instance leaves behind.
"""
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import phases_truth  # noqa: E402

work, truth = sys.argv[1], json.load(open(sys.argv[2]))
n = int(sys.argv[3])
errors = phases_truth.errors


def screen(name):
    return open(os.path.join(work, name)).read().split("\n")


def fail(m):
    errors.append(m)


insts = sorted(truth["phases"], key=lambda t: (t["first_event"],
                                              -t["last_event"]))
# the spans: a row under the axis with the phases' names
start = screen("start.screen")
if not any("\u251crollout" in line for line in start):
    fail("no rollout span under the axis")
# ' from the start of the trace: the first instance
first = insts[0]
status = screen("jump.screen")[-2]
want = "%s #0: #%s..#%s (1 of %d)" % (
    first["phase"], "{:,}".format(first["first_event"]),
    "{:,}".format(first["last_event"]), len(insts))
if want not in status:
    fail("' says %r, not %r" % (status.strip(), want))
# the view's title names the leak
leak = truth["leak"]
title = [line for line in screen("view.screen") if "Phases - " in line]
want = "grows %s/iteration in %s" % (phases_truth.size(
    leak["per_iteration_requested"]), leak["phase"])
if not title or want not in title[0]:
    fail("the phase view's title %r lacks %r" % (title, want))
phases_truth.check_view(open(os.path.join(work, "phases.txt")).read(),
                        truth)
# W on instance n, then U: the leaks of that window are what it leaves
inst = insts[n]
lines = open(os.path.join(work, "leaks.txt")).read().split("\n")
head = "Leaks in #{:,}..#{:,} - ".format(inst["first_event"],
                                         inst["last_event"])
if not lines[0].startswith(head):
    fail("the leak view's title %r, not %r" % (lines[0], head))
sites = {}
for line in lines[2:]:
    m = re.match(r"^ *\d+ +\S+ +([\d,]+) +\S+  .{10} (.*)$", line)
    if m:
        sites[m.group(2)] = int(m.group(1).replace(",", ""))
if sorted(sites) != sorted(inst["left_sites"]):
    fail("the leak view of %s #%d lists %r, it leaves %r" % (
        inst["phase"], inst["iteration"], sorted(sites),
        sorted(inst["left_sites"])))
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
