"""gensnap_sinks - where the simulator's events go.

CountSink counts them (the first pass of a ring-buffer run), ListSink
keeps them in memory for the pickle.dump path, SpoolSink writes them to a
compressed temporary file for the streaming path, and `replay` reads
that spool back into the streaming pickle writer.  Section numbers
(§N) refer to doc/snapshot-format.md.
"""

import array
import os
import tempfile
import zlib

class CountSink:
    """Pass 1 of streaming: counts events per device."""

    def __init__(self, ndev):
        self.counts = [0] * ndev
        self.nann = 0

    def event(self, dev, action, addr, size, stream, t, stk, meta=None):
        self.counts[dev] += 1

    def release(self, serial):
        pass

    def annotation(self, name, stage, dev, t):
        self.nann += 1


class ListSink:
    """In-memory: events per device.  The ring buffer (§1.3) keeps the last
    max_entries events: the caller counts first and passes how many of the
    oldest events to drop, so observers only see what is written."""

    def __init__(self, ndev, skip=None):
        self.traces = [[] for _ in range(ndev)]
        self.skip = list(skip) if skip else [0] * ndev
        self.dropped = [0] * ndev
        self.annotations = []
        self.observers = []

    def event(self, dev, action, addr, size, stream, t, stk, meta=None):
        """meta: an annotate event's user_metadata."""
        if self.skip[dev]:
            self.skip[dev] -= 1
            self.dropped[dev] += 1
            return
        ev = (action, addr, size, stream, t, stk)
        self.traces[dev].append(ev if meta is None else ev + (meta,))
        for o in self.observers:
            o(dev, action, addr, size, stk[1] if stk else None)

    def release(self, serial):
        pass

    def annotation(self, name, stage, dev, t):
        self.annotations.append((name, stage, dev, t))



ACTIONS = ('alloc', 'free_requested', 'free_completed', 'segment_alloc',
           'segment_free', 'segment_map', 'segment_unmap', 'oom',
           'workspace_snapshot', 'snapshot')
ACTION_CODE = {a: i for i, a in enumerate(ACTIONS)}
SPOOL_RELEASE = 100      # record: stack serial released
SPOOL_STATE = 101        # record: device counters just before segment_alloc
SPOOL_WIDTH = 7          # int64 per record
SPOOL_FLUSH = 7 << 14    # ints buffered per device before writing out
SPOOL_ZLIB = os.environ.get('GENSNAP_SPOOL_ZLIB', '1') != '0'


class _DevState:
    """What TruthTracker reads of a device, replayed from the spool."""

    def __init__(self):
        self.reserved = 0
        self.allocated_req = 0
        self.live = {}


class _SimState:
    def __init__(self, ndev):
        self.devs = [_DevState() for _ in range(ndev)]


class _LiveBlock:
    __slots__ = ('state', 'stk', 'req')

    def __init__(self, b):
        self.state, self.stk, self.req = b.state, b.stk, b.req


class SpoolSink:
    """Streaming, the only simulation run: every event (and stack release)
    of each device goes to a zlib-compressed temporary file as records of
    SPOOL_WIDTH int64 (code, addr, size, stream, time_us, serial, template
    index).  Once the run is over the final segments are known and
    `replay` feeds the records to the encoder device by device; nothing
    proportional to the number of events stays in memory (only the
    annotations, a few per training step)."""

    def __init__(self, ndev, tmpdir):
        self.files = [tempfile.TemporaryFile(dir=tmpdir) for _ in range(ndev)]
        self.bufs = [array.array('q') for _ in range(ndev)]
        self.zs = [zlib.compressobj(1) for _ in range(ndev)]
        self.counts = [0] * ndev
        self.tids = {}           # id(template) -> index in templates
        self.templates = []
        self.annotations = []
        self.last_dev = 0
        self.sim = None
        self.oom = {}            # dev -> _DevState at its oom event
        self.nev_from = None     # single device: the Simulator counting

    def attach(self, sim):
        self.sim = sim

    def template_index(self, tmpl):
        tid = self.tids.get(id(tmpl))
        if tid is None:
            tid = self.tids[id(tmpl)] = len(self.templates)
            self.templates.append(tmpl)         # keeps the id valid
        return tid

    def make_emit(self, sim):
        """Simulator.emit for the spool run: stamps the time and records
        the event in one Python call (the hot path of the simulation)."""
        clock = sim.clock
        bufs, counts, tids = self.bufs, self.counts, self.tids
        codes = ACTION_CODE
        spool = self

        if len(bufs) == 1:
            # one device: no per-device bookkeeping (finish() takes the
            # event count from sim.nev)
            buf = bufs[0]
            spool.nev_from = sim

            def emit1(dev, action, addr, size, stream, stk):
                sim.nev += 1
                n = clock.n = clock.n + 1
                t = clock.now = clock.now + 1 + (n * 7) % 4
                if stk is None:
                    serial = tid = 0
                else:
                    serial = stk[0]
                    tid = tids.get(id(stk[1]))
                    if tid is None:
                        tid = spool.template_index(stk[1])
                code = codes[action]
                if code == 3 or code == 7:      # segment_alloc, oom
                    spool.device_state(dev, code, buf)
                buf.extend((code, addr, size, stream, t, serial, tid))
                if len(buf) >= SPOOL_FLUSH:
                    spool.flush(0)
            return emit1

        def emit(dev, action, addr, size, stream, stk):
            sim.nev += 1
            n = clock.n = clock.n + 1
            t = clock.now = clock.now + 1 + (n * 7) % 4
            counts[dev] += 1
            spool.last_dev = dev
            if stk is None:
                serial = tid = 0
            else:
                serial = stk[0]
                tid = tids.get(id(stk[1]))
                if tid is None:
                    tid = spool.template_index(stk[1])
            code = codes[action]
            buf = bufs[dev]
            if code == 3 or code == 7:          # segment_alloc, oom
                spool.device_state(dev, code, buf)
            buf.extend((code, addr, size, stream, t, serial, tid))
            if len(buf) >= SPOOL_FLUSH:
                spool.flush(dev)
        return emit

    def event(self, dev, action, addr, size, stream, t, stk):
        self.counts[dev] += 1
        self.last_dev = dev
        buf = self.bufs[dev]
        if stk is None:
            serial = tid = 0
        else:
            serial = stk[0]
            tid = self.template_index(stk[1])
        code = ACTION_CODE[action]
        if code == 3 or code == 7:              # segment_alloc, oom
            self.device_state(dev, code, buf)
        buf.extend((code, addr, size, stream, t, serial, tid))
        if len(buf) >= SPOOL_FLUSH:
            self.flush(dev)

    def device_state(self, dev, code, buf):
        d = self.sim.devs[dev]
        buf.extend((SPOOL_STATE, d.reserved, d.allocated_req, 0, 0, 0, 0))
        if code == 7:
            st = _DevState()
            st.live = {a: _LiveBlock(b) for a, b in d.live.items()}
            self.oom[dev] = st

    def release(self, serial):
        buf = self.bufs[self.last_dev]
        buf.extend((SPOOL_RELEASE, serial, 0, 0, 0, 0, 0))
        if len(buf) >= SPOOL_FLUSH:
            self.flush(self.last_dev)

    def annotation(self, name, stage, dev, t):
        self.annotations.append((name, stage, dev, t))

    def flush(self, dev):
        buf = self.bufs[dev]
        if SPOOL_ZLIB:
            self.files[dev].write(self.zs[dev].compress(buf))
        else:
            buf.tofile(self.files[dev])
        del buf[:]

    def finish(self):
        if self.nev_from is not None:
            self.counts[0] += self.nev_from.nev
        for d, f in enumerate(self.files):
            self.flush(d)
            if SPOOL_ZLIB:
                f.write(self.zs[d].flush())
            f.seek(0)

    def records(self, dev):
        """The records of `dev`, in order, as tuples (the file is read
        back on this machine: native byte order)."""
        f = self.files[dev]
        if not SPOOL_ZLIB:
            while True:
                arr = array.array('q')
                try:
                    arr.fromfile(f, SPOOL_FLUSH)
                except EOFError:
                    pass
                if not arr:
                    return
                it = iter(arr)
                yield from zip(*[it] * SPOOL_WIDTH)
        z = zlib.decompressobj()
        rest = b''
        width = SPOOL_WIDTH * 8
        while True:
            chunk = f.read(1 << 18)
            data = rest + (z.decompress(chunk) if chunk else z.flush())
            n = len(data) // width * width
            arr = array.array('q')
            arr.frombytes(memoryview(data)[:n])
            rest = data[n:]
            it = iter(arr)
            yield from zip(*[it] * SPOOL_WIDTH)
            if not chunk:
                break
        assert not rest, 'truncated spool'

    def close(self):
        for f in self.files:
            f.close()


def replay(spool, dev, enc, count, skip, observe, state):
    """Writes the trace list items of `dev` from the spool (the list's
    EMPTY_LIST/MEMOIZE are already out): batches of 1000 as CPython's
    batch_list_exact writes them, a lone item with APPEND.  `skip`: oldest
    events dropped (ring buffer).  Returns the number of events written."""
    w = enc.w
    smemo = enc.smemo
    templates = spool.templates
    i = 0
    left = 0 if count > 1 else -1          # items left in this batch
    ds = state.devs[dev]
    for code, addr, size, stream, t, serial, tid in spool.records(dev):
        if code >= SPOOL_RELEASE:
            if code == SPOOL_RELEASE:
                smemo.pop(addr, None)
            else:
                ds.reserved, ds.allocated_req = addr, size
            continue
        if skip:
            skip -= 1
            continue
        action = ACTIONS[code]
        if observe is not None:
            if code == 7 and dev in spool.oom:
                ds.live = spool.oom[dev].live
            observe(dev, action, addr, size,
                    templates[tid] if serial else None)
        if not left:                           # MARK ... APPENDS
            if i:
                w.buf += b'e'
            w.buf += b'('
            left = 1000
            enc.trim_caches()
        left -= 1
        i += 1
        enc.fast(action, addr, size, stream, t, serial,
                 templates[tid] if serial else None)
    if count > 1:
        w.buf += b'e'
    elif count == 1:
        w.buf += b'a'
    return i

