#!/usr/bin/env python3
"""Checks `snapview ranks --json` against the truth gensnap wrote for the
set (ranks.truth.json): the rank that peaked, every rank's peak, its event
and its reserved memory at the end, the median and the skew, the leaking
rank and its site (the only rank with a leak suspect), the OOM rank (the
only one with oom events).

usage: truth.py RANKS.json RANKS.truth.json
"""
import json
import sys


def main():
    got = json.load(open(sys.argv[1]))
    truth = json.load(open(sys.argv[2]))
    bad = []

    def expect(what, have, want):
        if have != want:
            bad.append('%s: %r, truth %r' % (what, have, want))

    rows = {r['rank']: r for r in got['rows'] if r['device'] == 0}
    expect('ranks', sorted(rows), list(range(truth['ranks'])))
    expect('ranks_from', got['ranks_from'], 'names')
    expect('failed', got['failed'], 0)
    expect('peak_rank', got['peak_rank'], truth['peak_rank'])
    expect('peak', got['peak'], truth['peak'])
    expect('median_peak', got['median_peak'], int(truth['median_peak']))
    if abs(got['skew'] - truth['skew']) > 1e-3:
        bad.append('skew %r, truth %r' % (got['skew'], truth['skew']))
    peaks = [r['peak'] for r in got['rows']]
    expect('rows sorted by peak', peaks, sorted(peaks, reverse=True))
    for t in truth['per_rank']:
        r = rows.get(t['rank'])
        if r is None:
            continue
        name = 'rank %d' % t['rank']
        expect(name + ' file', r['file'].rsplit('/', 1)[-1], t['file'])
        expect(name + ' events', r['events'], t['events'])
        expect(name + ' peak', r['peak'], t['peak'])
        expect(name + ' peak_event', r['peak_event'], t['peak_event'])
        expect(name + ' reserved_end', r['reserved_end'], t['reserved'])
        if 'steps' in t:
            # the truth counts whole steps; the OOM rank's trace ends
            # inside one more (its oom.during_step), which the analysis
            # counts as a cut step
            expect(name + ' steps', r['steps'], t['steps'] +
                   (1 if t['role'] == 'oom' else 0))
            expect(name + ' complete steps', r['complete_steps'],
                   t['steps'])
        leak = r['leak_suspect']
        if t['role'] == 'leak':
            if leak is None:
                bad.append(name + ': the leaking rank has no suspect')
            else:
                if truth['leak']['site'] not in leak['site']:
                    bad.append('%s: suspect %r, truth %r' % (
                        name, leak['site'], truth['leak']['site']))
                expect(name + ' leak per step', leak['per_step_bytes'],
                       truth['leak']['per_step_requested'])
        elif leak is not None:
            bad.append('%s (%s) has a leak suspect: %r' % (
                name, t['role'], leak['site']))
        expect(name + ' ooms > 0', r['ooms'] > 0, t['role'] == 'oom')
    for b in bad:
        print('FAIL:', b)
    print('%d ranks checked, %d problems' % (len(rows), len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
