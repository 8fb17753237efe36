#!/usr/bin/env python3
"""Prints, one hexadecimal number a line, every code point snapview must
show escaped as invisible (doc/SECURITY.md, promise 3), derived here from
Unicode's own data, apart from the table in src/util/invisible.h:

  Default_Ignorable_Code_Point (DerivedCoreProperties.txt),
  Noncharacter_Code_Point (PropList.txt), general categories Cf, Zl, Zp,
  Co (private use), and Zs but U+0020 (UnicodeData.txt), U+2800.

From /usr/share/unicode (Debian's unicode-data) when it is there; else
from Python's unicodedata, which has the categories but not the
Default_Ignorable property: that set is then the categories plus the
best-known default-ignorable ranges (U+E0000..E0FFF, variation
selectors, fillers) and the noncharacters by their rule (U+FDD0..FDEF,
the last two of every plane), and the first line says "partial": the
check is then that each is escaped, not that nothing else is. Exit 77
when neither is available.
"""
import os
import sys

UDIR = "/usr/share/unicode"


def prop_points(name, prop):
    pts = set()
    for line in open(os.path.join(UDIR, name), encoding="utf-8"):
        line = line.split("#")[0].strip()
        if not line:
            continue
        rng, p = [f.strip() for f in line.split(";")]
        if p == prop:
            a = rng.split("..")
            pts.update(range(int(a[0], 16), int(a[-1], 16) + 1))
    return pts


def from_files():
    pts = prop_points("DerivedCoreProperties.txt",
                      "Default_Ignorable_Code_Point")
    pts |= prop_points("PropList.txt", "Noncharacter_Code_Point")
    first = None
    for line in open(os.path.join(UDIR, "UnicodeData.txt"), encoding="utf-8"):
        f = line.split(";")
        cp, cat = int(f[0], 16), f[2]
        # ranges are given as <..., First> / <..., Last> pairs
        if f[1].endswith("First>"):
            first = cp
            continue
        lo = first if f[1].endswith("Last>") else cp
        first = None
        if cat in ("Cf", "Zl", "Zp", "Co") or (cat == "Zs" and cp != 0x20):
            pts.update(range(lo, cp + 1))
    return pts


def from_python():
    import unicodedata
    pts = set()
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        if cat in ("Cf", "Zl", "Zp", "Co") or (cat == "Zs" and cp != 0x20):
            pts.add(cp)
    # default-ignorable by rule (the core of the derived property)
    pts.update(range(0xE0000, 0xE1000))
    pts.update(range(0xFE00, 0xFE10))
    pts.update([0x34F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x17B4, 0x17B5])
    pts.update(range(0x180B, 0x1810))
    # noncharacters, by their rule
    pts.update(range(0xFDD0, 0xFDF0))
    for plane in range(17):
        pts.update([plane << 16 | 0xFFFE, plane << 16 | 0xFFFF])
    return pts


def main():
    if os.path.exists(os.path.join(UDIR, "DerivedCoreProperties.txt")):
        pts = from_files()
        print("# from %s" % UDIR)
    else:
        try:
            pts = from_python()
        except ImportError:
            print("# no Unicode data")
            return 77
        print("# partial: from Python's unicodedata %s (no "
              "Default_Ignorable property)"
              % __import__("unicodedata").unidata_version)
    pts.add(0x2800)
    for cp in sorted(pts):
        print("%x" % cp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
