"""gensnap_truth - the ground truth of a generated snapshot.

Computed while generating, from the simulator's own state and from the
events as they are written, never by reading the written file back (that
is what the checker in gensnap_check.py and the program under test do).
Section numbers (§N) refer to doc/snapshot-format.md.
"""

import collections

from gensnap_alloc import (ALLOCATED, DEFAULT_POOL, FREE, GRAPH_POOL,
                           round_size)
from gensnap_objects import final_segments
from gensnap_scenarios import LEAK_REQ, LEAK_SITE
from gensnap_stacks import USER
from gensnap_training import CATEGORIES, L_LEAK, TRAIN as TRAIN_PY
from gensnap_training import LEAK_SITE as LEAK_TRAINING

def site_of(template):
    for name, filename, line in template:
        if filename.endswith('.py') and 'torch/' not in filename and \
                'site-packages/' not in filename:
            return {'filename': filename, 'line': line, 'name': name}
    return None


def pool_key(pool_id, stream):
    return '%d,%d/%d' % (pool_id[0], pool_id[1], stream)


def sim_pool_streams(d):
    """Per (pool, stream) of a simulated device now: its segments,
    reserved bytes, free (inactive) bytes and the largest free block of
    each size class.  Pending frees are not free yet (§13.5)."""
    out = {}

    def group(pid, stream):
        return out.setdefault(pool_key(pid, stream), {
            'pool_id': list(pid), 'stream': stream, 'segments': 0,
            'reserved': 0, 'free': 0, 'largest_free': 0,
            'largest_free_small': 0, 'largest_free_large': 0})
    for seg in d.segments.values():
        g = group(seg.pool_id, seg.stream)
        g['segments'] += 1
        g['reserved'] += seg.size
    for (pid, kind), pl in d.pools.items():
        for b in pl.blocks.values():
            if b.seg.expandable:
                continue
            g = group(pid, b.stream)
            g['free'] += b.size
            g['largest_free'] = max(g['largest_free'], b.size)
            k = 'largest_free_' + kind
            g[k] = max(g[k], b.size)
    return out


def segrec_pool_streams(segrecs, dev):
    """sim_pool_streams from the final segments as the snapshot lists
    them, with the bytes of the pools (reserved per pool)."""
    out = {}
    for r in segrecs:
        if r['device'] != dev:
            continue
        g = out.setdefault(pool_key(r['pool_id'], r['stream']), {
            'pool_id': list(r['pool_id']), 'stream': r['stream'],
            'segments': 0, 'reserved': 0, 'free': 0, 'largest_free': 0})
        g['segments'] += 1
        g['reserved'] += r['total_size']
        for b in r['blocks']:
            if b[3] == FREE:
                g['free'] += b[1]
                g['largest_free'] = max(g['largest_free'], b[1])
    return out


def isolated_in(groups, pool_id, stream, kind, size):
    """The other (pool, stream) whose largest free block of the request's
    size class is the largest one, when it is at least size and the
    request's own group has none that large; else None."""
    own = groups.get(pool_key(pool_id, stream))
    if own is not None and own['largest_free_' + kind] >= size:
        return None
    best = None
    for k, g in sorted(groups.items()):
        if k == pool_key(pool_id, stream):
            continue
        b = g['largest_free_' + kind]
        if b >= size and (best is None or b > best[1]):
            best = (k, b)
    return best


def whatif_truth(p, sim, actions, segrecs):
    """What `snapview whatif` predicts of a run under other settings
    (--alloc-conf, --limit): per device the most reserved, the segment
    allocations (segment_alloc and segment_map) and frees, the segments
    at the end as the snapshot lists them."""
    devs = []
    for d, dev in enumerate(sim.devs):
        a = actions[d]
        devs.append({'device': d, 'peak_reserved': dev.peak_reserved,
                     'device_allocs': a['segment_alloc'] +
                     a['segment_map'],
                     'device_frees': a['segment_free'] +
                     a['segment_unmap'],
                     'segments': sum(1 for r in segrecs
                                     if r['device'] == d),
                     'oom': a['oom'] > 0})
    return {'alloc_conf': p.alloc_conf.text if p.alloc_conf is not None
            else None, 'limit': p.limit if p.limit_given else None,
            'devices': devs}


class TruthTracker:
    """Observes every written event (index = position in the written trace)."""

    def __init__(self, p):
        self.p = p
        self.idx = collections.defaultdict(int)
        self.live = collections.defaultdict(dict)     # addr -> requested
        self.cur = collections.defaultdict(int)       # §10.2 S'(k)
        self.best = {}                                 # dev -> (S', idx)
        self.unmatched = collections.defaultdict(int)
        self.unmatched_n = collections.defaultdict(int)
        self.actions = collections.defaultdict(collections.Counter)
        self.last_seg_alloc = None
        self.seg_alloc_info = None
        self.oom = None
        self.sim_dev = None
        self.after_seg_alloc = False    # last device-0 event: segment_alloc
        # the pools scenario: segment allocs whose request could have
        # been served from another (pool, stream)
        self.pool_seg = None            # (event, pool, stream, kind, groups)
        self.seg_allocs = 0
        self.isolated = []

    def attach(self, sim):
        self.sim = sim
        self.after_seg_alloc = False

    def observe(self, dev, action, addr, size, tmpl=None):
        i = self.idx[dev]
        self.idx[dev] = i + 1
        self.actions[dev][action] += 1
        if dev == 0:
            if self.after_seg_alloc and action == 'alloc' and \
                    self.seg_alloc_info is not None:
                self.seg_alloc_info['request'] = size
            self.after_seg_alloc = action == 'segment_alloc'
            if self.p.scenario == 'pools':
                self.observe_pools(action, addr, size)
        if action == 'alloc':
            self.live[dev][addr] = size
            cur = self.cur[dev] = self.cur[dev] + size
            b = self.best.get(dev)
            if b is None or cur > b[0]:
                self.best[dev] = (cur, i)
        elif action == 'free_completed':
            s = self.live[dev].pop(addr, None)
            if s is None:
                self.unmatched[dev] += size
                self.unmatched_n[dev] += 1
                s = size
            cur = self.cur[dev] = self.cur[dev] - s
            b = self.best.get(dev)
            if b is None or cur > b[0]:
                self.best[dev] = (cur, i)
        elif action == 'segment_alloc' and dev == 0 and hasattr(self, 'sim'):
            d = self.sim.devs[0]
            # the simulator emits before updating its counters
            self.last_seg_alloc = i
            self.seg_alloc_info = {'event_index': i,
                                   'reserved_before': d.reserved,
                                   'allocated_before': d.allocated_req,
                                   'gap': d.reserved - d.allocated_req,
                                   'segment_size': size}
        elif action == 'oom' and hasattr(self, 'sim'):
            d = self.sim.devs[dev]
            sites = collections.Counter()
            for b in d.live.values():
                if b.state == ALLOCATED:
                    s = site_of(b.stk[1])
                    sites['%s:%d:%s' % (s['filename'], s['line'], s['name'])
                          if s else '<none>'] += b.req
            self.oom = {'event_index': i, 'device': dev, 'request': size,
                        'device_free': addr, 'reserved': d.reserved,
                        'allocated': d.allocated_req,
                        'top_sites': [{'site': k, 'bytes': v} for k, v in
                                      sorted(sites.items(),
                                             key=lambda kv: (-kv[1], kv[0]))[:5]]}

    def observe_pools(self, action, addr, size):
        if not hasattr(self, 'sim'):
            return
        d = self.sim.devs[0]
        if action == 'segment_alloc':
            seg = d.segments[addr]      # registered before the event
            self.pool_seg = (self.idx[0] - 1, seg.pool_id, seg.stream,
                             seg.kind, sim_pool_streams(d))
            self.seg_allocs += 1
            return
        if action == 'alloc' and self.pool_seg is not None:
            ev, pid, stream, kind, groups = self.pool_seg
            rounded = round_size(size + d.pad, d.divisions)
            best = isolated_in(groups, pid, stream, kind, rounded)
            if best is not None:
                self.isolated.append({'event_index': ev,
                                      'pool_id': list(pid),
                                      'stream': stream, 'request': size,
                                      'in': best[0], 'largest': best[1]})
        if action == 'oom':
            groups = sim_pool_streams(d)
            kind = 'small' if size <= 1024 * 1024 else 'large'
            best = isolated_in(groups, DEFAULT_POOL, 0, kind, size)
            self.pool_oom = {'pool_id': list(DEFAULT_POOL), 'stream': 0,
                             'request': size, 'groups': groups,
                             'isolated_in': best[0] if best else None,
                             'largest_elsewhere': best[1] if best else 0}
        self.pool_seg = None

    def finish(self, sim, info, sink, ws, obj, segrecs=None):
        p = self.p
        if segrecs is None:
            segrecs = final_segments(sim, ws)
        ndev = len(sim.devs) if sim else p.ndev
        out = {'scenario': p.scenario, 'format': p.fmt, 'npu': p.npu,
               'seed': p.seed, 'stacks': p.stacks, 'protocol': p.proto,
               'max_entries': p.max_entries, 'devices': []}
        if p.npu:
            out['npu_pad'] = p.npu_pad
        for d in range(ndev):
            segs = [r for r in segrecs if r['device'] == d]
            ghosts = [b for r in segs for b in r['blocks']
                      if b[3] == ALLOCATED and b[0] not in self.live[d]]
            ghost_bytes = sum(b[2] for b in ghosts)
            inactive = [b[1] for r in segs for b in r['blocks'] if b[3] == FREE]
            best = self.best.get(d, (0, -1))
            base = ghost_bytes + self.unmatched[d]
            dd = {'device': d, 'events': self.idx[d],
                  'dropped_events': sink.dropped[d] if d < len(sink.dropped)
                  else 0,
                  'actions': dict(sorted(self.actions[d].items())),
                  'segments': len(segs),
                  'reserved': sum(r['total_size'] for r in segs),
                  'allocated': sum(b[2] for r in segs for b in r['blocks']
                                   if b[3] == ALLOCATED),
                  'allocated_block_bytes': sum(b[1] for r in segs
                                               for b in r['blocks']
                                               if b[3] == ALLOCATED),
                  'active_blocks': sum(1 for r in segs for b in r['blocks']
                                       if b[3] != FREE),
                  'largest_free_block': max(inactive) if inactive else 0,
                  'ghost_blocks': len(ghosts), 'ghost_bytes': ghost_bytes,
                  'unmatched_frees': self.unmatched_n[d],
                  'unmatched_free_bytes': self.unmatched[d],
                  'timeline_peak': base + best[0] if best[1] >= 0 else base,
                  'timeline_peak_event': best[1]}
            if getattr(p, 'ring_flag', False) and p.max_entries:
                # what allocator_settings says (--ring-flag, 2.14)
                dd['ring_buffer_overflowed'] = dd['dropped_events'] > 0
            out['devices'].append(dd)
        if p.scenario in ('leak', 'wrapped', 'legacy', 'npu') and \
                not p.no_leak:
            n = len(info.get('leak_blocks', ()))
            r = round_size(LEAK_REQ + p.npu_pad)
            out['leak'] = {'filename': LEAK_SITE[1], 'line': LEAK_SITE[2],
                           'name': LEAK_SITE[0],
                           'caller': {'filename': USER + 'train.py',
                                      'line': 112, 'name': 'train_step'},
                           'per_step_requested': LEAK_REQ,
                           'per_step_rounded': r, 'count': n,
                           **({'steps_per_leak': info['leak_every']}
                              if info.get('leak_every', 1) > 1 else {}),
                           'total_requested': n * LEAK_REQ,
                           'total_rounded': n * r,
                           'param_bytes': info.get('param_bytes'),
                           'optimizer_state_bytes':
                               2 * info['param_bytes']
                               if info.get('param_bytes') else None}
        if p.scenario in ('frag', 'expandable') and self.seg_alloc_info:
            out['frag'] = dict(self.seg_alloc_info)
            out['frag']['last_segment_alloc_event'] = self.last_seg_alloc
        if self.oom:
            out['oom'] = self.oom
        if p.scenario == 'graphs':
            priv = [r for r in segrecs if r['pool_id'] != DEFAULT_POOL]
            out['private_pool'] = {'pool_id': list(GRAPH_POOL),
                                   'segments': len(priv),
                                   'bytes': sum(r['total_size'] for r in priv)}
        if p.scenario == 'pools':
            groups = segrec_pool_streams(segrecs, 0)
            pools = {}
            for g in groups.values():
                q = pools.setdefault('%d,%d' % tuple(g['pool_id']),
                                     {'pool_id': g['pool_id'],
                                      'segments': 0, 'reserved': 0})
                q['segments'] += g['segments']
                q['reserved'] += g['reserved']
            out['pools'] = {'pools': pools, 'pool_streams': groups,
                            'segment_allocs': self.seg_allocs,
                            'isolated_segment_allocs': self.isolated,
                            'oom': getattr(self, 'pool_oom', None)}
        if p.fmt == 'newest' and not p.npu:
            out['annotations'] = len(sink.annotations)
        if sim is not None and (p.alloc_conf is not None or p.limit_given):
            out['whatif'] = whatif_truth(p, sim, self.actions, segrecs)
        return out



class TrainingTruth(TruthTracker):
    """The training scenario's truth: besides the base figures, bytes per
    category (Template.cat of each allocation) at the last event and at
    the Active Memory Timeline's peak, the steps and the planted leak.
    One device."""

    def __init__(self, p):
        super().__init__(p)
        self.cur_cat = dict.fromkeys(CATEGORIES, 0)
        self.best_cat = dict(self.cur_cat)
        self.unmatched_cat = dict.fromkeys(CATEGORIES, 0)
        self.live_cat = {}

    def observe(self, dev, action, addr, size, tmpl=None):
        i = self.idx[dev]
        if action == 'alloc':
            c = tmpl.cat
            self.live_cat[addr] = c
            self.cur_cat[c] += size
        elif action == 'free_completed':
            c = self.live_cat.pop(addr, None)
            if c is None:                  # allocated before the trace
                c = tmpl.cat if tmpl is not None else 'other'
                self.unmatched_cat[c] += size
                s = size
            else:
                s = self.live[dev][addr]
            self.cur_cat[c] -= s
        super().observe(dev, action, addr, size, tmpl)
        if self.best.get(dev, (0, -1))[1] == i:
            self.best_cat = dict(self.cur_cat)

    def finish(self, sim, info, sink, ws, obj, segrecs=None):
        if segrecs is None:
            segrecs = final_segments(sim, ws)
        out = super().finish(sim, info, sink, ws, obj, segrecs)
        p = self.p
        dd = out['devices'][0]
        base = dict(self.unmatched_cat)
        for r in segrecs:
            for b in r['blocks']:
                if b[3] == ALLOCATED and b[0] not in self.live[0]:
                    c = b[4][1].cat if b[4] is not None else 'other'
                    base[c] += b[2]
        at_last = {c: base[c] + self.cur_cat[c] for c in CATEGORIES}
        at_peak = {c: base[c] + self.best_cat[c] for c in CATEGORIES}
        assert sum(at_peak.values()) == dd['timeline_peak']
        skip = dd['dropped_events']
        out['model'] = {'layers': p.layers, 'hidden': p.hidden,
                        'batch': p.batch, 'seq': p.seq, 'vocab': p.vocab,
                        'parameters': info['params'],
                        'parameter_bytes': info['param_bytes'],
                        'optimizer': 'AdamW (foreach)'}
        out['categories'] = {'at_last_event': at_last, 'at_peak': at_peak,
                             'peak_event': dd['timeline_peak_event'],
                             'peak_bytes': dd['timeline_peak'],
                             'last_event': dd['events'] - 1}
        out['steps'] = training_steps(info['marks'], skip, dd['events'],
                                      p.profiler)
        out['steps']['run'] = info['steps']
        if p.leak:
            n = len(info['leak_blocks'])
            req = info['leak_req']
            r = round_size(req + p.npu_pad)
            out['leak'] = {'filename': LEAK_TRAINING[1],
                           'line': LEAK_TRAINING[2],
                           'name': LEAK_TRAINING[0],
                           'site': '%s:%d' % (LEAK_TRAINING[1][len(USER):],
                                             LEAK_TRAINING[2]),
                           'caller': {'filename': TRAIN_PY, 'line': L_LEAK,
                                      'name': 'train_step'},
                           'category': 'other',
                           'per_step_requested': req, 'per_step_rounded': r,
                           'count': n, 'total_requested': n * req,
                           'total_rounded': n * r,
                           **({'steps_per_leak': info['leak_every']}
                              if info['leak_every'] > 1 else {})}
        if info.get('oom'):
            out['oom']['during_step'] = info['steps']
        return out


def training_steps(marks, skip, nev, profiler):
    """Steps as the written trace shows them, by raw event index: with
    ProfilerStep annotations, the events between a step's START and END;
    else each Optimizer.step END closes a step that began after the
    previous one's END (or at the first event).  Only steps wholly inside
    the written trace count (a ring buffer may drop the first ones)."""
    ranges = []
    if profiler:
        start = {}
        for name, stage, n in marks:
            if not name.startswith('ProfilerStep#'):
                continue
            if stage == 'START':
                start[name] = n
            elif name in start and start[name] >= skip:
                ranges.append([start[name] - skip, n - 1 - skip])
        source = 'profiler steps'
    else:
        prev = 0
        for name, stage, n in marks:
            if name != 'Optimizer.step#AdamW.step' or stage != 'END':
                continue
            if prev >= skip:
                ranges.append([prev - skip, n - 1 - skip])
            prev = n
        source = 'optimizer annotations'
    opt, start = [], None
    for name, stage, n in marks:
        if name == 'Optimizer.step#AdamW.step':
            if stage == 'START':
                start = n
            elif start is not None and start >= skip:
                opt.append([start - skip, n - 1 - skip])
    return {'source': source, 'count': len(ranges), 'ranges': ranges,
            'optimizer_step_ranges': opt,
            'outside': nev - sum(b - a + 1 for a, b in ranges)}


def make_tracker(p):
    if p.scenario == 'rl':
        # imported here: gensnap_rl builds on this module
        from gensnap_rl import RLTruth
        return RLTruth(p)
    return TrainingTruth(p) if p.scenario == 'training' else TruthTracker(p)
