#!/usr/bin/env python3
"""The rank screens' help against the program's tables
(tests/ranks/help.test).

    rank_help.py SNAPVIEW SCREEN

SCREEN is the help of the rank screens dumped at 80x24. Every entry of
their help page (snapview --list-table help, page "ranks") is on it:
its keys, taken from the action table (snapview --list-table actions)
as the help shows them, then the start of its text; every action of the
rank keymaps (ranks, compare) is named by some entry, so none falls to
"More"; and no line is wider than the screen. Prints what is wrong;
exit status 1 then.
"""
import re
import sys

import svtables


def main():
    binary, screen = sys.argv[1:]
    table = svtables.actions(binary)
    keys = {a: svtables.shown(k1, k2) for a, (k1, k2, _, _) in table.items()}
    ranks = {a for a, row in table.items() if row[2] & {'ranks', 'compare'}}
    if len(ranks) < 10:
        print('too few actions of the rank keymaps')
        return 1
    entries = [(acts, text) for _, acts, text in
               svtables.help_entries(binary, 'ranks')]
    if len(entries) < 15:
        print('too few entries of the rank screens\' help')
        return 1
    lines = open(screen).read().split('\n')
    ok = True
    if not lines[0].startswith('\u2500 Help - ranks '):
        print('not the rank screens\' help: %r' % lines[0])
        ok = False
    for acts, text in entries:
        want = ' '.join(keys[a] for a in acts)
        start = text.split(' ')[0]
        if not any(re.search(r'(^| )%s +%s' % (re.escape(want),
                                              re.escape(start)), l)
                   for l in lines):
            print('no line "%s  %s..."' % (want, start))
            ok = False
    named = {a for acts, _ in entries for a in acts}
    for a in sorted(ranks - named):
        print('%s is bound on a rank screen but no help entry names it' % a)
        ok = False
    if any(l.strip() == 'More' for l in lines):
        print('the help has a More group')
        ok = False
    for l in lines:
        if len(l) > 80:
            print('a line wider than the screen: %r' % l)
            ok = False
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
