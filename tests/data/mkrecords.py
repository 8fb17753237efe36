#!/usr/bin/env python3
"""Writes the pickles of tests/data/records/, lists of dicts for the
reader's records (pkl_sink.take_record in src/pickle/pkl_reader.h), used
by tests/unit/check_pickle.c.

Standard library only, deterministic. Every dict of the list is a record;
each covers one shape the reader reads whole or leaves to its general
path. framed.pickle is p4.pickle with a FRAME opcode before every opcode
(a pickler may start a frame between any two objects, so inside a record
too). bad.pickle has a record the test's sink refuses (key 'bad');
bad.at holds the offset of that record's SETITEMS, where the error must
point. whole.pickle and whole-p2.pickle have only records read whole; again.pickle refers to a
record from the memo after it was taken.

usage: mkrecords.py [OUTDIR]
"""
import os
import pickle
import pickletools
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "records")

F1 = {"name": "f1", "line": 1}
F2 = {"name": "f2", "line": 2}
L = [F1, F2]
RECORDS = [
    {"a": 1, "b": "x", "fr": [F1, F2]},  # frame dicts made here
    {"a": 2, "b": "x", "fr": L},         # a new list of known frames
    {"a": 3, "fr": []},                  # an empty list
    {"a": 4, "n": {"x": 1}},             # a dict inside
    {"a": 5, "fr": [F2]},                # one item: item APPEND
    {"a": 6, "fr": L},                   # the same list again
    {"a": -7, "big": 2**70, "t": True, "f": False, "n": None,
     "s": "y" * 300, "u": 2**64 - 1, "neg": -2**40, "i2": 1000,
     "i4": 100000},                      # every scalar opcode
    {"f": 1.5, "s": "x" * 300},          # a float, a long string
    {"only": 1},                         # one key: SETITEM
    {},                                  # never filled
    {"a": 11, "b": "x"},
]


def framed(data):
    """data with an empty FRAME before every opcode but PROTO."""
    ops = list(pickletools.genops(data))
    out = bytearray()
    for i, (op, _, pos) in enumerate(ops):
        end = ops[i + 1][2] if i + 1 < len(ops) else len(data)
        if op.name == "FRAME":
            continue
        if op.name != "PROTO":
            out += b"\x95" + bytes(8)
        out += data[pos:end]
    return bytes(out)


def main():
    os.makedirs(OUT, exist_ok=True)
    p4 = pickle.dumps(RECORDS, protocol=4)
    bad = pickle.dumps([{"a": 1}, {"bad": 1, "a": 2}, {"a": 3}], protocol=4)
    whole = [{"a": 1, "b": "x", "fr": []}, {"a": 2, "b": "x"}, {}]
    d = {"a": 1}
    again = pickle.dumps([d, {"again": d}], protocol=4)
    files = {
        "p4.pickle": p4,
        "p2.pickle": pickle.dumps(RECORDS, protocol=2),
        "framed.pickle": framed(p4),
        "bad.pickle": bad,
        "whole.pickle": pickle.dumps(whole, protocol=4),
        "whole-p2.pickle": pickle.dumps(whole, protocol=2),
        "again.pickle": again,
    }
    at = [pos for op, _, pos in pickletools.genops(bad)
          if op.name == "SETITEMS"][0]
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    with open(os.path.join(OUT, "bad.at"), "w") as f:
        f.write("%d\n" % at)


if __name__ == "__main__":
    main()
