#!/usr/bin/env python3
"""The viewer's simulated state pane (D) against `snapview whatif --at N
--json` (tests/screen/whatif_state.test).

usage: whatif_screen.py SCREEN STATE.json NAME

The state pane's title names the settings ("simulated: NAME @ #N") and
the event of the state listed; where it shows reserved ("res X") it is
the simulator's, as the viewer writes sizes; the pane's rows are the
simulated segments, in address order, each with its size (as many as
the pane has rows for).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svfmt import size_short  # noqa: E402


def main(argv):
    if len(argv) != 4:
        print(__doc__)
        return 2
    with open(argv[1], encoding='utf-8') as f:
        lines = f.read().split('\n')
    with open(argv[2]) as f:
        st = json.load(f)['devices'][0]
    name = argv[3]
    errs = []
    head = 'simulated: %s @ #%s' % (name, format(st['at'], ','))
    top = [i for i, l in enumerate(lines) if head in l]
    if len(top) != 1:
        print('  no title %r on the screen' % head)
        return 1
    title = lines[top[0]]
    res = 'res %s' % size_short(st['totals']['reserved'])
    if ' res ' in title and res not in title:
        errs.append('title %r: not %r' % (title, res))
    rows = []
    for l in lines[top[0] + 1:]:
        if l.startswith('─'):
            break
        if l.startswith('0x'):
            rows.append(l.split())
    segs = st['segments']
    if not rows or len(rows) > len(segs):
        errs.append('%d rows for %d segments' % (len(rows), len(segs)))
    for r, sg in zip(rows, segs):
        if r[1] != size_short(sg['total_size']):
            errs.append('row %r: size is not %s' %
                        (' '.join(r), size_short(sg['total_size'])))
        if sg['is_expandable'] and 'E' not in r[3:-2]:
            errs.append('row %r: no E flag' % ' '.join(r))
    if len(rows) < len(segs) and len(rows) < 3:
        errs.append('only %d rows shown' % len(rows))
    for e in errs:
        print('  ' + e)
    return 1 if errs else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
