"""gensnap_ranks - one snapshot per rank of a data-parallel job (--ranks N).

Every rank runs the same scenario with its own seed (and, for training,
batches whose length varies a little from step to step), so most ranks
are alike but not identical.  Roles, drawn from --seed:

  * the leaking rank plants the scenario's leak (the others do not leak);
  * the peak rank gets one much longer batch (training: a sequence twice
    as long, the leak scenario: a batch 8 times larger) and peaks above
    every other rank: if it does not, its batch grows until it does;
  * with --ranks-oom, the OOM rank runs under a per-process memory limit
    between an ordinary rank's reserved memory and the peak rank's peak,
    then gets ever longer batches until one fails: its trace ends with an
    `oom` event.

Files: -o DIR (an existing directory, or a path ending in '/') writes
DIR/rank0.pickle ... and DIR/rankN.truth.json; any other -o value is a
prefix (`-o run1-` writes run1-rank0.pickle ...).  The truth of the set
goes to --truth, else to PREFIXranks.truth.json.
"""

import copy
import json
import os
import random
import statistics

from gensnap_alloc import MiB

ROLE_SCENARIOS = ('training', 'leak')


def prefix_of(out):
    if out is None:
        return ''
    if out.endswith('/') or os.path.isdir(out):
        os.makedirs(out, exist_ok=True)
        return os.path.join(out, '')
    d = os.path.dirname(out)
    if d:
        os.makedirs(d, exist_ok=True)
    return out


def roles(n, seed, oom):
    """(leak rank, peak rank, oom rank or None): distinct ranks drawn from
    the seed."""
    pick = random.Random(seed * 7919 + n).sample(range(n), 3 if oom else 2)
    return pick[0], pick[1], pick[2] if oom else None


def rank_params(p, r, role):
    q = copy.copy(p)
    q.seed = p.seed * 1000 + r
    if p.scenario == 'training':
        q.leak = role == 'leak'
        j = p.seq // 128 if p.seq >= 128 else 0
        q.seq_jitter = min(j, (p.seq - 8) // 8) if p.seq > 8 else 0
    else:
        q.no_leak = role != 'leak'
    return q


def peak_step(p):
    """The step that gets the peak rank's long batch: the middle one."""
    return (p.steps - 1) // 2 if p.scenario == 'training' and p.steps else 0


def generate_ranks(p, n, oom, out, truth_path, generate):
    """Writes the n rank files and the set's truth; `generate(params, out,
    truth)` writes one file and returns its simulator."""
    if p.scenario not in ROLE_SCENARIOS:
        raise SystemExit('gensnap: --ranks works with the %s scenarios'
                         % ' and '.join(ROLE_SCENARIOS))
    if n < (3 if oom else 2):
        raise SystemExit('gensnap: --ranks needs at least %d ranks'
                         % (3 if oom else 2))
    if p.max_entries:
        raise SystemExit('gensnap: --ranks with a ring buffer: not modelled')
    prefix = prefix_of(out)
    leak_r, peak_r, oom_r = roles(n, p.seed, oom)
    role = {r: 'normal' for r in range(n)}
    role[leak_r], role[peak_r] = 'leak', 'peak'
    if oom_r is not None:
        role[oom_r] = 'oom'
    files = ['%srank%d.pickle' % (prefix, r) for r in range(n)]
    truths = ['%srank%d.truth.json' % (prefix, r) for r in range(n)]
    result = {}
    reserved = []                   # ordinary ranks' peak reserved bytes

    def run(r, q):
        sim = generate(q, files[r], truths[r])
        with open(truths[r]) as f:
            result[r] = json.load(f)
        return sim
    for r in range(n):
        if role[r] in ('normal', 'leak'):
            sim = run(r, rank_params(p, r, role[r]))
            if role[r] == 'normal':
                reserved.append(sim.devs[0].peak_reserved)
    others = max(result[r]['devices'][0]['timeline_peak'] for r in result)
    q = rank_params(p, peak_r, 'peak')
    q.peak_step = peak_step(p)
    q.peak_factor = 2 if p.scenario == 'training' else 8
    for _ in range(8):
        run(peak_r, q)
        if result[peak_r]['devices'][0]['timeline_peak'] > others:
            break
        q.peak_factor *= 2
    else:
        raise SystemExit('gensnap: the peak rank does not peak above the '
                         'others')
    if oom_r is not None:
        q = rank_params(p, oom_r, 'oom')
        top = result[peak_r]['devices'][0]['timeline_peak']
        base = max(reserved) if reserved else top // 2
        limit = (base + max(top - base, 0) // 2) // (2 * MiB) * (2 * MiB)
        if limit >= top or limit <= base:
            limit = max(2 * MiB, (top - 1) // (2 * MiB) * (2 * MiB))
        q.limit = limit
        q.oom_factor = 2
        run(oom_r, q)
        if 'oom' not in result[oom_r]:
            raise SystemExit('gensnap: the OOM rank did not run out of memory')
    write_set_truth(p, n, role, files, truths, result, truth_path or
                    prefix + 'ranks.truth.json')


def write_set_truth(p, n, role, files, truths, result, path):
    per = []
    for r in range(n):
        t = result[r]
        d = t['devices'][0]
        row = {'rank': r, 'file': os.path.basename(files[r]),
               'truth': os.path.basename(truths[r]), 'role': role[r],
               'events': d['events'], 'peak': d['timeline_peak'],
               'peak_event': d['timeline_peak_event'],
               'reserved': d['reserved']}
        if 'steps' in t:
            row['steps'] = t['steps']['count']
        if 'oom' in t:
            row['oom_event'] = t['oom']['event_index']
        per.append(row)
    peaks = [row['peak'] for row in per]
    top = max(range(n), key=lambda r: (peaks[r], -r))
    median = statistics.median(peaks)
    leak_r = next(r for r in range(n) if role[r] == 'leak')
    lk = result[leak_r].get('leak', {})
    out = {'scenario': p.scenario, 'ranks': n, 'seed': p.seed,
           'peak_rank': top, 'peak': peaks[top],
           'peak_event': per[top]['peak_event'], 'median_peak': median,
           'skew': round(peaks[top] / median, 4) if median else None,
           'leak_rank': leak_r,
           'leak': {k: lk.get(k) for k in ('filename', 'line', 'name',
                                           'per_step_requested',
                                           'per_step_rounded', 'count')},
           'oom_rank': next((r for r in range(n) if role[r] == 'oom'), None),
           'per_rank': per}
    site = lk.get('site') or ('%s:%d' % (lk['filename'], lk['line'])
                              if lk else None)
    out['leak']['site'] = site
    with open(path, 'w') as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write('\n')
