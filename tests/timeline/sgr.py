#!/usr/bin/env python3
"""Turns `tmux capture-pane -e -p` output (text with SGR escapes) into a
golden that shows colours: the text rows, then the same rows with one
letter per cell naming its style ('.' = the terminal's default), then
the key of the letters. Styles are named in order of first appearance,
so a golden only changes when what is drawn changes.

usage: sgr.py < capture > golden
       sgr.py --styles < capture     (distinct styles of plot band cells)
       sgr.py --hues < capture       (the same told apart without bold)
"""
import re
import sys

SGR = re.compile(r"\x1b\[([0-9;:]*)m")
BANDS = set("\u2588\u2592\u259e\u258c\u2590\u2599\u259c\u2596"
            "\u2591\u2593\u259a#%=+ox&$:@!")


def apply(st, params):
    """Applies SGR parameters to the style dict st."""
    p = [int(x) if x else 0 for x in re.split(r"[;:]", params)] or [0]
    i = 0
    while i < len(p):
        c = p[i]
        if c == 0:
            st.clear()
        elif c in (1, 2, 4, 7):
            st[{1: "bold", 2: "dim", 4: "underline", 7: "reverse"}[c]] = 1
        elif c == 22:
            st.pop("bold", None)
            st.pop("dim", None)
        elif c in (24, 27):
            st.pop({24: "underline", 27: "reverse"}[c], None)
        elif 30 <= c <= 37 or 90 <= c <= 97:
            st["fg"] = c - 30 if c < 90 else c - 82
        elif 40 <= c <= 47 or 100 <= c <= 107:
            st["bg"] = c - 40 if c < 100 else c - 92
        elif c in (39, 49):
            st.pop("fg" if c == 39 else "bg", None)
        elif c in (38, 48) and i + 2 < len(p) and p[i + 1] == 5:
            st["fg" if c == 38 else "bg"] = p[i + 2]
            i += 2
        i += 1


def parse(text):
    """Rows of (char, style key) cells."""
    rows = []
    st = {}
    for line in text.split("\n"):
        cells, pos = [], 0
        for m in SGR.finditer(line):
            for ch in line[pos:m.start()]:
                cells.append((ch, tuple(sorted(st.items()))))
            apply(st, m.group(1))
            pos = m.end()
        for ch in line[pos:]:
            cells.append((ch, tuple(sorted(st.items()))))
        rows.append(cells)
    while rows and not rows[-1]:
        rows.pop()
    return rows


def golden(rows):
    names, out_t, out_s = {(): "."}, [], []
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for cells in rows:
        # trailing blanks in the default style are not part of the screen
        while cells and cells[-1][0] == " " and cells[-1][1] == ():
            cells = cells[:-1]
        for _, s in cells:
            if s not in names:
                names[s] = letters[len(names) - 1] if len(names) <= 52 \
                    else "?"
        out_t.append("".join(c for c, _ in cells))
        out_s.append("".join(names[s] for _, s in cells))
    key = ["%s %s" % (n, " ".join("%s=%s" % kv for kv in s) or "default")
           for s, n in names.items()]
    return "\n".join(out_t + ["--- styles"] + out_s + ["--- key"] + key) + "\n"


def band_styles(rows):
    """Distinct looks (glyph and colours; the cursor column's reverse
    video left out) of band cells in the plot rows, from the second row
    to the x axis row."""
    seen = set()
    for cells in rows[1:]:
        text = "".join(c for c, _ in cells)
        if re.match(r"^\s*[\u2514+]", text):
            break
        for ch, s in cells[7:]:
            if ch in BANDS:
                seen.add((ch, tuple(kv for kv in s if kv[0] != "reverse")))
    return seen


def band_hues(rows):
    """Distinct looks of band cells told apart without bold: glyph and
    colours, bold (and the cursor's reverse video) left out."""
    return {(ch, tuple(kv for kv in s if kv[0] != "bold"))
            for ch, s in band_styles(rows)}


def main():
    rows = parse(sys.stdin.read())
    if sys.argv[1:] == ["--styles"]:
        print(len(band_styles(rows)))
    elif sys.argv[1:] == ["--hues"]:
        print(len(band_hues(rows)))
    else:
        sys.stdout.write(golden(rows))


if __name__ == "__main__":
    main()
