#!/usr/bin/env python3
"""The viewer's grid of a run directory against gensnap's run truth
(tests/runs/tui.test, screen.test).

    grid.py rows TRUTH SCREEN   each rank's row of the grid (the lines
                                after its head, " rank  step 1 ..."):
                                its rank, then each
                                step's peak as the viewer writes it, !
                                after the OOM dump's, "empty" for the
                                empty file; the shade glyphs are ignored
    grid.py size BYTES          BYTES as the commands write sizes

Prints what differs; exit status 1 then.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svfmt import size_short  # noqa: E402
from truth import size  # noqa: E402


def rows(truth, screen):
    t = json.load(open(truth))
    lines = open(screen, encoding='utf-8').read().split('\n')
    ok = True
    head = [i for i, ln in enumerate(lines) if ln.startswith(' rank  step')]
    if not head:
        print('no head line " rank  step ..." on the screen')
        return 1
    first = head[0] + 1
    for r in range(t['ranks']):
        row = sorted((c for c in t['cells'] if c['rank'] == r),
                     key=lambda c: c['step'])
        want = ['empty' if c['empty'] else
                size_short(c['peak']) + ('!' if c['oom'] else '')
                for c in row]
        have = re.sub('[\u2591\u2592\u2593\u2588]', ' ',
                      lines[first + r]).split() \
            if first + r < len(lines) else []
        if have != [str(r)] + want:
            print('rank %d: %r, truth %r' % (r, have, [str(r)] + want))
            ok = False
    return 0 if ok else 1


def main():
    if len(sys.argv) == 4 and sys.argv[1] == 'rows':
        return rows(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == 'size':
        print(size(int(sys.argv[2])))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main())
