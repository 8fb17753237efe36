"""gensnap_2026 - what PyTorch 2.14 adds to a snapshot (issue 33).

Options of gensnap.py that write the 2026 additions of
doc/snapshot-format.md §17, each with its truth in the sidecar.  Section
numbers (§N) refer to doc/snapshot-format.md.

  --annotate-tensors  `annotate` trace events carrying `user_metadata` on
                      live allocations (§17.1, pytorch#190575)
  --host              pinned host memory: `host_segments`, `host_traces`
                      and the host allocator's rounding waste (§17.6)
  --pool-ids          `pool_id` on every trace entry (§17.5)
  --no-trace          include_traces=False: the segments only (§17.3)
  --xpu               an XPU allocator's settings (§17.8)
  --skip-actions A,B  whole actions left out of the recording (§17.8)
  -o FILE.gz          the pickle, gzip-compressed (§17.7)

The generator calls this module at four points: the options (add_options,
configure), the sink the simulator writes to (wrap_sink, attach), the
snapshot object before it is pickled (finish_object) and the truth
(finish_truth); `write_output` compresses.  Without these options every
function returns what it was given, so the bytes of the other options do
not change.  Only the in-memory writer writes these additions.
"""

import collections
import gzip
import os
import random
import shutil

from gensnap_alloc import ALLOCATED, DEFAULT_POOL, FREE, GiB, PENDING
from gensnap_objects import Objects

# every action a trace entry can have (doc/snapshot-format.md §6.2, §17.1)
ACTIONS = ('alloc', 'free_requested', 'free_completed', 'segment_alloc',
           'segment_free', 'segment_map', 'segment_unmap', 'snapshot', 'oom',
           'workspace_snapshot', 'annotate')
# an allocation's own actions: with some but not all of them in a trace,
# `snapview check` notes that the recording may have skipped actions
ALLOC_ACTIONS = ('alloc', 'free_requested', 'free_completed')
HOST = 'host'
# what a tensor's owner writes with torch.cuda.memory._annotate_tensor
ANNOTATE_TAGS = ('activation', 'kv_cache', 'grad_bucket', 'batch',
                 'checkpoint')
ANNOTATE_SEED = 33


def add_options(ap):
    g = ap.add_argument_group(
        'PyTorch 2.14 additions (doc/snapshot-format.md §17; --format '
        'newest, the in-memory writer)')
    g.add_argument('--annotate-tensors', action='store_true',
                   help='annotate events with user_metadata on live '
                        'allocations (_annotate_tensor); the truth lists '
                        'each with its allocation')
    g.add_argument('--host', action='store_true',
                   help='pinned host memory: host_segments and host_traces '
                        '(record_pinned_host_memory=True), requests rounded '
                        'up to a power of two; the truth has the host '
                        'device and its rounding waste')
    g.add_argument('--pool-ids', action='store_true',
                   help='pool_id (the segment_pool_id of its pool) on every '
                        'trace entry')
    g.add_argument('--no-trace', action='store_true',
                   help='include_traces=False: the final segments, one '
                        'empty trace per device, no annotations')
    g.add_argument('--xpu', action='store_true',
                   help='an XPU snapshot: allocator_settings names '
                        'PYTORCH_XPU_ALLOC_CONF')
    g.add_argument('--skip-actions', metavar='ACTIONS',
                   help='comma-separated actions the recording leaves out '
                        '(skip_actions=[...]), e.g. free_requested')


class Opts:
    def __init__(self, a):
        self.annotate = a.annotate_tensors
        self.host = a.host
        self.pool_ids = a.pool_ids
        self.no_trace = a.no_trace
        self.xpu = a.xpu
        self.skip = ()
        if a.skip_actions is not None:
            skip = [s.strip() for s in a.skip_actions.split(',')]
            bad = [s for s in skip if s not in ACTIONS]
            if bad or not skip:
                raise SystemExit('gensnap: --skip-actions: unknown action '
                                 '%r (one of %s)' % (bad[0] if bad else '',
                                                     ', '.join(ACTIONS)))
            self.skip = tuple(sorted(set(skip)))

    def names(self):
        return [n for n, on in (('--annotate-tensors', self.annotate),
                                ('--host', self.host),
                                ('--pool-ids', self.pool_ids),
                                ('--no-trace', self.no_trace),
                                ('--xpu', self.xpu),
                                ('--skip-actions', self.skip)) if on]

    def traced(self):
        """Whether the simulator's events go through a Recorder."""
        return bool(self.annotate or self.pool_ids or self.skip)


def configure(p, a, stream_threshold):
    """Sets p.y26 (None without any of these options) and refuses what
    they cannot do."""
    o = Opts(a)
    p.y26 = o if o.names() else None
    if p.y26 is None:
        return
    opt = o.names()[0]
    if p.fmt != 'newest' or p.npu:
        raise SystemExit('gensnap: %s writes what PyTorch 2.14 writes: '
                         '--format newest, not --npu' % opt)
    if a.stream or p.estimated_events() >= stream_threshold:
        raise SystemExit('gensnap: %s needs the in-memory writer (fewer '
                         'than %d events, no --stream)' % (opt,
                                                           stream_threshold))
    if a.ranks is not None or a.run_dir is not None or \
            getattr(a, 'fast', False):
        raise SystemExit('gensnap: %s writes one file with the in-memory '
                         'writer (no --ranks, --run-dir, --fast)' % opt)
    if o.no_trace and o.traced():
        raise SystemExit('gensnap: --no-trace writes no trace entries: '
                         'not with --annotate-tensors, --pool-ids or '
                         '--skip-actions')


# -- the sink ----------------------------------------------------------------

class Recorder:
    """Between the simulator and its sink: leaves out the skipped actions,
    adds annotate events on live allocations and notes the pool of every
    event, by raw index (before a ring buffer drops any).  The simulator's
    event count (`sim.nev`, which the scenarios' annotation marks use)
    follows the events written."""

    def __init__(self, p, sink):
        self.p = p
        self.o = p.y26
        self.inner = sink
        self.sim = None
        self.n = collections.defaultdict(int)        # raw events per device
        self.pools = collections.defaultdict(list)   # dev -> pool per event
        self.segpool = {}                            # (dev, addr) -> pool
        self.pending = None                          # alloc: pool unknown
        self.live = collections.defaultdict(dict)    # dev -> addr -> alloc
        self.due = collections.defaultdict(list)     # dev -> [index, addr]
        self.notes = collections.defaultdict(list)   # dev -> annotations
        self.rng = random.Random(p.seed * 1000003 + ANNOTATE_SEED)
        self.tags = 0
        sink.recorder = self

    def __getattr__(self, name):
        # counts, traces, dropped, annotations, observers: the sink's
        if name == 'make_emit':
            raise AttributeError(name)
        return getattr(self.inner, name)

    def release(self, serial):
        self.inner.release(serial)

    def annotation(self, name, stage, dev, t):
        self.inner.annotation(name, stage, dev, t)

    def event(self, dev, action, addr, size, stream, t, stk, meta=None):
        self.resolve()
        o = self.o
        if o.annotate and 'annotate' not in o.skip:
            self.annotate_due(dev, t, stk)
            self.track(dev, action, addr, size, stream)
        if action in o.skip:
            self.sim.nev -= 1
            return
        self.put(dev, action, addr, size, stream, t, stk, meta)

    def put(self, dev, action, addr, size, stream, t, stk, meta=None):
        i = self.n[dev]
        self.n[dev] = i + 1
        if self.o.pool_ids:
            self.pools[dev].append(self.pool_of(dev, action, addr))
            if action == 'alloc':
                self.pending = (dev, i, addr)
        if meta is None:
            self.inner.event(dev, action, addr, size, stream, t, stk)
        else:                           # an annotate event's user_metadata
            self.inner.event(dev, action, addr, size, stream, t, stk, meta)
        return i

    def pool_of(self, dev, action, addr):
        d = self.sim.devs[dev]
        if action in ('free_requested', 'free_completed', 'annotate'):
            b = d.live.get(addr)
            if b is not None and b.pool is not None:
                return b.pool.pool_id
        elif action == 'segment_alloc':
            s = d.segments.get(addr)
            if s is not None:
                self.segpool[(dev, addr)] = s.pool_id
                return s.pool_id
        elif action == 'segment_free':
            # the simulator forgets the segment before it emits this; only
            # the default pools' segments are freed before the trace starts
            return self.segpool.pop((dev, addr), DEFAULT_POOL)
        # segment_map/unmap: expandable segments are the default pool's
        # only; oom, snapshot: the default pool
        return DEFAULT_POOL

    def resolve(self):
        """An alloc's block is the device's once malloc returns, after the
        event: its pool is looked up at the next event."""
        if self.pending is None:
            return
        dev, i, addr = self.pending
        self.pending = None
        b = self.sim.devs[dev].live.get(addr)
        if b is not None and b.pool is not None:
            self.pools[dev][i] = b.pool.pool_id

    def track(self, dev, action, addr, size, stream):
        """Which allocations are alive (an annotation needs one), and a few
        of them chosen to be annotated some events later."""
        live = self.live[dev]
        if action == 'alloc':
            rec = [self.n[dev] if action not in self.o.skip else -1,
                   size, stream, 0]
            live[addr] = rec
            if self.rng.random() < 0.05:
                self.due[dev].append([self.n[dev] + self.rng.randint(1, 40),
                                      addr, rec])
        elif action in ('free_requested', 'free_completed'):
            live.pop(addr, None)

    def annotate_due(self, dev, t, stk):
        due = self.due[dev]
        if not due or due[0][0] > self.n[dev]:
            return
        keep = []
        for item in due:
            at, addr, rec = item
            if at > self.n[dev]:
                keep.append(item)
                continue
            if self.live[dev].get(addr) is not rec:
                continue                     # freed before it was annotated
            self.tags += 1
            text = "{'tag': '%s', 'n': %d}" % (
                ANNOTATE_TAGS[self.tags % len(ANNOTATE_TAGS)], self.tags)
            i = self.put(dev, 'annotate', addr, rec[1], rec[2], t, stk,
                         text)
            self.sim.nev += 1
            rec[3] += 1
            self.notes[dev].append({'raw': i, 'addr': addr,
                                    'size': rec[1], 'alloc_raw': rec[0],
                                    'user_metadata': text,
                                    'nth': rec[3]})
            if rec[3] < 3 and self.rng.random() < 0.3:
                # several annotations pile up on one allocation
                keep.append([self.n[dev] + self.rng.randint(1, 20), addr,
                             rec])
        keep.sort(key=lambda x: x[0])
        self.due[dev] = keep

    def finish(self):
        self.resolve()


def wrap_sink(p, sink):
    o = getattr(p, 'y26', None)
    if o is None or not o.traced():
        return sink
    return Recorder(p, sink)


def attach(sink, sim):
    if isinstance(sink, Recorder):
        sink.sim = sim


# -- the snapshot object -----------------------------------------------------

def finish_object(p, sink, obj):
    """The object to pickle, with the additions.  Returns obj."""
    o = getattr(p, 'y26', None)
    if o is None:
        return obj
    rec = getattr(sink, 'recorder', None)
    if rec is not None:
        rec.finish()
    traces = obj['device_traces']
    dropped = sink.dropped
    if rec is not None and o.pool_ids:
        for d, tr in enumerate(traces):
            pools = rec.pools[d]
            for i, e in enumerate(tr):
                pid = pools[i + dropped[d]]
                e['pool_id'] = tuple([pid[0], pid[1]])
    if o.xpu:
        st = obj['allocator_settings']
        obj['allocator_settings'] = {
            ('PYTORCH_XPU_ALLOC_CONF' if k == 'PYTORCH_CUDA_ALLOC_CONF'
             else k): v for k, v in st.items()}
    times = [e['time_us'] for tr in traces for e in tr if 'time_us' in e]
    if o.no_trace:
        obj['device_traces'] = [[] for _ in traces]
        del obj['external_annotations']
    if o.host:
        t0 = min(times) if times else 1718000000000000 + p.seed * 86400000000
        t1 = max(times) if times else t0 + 1000000
        host = HostAllocator(p.seed, t0, t1)
        host.run()
        sink.host = host
        objs = Objects(p.fmt)
        segs = []
        for r in host.segments():
            s = objs.segment(r)
            del s['device']             # the host has no device index
            segs.append(s)
        obj['host_segments'] = segs
        if o.no_trace:
            obj['host_traces'] = []
        else:
            obj['host_traces'] = [objs.entry(e) for e in host.events]
            if o.pool_ids:
                for e in obj['host_traces']:
                    e['pool_id'] = tuple([0, 0])
    return obj


# -- pinned host memory ------------------------------------------------------

PIN = ('pin_memory', '/opt/conda/lib/python3.11/site-packages/torch/utils/'
       'data/_utils/pin_memory.py', 64)
LOADER = ('_pin_batch', '/home/alice/proj/data/loader.py', 41)
OFFLOAD = ('offload_weights', '/home/alice/proj/offload.py', 27)
TRAIN = ('train_step', '/home/alice/proj/train.py', 112)


def pow2_ceil(n):
    """The host allocator's size: the next power of two (CachingHostAllocator
    rounds every request so)."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


class HostAllocator:
    """PyTorch's caching host allocator for pinned memory, as snapview reads
    its trace (doc/snapshot-format.md §17.6): every block is its own
    cudaHostAlloc allocation (a segment of one block) of the request
    rounded up to a power of two; a freed block stays cached and serves a
    later request of the same rounded size; emptying the cache frees the
    cached blocks.  A data loader pins its batches (their lengths vary);
    an offload buffer of 20.4 GiB takes 32 GiB (sglang#37285)."""

    def __init__(self, seed, t0, t1):
        self.rng = random.Random(seed * 7 + 1)
        self.t0, self.t1 = t0, t1
        self.addr = 0x7e0000000000
        self.blocks = {}                 # addr -> [size, req, state, stk]
        self.cached = collections.defaultdict(list)   # size -> [addr]
        self.raw = []                    # (action, addr, size, stk)
        self.stacks = {}
        self.peak = (0, -1)
        self.cur = 0

    def stack(self, site):
        s = self.stacks.get(site)
        if s is None:
            frames = (PIN, LOADER, TRAIN) if site == LOADER else (site, TRAIN)
            s = self.stacks[site] = (-1 - len(self.stacks), frames)
        return s

    def emit(self, action, addr, size, stk):
        self.raw.append((action, addr, size, stk))
        if action == 'alloc':
            self.cur += size
        elif action == 'free_completed':
            self.cur -= size
        if action in ('alloc', 'free_completed') and self.cur > self.peak[0]:
            self.peak = (self.cur, len(self.raw) - 1)

    def malloc(self, req, site):
        stk = self.stack(site)
        size = pow2_ceil(req)
        if self.cached[size]:
            addr = self.cached[size].pop(0)
        else:
            addr = self.addr
            self.addr += max(size, 4096)      # page-aligned allocations
            self.emit('segment_alloc', addr, size, stk)
        self.blocks[addr] = [size, req, ALLOCATED, stk]
        self.emit('alloc', addr, req, stk)
        return addr

    def free(self, addr, completed=True):
        b = self.blocks[addr]
        if b[2] == ALLOCATED:
            self.emit('free_requested', addr, b[1], b[3])
            b[2] = PENDING
        if completed:                    # the copies using it have finished
            self.emit('free_completed', addr, b[1], b[3])
            b[2] = FREE
            self.cached[b[0]].append(addr)

    def empty_cache(self):
        for size in sorted(self.cached):
            for addr in sorted(self.cached[size]):
                self.emit('segment_free', addr, size, self.blocks[addr][3])
                del self.blocks[addr]
            self.cached[size] = []

    def run(self):
        rng = self.rng
        prev = []
        offload = None
        for k in range(12):
            seq = rng.choice((256, 300, 384, 512, 700))
            batch = [self.malloc(4 * seq * 8, LOADER),         # token ids
                     self.malloc(8 * 3 * 224 * 224, LOADER),   # images
                     self.malloc(4 * 8, LOADER)]                # labels
            for a in prev:           # the last batch's copies are done
                self.free(a, completed=False)
            for a in prev:
                self.free(a)
            prev = batch
            if k == 3:
                offload = self.malloc(int(20.4 * GiB), OFFLOAD)
            if k == 6:
                self.empty_cache()
        for a in prev[:1]:
            self.free(a, completed=False)    # a copy still in flight
        self.offload = offload
        n = len(self.raw)
        self.events = [(a, addr, size, 0,
                        self.t0 + (self.t1 - self.t0) * i // max(n - 1, 1),
                        stk) for i, (a, addr, size, stk) in
                       enumerate(self.raw)]

    def segments(self):
        out = []
        for addr in sorted(self.blocks):
            size, req, state, stk = self.blocks[addr]
            out.append({'device': 0, 'address': addr, 'total_size': size,
                        'stream': 0, 'kind': 'large',
                        'pool_id': DEFAULT_POOL, 'expandable': False,
                        'stk': stk,
                        'blocks': [(addr, size, req if state != FREE else 0,
                                    state, stk if state != FREE else None)]})
        return out

    def truth(self, traced):
        blocks = list(self.blocks.values())
        active = [b for b in blocks if b[2] != FREE]
        alloc = [b for b in blocks if b[2] == ALLOCATED]
        acts = collections.Counter(e[0] for e in self.raw)
        return {'device': HOST,
                'events': len(self.raw) if traced else 0,
                'actions': dict(sorted(acts.items())) if traced else {},
                'segments': len(blocks),
                'reserved': sum(b[0] for b in blocks),
                'allocated': sum(b[1] for b in alloc),
                'allocated_block_bytes': sum(b[0] for b in alloc),
                'active_blocks': len(active),
                'pending_free': sum(b[0] for b in blocks if b[2] == PENDING),
                'rounding_waste': sum(b[0] - b[1] for b in alloc),
                'largest_free_block': max([b[0] for b in blocks
                                           if b[2] == FREE] or [0]),
                'offload': {'requested': int(20.4 * GiB),
                            'size': pow2_ceil(int(20.4 * GiB))},
                **({'timeline_peak': self.peak[0],
                    'timeline_peak_event': self.peak[1]} if traced else {})}


# -- the truth ---------------------------------------------------------------

def finish_truth(p, sink, truth, obj):
    """Adds the additions' truth to the sidecar's dict; returns it."""
    o = getattr(p, 'y26', None)
    if o is None:
        return truth
    rec = getattr(sink, 'recorder', None)
    truth['pytorch_2_14'] = o.names()
    if o.annotate:
        out = []
        for d, notes in sorted(rec.notes.items()):
            off = sink.dropped[d]
            for nt in notes:
                if nt['raw'] < off:
                    continue
                a = nt['alloc_raw'] - off if nt['alloc_raw'] >= off else -1
                out.append({'device': d, 'event': nt['raw'] - off,
                            'addr': nt['addr'], 'size': nt['size'],
                            'alloc_event': a, 'nth': nt['nth'],
                            'user_metadata': nt['user_metadata']})
        truth['annotate'] = out
    if o.pool_ids:
        truth['pool_ids'] = [
            {'device': d, 'pools': sorted(
                [list(k), v] for k, v in collections.Counter(
                    rec.pools[d][sink.dropped[d]:]).items())}
            for d in range(len(truth['devices']))]
    if o.skip:
        truth['skip_actions'] = list(o.skip)
        for dd in truth['devices']:
            have = [a for a in ALLOC_ACTIONS if dd['actions'].get(a)]
            dd['missing_actions'] = [a for a in ALLOC_ACTIONS
                                     if a not in have] if have else []
    if o.xpu:
        truth['device_family'] = 'XPU'
    if o.no_trace:
        # the truth's own definitions over an empty trace: every block
        # alive at the end is alive before it (a ghost), the Active
        # Memory Timeline is their bytes, at no event (-1)
        truth['no_trace'] = True
        truth['annotations'] = 0
        for dd in truth['devices']:
            live = [b for s in obj['segments'] if s['device'] == dd['device']
                    for b in s['blocks'] if b['state'] == 'active_allocated']
            dd.update({'events': 0, 'actions': {},
                       'ghost_blocks': len(live),
                       'ghost_bytes': sum(b['requested_size'] for b in live),
                       'unmatched_frees': 0, 'unmatched_free_bytes': 0,
                       'timeline_peak_event': -1})
            dd['timeline_peak'] = dd['ghost_bytes']
        # answers about events: a trace-less file has none to give
        for k in ('frag', 'oom', 'steps', 'categories', 'phases', 'leak'):
            truth.pop(k, None)
    if o.host:
        truth['host'] = sink.host.truth(not o.no_trace)
    return truth


# -- gzip --------------------------------------------------------------------

def write_output(out, write):
    """write(path) writes the snapshot; for an OUT ending in .gz it writes
    beside it and the file is then gzip-compressed into OUT (the gzip
    header names the pickle, its time is 0: same arguments, same bytes).
    Returns what write returned."""
    if not out.endswith('.gz'):
        return write(out)
    plain = out[:-3]
    tmp = '%s.tmp%d' % (plain, os.getpid())
    try:
        r = write(tmp)
        with open(tmp, 'rb') as src, open(out, 'wb') as raw:
            with gzip.GzipFile(filename=os.path.basename(plain), mode='wb',
                               fileobj=raw, mtime=0) as z:
                shutil.copyfileobj(src, z, 1 << 20)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return r
