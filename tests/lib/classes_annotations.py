#!/usr/bin/env python3
"""Writes a two-step trace whose annotations hold every kind of mistake
(an END without a START, an escape in a name, an unknown stage, a
missing time), for tests/analysis/classes.test.

usage: classes_annotations.py OUT.pickle
"""
import pickle, sys
fr = [{"filename": "/home/a/train.py", "line": 7, "name": "step"}]
trace, t = [], 0
for step in range(2):
    for k in range(3):
        a = 0x7f0000000000 + (step * 3 + k) * 0x100000
        trace.append({"action": "alloc", "addr": a, "size": 1024,
                      "stream": 0, "time_us": t, "frames": fr})
        t += 1
ann = [
    {"name": "Optimizer.step#SGD.step", "stage": "START", "device": 0,
     "time_us": 1},
    {"name": "Optimizer.step#SGD.step", "stage": "END", "device": 0,
     "time_us": 2},
    {"name": "Optimizer.step#SGD.step\x1b[2J", "stage": "END", "device": 0,
     "time_us": 3},
    {"name": "Optimizer.step#SGD.step", "stage": "MIDDLE", "device": 0,
     "time_us": 4},
    {"name": "Optimizer.step#SGD.step", "stage": "START", "device": 0},
    {"name": "Optimizer.step#SGD.step", "stage": "START", "device": 0,
     "time_us": 4},
    {"name": "Optimizer.step#SGD.step", "stage": "END", "device": 0,
     "time_us": 5},
]
pickle.dump({"segments": [], "device_traces": [trace],
             "external_annotations": ann}, open(sys.argv[1], "wb"),
            protocol=4)
