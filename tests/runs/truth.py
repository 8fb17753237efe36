#!/usr/bin/env python3
"""Checks `snapview ranks` on a run directory against the truth gensnap
--run-dir wrote (run.truth.json): every cell's state and figures (peak,
its event, reserved and allocated at the dump, events), the OOM dump, the
empty file, the one growing site (the leaking rank's, its bytes a step,
its blocks kept from dump to dump), and at each step the ranks above the
median rank with the site that makes the difference; in the JSON's "run"
object and in the text.

usage: truth.py TRUTH RUN.json RUN.txt
"""
import json
import re
import sys

MiB = 1048576


def size(b):
    """sv_fmt_size: "512 B", "1.5 KiB", "91.1 MiB" (src/util/units.c)."""
    if b < 1024:
        return '%d B' % b
    for u, name in enumerate(('KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB')):
        d = 1 << (10 * (u + 1))
        t = b // d * 10 + (b % d * 10 + d // 2) // d
        if t < 10240:
            return '%d.%d %s' % (t // 10, t % 10, name)
    return '%d B' % b


def main():
    truth = json.load(open(sys.argv[1]))
    got = json.load(open(sys.argv[2]))
    text = open(sys.argv[3]).read()
    bad = []

    def expect(what, have, want):
        if have != want:
            bad.append('%s: %r, truth %r' % (what, have, want))

    run = got.get('run')
    if run is None:
        print('no "run" object: the directory was not taken for a run')
        return 1
    expect('ranks', run['ranks'], list(range(truth['ranks'])))
    expect('steps', run['steps'], list(range(1, truth['steps'] + 1)))
    cells = {(c['rank'], c['step']): c for c in run['cells']}
    for t in truth['cells']:
        key = (t['rank'], t['step'])
        name = 'rank %d step %d' % key
        c = cells.get(key)
        if c is None:
            bad.append(name + ': no cell')
            continue
        expect(name + ' file', c['file'], t['file'])
        if t['empty']:
            expect(name + ' state', c['state'], 'empty')
            continue
        expect(name + ' state', c['state'], 'OOM' if t['oom'] else 'dump')
        for k in ('peak', 'peak_event', 'reserved', 'allocated', 'events'):
            expect('%s %s' % (name, k), c.get(k), t[k])
        expect(name + ' ooms', c.get('ooms'), 1 if t['oom'] else 0)
    o, e = truth['oom'], truth['empty']
    expect('OOM dumps', run['oom_dumps'], 1)
    expect('empty files', run['empty_files'], 1)
    expect('OOM cell', cells[(o['rank'], o['step'])]['state'], 'OOM')
    expect('empty cell', cells[(e['rank'], e['step'])]['state'], 'empty')
    line = '  rank %d step %d: %s: empty file (a dump that did not finish?)' \
        % (e['rank'], e['step'], e['file'])
    if line not in text.split('\n'):
        bad.append('text: no line %r' % line)

    # growth: the leaking rank's site and nothing else
    lk = truth['leak']
    label = '%s %s' % (lk['site'], lk['name'])
    steps = sorted(c['step'] for c in truth['cells']
                   if c['rank'] == lk['rank'] and not c['empty'] and
                   not c['oom'])
    expect('growing sites', [(g['rank'], g['site'].endswith(label))
                             for g in run['growth']], [(lk['rank'], True)])
    for g in run['growth'][:1]:
        expect('leak bytes a step', g['per_step_bytes'], lk['per_step_bytes'])
        expect('leak first step', g['first_step'], steps[0])
        expect('leak last step', g['last_step'], steps[-1])
        expect('leak bytes at the last dump', g['bytes_last'],
               lk['per_step_bytes'] * steps[-1])
        expect('leak blocks kept', g['kept_blocks'], g['blocks_last'] - 1)
        expect('leak oldest block', g['oldest_step'], 1)
    pat = r'^  rank %d grows %s a step at \S*%s$' % (
        lk['rank'], re.escape(size(lk['per_step_bytes'])), re.escape(label))
    if not re.search(pat, text, re.M):
        bad.append('text: no growth line for rank %d' % lk['rank'])

    # skew: per step, the ranks above the median and the heavy site
    hv = truth['heavy']
    hlabel = '%s %s' % (hv['site'], hv['name'])
    got_skew = {s['step']: s for s in run['skew']}
    for t in truth['skew']:
        s = got_skew.get(t['step'])
        name = 'step %d' % t['step']
        if s is None:
            bad.append(name + ': no skew')
            continue
        expect(name + ' median', s['median_allocated'], t['median_allocated'])
        expect(name + ' heavier', sorted((h['rank'], h['excess'])
                                         for h in s['heavier']),
               sorted((h['rank'], h['excess']) for h in t['heavier']))
        for h in s['heavier']:
            if h['rank'] != hv['rank']:
                continue
            top = h['sites'][0] if h['sites'] else {}
            if not top.get('site', '').endswith(hlabel):
                bad.append('%s: heavy rank\'s first site %r, truth %r' %
                           (name, top.get('site'), hlabel))
            expect(name + ' heavy site bytes', top.get('bytes'), hv['bytes'])
            pat = r'^  step %d: rank %d .*\n    \+%s \S*%s$' % (
                t['step'], hv['rank'], re.escape(size(hv['bytes'])),
                re.escape(hlabel))
            if not re.search(pat, text, re.M):
                bad.append('text: no skew lines for rank %d at %s' %
                           (hv['rank'], name))
    if not any(h['rank'] == hv['rank'] for s in run['skew']
               for h in s['heavier']):
        bad.append('the heavy rank is above the median at no step')

    # the grid: each rank's peaks, in text
    for r in range(truth['ranks']):
        row = sorted((c for c in truth['cells'] if c['rank'] == r),
                     key=lambda c: c['step'])
        want = ' '.join('empty' if c['empty'] else
                        size(c['peak']) + ('*' if c['oom'] else '')
                        for c in row[:6])
        m = re.search(r'^ +%d  +(\S.*)$' % r, text, re.M)
        have = re.sub(r' +', ' ', m.group(1)).replace(' MiB*', ' MiB*') \
            if m else None
        expect('grid row of rank %d' % r, have, want)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
