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

def site_of(template):
    for name, filename, line in template:
        if filename.endswith('.py') and 'torch/' not in filename and \
                'site-packages/' not in filename:
            return {'filename': filename, 'line': line, 'name': name}
    return None


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

    def attach(self, sim):
        self.sim = sim
        self.after_seg_alloc = False

    def observe(self, dev, action, addr, size):
        i = self.idx[dev]
        self.idx[dev] = i + 1
        self.actions[dev][action] += 1
        if dev == 0:
            if self.after_seg_alloc and action == 'alloc' and \
                    self.seg_alloc_info is not None:
                self.seg_alloc_info['request'] = size
            self.after_seg_alloc = action == 'segment_alloc'
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
            out['devices'].append(dd)
        if p.scenario in ('leak', 'wrapped', 'legacy', 'npu'):
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
        if p.fmt == 'newest' and not p.npu:
            out['annotations'] = len(sink.annotations)
        return out

