#!/usr/bin/env python3
"""The rank screens' help against the sources (tests/ranks/help.test).

    rank_help.py SRCDIR SCREEN

SCREEN is the help of the rank screens dumped at 80x24. Every entry of
their help groups (src/tui/ranks_overview.c, ranks_compare.c,
ranks_grid.c) is on it:
its keys, taken from the action table (src/tui/actions.h) as the help
shows them, then the start of its text; every action of the rank
keymaps (KM_RANKS, KM_COMPARE) is named by some entry, so none falls to
"More"; and no line is wider than the screen. Prints what is wrong;
exit status 1 then.
"""
import re
import sys


def shown(k1, k2):
    k = k2 if k1.startswith('<') and k2 and not k2.startswith('<') else k1
    return k[1:-1] if k.startswith('<') and len(k) > 2 else k


def main():
    src, screen = sys.argv[1:]
    keys, ranks = {}, set()
    table = open(src + '/src/tui/actions.h').read()
    for m in re.finditer(r'_\((ACT_[A-Z_]+), "[a-z-]+", "([^"]*)", '
                         r'"([^"]*)", ([A-Z_| ]+),', table):
        keys[m.group(1)] = shown(m.group(2), m.group(3))
        if re.search(r'\bKM_(RANKS|COMPARE|ALL)\b', m.group(4)):
            ranks.add(m.group(1))
    if len(ranks) < 10:
        print('the rank keymaps were not found in actions.h')
        return 1
    entries = []
    for f in ('ranks_overview.c', 'ranks_compare.c', 'ranks_grid.c'):
        text = open(src + '/src/tui/' + f).read()
        for acts, strs in re.findall(r'\{\{([A-Z_, ]+)\},\s*((?:"[^"]*"\s*)+)\}',
                                     text):
            entries.append(([a.strip() for a in acts.split(',')],
                            ''.join(re.findall(r'"([^"]*)"', strs))))
    if len(entries) < 15:
        print('the help entries were not found in ranks_*.c')
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
