#!/usr/bin/env python3
"""Writes a snapshot whose frame names and one action are made of
invisible code points and look-alikes, for tests/harden/invisible.test.

usage: invisible_pickle.py OUT.pickle
"""
import pickle, sys
A = 0x7F0000000000
sneaky = ["fo\u200bo", "a\U000E0041b", "x\u2028y", "v\ufe0f", "p\u180eq",
          "h\u3164i", "k\u115fl", "g\u034fh", "an\ufff9n", "u\ue000w",
          "z\U0010fffdz", "q\ufdd0r"]
frames = [{"name": n, "filename": "/w/" + n + ".py", "line": 1} for n in sneaky]
ev = [{"action": "segment_alloc", "addr": A, "size": 2 << 20, "stream": 0, "frames": []},
      {"action": "alloc", "addr": A, "size": 512, "stream": 0, "frames": frames},
      {"action": "n\u2029x", "addr": 0, "size": 0, "stream": 0, "frames": []}]
pickle.dump({"segments": [], "device_traces": [ev]}, open(sys.argv[1], "wb"), 4)
