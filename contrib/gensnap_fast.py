"""gensnap_fast - big training runs written from a repeating step.

`--fast` (the training scenario with --events N): once the optimizer
state exists, a training step leaves the allocator as it found it, so
every later step makes the same events at the same addresses; only the
times move on.  The simulation runs step by step until the allocator's
state at the end of a step equals its state one, two, three or four
steps (the period) earlier, twice in a row:

    H (the head) | T_a (one period) | T_b (the next one) ,
    state(end H) == state(end T_a) == state(end T_b).

The simulator and the scenario are deterministic in that state (the
random draws only move the clock), and T_b is checked event by event
against T_a.  The file holds H, then T_a's bytes R times (R >= 2, enough
copies for N events), every copy's times shifted by T_a's duration;
its final segments are the simulator's after T_b, which are the state
after any number of periods.

The copies are written without encoding their events again: T_a is
encoded once, in FRAMEs of its own, as one MARK ... APPENDS sequence
(APPENDS every 1000 items), and its time values are 7-byte integers at
known offsets.  Read as one little-endian integer, the k-th copy is T_a
plus k times (duration x the sum of 256**offset over those offsets): one
integer addition and one to_bytes per copy, whatever the number of
events.  A frames list an entry of a copy refers to by memo index is
T_a's (or the head's): a list of the same frames, since the copy makes
the same call.  The memo indices the copies' own MEMOIZEs take are
counted, so that what follows the trace refers to the right slots.

The truth is exact without observing the copies: the tracker observes
H, T_a and T_b, and the state it keeps (live blocks, running totals, the
peak and its event, the categories) is checked to be the same after T_b
as after T_a; the R - 2 further copies only add T_a's event and action
counts.  The annotations and the step marks are T_a's, shifted by the
copy's events and duration.
"""

import collections
import copy
import io
import os
import re
import struct
import sys
import time

from gensnap_objects import Objects, final_segments
from gensnap_pickle import _T7_HI, _T7_LO
from gensnap_run import (output_format, report_speed, run_scenario,
                         write_head, write_json, write_tail)
from gensnap_sinks import (ACTIONS, SPOOL_RELEASE, SPOOL_STATE, ListSink,
                           SpoolSink, _SimState)
from gensnap_truth import make_tracker

MAX_STEPS = 32          # steps simulated at most while looking for a period
MAX_PERIOD = 4


def fast_refusal(a):
    """Why the options given cannot run --fast (None: they can)."""
    if a.scenario != 'training':
        return 'it repeats a training step (--scenario training)'
    if a.events is None or a.steps is not None:
        return 'it takes --events N, not --steps'
    for opt in ('leak', 'max_entries', 'alloc_conf', 'limit', 'ranks',
                'run_dir', 'expandable', 'max_split_size'):
        if getattr(a, opt, None):
            return 'its steps must repeat: no --%s' % opt.replace('_', '-')
    if a.format == '1.13' or a.protocol < 4:
        return 'it streams: --format 2.0/2.1/newest, --protocol 4 or 5'
    if (getattr(a, 'output_format', None) or
            output_format(a.output or '')) not in ('pickle', 'pickle.gz'):
        return 'it writes a pickle (or .pickle.gz), not JSON ' \
            '(--output-format)'
    return None


def fingerprint(sim):
    """The allocator state a step starts from: segments and their blocks
    (with the stack template of each live one), pending frees by ticks
    left, the counters, the free address space."""
    d = sim.devs[0]
    segs = tuple((r['address'], r['stream'], r['pool_id'], r['kind'],
                  tuple((a, s, q, st, id(k[1]) if k else None)
                        for a, s, q, st, k in r['blocks']))
                 for r in d.snapshot())
    pend = tuple((due - d.tick, b.addr) for due, b in d.pending)
    return (segs, pend, d.reserved, d.allocated_req, d.allocated_size,
            tuple(d.va.free), tuple(sorted(d.live)))


class CycleFinder:
    """The scenario's stop test: after each step, notes where the step
    ended and whether the last 2 x period steps close the cycle."""

    def __init__(self, sim, info, spool):
        self.sim, self.info, self.spool = sim, info, spool
        self.ends = []        # (events, marks, annotations, clock, state)
        self.found = None     # (index of H's last step in ends, period)

    def done(self):
        sim = self.sim
        self.ends.append((sim.nev, len(self.info['marks']),
                          len(self.spool.annotations), sim.clock.now,
                          fingerprint(sim)))
        last = len(self.ends) - 1
        for g in range(1, MAX_PERIOD + 1):
            h = last - 2 * g
            if h < 0:
                break
            if self.ends[h][4] == self.ends[h + g][4] == self.ends[last][4]:
                self.found = (h, g)
                return True
        if len(self.ends) >= MAX_STEPS:
            raise SystemExit('gensnap: --fast: no repeating step within %d '
                             'steps' % MAX_STEPS)
        return False


STEP_NAME = re.compile(r'^ProfilerStep#(\d+)$')


def shifted_name(name, steps):
    m = STEP_NAME.match(name)
    return 'ProfilerStep#%d' % (int(m.group(1)) + steps) if m else name


def truth_state(tracker):
    """What the tracker keeps besides its counts (compared after T_a and
    after T_b)."""
    return copy.deepcopy({k: v for k, v in vars(tracker).items()
                          if k not in ('idx', 'actions', 'sim', 'p')})


def flush_frame(w):
    """Ends the current frame here (a frame boundary between items)."""
    if w.buf:
        w.f.write(b'\x95' + struct.pack('<Q', len(w.buf)))
        w.f.write(w.buf)
        w.buf = bytearray()


def generate_fast(p, out_path, truth_path):
    t0 = time.time()
    c0 = time.process_time()
    spool = SpoolSink(p.ndev, os.path.dirname(os.path.abspath(out_path)))
    finder = []

    def setup(ctx, info):
        f = CycleFinder(ctx.sim, info, spool)
        ctx.done = f.done
        finder.append(f)
    try:
        sim, info, ws = run_scenario(p, spool, spool, setup)
        spool.finish()
        c1 = time.process_time()
        try:
            nev, nbytes, reps = write_fast(p, out_path, truth_path, spool,
                                           sim, info, ws, finder[0])
        except BaseException:
            if os.path.exists(out_path):     # no half-written file left
                os.unlink(out_path)
            raise
    finally:
        spool.close()
    report_speed(nev, nbytes, t0, c0, c1,
                 '; --fast: a head of %d steps, then %d copies of %d' % (
                     finder[0].found[0] + 1, reps, finder[0].found[1]))
    return sim


def write_fast(p, out_path, truth_path, spool, sim, info, ws, finder):
    h, g = finder.found
    ends = finder.ends
    n_h, n_a, n_b = ends[h][0], ends[h + g][0], ends[h + 2 * g][0]
    n_t = n_a - n_h
    assert n_b - n_a == n_t, 'periods of different lengths'
    reps = max(2, -(-(p.events - n_h) // n_t))
    duration = ends[h + g][3] - ends[h][3]
    objs = Objects(p.fmt, p.npu)
    segrecs = final_segments(sim, ws)
    segs = [objs.segment(r) for r in segrecs]
    tracker = make_tracker(p)
    state = _SimState(p.ndev)
    tracker.attach(state)
    ds = state.devs[0]
    templates = spool.templates
    period = []               # T_a's events, to check T_b against
    times = []                # T_a's times, in order
    with open(out_path, 'wb') as f:
        w, enc = write_head(f, p, objs, segs)
        lst = []
        w.boundary()
        w.buf += b']'
        w.memoize(lst)
        w.buf += b'('
        smemo = enc.smemo
        capture = io.BytesIO()
        i = 0
        after_a = None
        for code, addr, size, stream, t, serial, tid in spool.records(0):
            if code >= SPOOL_RELEASE:
                if code == SPOOL_STATE:
                    ds.reserved, ds.allocated_req = addr, size
                elif i < n_a:
                    smemo.pop(addr, None)
                continue
            if i == n_h:                      # T_a: its own frames
                w.buf += b'e'
                flush_frame(w)
                w.f = capture
                w.buf += b'('
                memo0 = w.n
            elif i == n_a:                    # T_b: checked, not written
                w.buf += b'e'
                flush_frame(w)
                w.f = f
                memo_t = w.n - memo0
                after_a = (truth_state(tracker),
                           collections.Counter(tracker.actions[0]))
            elif i < n_a and i and (i - (n_h if i > n_h else 0)) % 1000 == 0:
                w.buf += b'e('
                enc.trim_caches()
            tmpl = templates[tid] if serial else None
            action = ACTIONS[code]
            if action in ('oom', 'segment_alloc', 'segment_free') and \
                    i >= n_h:
                raise SystemExit('gensnap: --fast: the repeating step has '
                                 'a %s event' % action)
            if truth_path:
                tracker.observe(0, action, addr, size, tmpl)
            if i < n_a:
                enc.fast(action, addr, size, stream, t, serial, tmpl)
                if i >= n_h:
                    period.append((code, addr, size, stream, tid))
                    times.append(t)
            elif period[i - n_a] != (code, addr, size, stream, tid):
                raise SystemExit('gensnap: --fast: step %d differs from '
                                 'the one a period before' % (h + g + 1))
            i += 1
        assert i == n_b, 'spool mismatch'
        if truth_path and truth_state(tracker) != after_a[0]:
            raise SystemExit('gensnap: --fast: the truth does not repeat')
        blob = capture.getvalue()
        f.write(blob)                          # copy 0: T_a itself
        write_copies(f, blob, times, enc.has_time, duration, reps)
        w.n += (reps - 1) * memo_t
        marks = info['marks']
        m_h, m_a = ends[h][1], ends[h + g][1]
        a_h, a_a = ends[h][2], ends[h + g][2]
        ann = spool.annotations
        out_marks = marks[:m_a]
        out_ann = ann[:a_a]
        for k in range(1, reps):
            out_marks += [(shifted_name(nm, k * g), st, n + k * n_t)
                          for nm, st, n in marks[m_h:m_a]]
            out_ann += [(shifted_name(nm, k * g), st, dev, t + k * duration)
                        for nm, st, dev, t in ann[a_h:a_a]]
        write_tail(w, p, 1, [0], out_ann)
    nev = n_h + reps * n_t
    if truth_path:
        more = reps - 2
        tracker.idx[0] += more * n_t
        per = collections.Counter(tracker.actions[0])
        per.subtract(after_a[1])
        for a, c in per.items():
            tracker.actions[0][a] += more * c
        assert tracker.idx[0] == nev
        info['marks'] = out_marks
        info['steps'] = h + 1 + reps * g
        fake = ListSink(p.ndev)
        fake.annotations = out_ann
        write_json(truth_path, tracker.finish(sim, info, fake, ws, None,
                                              segrecs=segrecs))
    return nev, os.path.getsize(out_path), reps


def write_copies(f, blob, times, has_time, duration, reps):
    """Copies 1 .. reps-1 of T_a's bytes, each time value `duration`
    later than in the copy before."""
    if not has_time or not times:
        for _ in range(1, reps):
            f.write(blob)
        return
    if times[-1] + (reps - 1) * duration >= _T7_HI or times[0] < _T7_LO:
        raise SystemExit('gensnap: --fast: times leave the 7-byte range')
    unit = bytearray(len(blob))
    pos = 0
    for t in times:                     # LONG1 of 7 bytes (enc_int)
        pos = blob.find(b'\x8a\x07' + t.to_bytes(7, 'little'), pos)
        if pos < 0:
            raise SystemExit('gensnap: --fast: a time value of the '
                             'period is not where it was written')
        unit[pos + 2] = 1
        pos += 9
    step = duration * int.from_bytes(unit, 'little')
    cur = int.from_bytes(blob, 'little')
    n = len(blob)
    for _ in range(1, reps):
        cur += step
        f.write(cur.to_bytes(n, 'little'))
