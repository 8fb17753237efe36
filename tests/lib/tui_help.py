#!/usr/bin/env python3
"""tests/tui/help.test: the help's pages hold every entry of the action
table, whole and grouped, at 80x24 on the first page and at 40x20
wrapped, never cut. The keys and texts come from the program's own
tables (snapview --list-table actions and help, svtables.py).

usage: tui_help.py SNAPVIEW WORKDIR
"""
import glob, os, re, sys
import svtables
binary, work = sys.argv[1:]
# entries of the viewer's page: (action names, text)
entries = [(acts, text)
           for _, acts, text in svtables.help_entries(binary, 'viewer')]
assert len(entries) > 20, "too few entries in --list-table help"
# the key each action shows, and the actions of the viewer's keymap (the
# rank screens have their own)
table = svtables.actions(binary)
keys = {a: svtables.shown(k1, k2) for a, (k1, k2, _, _) in table.items()}
viewer = {a for a, row in table.items() if 'view' in row[2]}
ok = True
page = open(os.path.join(work, 'p1.screen')).read().split('\n')
if '- more below: j' not in page[0]:
    print('80x24: the title does not say there is more'); ok = False
for acts, text in entries:
    ks = ' '.join(keys[a] for a in acts)
    hits = [l for l in page if ks + ' ' in l and text in l]
    if not hits:
        print('80x24 first page lacks "%s  %s" on one line' % (ks, text))
        ok = False
# every action of the viewer's keymap is named by some entry
named = {a for acts, _ in entries for a in acts}
assert len(viewer) > 20, "too few actions of the viewer's keymap"
for a in viewer:
    if a not in named and 'More' not in open(os.path.join(work, 'p1.screen')).read():
        print('action %s is in no group and there is no More group' % a)
        ok = False
# scrolled: the legend, and the title says more above
last = open(sorted(glob.glob(os.path.join(work, 's*.screen')))[-1]).read()
if 'Segment map: letters' not in last:
    print('80x24: scrolling does not reach the legend'); ok = False
if '- more above: k' not in last.split('\n')[0]:
    print('80x24: scrolled title does not say more above'); ok = False
# 40x20: every entry text whole once the wrapped lines are joined
# (j scrolls one line: an entry is whole on some page; join per page)
text40 = ''
for p in sorted(glob.glob(os.path.join(work, 'n*.screen'))):
    for l in open(p).read().split('\n')[1:-2]:
        text40 += ' ' + l.strip()
    text40 += ' |'
flat = re.sub(r'\s+', ' ', text40)
for acts, text in entries:
    if text not in flat:
        print('40x20: "%s" is never shown whole' % text); ok = False
for l in open(os.path.join(work, 'n00.screen')).read().split('\n'):
    if len(l) > 40:
        print('40x20: line wider than the screen: %r' % l); ok = False
sys.exit(0 if ok else 1)
