#!/usr/bin/env python3
"""tests/harden/invisible.test: no raw invisible code point (the set
tests/harden/invisible_set.py lists) reaches a command's output or a
screen; JSON output still parses; each NEEDLE (an escaped name, such as
a\\u{e0041}b) is there.

usage: invisible_absent.py SET.txt OUTPUT WHAT [NEEDLE...]
  WHAT  the command (its JSON is parsed when it says --json), or
        "screen" for a dumped screen, which must be valid UTF-8
"""
import json
import sys


def main():
    set_path, path, what = sys.argv[1:4]
    needles = sys.argv[4:]
    inv = {int(l, 16) for l in open(set_path) if not l.startswith("#")}
    errors = "strict" if what == "screen" else "replace"
    text = open(path, encoding="utf-8", errors=errors).read()
    bad = sorted({hex(ord(ch)) for ch in text if ord(ch) in inv})
    missing = [n for n in needles if n not in text]
    if bad or missing:
        print("FAIL: %s: raw invisible code points %s, escaped names "
              "missing %s" % (what, bad, missing))
        if what == "screen":
            print(text)
        return 1
    if "--json" in what:
        json.loads(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
