"""gensnap_check - the self-check: does a snapshot replay consistently?

Loads a pickle with an unpickler that refuses globals, checks every
segment, then undoes the trace from the final segments to get the state
at trace start (doc/snapshot-format.md §10.4) and replays it forward,
checking each event, and that the replay ends at exactly the snapshot's
live blocks and segments (§14).  Section numbers (§N) refer to
doc/snapshot-format.md.

This module shares no code with the generator: its size rules are
written here again from the allocator's documented behaviour (§13.1,
§13.3, §16.12), so that a mistake in the simulator's rounding cannot
pass both.
"""

import bisect
import collections
import gzip
import json
import os
import pickle
import re
import sys

BLOCK = 512                     # block sizes are multiples of this (§13.1)
SEGMENT_ALIGN = 2 * 1024 * 1024  # cudaMalloc'd segments start at multiples
NPU_PAD = 32                    # torch_npu's AddPadSize() (§16.12)


def block_size_for(request, pad=0):
    """Bytes of the block a request of `request` bytes gets when no split
    remainder is left with it: the request plus `pad` (0 for CUDA, the
    torch_npu pad otherwise), then up to a multiple of 512, never below
    512."""
    n = request + pad
    if n <= BLOCK:
        return BLOCK
    return -(-n // BLOCK) * BLOCK


class SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError('global %s.%s refused' % (module, name))


def safe_load(path):
    """The snapshot at path: a pickle, or JSON (its first byte other
    than a blank is { or [), either one gzip-compressed."""
    with open(path, 'rb') as f:
        if f.read(2) == b'\x1f\x8b':
            f.close()
            f = gzip.open(path, 'rb')
        else:
            f.seek(0)
        head = f.read(4096).lstrip(b' \t\r\n')
        f.seek(0)
        if head[:1] in (b'{', b'['):
            return json.load(f)
        return SafeUnpickler(f).load()


class Intervals:
    """Set of disjoint [a, b) ranges with a stream each."""

    def __init__(self):
        self.r = {}

    def add(self, a, s, stream):
        self.r[a] = [s, stream]
        self.normalize()

    def normalize(self):
        out = {}
        prev = None
        for a in sorted(self.r):
            s, st = self.r[a]
            if prev is not None and prev + out[prev][0] == a and \
                    out[prev][1] == st:
                out[prev][0] += s
            else:
                out[a] = [s, st]
                prev = a
        self.r = out

    def find(self, a):
        for b, (s, st) in self.r.items():
            if b <= a < b + s:
                return b, s, st
        return None

    def remove(self, a, s):
        f = self.find(a)
        if f is None or a + s > f[0] + f[1]:
            return False
        b, bs, st = f
        del self.r[b]
        if a > b:
            self.r[b] = [a - b, st]
        if a + s < b + bs:
            self.r[a + s] = [b + bs - a - s, st]
        return True


class Extents:
    """Live blocks as sorted start addresses and their sizes."""

    def __init__(self):
        self.starts = []
        self.size = {}

    def add(self, a, n):
        if a not in self.size:
            bisect.insort(self.starts, a)
        self.size[a] = n

    def remove(self, a):
        if self.size.pop(a, None) is not None:
            del self.starts[bisect.bisect_left(self.starts, a)]

    def overlap(self, a, n):
        """The start of a live block sharing a byte with [a, a+n), or None."""
        i = bisect.bisect_left(self.starts, a)
        if i > 0:
            p = self.starts[i - 1]
            if p + self.size[p] > a:
                return p
        if i < len(self.starts) and self.starts[i] < a + n:
            return self.starts[i]
        return None


def self_check(path, quiet=False, strict=False):
    """Problems found in the snapshot at `path` (an empty list: consistent).
    `strict` also requires the blocks of the small pool to be exactly the
    rounded request, by CUDA's rule or by torch_npu's, one rule per
    device."""
    errs = []
    try:
        obj = safe_load(path)
    except Exception as e:      # noqa: BLE001 - report any load failure
        return ['cannot load: %s' % e]
    if isinstance(obj, list):
        segs, traces = obj, []
    elif isinstance(obj, dict):
        segs = obj.get('segments', [])
        traces = obj.get('device_traces', [])
    else:
        return ['top level is %s' % type(obj).__name__]
    finals = collections.defaultdict(list)
    for s in segs:
        finals[s.get('device', 0)].append(s)
    pads = {}
    for d, dsegs in sorted(finals.items()):
        pads[d] = device_pad(dsegs)
        if strict and pads[d] is None:
            errs += strict_errors(d, dsegs)
    for si, s in enumerate(segs):
        errs += check_segment(si, s)
    for d, tr in enumerate(traces):
        if tr:
            errs += check_trace(d, tr, finals.get(d, []), pads.get(d) or 0)
    if not quiet:
        nev = sum(len(t) for t in traces)
        print('%s: %d segments, %d events: %s' % (
            path, len(segs), nev, 'consistent' if not errs else
            '%d problems' % len(errs)))
    return errs


def requested(b):
    """A block's requested size (2.0 files keep it in `history` only)."""
    r = b.get('requested_size')
    if r is None and b.get('history'):
        r = b['history'][0].get('real_size', 0)
    return r


def small_blocks(segs):
    """(size, requested) of the live blocks in small-pool segments: there a
    block is exactly its rounded request, since a split leaves any
    remainder of 512 bytes or more in the pool (§13.4 step 8)."""
    out = []
    for s in segs:
        if s.get('segment_type') != 'small':
            continue
        for b in s['blocks']:
            r = requested(b)
            if b['state'] != 'inactive' and r is not None:
                out.append((b['size'], r))
    return out


def device_pad(segs):
    """The rounding one device's blocks follow: 0 (CUDA), NPU_PAD
    (torch_npu), or None when its small-pool blocks fit neither rule."""
    blocks = small_blocks(segs)
    for pad in (0, NPU_PAD):
        if all(size == block_size_for(r, pad) for size, r in blocks):
            return pad
    return None


def strict_errors(d, segs):
    out = []
    for size, r in small_blocks(segs):
        if size not in (block_size_for(r), block_size_for(r, NPU_PAD)):
            out.append('device %d: small block of %d bytes for a request of '
                       '%d (should have been split, §13.4)' % (d, size, r))
    if not out:
        out.append('device %d: small blocks follow neither the CUDA nor the '
                   'torch_npu rounding throughout' % d)
    return out[:50]


def check_segment(si, s):
    errs = []
    where = 'segment %d @%#x' % (si, s.get('address', 0))
    addr = s['address']
    off = addr
    alloc = active = req = 0
    for bi, b in enumerate(s['blocks']):
        ba = b.get('address', off)
        if ba != off:
            errs.append('%s: block %d at %#x, expected %#x' % (where, bi, ba, off))
        if b['size'] <= 0 or b['size'] % 512:
            errs.append('%s: block %d size %d' % (where, bi, b['size']))
        st = b['state']
        r = requested(b)
        if st != 'inactive':
            active += b['size']
            req += r or 0
            if r is not None and b['size'] < block_size_for(r):
                errs.append('%s: block %d size %d < round(%d)' % (
                    where, bi, b['size'], r))
        if st == 'active_allocated':
            alloc += b['size']
        off += b['size']
    if off - addr != s['total_size']:
        errs.append('%s: blocks cover %d bytes, total_size %d' % (
            where, off - addr, s['total_size']))
    if alloc != s['allocated_size']:
        errs.append('%s: allocated_size %d, blocks say %d' % (
            where, s['allocated_size'], alloc))
    if active != s['active_size']:
        errs.append('%s: active_size %d, blocks say %d' % (
            where, s['active_size'], active))
    if 'requested_size' in s and any('requested_size' in b for b in s['blocks']) \
            and req != s['requested_size']:
        errs.append('%s: requested_size %d, blocks say %d' % (
            where, s['requested_size'], req))
    if not s.get('is_expandable') and addr % SEGMENT_ALIGN:
        errs.append('%s: not 2 MiB aligned' % where)
    return errs


def check_trace(d, tr, finals, pad=0):
    """Undo the trace from the final segments (§10.4) to get the state at
    trace start, then replay it forward checking every event and compare
    the result with the final segments.  `pad`: the device's rounding pad
    (device_pad), for the least block an alloc takes."""
    errs = []
    i0 = 0
    workspace = set()
    while i0 + 2 < len(tr) and tr[i0]['action'] == 'workspace_snapshot':
        workspace.add(tr[i0]['addr'])      # §16.4 leading triples
        i0 += 3
    events = tr[i0:]
    live = {}
    fixed = {}
    exp = Intervals()
    for s in finals:
        if s.get('is_expandable'):
            exp.add(s['address'], s['total_size'], s['stream'])
        else:
            fixed[s['address']] = (s['total_size'], s['stream'])
        off = s['address']
        for b in s['blocks']:
            if b['state'] != 'inactive':
                r = b.get('requested_size')
                if r is None:
                    r = b['history'][0]['real_size'] if b.get('history') else 0
                live[off] = [r, b['state'] == 'active_pending_free']
            off += b['size']
    final_live = {a: tuple(v) for a, v in live.items()}
    final_fixed = dict(fixed)
    final_exp = dict((a, tuple(v)) for a, v in exp.r.items())

    def bad(i, msg):
        if len(errs) < 50:
            errs.append('device %d event %d: %s' % (d, i + i0, msg))

    # backwards
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        a, act = e.get('addr'), e['action']
        if act == 'free_completed':
            if a in live:
                bad(i, 'free_completed of live block %#x' % a)
            live[a] = [e['size'], True]
        elif act == 'free_requested':
            if a not in live or not live[a][1]:
                bad(i, 'free_requested of %#x not pending afterwards' % a)
            live[a] = [e['size'], False]
        elif act == 'alloc':
            if a not in live or live[a][1] or live[a][0] != e['size']:
                bad(i, 'alloc %#x not live afterwards' % a)
            live.pop(a, None)
        elif act == 'segment_alloc':
            if fixed.pop(a, (None,))[0] != e['size']:
                bad(i, 'segment_alloc %#x not in later state' % a)
        elif act == 'segment_free':
            fixed[a] = (e['size'], e['stream'])
        elif act == 'segment_map':
            if not exp.remove(a, e['size']):
                bad(i, 'segment_map %#x not mapped afterwards' % a)
        elif act == 'segment_unmap':
            exp.add(a, e['size'], e['stream'])
    init_live = len(live)
    # forwards; `extent` holds the least bytes each live block spans, so
    # that two live blocks overlapping is caught however large they are
    extent = Extents()
    for a, (r, _) in live.items():
        extent.add(a, block_size_for(r, pad))
    last_t = None
    for i, e in enumerate(events):
        a, act, size = e.get('addr'), e['action'], e.get('size')
        t = e.get('time_us')
        if t is not None:
            if last_t is not None and t < last_t:
                bad(i, 'time_us goes backwards')
            last_t = t
        if act == 'alloc':
            if a in live:
                bad(i, 'alloc of live address %#x' % a)
            seg = find_seg(fixed, exp, a)
            if seg is None:
                bad(i, 'alloc %#x outside any segment' % a)
            else:
                sa, ss, st = seg
                if st != e['stream']:
                    bad(i, 'alloc on stream %d in segment of stream %d' % (
                        e['stream'], st))
                if a + block_size_for(size, pad) > sa + ss:
                    bad(i, 'alloc %#x+%d overruns segment' % (a, size))
            other = extent.overlap(a, block_size_for(size, pad))
            if other is not None and a not in live:
                bad(i, 'alloc %#x overlaps the live block at %#x' % (a, other))
            extent.add(a, block_size_for(size, pad))
            live[a] = [size, False]
        elif act == 'free_requested':
            if a not in live or live[a][1] or live[a][0] != size:
                bad(i, 'free_requested of %#x not allocated' % a)
            else:
                live[a][1] = True
        elif act == 'free_completed':
            if a not in live or not live[a][1]:
                bad(i, 'free_completed of %#x not pending' % a)
            live.pop(a, None)
            extent.remove(a)
        elif act == 'segment_alloc':
            if find_seg(fixed, exp, a) is not None:
                bad(i, 'segment_alloc %#x overlaps' % a)
            if a % SEGMENT_ALIGN:
                bad(i, 'segment_alloc %#x not 2 MiB aligned' % a)
            fixed[a] = (size, e['stream'])
        elif act == 'segment_free':
            if a not in fixed or fixed[a][0] != size:
                bad(i, 'segment_free of unknown segment %#x' % a)
            elif any(a <= b < a + size for b in live):
                bad(i, 'segment_free %#x with live blocks' % a)
            fixed.pop(a, None)
        elif act == 'segment_map':
            exp.add(a, size, e['stream'])
        elif act == 'segment_unmap':
            if any(a <= b < a + size for b in live):
                bad(i, 'segment_unmap %#x with live blocks' % a)
            if not exp.remove(a, size):
                bad(i, 'segment_unmap %#x not mapped' % a)
    got_live = {a: tuple(v) for a, v in live.items() if a not in workspace}
    if got_live != final_live:
        diff = set(got_live.items()) ^ set(final_live.items())
        errs.append('device %d: replayed live blocks differ from segments '
                    '(%d differences, e.g. %s)' % (
                        d, len(diff), sorted(diff)[:3]))
    fixed = {a: v for a, v in fixed.items() if a not in workspace}
    final_fixed = {a: v for a, v in final_fixed.items() if a not in workspace}
    if fixed != final_fixed:
        errs.append('device %d: replayed segments differ from snapshot' % d)
    if dict((a, tuple(v)) for a, v in exp.r.items()) != final_exp:
        errs.append('device %d: replayed mapped ranges differ' % d)
    if init_live and os.environ.get('GENSNAP_VERBOSE'):
        sys.stderr.write('  device %d: %d allocations alive before the trace\n'
                         % (d, init_live))
    return errs


def find_seg(fixed, exp, a):
    for sa, (ss, st) in fixed.items():
        if sa <= a < sa + ss:
            return sa, ss, st
    return exp.find(a)



# ---------------------------------------------------------------------------
# The truth sidecar against the file (--self-check FILE --truth TRUTH)
# ---------------------------------------------------------------------------

def frames_text(frames):
    return '\n'.join(f.get('name', '') + ' ' + f.get('filename', '')
                     for f in frames or ())


def timeline(trace, segs, dev=0):
    """The Active Memory Timeline's totals (§10.2): requested bytes of
    blocks alive, those alive before the trace counted from the start, a
    lifetime ending at free_completed.  Returns (peak, index of the first
    event reaching it, ghost addresses, unmatched-free indices)."""
    seen, live = set(), {}
    unmatched = []
    for i, e in enumerate(trace):
        if e['action'] == 'alloc':
            seen.add(e['addr'])
            live[e['addr']] = e['size']
        elif e['action'] == 'free_completed':
            if live.pop(e['addr'], None) is None and e['addr'] not in seen:
                unmatched.append(i)
    ghosts = {}
    for s in segs:
        if s.get('device', 0) != dev:
            continue
        for b in s['blocks']:
            if b['state'] == 'active_allocated' and b['address'] not in live:
                ghosts[b['address']] = b['requested_size']
    cur = sum(ghosts.values()) + sum(trace[i]['size'] for i in unmatched)
    best, at = cur, -1
    alive = {}
    for i, e in enumerate(trace):
        if e['action'] == 'alloc':
            alive[e['addr']] = e['size']
            cur += e['size']
        elif e['action'] == 'free_completed':
            cur -= alive.pop(e['addr'], e['size'])
        else:
            continue
        if cur > best or at < 0:
            best, at = cur, i
    return best, at, ghosts, unmatched


def annotation_events(snap, trace):
    """(name, stage, index of the first event after it), by time_us."""
    times = [e.get('time_us', 0) for e in trace]
    out = []
    for a in snap.get('external_annotations') or ():
        out.append((a['name'], a['stage'],
                    bisect.bisect_right(times, a['time_us'])))
    return out


def steps_of(marks, nev, wrapped=False):
    """Steps by the rules the program under test follows (ProfilerStep
    first, else each Optimizer.step END closes one).  `wrapped`: the ring
    buffer dropped the oldest events, so a step that starts at the first
    event began before it and is left out."""
    prof = [m for m in marks if m[0].startswith('ProfilerStep#')]
    ranges = []
    if prof:
        start = {}
        for name, stage, i in prof:
            if stage == 'START':
                start[name] = i
            elif name in start and not (wrapped and start[name] == 0):
                ranges.append([start[name], i - 1])
        return 'profiler steps', ranges
    prev = 0
    for name, stage, i in marks:
        if name.startswith('Optimizer.step#') and stage == 'END':
            if not (wrapped and prev == 0):
                ranges.append([prev, i - 1])
            prev = i
    return 'optimizer annotations', ranges


def windows(marks, prefix):
    out, start = [], None
    for name, stage, i in marks:
        if name.startswith(prefix):
            if stage == 'START':
                start = i
            elif start is not None:
                out.append((start, i - 1))
                start = None
    return out


def inside(i, spans):
    return any(a <= i <= b for a, b in spans)


def categorize(trace, marks, ranges, ghosts):
    """A category for every allocation of a training file with C++
    frames, from its frames, its free's frames and its lifetime against
    the annotations (rules in contrib/README.gensnap.md)."""
    opt = windows(marks, 'Optimizer.step#')
    zero = windows(marks, 'Optimizer.zero_grad#')

    def step_of(i):
        """The step of event i; after the last complete step, one more
        (a step the trace ends in, as with an OOM)."""
        for k, (a, b) in enumerate(ranges):
            if a <= i <= b:
                return k
        return len(ranges) if not ranges or i > ranges[-1][1] else None
    cats = {}                     # alloc index -> category
    live = {}
    freed = {}                    # alloc index -> (free index, free frames)
    for i, e in enumerate(trace):
        if e['action'] == 'alloc':
            live[e['addr']] = i
        elif e['action'] == 'free_completed' and e['addr'] in live:
            freed[live.pop(e['addr'])] = (i, e.get('frames'))
    for i, e in enumerate(trace):
        if e['action'] != 'alloc':
            continue
        text = frames_text(e.get('frames'))
        f = freed.get(i)
        if 'getNewWorkspace' in text:
            c = 'workspace'
        elif 'Engine::thread_main' in text:
            if 'AccumulateGrad' in text or 'reduce_grad' in text or \
                    f is None or inside(f[0], zero):
                c = 'gradient'
            else:
                c = 'temporary'
        elif 'torch/optim/' in text or inside(i, opt):
            c = 'temporary' if f is not None else 'optimizer_state'
        elif 'torch/autograd/' in text:
            c = 'temporary'
        elif f is not None and 'Engine::thread_main' in frames_text(f[1]):
            c = 'activation'
        elif f is None and 'nn/modules/module.py' in text:
            c = 'activation'      # saved by a forward that never finished
        elif f is not None and step_of(f[0]) == step_of(i) and \
                step_of(i) is not None:
            c = 'temporary'
        else:
            c = 'other'
        cats[i] = c
    return cats


def category_bytes(trace, cats, ghosts, at, unmatched=()):
    """Requested bytes per category alive after event `at`; blocks freed
    in the trace but allocated before it count as 'unknown'."""
    out = collections.Counter()
    out['parameter'] += sum(ghosts.values())
    out['unknown'] += sum(trace[i]['size'] for i in unmatched if i > at)
    live = {}
    for i, e in enumerate(trace[:at + 1]):
        if e['action'] == 'alloc':
            live[e['addr']] = (e['size'], cats[i])
        elif e['action'] == 'free_completed':
            live.pop(e['addr'], None)
    for size, c in live.values():
        out[c] += size
    return out


def check_truth(path, truth_path):
    """Problems between a file and the truth gensnap wrote beside it."""
    with open(truth_path) as f:
        truth = json.load(f)
    snap = safe_load(path)
    errs = []

    def eq(what, got, want):
        if got != want:
            errs.append('truth: %s: file says %r, truth %r' % (what, got,
                                                               want))
    if not isinstance(snap, dict):
        return errs
    traces = snap.get('device_traces', [])
    segs = snap.get('segments', [])
    for d in truth.get('devices', []):
        dev = d['device']
        tr = traces[dev] if dev < len(traces) else []
        dsegs = [s for s in segs if s.get('device', 0) == dev]
        eq('device %d events' % dev, len(tr), d['events'])
        eq('device %d segments' % dev, len(dsegs), d['segments'])
        eq('device %d reserved' % dev, sum(s['total_size'] for s in dsegs),
           d['reserved'])
        if tr and 'time_us' in tr[0]:
            peak, at, ghosts, unmatched = timeline(tr, segs, dev)
            eq('device %d timeline peak' % dev, peak, d['timeline_peak'])
            eq('device %d timeline peak event' % dev, at,
               d['timeline_peak_event'])
            eq('device %d blocks before the trace' % dev, len(ghosts),
               d['ghost_blocks'])
    if truth.get('scenario') == 'training' and \
            'external_annotations' in snap:
        errs += check_training_truth(snap, truth)
    if 'phases' in truth and 'external_annotations' in snap:
        errs += check_phases_truth(snap, truth)
    return errs


def annotate_spans(tr):
    """Phase instances of annotate events (§17.1, --phase-marks
    annotate) whose metadata names a phase ({'phase': NAME}): the life of
    the annotated allocation, from the first event its alloc made (the
    segment_alloc just before it) to its free_completed."""
    live, opened, out = {}, {}, []
    for i, e in enumerate(tr):
        a = e['action']
        if a == 'alloc':
            live[e['addr']] = i
        elif a == 'free_completed':
            live.pop(e['addr'], None)
            for first, name in opened.pop(e['addr'], ()):
                out.append((first, i, name))
        elif a == 'annotate':
            m = re.search(r"'phase': '([^']*)'",
                          e.get('user_metadata') or '')
            k = live.get(e['addr'])
            if m is None or k is None:
                continue
            while k > 0 and tr[k - 1]['action'] in ('segment_alloc',
                                                     'segment_map'):
                k -= 1
            opened.setdefault(e['addr'], []).append((k, m.group(1)))
    return out


def check_phases_truth(snap, truth):
    """The phase instances of the truth (gensnap_rl.py) from the file:
    annotation ranges paired by name, the totals after each event, the
    reserved bytes from the segment events and the final segments."""
    tr = snap['device_traces'][0]
    errs = []
    res_ev = {'segment_alloc': 1, 'segment_map': 1, 'segment_free': -1,
              'segment_unmap': -1}
    res = sum(s['total_size'] for s in snap['segments']
              if s.get('device', 0) == 0)
    res -= sum(res_ev.get(e['action'], 0) * e['size'] for e in tr)
    peak, at, ghosts, unmatched = timeline(tr, snap['segments'])
    cur = sum(ghosts.values()) + sum(tr[i]['size'] for i in unmatched)
    base, total, reserved, live, life = cur, [], [], {}, []
    for i, e in enumerate(tr):
        if e['action'] == 'alloc':
            live[e['addr']] = len(life)
            life.append([i, e['size'], None])
            cur += e['size']
        elif e['action'] == 'free_completed':
            k = live.pop(e['addr'], None)
            if k is None:
                life.append([-1, e['size'], i])
            else:
                life[k][2] = i
            cur -= e['size'] if k is None else life[k][1]
        res += res_ev.get(e['action'], 0) * e['size']
        total.append(cur)
        reserved.append(res)
    # only the truth knows whether a ring buffer dropped events: then a
    # range starting at the first event began before it
    wrapped = truth['devices'][0]['dropped_events'] > 0
    got, start = [], {}
    for name, stage, i in annotation_events(snap, tr):
        if stage == 'START':
            start[name] = i
        elif name in start:
            first = start.pop(name)
            if i - 1 < first or (wrapped and first == 0):
                continue
            got.append((first, i - 1, name.split('#')[0]
                        if name.split('#')[-1].isdigit() else name))
    got += [g for g in annotate_spans(tr) if not (wrapped and g[0] == 0)]
    got.sort()
    want = truth['phases']
    if len(got) != len(want):
        return ['truth: phase instances: file says %d, truth %d' %
                (len(got), len(want))]
    for (first, last, name), t in zip(got, want):
        peak = max(range(first, last + 1), key=lambda i: (total[i], -i))
        left = [b for b in life if first <= b[0] <= last and
                (b[2] is None or b[2] > last)]
        freed = [b for b in life if b[0] < first and b[2] is not None and
                 first <= b[2] <= last]
        g = {'phase': name, 'first_event': first, 'last_event': last,
             'peak_bytes': total[peak], 'peak_event': peak,
             'alive_before_bytes': total[first - 1] if first else base,
             'freed_inside_bytes': sum(b[1] for b in freed),
             'left_bytes': sum(b[1] for b in left),
             'left_count': len(left),
             'allocated_end_bytes': total[last],
             'reserved_end_bytes': reserved[last]}
        for k, v in g.items():
            if t[k] != v:
                errs.append('truth: %s #%d %s: file says %r, truth %r' %
                            (t['phase'], t['iteration'], k, v, t[k]))
    return errs


def check_training_truth(snap, truth):
    errs = []

    def eq(what, got, want):
        if got != want:
            errs.append('truth: %s: file says %r, truth %r' % (what, got,
                                                               want))
    tr = snap['device_traces'][0]
    marks = annotation_events(snap, tr)
    # only the truth knows whether a ring buffer dropped events
    wrapped = truth['devices'][0]['dropped_events'] > 0
    source, ranges = steps_of(marks, len(tr), wrapped)
    st = truth['steps']
    eq('step source', source, st['source'])
    eq('steps', len(ranges), st['count'])
    eq('step ranges', ranges, st['ranges'])
    peak, at, ghosts, unmatched = timeline(tr, snap['segments'])
    cats = categorize(tr, marks, ranges, ghosts)
    tc = truth['categories']
    # Python-only stacks cannot tell the categories apart, nor frames of
    # blocks allocated before a ring buffer's window
    split = not wrapped and any('Engine::thread_main' in frames_text(
        e.get('frames')) for e in tr[:5000])
    for name, idx in (('at_last_event', len(tr) - 1), ('at_peak', at)):
        got = category_bytes(tr, cats, ghosts, idx, unmatched)
        want = tc[name]
        eq('sum of the categories %s' % name, sum(got.values()),
           sum(want.values()))
        if split:
            eq('categories %s' % name,
               {c: got.get(c, 0) for c in want}, want)
    leak = truth.get('leak')
    if leak:
        live = {}
        for i, e in enumerate(tr):
            if e['action'] == 'alloc':
                live[e['addr']] = i
            elif e['action'] == 'free_completed':
                live.pop(e['addr'], None)
        at_site = []
        for i in sorted(live.values()):
            fr = [f for f in tr[i].get('frames', ())
                  if f['filename'].endswith('.py')]
            if fr and (fr[0]['filename'], fr[0]['line']) == \
                    (leak['filename'], leak['line']):
                at_site.append(i)
        eq('leaked blocks at %s' % leak['site'], len(at_site), leak['count'])
        eq('leaked bytes', sum(tr[i]['size'] for i in at_site),
           leak['total_requested'])
        k = leak.get('steps_per_leak', 1)
        steps = [next((n for n, (a, b) in enumerate(ranges) if a <= i <= b),
                      None) for i in at_site]
        eq('steps of the leaked blocks', steps,
           [n for n in range(0, len(ranges), k)][:len(steps)])
    return errs
