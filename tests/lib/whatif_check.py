#!/usr/bin/env python3
"""Checks of `snapview whatif` (tests/whatif/whatif.test).

usage: whatif_check.py real WHATIF.json exact|segments|explained
       whatif_check.py pairs WHATIF.json TRUTH.json...
       whatif_check.py planted OOM.json TRUTH_DEFAULT.json
                       TRUTH_EXPANDABLE.json CAPACITY_WHATIF.json
       whatif_check.py peak WHATIF.json NAME
       whatif_check.py at WHATIF.json NAME AT_PEAK.json AT_END.json

real: the agreement under the recorded settings is exact (every segment
allocation and free, every allocation at its recorded address), exact in
its segments only (torch_npu's 16 KiB alignment moves blocks, and the
reasons say so), or not exact but explained (a first difference and at
least one reason).
pairs: for each truth written under other settings (gensnap --alloc-conf)
the column of whatif with the same settings predicts its peak reserved,
its segments at the end and its segment allocations within 1%.
planted: the OOM gensnap planted with --limit is the one oom reports, its
verdict is expandable segments, and the expandable file (same limit) has
no OOM; whatif --capacity LIMIT predicts an OOM under the defaults and
none under expandable segments.
peak: prints the peak event of whatif's column NAME and the last event.
at: whatif --at's simulated state (--json) at that peak and at the last
event agrees with the column's own figures there, and its blocks tile
its segments.
"""
import json
import sys


def dev0(path):
    with open(path) as f:
        d = json.load(f)
    return d['devices'][0]


def close(got, want, what, errs):
    if want == 0 and got == 0:
        return
    if abs(got - want) > 0.01 * max(abs(want), 1):
        errs.append('%s: predicted %d, truth %d' % (what, got, want))


def real(path, want):
    d = dev0(path)
    a = d['agreement']
    errs = []
    if want == 'exact':
        if not a['exact']:
            errs.append('not exact: %s' % a['text'])
        if a['segment_allocs_reproduced'] != a['segment_allocs'] or \
                a['segment_frees_reproduced'] != a['segment_frees']:
            errs.append('segment actions differ')
        if a['allocations_at_recorded_address'] != a['allocations']:
            errs.append('allocations placed elsewhere')
    elif want == 'segments':
        if not a['exact']:
            errs.append('segments not exact: %s' % a['text'])
        if not any(r['reason'] == 'npu' for r in a['reasons']):
            errs.append('no torch_npu reason')
    else:
        if a['exact'] and \
                a['allocations_at_recorded_address'] == a['allocations']:
            errs.append('exact on an inconsistent file')
        if not a['reasons']:
            errs.append('not exact, and no reason given')
    for c in d['columns']:
        if c['peak_reserved'] < 0 or c['reserved_at_end'] < 0:
            errs.append('negative figures')
    return errs


def pairs(path, truths):
    d = dev0(path)
    cols = {c['settings']: c for c in d['columns'] if not c['recorded']}
    errs = []
    for t in truths:
        with open(t) as f:
            tr = json.load(f)
        w = tr['whatif']
        conf = w['alloc_conf']
        col = None
        for c in d['columns'][1:]:
            if c['name'] == (conf if conf else 'defaults'):
                col = c
        if col is None:
            errs.append('no column for %r (%s)' % (conf, sorted(cols)))
            continue
        td = w['devices'][0]
        close(col['peak_reserved'], td['peak_reserved'],
              '%r peak reserved' % conf, errs)
        close(col['segments_at_end'], td['segments'],
              '%r segments' % conf, errs)
        close(col['device_allocs'], td['device_allocs'],
              '%r segment allocations' % conf, errs)
    if not d['agreement']['exact']:
        errs.append('the file itself is not reproduced: %s' %
                    d['agreement']['text'])
    return errs


def planted(oom_path, tdef, texp, cap_path):
    errs = []
    o = dev0(oom_path)
    with open(tdef) as f:
        td = json.load(f)
    with open(texp) as f:
        te = json.load(f)
    if 'oom' not in td or not td['whatif']['devices'][0]['oom']:
        errs.append('gensnap planted no OOM under the defaults')
        return errs
    if te['whatif']['devices'][0]['oom']:
        errs.append('the expandable file has an OOM too: nothing to show')
    evs = [e['event'] for e in o['ooms']]
    if evs != [td['oom']['event_index']]:
        errs.append('oom events %s, truth %d' % (evs,
                                                 td['oom']['event_index']))
    v = o.get('verdicts', [])
    if len(v) != 1 or v[0]['verdict'] != 'expandable_segments':
        errs.append('verdict %s' % v)
    c = dev0(cap_path)
    by = {col['name']: col for col in c['columns']}
    if by['defaults']['oom'] is None:
        errs.append('whatif --capacity: no OOM under the defaults')
    if by['expandable_segments:True']['oom'] is not None:
        errs.append('whatif --capacity: an OOM under expandable segments')
    return errs


def column(path, name):
    d = dev0(path)
    for c in d['columns']:
        if c['name'] == name:
            return d, c
    raise SystemExit('no column %r in %s' % (name, path))


def peak(path, name):
    """Prints the column's peak event and the last event."""
    d, c = column(path, name)
    print(c['peak_event'], d['events'] - 1)
    return []


def tiles(st, what, errs):
    """The state's own sums: segments tiled by their blocks, totals."""
    reserved = 0
    for sg in st['segments']:
        at = sg['address']
        for b in sg['blocks']:
            if b['address'] != at:
                errs.append('%s: a gap or overlap at %#x' % (what, at))
                return
            at += b['size']
        if at != sg['address'] + sg['total_size']:
            errs.append('%s: blocks do not fill the segment at %#x'
                        % (what, sg['address']))
        reserved += sg['total_size']
    if reserved != st['totals']['reserved']:
        errs.append('%s: segments add up to %d, totals say %d'
                    % (what, reserved, st['totals']['reserved']))


def at(path, name, at_peak, at_end):
    """whatif --at N's state against whatif's own column: at the peak,
    reserved, segments, internal and external waste; at the end, reserved
    and segments."""
    errs = []
    d, c = column(path, name)
    with open(at_peak) as f:
        p = json.load(f)['devices'][0]
    with open(at_end) as f:
        e = json.load(f)['devices'][0]
    for st, what in ((p, 'at the peak'), (e, 'at the end')):
        if not st.get('simulated') or st.get('alloc_conf') != name:
            errs.append('%s: not the simulated state of %r' % (what, name))
        tiles(st, what, errs)
    want = ((p, 'reserved', c['peak_reserved']),
            (p, 'segments', c['segments_at_peak']),
            (p, 'free_internal', c['internal_waste_at_peak']),
            (p, 'free_external', c['external_waste_at_peak']),
            (e, 'reserved', c['reserved_at_end']),
            (e, 'segments', c['segments_at_end']))
    for st, key, v in want:
        if st['totals'][key] != v:
            errs.append('event %d: %s %d, whatif says %d'
                        % (st['at'], key, st['totals'][key], v))
    if p['at'] != c['peak_event'] and c['peak_event'] >= 0:
        errs.append('listed event %d, not the peak %d'
                    % (p['at'], c['peak_event']))
    return errs


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    if argv[1] == 'real':
        errs = real(argv[2], argv[3])
    elif argv[1] == 'pairs':
        errs = pairs(argv[2], argv[3:])
    elif argv[1] == 'planted':
        errs = planted(*argv[2:6])
    elif argv[1] == 'peak':
        errs = peak(argv[2], argv[3])
    elif argv[1] == 'at':
        errs = at(*argv[2:6])
    else:
        print(__doc__)
        return 2
    for e in errs:
        print('  ' + e)
    return 1 if errs else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
