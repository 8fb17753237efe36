"""gensnap_rundir - a run directory of one simulated job (--run-dir).

Frameworks dump one snapshot per rank per step (and one on an OOM) into a
directory tree; this writes such a tree for the training scenario:

  verl        step{N}/torch_memory_rank{R}_pid{P}.pickle
  torchtitan  memory_snapshot/iteration_{N}/rank{R}_memory_snapshot.pickle,
              the OOM dump in memory_snapshot/iteration_{N}_exit/
  PATTERN     any path with {rank} and {step} (and {pid}), e.g.
              'dumps/s{step}/r{rank}.pickle'; the OOM dump is its step's file

Each rank runs the whole job in one simulation and is dumped at the end of
every step (N from 1), as torch.cuda.memory._dump_snapshot() writes it
there: the ring buffer's last --max-entries events (every dump but the
first starts after its step's first events, so memory allocated before
the window, a previous step's gradients, the optimizer state, is in the
final segments and in no event) and the allocator's segments and blocks
at that moment.  Roles, drawn from --seed among distinct ranks:

  * the leaking rank keeps one tensor per step (metrics/tracker.py:47);
  * the heavy rank holds a buffer from step 1 on (pipeline/stage.py:58)
    that no other rank has: heavier than the median rank at every step;
  * the OOM rank runs the last step with a batch 8 times longer under a
    memory limit just above what it reserved: its dump is taken at the
    `oom` event, mid-step;
  * one dump of another rank, in a middle step, is an empty file (a
    writer that crashed).

The truth (run.truth.json in the directory, or --truth) gives every
cell's figures, computed from the simulator and the events written (the
same rules as gensnap_truth.py), the roles with their call sites and
bytes, and per step the ranks whose live bytes at the dump exceed the
median rank's by more than 5% with the sites that make the difference.
"""

import collections
import json
import os
import pickle
import random

from gensnap_alloc import ALLOCATED, MiB, OutOfMemory
from gensnap_objects import (Objects, allocator_settings, annotation_obj,
                             final_segments)
from gensnap_ranks import rank_params
from gensnap_run import make_sim
from gensnap_stacks import USER
from gensnap_training import L_LEAK, LEAK_SITE, MAIN, TRAIN, Training
from gensnap_truth import TruthTracker, site_of

LAYOUTS = {
    'verl': ('step{step}/torch_memory_rank{rank}_pid{pid}.pickle', None),
    'torchtitan': ('memory_snapshot/iteration_{step}/'
                   'rank{rank}_memory_snapshot.pickle',
                   'memory_snapshot/iteration_{step}_exit/'
                   'rank{rank}_memory_snapshot.pickle'),
}
HEAVY_SITE = ('stage_buffers', USER + 'pipeline/stage.py', 58)
L_HEAVY = 85                    # train.py: the line that calls it
DEFAULT_ENTRIES = 1500


def layout_paths(layout):
    """(pattern of a step's dump, pattern of an OOM dump or None)."""
    if layout in LAYOUTS:
        return LAYOUTS[layout]
    for k in ('{rank}', '{step}'):
        if k not in layout:
            raise SystemExit('gensnap: --run-dir %s: a pattern needs %s'
                             % (layout, k))
    if layout.startswith('/') or '..' in layout.split('/'):
        raise SystemExit('gensnap: --run-dir: a pattern is a relative path '
                         'inside -o DIR')
    return layout, None


class RingSink:
    """The allocator's ring buffer: the last n events of device 0, and
    every annotation (a dump keeps those of its window)."""

    def __init__(self, n):
        self.ring = collections.deque(maxlen=n)
        self.total = 0
        self.annotations = []

    def event(self, dev, action, addr, size, stream, t, stk):
        self.total += 1
        self.ring.append((action, addr, size, stream, t, stk))

    def release(self, serial):
        pass

    def annotation(self, name, stage, dev, t):
        self.annotations.append((name, stage, dev, t))


class _Dropped:
    """What TruthTracker.finish reads of a sink."""

    def __init__(self, dropped, annotations):
        self.dropped = [dropped]
        self.annotations = annotations


def site_key(tmpl):
    s = site_of(tmpl) if tmpl is not None else None
    if s is None:
        return None
    return '%s:%d' % (s['filename'][len(USER):] if
                      s['filename'].startswith(USER) else s['filename'],
                      s['line'])


def dump(p, sim, sink, path):
    """Writes the snapshot of this moment to path; returns its truth."""
    window = list(sink.ring)
    segrecs = final_segments(sim, None)
    t0 = window[0][4] if window else 0
    anns = [a for a in sink.annotations if a[3] >= t0]
    objs = Objects(p.fmt, False)
    top = {'segments': [objs.segment(r) for r in segrecs],
           'device_traces': [[objs.entry(e) for e in window]]}
    if p.fmt == 'newest':
        top['allocator_settings'] = allocator_settings(p.expandable,
                                                       p.max_split)
        top['external_annotations'] = [annotation_obj(a) for a in anns]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        pickle.dump(top, f, protocol=p.proto)
    tr = TruthTracker(p)
    tr.attach(sim)
    for action, addr, size, _, _, stk in window:
        tr.observe(0, action, addr, size, stk[1] if stk else None)
    d = tr.finish(sim, {}, _Dropped(sink.total - len(window), anns), None,
                  None, segrecs=segrecs)['devices'][0]
    sites = collections.Counter()
    for b in sim.devs[0].live.values():
        if b.state == ALLOCATED:
            sites[site_key(b.stk[1] if b.stk else None)] += b.req
    return {'events': d['events'], 'dropped_events': d['dropped_events'],
            'peak': d['timeline_peak'],
            'peak_event': d['timeline_peak_event'],
            'reserved': d['reserved'], 'allocated': d['allocated'],
            'oom': tr.oom is not None, 'sites': sites}


def run_rank(p, r, role, steps, entries, paths, oom_step, empty_step):
    """Simulates rank r's job and writes its dumps; returns {step: truth}."""
    q = rank_params(p, r, 'leak' if role == 'leak' else 'normal')
    sink = RingSink(entries)
    sim, ctx = make_sim(q, sink)
    info = {'marks': [], 'leak_every': 1}
    tr = Training(ctx, info)
    tr.build()
    out = {}
    heavy = None
    for n in range(steps):
        seq = q.seq
        if q.seq_jitter:
            seq -= 8 * ctx.rng.randrange(0, q.seq_jitter + 1)
        step = n + 1
        if role == 'heavy' and heavy is None:
            py = (HEAVY_SITE, ('train_step', TRAIN, L_HEAVY)) + MAIN
            size = max(16 * MiB, info['param_bytes'] // 2)
            heavy = tr.alloc(size, tr.st.main('zeros_like', py, 'other'))
        if role == 'oom' and step == oom_step:
            d = sim.devs[0]
            d.limit = (d.reserved + 4 * MiB) // (2 * MiB) * (2 * MiB)
            try:
                tr.step(n, seq * 8)
            except OutOfMemory:
                out[step] = dump(q, sim, sink, paths[step])
                return out
            raise SystemExit('gensnap: the OOM rank did not run out of '
                             'memory')
        tr.step(n, seq)
        if step == empty_step:
            os.makedirs(os.path.dirname(paths[step]), exist_ok=True)
            open(paths[step], 'wb').close()
            out[step] = None
            continue
        out[step] = dump(q, sim, sink, paths[step])
    return out


def median(v):
    """The median as snapview takes it: the mean of the middle two of an
    even count, in whole bytes (rounded down)."""
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


def generate_run_dir(p, layout, nranks, steps, out, truth_path):
    if nranks < 4:
        raise SystemExit('gensnap: --run-dir needs at least 4 ranks')
    if not steps or steps < 3:
        raise SystemExit('gensnap: --run-dir needs --steps 3 or more')
    root = out if out else 'run'
    os.makedirs(root, exist_ok=True)
    pat, oom_pat = layout_paths(layout)
    entries = p.max_entries or DEFAULT_ENTRIES
    rng = random.Random(p.seed * 7919 + nranks * 31 + steps)
    leak_r, heavy_r, oom_r, empty_r = rng.sample(range(nranks), 4)
    empty_step = 2 + rng.randrange(steps - 2)       # 2 .. steps - 1
    role = {r: 'normal' for r in range(nranks)}
    role[leak_r], role[heavy_r], role[oom_r] = 'leak', 'heavy', 'oom'
    cells = []
    per = {}
    for r in range(nranks):
        paths = {}
        for s in range(1, steps + 1):
            pp = oom_pat if r == oom_r and s == steps and oom_pat else pat
            paths[s] = os.path.join(root, pp.format(rank=r, step=s,
                                                    pid=4100 + 37 * r))
        per[r] = run_rank(p, r, role[r], steps, entries, paths, steps,
                          empty_step if r == empty_r else None)
        for s in range(1, steps + 1):
            t = per[r][s]
            c = {'rank': r, 'step': s,
                 'file': os.path.relpath(paths[s], root),
                 'empty': t is None}
            if t is not None:
                c.update({k: v for k, v in t.items() if k != 'sites'})
            cells.append(c)
    skew = []
    for s in range(1, steps + 1):
        # the dumps taken at the end of step s (an OOM dump is mid-step)
        rows = {r: per[r][s] for r in range(nranks)
                if per[r][s] is not None and not per[r][s]['oom']}
        m = median([t['allocated'] for t in rows.values()])
        heavier = []
        for r, t in sorted(rows.items()):
            excess = t['allocated'] - m
            if excess * 20 <= m:
                continue
            keys = set().union(*(rows[x]['sites'] for x in rows))
            ex = []
            for k in keys:
                e = t['sites'].get(k, 0) - median(
                    [rows[x]['sites'].get(k, 0) for x in rows])
                if e > 0 and k is not None:
                    ex.append({'site': k, 'bytes': e})
            ex.sort(key=lambda e: (-e['bytes'], e['site']))
            heavier.append({'rank': r, 'allocated': t['allocated'],
                            'excess': excess, 'sites': ex[:3]})
        skew.append({'step': s, 'median_allocated': m, 'heavier': heavier})
    leak_req = 4 * p.batch * p.vocab
    heavy_t = per[heavy_r][1]['sites'] if per[heavy_r][1] else {}
    heavy_key = '%s:%d' % (HEAVY_SITE[1][len(USER):], HEAVY_SITE[2])
    truth = {
        'layout': layout, 'pattern': pat, 'oom_pattern': oom_pat,
        'ranks': nranks, 'steps': steps, 'seed': p.seed,
        'max_entries': entries,
        'roles': {str(r): role[r] for r in range(nranks)},
        'leak': {'rank': leak_r,
                 'site': '%s:%d' % (LEAK_SITE[1][len(USER):], LEAK_SITE[2]),
                 'name': LEAK_SITE[0], 'caller': 'train.py:%d' % L_LEAK,
                 'per_step_bytes': leak_req},
        'heavy': {'rank': heavy_r, 'site': heavy_key, 'name': HEAVY_SITE[0],
                  'bytes': heavy_t.get(heavy_key, 0)},
        'oom': {'rank': oom_r, 'step': steps,
                'file': next(c['file'] for c in cells
                             if c['rank'] == oom_r and c['step'] == steps)},
        'empty': {'rank': empty_r, 'step': empty_step,
                  'file': next(c['file'] for c in cells
                               if c['rank'] == empty_r and
                               c['step'] == empty_step)},
        'cells': cells, 'skew': skew,
    }
    path = truth_path or os.path.join(root, 'run.truth.json')
    with open(path, 'w') as f:
        json.dump(truth, f, indent=1, sort_keys=True)
        f.write('\n')
    return truth
