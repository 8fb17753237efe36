"""gensnap_run - running a scenario and writing its files.

Two paths write the same bytes: in memory (ListSink, snapshot objects,
pickle.dump) for small runs and ring buffers, and streaming (SpoolSink,
then the streaming pickle writer) for runs of any size.  The in-memory
path also writes the same snapshot as JSON (json.dump of the objects,
tuples as lists, as a JSON snapshot holds them), and either path
gzip-compressed (an output name ending in .gz, or --output-format).  Both hand what
they saw to the TruthTracker for the ground truth sidecar.  Section
numbers (§N) refer to doc/snapshot-format.md.
"""

import gzip
import json
import os
import pickle
import random
import sys
import time

import gensnap_2026
from gensnap_alloc import DEFAULT_POOL, FREE, GiB, MiB, Simulator
from gensnap_objects import (Objects, allocator_settings, annotation_obj,
                             final_segments)
from gensnap_pickle import EventEncoder, PickleWriter, enc_get
from gensnap_scenarios import SCENARIOS, Ctx
from gensnap_sinks import CountSink, ListSink, SpoolSink, _SimState, replay
from gensnap_stacks import StackFactory
from gensnap_truth import make_tracker

FORMATS = ('1.13', '2.0', '2.1', 'newest')
# what the snapshot is written as (--output-format); the default follows
# the output's name: .json, .json.gz, .pickle.gz, else a pickle
OUTPUT_FORMATS = ('pickle', 'json', 'pickle.gz', 'json.gz')


def output_format(path, given=None):
    """The output format of path: given, else its name's."""
    if given:
        return given
    for f in ('json.gz', 'pickle.gz', 'json'):
        if path.endswith('.' + f):
            return f
    return 'pickle'


def open_output(path, fmt):
    """The file to write a snapshot of format fmt to (binary)."""
    if fmt.endswith('.gz'):
        # mtime 0: the same snapshot gives the same bytes
        return gzip.GzipFile(path, 'wb', mtime=0)
    return open(path, 'wb')


def dump(obj, path, p):
    """Writes the snapshot obj to path in p's output format."""
    fmt = getattr(p, 'out_fmt', None) or output_format(path)
    with open_output(path, fmt) as f:
        if fmt.startswith('json'):
            f.write(json.dumps(obj).encode('utf-8'))
        else:
            pickle.dump(obj, f, protocol=p.proto)
STREAM_THRESHOLD = 200000


class Params:
    def __init__(self, a):
        spec = SCENARIOS[a.scenario]
        self.scenario = a.scenario
        self.fn = spec['fn']
        self.fmt = a.format or spec['fmt']
        if self.fmt == 'newest' and spec.get('npu') is None and a.npu:
            pass
        self.npu = a.npu or spec.get('npu', False)
        self.npu_pad = a.npu_pad if self.npu else 0
        self.events = a.events if a.events is not None else spec['events']
        self.ndev = spec.get('ndev', 1)
        self.limit = spec.get('limit')
        self.total = spec.get('total', 80 * GiB)
        self.expandable = spec.get('expandable', False) or a.expandable
        self.max_split = a.max_split_size
        # --alloc-conf (gensnap_conf.AllocConf) and --limit: the settings
        # and the device memory the run may use
        self.alloc_conf = getattr(a, 'alloc_conf_parsed', None)
        if self.alloc_conf is not None:
            self.expandable = self.alloc_conf.expandable
            self.max_split = self.alloc_conf.max_split
        self.limit_given = bool(getattr(a, 'limit', None))
        if self.limit_given:
            self.limit = a.limit
            self.total = a.limit + 512 * MiB
        self.max_entries = a.max_entries if a.max_entries is not None \
            else spec.get('max_entries')
        self.stacks = a.stacks or spec.get('stacks', 'python')
        self.ring_flag = getattr(a, 'ring_flag', False)
        self.seed = a.seed
        self.out_fmt = getattr(a, 'output_format', None)
        self.proto = a.protocol
        self.stage_first = spec.get('stage_first', False)
        self.phase_marks = getattr(a, 'phase_marks', None) or 'ranges'
        if self.phase_marks != 'ranges' and (self.scenario != 'rl' or
                                             self.fmt != 'newest'):
            raise SystemExit('gensnap: --phase-marks goes with --scenario '
                             'rl (format newest)')
        # the training scenario's model and run (gensnap_training.py)
        for k in TRAINING_OPTS:
            setattr(self, k, getattr(a, k, None))
        self.layers = self.layers or 24
        self.hidden = self.hidden or 1024
        self.batch = self.batch or 4
        self.seq = self.seq or 256
        self.vocab = self.vocab or 10000
        self.peak_factor = self.peak_factor or 1
        self.seq_jitter = self.seq_jitter or 0
        self.no_leak = False        # a rank of a set that does not leak
        self.fast = getattr(a, 'fast', False)   # gensnap_fast.py

    def estimated_events(self):
        """Events the run will write, about (to choose the writer)."""
        if self.scenario == 'training' and self.steps:
            return self.steps * (330 * self.layers + 300)
        return self.events or 0


# options of the training scenario, as Params attributes
TRAINING_OPTS = ('layers', 'hidden', 'batch', 'seq', 'vocab', 'steps',
                 'profiler', 'leak', 'seq_jitter', 'peak_step', 'peak_factor',
                 'oom_factor')


def make_sim(p, sink):
    rng = random.Random(p.seed)
    start = 1718000000000000 + p.seed * 86400 * 1000000
    sim = Simulator(sink, p.ndev, p.total, p.limit, p.expandable, p.max_split,
                    start, p.npu_pad, conf=p.alloc_conf)
    ctx = Ctx(sim, StackFactory(p.stacks), rng, p.events)
    ctx.opts = p
    ctx.annotate = p.fmt == 'newest' and not p.npu
    return sim, ctx


def workspace_prefix(p, sim):
    """torch_npu workspace triples (§16.4): allocate the workspace segment
    before the run so its address is real; returns (events, segment record)."""
    stream = 1815786048
    dev = sim.devs[0]
    size = 8 * MiB
    addr = dev.va.alloc(size)
    dev.reserved += size
    rec = {'device': 0, 'address': addr, 'total_size': size, 'stream': stream,
           'kind': 'large', 'pool_id': DEFAULT_POOL, 'expandable': False,
           'stk': None, 'blocks': [(addr, size, 0, FREE, None)]}
    return rec, addr, size, stream


def run_scenario(p, sink, tracker=None, setup=None):
    """Runs the scenario into `sink`; `setup(ctx, info)`, when given, is
    called before the scenario starts (gensnap_fast.py sets its stop test
    there)."""
    sink = gensnap_2026.wrap_sink(p, sink)
    sim, ctx = make_sim(p, sink)
    gensnap_2026.attach(sink, sim)
    if tracker is not None:
        tracker.attach(sim)
    info = {}
    ws = None
    if p.npu:
        ws = workspace_prefix(p, sim)
        for ev in ws_events(ws):            # head of the trace (§16.4)
            sink.event(0, *ev)
    if setup is not None:
        setup(ctx, info)
    p.fn(ctx, info)
    return sim, info, ws


def ws_events(ws):
    if ws is None:
        return []
    rec, addr, size, stream = ws
    return [('workspace_snapshot', addr, size, stream, 0, None),
            ('segment_alloc', addr, size, stream, 0, None),
            ('alloc', addr, size, stream, 0, None)]


def build_object(p, sim, sink, ws):
    objs = Objects(p.fmt, p.npu)
    segs = [objs.segment(r) for r in final_segments(sim, ws)]
    if p.fmt == '1.13':
        return segs
    ndev = 8 if p.npu else len(sim.devs)
    traces = []
    for d in range(ndev):
        evs = sink.traces[d] if d < len(sink.traces) else []
        traces.append([objs.entry(e) for e in evs])
    top = {'segments': segs, 'device_traces': traces}
    if p.fmt == 'newest' and not p.npu:
        top['allocator_settings'] = allocator_settings(p.expandable,
                                                       p.max_split,
                                                       p.alloc_conf)
        ring_settings(p, top['allocator_settings'], sink.dropped, ndev)
        top['external_annotations'] = [annotation_obj(a, p.stage_first)
                                       for a in sink.annotations]
    return top


def ring_settings(p, st, dropped, ndev):
    """--ring-flag: the ring buffer's keys (pytorch#179276), a list per
    device: overflowed when the ring dropped events."""
    if not p.ring_flag or not p.max_entries:
        return
    st['trace_alloc_overflowed'] = [d < len(dropped) and dropped[d] > 0
                                    for d in range(ndev)]
    st['trace_alloc_max_entries'] = [p.max_entries] * ndev


def generate_in_memory(p, out_path, truth_path):
    skip = None
    if p.max_entries:
        count = CountSink(p.ndev)
        run_scenario(p, count)
        skip = [max(0, c - p.max_entries) for c in count.counts]
    sink = ListSink(p.ndev, skip)
    tracker = make_tracker(p)
    sink.observers.append(tracker.observe)
    sim, info, ws = run_scenario(p, sink, tracker)
    obj = gensnap_2026.finish_object(p, sink,
                                     build_object(p, sim, sink, ws))
    dump(obj, out_path, p)
    if truth_path:
        truth = gensnap_2026.finish_truth(
            p, sink, tracker.finish(sim, info, sink, ws, obj), obj)
        write_json(truth_path, truth)
    return sim


def generate_streaming(p, out_path, truth_path):
    if p.fmt == '1.13' or p.proto < 4:
        raise SystemExit('gensnap: streaming needs --format 2.0/2.1/newest '
                         'and --protocol 4 or 5')
    fmt = getattr(p, 'out_fmt', None) or output_format(out_path)
    if fmt.startswith('json'):
        raise SystemExit('gensnap: JSON is written in memory: leave out '
                         '--stream, and keep --events under %d'
                         % STREAM_THRESHOLD)
    t0 = time.time()
    c0 = time.process_time()
    spool = SpoolSink(p.ndev, os.path.dirname(os.path.abspath(out_path)))
    try:
        sim, info, ws = run_scenario(p, spool, spool)
        spool.finish()
        c1 = time.process_time()
        nev, nbytes, skip = write_streamed(p, out_path, truth_path, spool,
                                           sim, info, ws)
    finally:
        spool.close()
    report_speed(nev, nbytes, t0, c0, c1)
    return sim


def report_speed(nev, nbytes, t0, c0, c1, more=''):
    """Writes a streamed file's size and speed to stderr: t0 the wall
    time it started, c0 the CPU time, c1 the CPU time the simulation
    ended at (the rest was writing); more: a note inside the brackets."""
    dt_s = time.time() - t0
    c2 = time.process_time()
    sys.stderr.write(
        'gensnap: %d events, %d bytes, %.1f bytes/event; %.1f s wall: '
        '%.1f MB/s; %.1f s CPU: %.1f MB/s (simulation %.1f s, writing '
        '%.1f s%s)\n' % (
            nev, nbytes, nbytes / max(nev, 1), dt_s,
            nbytes / 1e6 / max(dt_s, 1e-9), c2 - c0,
            nbytes / 1e6 / max(c2 - c0, 1e-9), c1 - c0, c2 - c1, more))


def write_streamed(p, out_path, truth_path, spool, sim, info, ws):
    counts = list(spool.counts)
    skip = [0] * p.ndev
    if p.max_entries:
        skip = [max(0, c - p.max_entries) for c in counts]
        counts = [min(c, p.max_entries) for c in counts]
    ndev = 8 if p.npu else p.ndev
    wcounts = counts + [0] * (ndev - len(counts))
    objs = Objects(p.fmt, p.npu)
    segrecs = final_segments(sim, ws)
    segs = [objs.segment(r) for r in segrecs]
    tracker = make_tracker(p)
    state = _SimState(p.ndev)
    tracker.attach(state)
    observe = tracker.observe if truth_path else None
    with open_output(out_path, getattr(p, 'out_fmt', None) or
                     output_format(out_path)) as f:
        w, enc = write_head(f, p, objs, segs)
        if ndev > 1:
            w.buf += b'('
        for d in range(ndev):
            lst = []
            w.boundary()
            w.buf += b']'
            w.memoize(lst)
            if d < p.ndev:
                n = replay(spool, d, enc, wcounts[d], skip[d], observe, state)
                assert n == wcounts[d], 'spool mismatch'
        write_tail(w, p, ndev, skip, spool.annotations)
    if truth_path:
        fake = ListSink(p.ndev)
        fake.dropped = skip
        fake.annotations = spool.annotations
        write_json(truth_path, tracker.finish(sim, info, fake, ws, None,
                                              segrecs=segrecs))
    return sum(wcounts), os.path.getsize(out_path), skip


def write_head(f, p, objs, segs):
    """The streamed file up to its first trace list: the top dict, the
    final segments, the device_traces list.  Returns the writer and the
    event encoder (which knows the stacks the segments pickled)."""
    w = PickleWriter(f, p.proto)
    enc = EventEncoder(w, objs)
    top = {}
    w.boundary()
    w.buf += b'}'
    w.memoize(top)
    w.buf += b'('
    w.save('segments')
    w.save(segs)
    # live stacks were pickled inside the segments: remember their slots
    for serial, lst in objs.lists.items():
        m = w.memo.get(id(lst))
        if m is not None:
            enc.smemo[serial] = enc_get(m[0])
    w.save('device_traces')
    dt = []
    w.boundary()
    w.buf += b']'
    w.memoize(dt)
    return w, enc


def write_tail(w, p, ndev, skip, annotations):
    """The streamed file after its last trace list: the device_traces
    list closed, the settings and annotations, the top dict closed."""
    if ndev > 1:
        w.buf += b'e'
    else:
        w.buf += b'a'
    if p.fmt == 'newest' and not p.npu:
        w.save('allocator_settings')
        st = allocator_settings(p.expandable, p.max_split, p.alloc_conf)
        ring_settings(p, st, skip, ndev)
        w.save(st)
        w.save('external_annotations')
        w.save([annotation_obj(a, p.stage_first) for a in annotations])
    w.buf += b'u'
    w.finish()


def write_json(path, obj):
    with open(path, 'w') as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write('\n')

