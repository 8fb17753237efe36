#!/usr/bin/env python3
"""tests/harden/cutoff.test: writes every prefix of a snapshot (a dump
cut off at each byte) and the empty file into a directory.

usage: cut_prefixes.py SNAPSHOT.pickle OUTDIR
"""
import os
import sys

src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
for n in range(0, len(data)):
    with open(os.path.join(out, "cut%05d.pickle" % n), "wb") as f:
        f.write(data[:n])
