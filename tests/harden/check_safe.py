#!/usr/bin/env python3
"""Checks program output for raw terminal controls (issue 9).

usage: check_safe.py text FILE...         no raw controls in any FILE
       check_safe.py json HOSTILE.json OUT  same, plus the JSON from
                                            `stats --json` round-trips the
                                            hostile strings exactly

Forbidden: ESC, BEL, every C0 control except newline and tab, DEL, C1
controls as code points (U+0080..U+009F, e.g. U+009B = CSI) and raw bytes
that are not valid UTF-8 (an 8-bit terminal reads a lone 0x9b as CSI).
"""
import json
import sys


def bad_chars(data):
    text = data.decode("utf-8", errors="surrogateescape")
    out = []
    for i, ch in enumerate(text):
        c = ord(ch)
        if (c < 0x20 and ch not in "\n\t") or c == 0x7f or \
                0x80 <= c <= 0x9f or 0xdc80 <= c <= 0xdcff:
            out.append((i, hex(c if c < 0xdc80 else c - 0xdc00)))
    return out


def check_text(path):
    with open(path, "rb") as f:
        data = f.read()
    bad = bad_chars(data)
    if bad:
        print("%s: raw control characters at %s" % (path, bad[:10]))
        return 1
    return 0


def as_written(s):
    """What a str from the pickle is as UTF-8 text once invalid bytes
    are replaced (lone surrogates were written as surrogatepass bytes)."""
    return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def check_json(hostile_path, out_path):
    with open(hostile_path) as f:
        h = json.load(f)
    rc = check_text(out_path)
    with open(out_path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    want_actions = [as_written(h["sgr"])]
    if doc.get("unknown_actions") != want_actions:
        print("unknown_actions %r, want %r" % (doc.get("unknown_actions"),
                                              want_actions))
        rc = 1
    st = doc.get("allocator_settings", {})
    want = {as_written(h["osc52"]): as_written(h["sgr"]),
            "plain": as_written(h["c1"] + h["invalid"])}
    for k, v in want.items():
        if st.get(k) != v:
            print("allocator_settings[%r] = %r, want %r" % (k, st.get(k), v))
            rc = 1
    nested = st.get(as_written(h["bel_cr"]), "")
    if as_written(h["clear"]) not in nested:
        print("nested setting %r lacks %r" % (nested, h["clear"]))
        rc = 1
    return rc


def main():
    if sys.argv[1] == "json":
        return check_json(sys.argv[2], sys.argv[3])
    return max(check_text(p) for p in sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
