"""gensnap_check - the self-check: does a snapshot replay consistently?

Loads a pickle with an unpickler that refuses globals, checks every
segment, then undoes the trace from the final segments to get the state
at trace start (doc/snapshot-format.md §10.4) and replays it forward,
checking each event, and that the replay ends at exactly the snapshot's
live blocks and segments (§14).

This module shares no code with the generator: its size rules are
written here again from the allocator's documented behaviour (§13.1,
§13.3, §16.12), so that a mistake in the simulator's rounding cannot
pass both.
"""

import bisect
import collections
import os
import pickle
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
    with open(path, 'rb') as f:
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

