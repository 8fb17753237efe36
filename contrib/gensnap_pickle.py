"""gensnap_pickle - the streaming pickle writer of contrib/gensnap.py.

Writes protocol 4/5 pickles opcode by opcode, byte for byte as CPython's
C pickler writes the same objects (doc/snapshot-format.md §8.2): the
memo, batches of 1000, FRAME boundaries.  EventEncoder encodes trace
entries from prepared byte strings, so that a trace of millions of
events is written without building its objects.
"""

import pickle
import struct

FRAME_TARGET = 64 * 1024


_K = [b'K' + bytes((i,)) for i in range(256)]


def enc_int(x):
    """BININT1/BININT2/BININT/LONG1 exactly as save_long chooses them."""
    if x >= 0:
        if x < 256:
            return _K[x]
        if x < 65536:
            return b'M' + x.to_bytes(2, 'little')
        if x < 2 ** 31:
            return b'J' + x.to_bytes(4, 'little')
        n = (x.bit_length() >> 3) + 1
        return b'\x8a' + bytes((n,)) + x.to_bytes(n, 'little')
    if x >= -2 ** 31:
        return b'J' + struct.pack('<i', x)
    data = pickle.encode_long(x)
    return b'\x8a' + bytes((len(data),)) + data


def enc_get(i):
    return b'h' + bytes((i,)) if i < 256 else b'j' + struct.pack('<I', i)


class PickleWriter:
    """Writes protocol 4/5 pickles the way CPython's C pickler does:
    memo by identity, batches of 1000, and the current frame committed at
    the start of any save() (of any object, memo hits included) once it
    holds >= 64 KiB.  Opcodes written between saves (MARK, APPENDS,
    SETITEMS, TUPLEn) never start a frame."""

    def __init__(self, f, proto):
        assert proto >= 4
        self.f = f
        self.buf = bytearray()
        self.memo = {}
        self.n = 0
        f.write(bytes((0x80, proto)))

    def boundary(self):
        if len(self.buf) >= FRAME_TARGET:
            self.f.write(b'\x95' + struct.pack('<Q', len(self.buf)))
            self.f.write(self.buf)
            self.buf = bytearray()

    def finish(self):
        self.buf += b'.'
        if len(self.buf) >= 4:
            self.f.write(b'\x95' + struct.pack('<Q', len(self.buf)))
        self.f.write(self.buf)
        self.buf = bytearray()

    def memoize(self, obj):
        self.buf += b'\x94'
        self.memo[id(obj)] = (self.n, obj)
        self.n += 1

    def save(self, obj):
        self.boundary()
        buf = self.buf
        t = type(obj)
        if obj is None:
            buf += b'N'
        elif t is bool:
            buf += b'\x88' if obj else b'\x89'
        elif t is int:
            buf += enc_int(obj)
        elif t is float:
            buf += b'G' + struct.pack('>d', obj)
        else:
            m = self.memo.get(id(obj))
            if m is not None:
                buf += enc_get(m[0])
            elif t is str:
                data = obj.encode('utf-8')
                if len(data) < 256:
                    buf += b'\x8c' + bytes((len(data),)) + data
                else:
                    buf += b'X' + struct.pack('<I', len(data)) + data
                self.memoize(obj)
            elif t is tuple:
                if not obj:
                    buf += b')'
                else:
                    assert len(obj) <= 3
                    for x in obj:
                        self.save(x)
                    self.buf += b'\x85\x86\x87'[len(obj) - 1:len(obj)]
                    self.memoize(obj)
            elif t is list:
                buf += b']'
                self.memoize(obj)
                self.batch(obj, b'a', b'e', self.save)
            elif t is dict:
                buf += b'}'
                self.memoize(obj)
                self.batch(list(obj.items()), b's', b'u', self.save_pair)
            else:
                raise TypeError(t)

    def save_pair(self, kv):
        self.save(kv[0])
        self.save(kv[1])

    def batch(self, items, one, many, saver):
        if not items:
            return
        if len(items) == 1:
            saver(items[0])
            self.buf += one
            return
        for i in range(0, len(items), 1000):
            self.buf += b'('
            for x in items[i:i + 1000]:
                saver(x)
            self.buf += many

    def chunks(self, chunks):
        """Append pre-encoded bytes; each chunk starts with a save()."""
        data = b''.join(chunks)
        if len(self.buf) + len(data) < FRAME_TARGET:
            self.buf += data
            return
        for c in chunks:
            self.boundary()
            self.buf += c


class _IntCache(dict):
    """int -> prefix + suffix around its pickle opcodes (enc_int), filled
    on demand."""

    def __init__(self, prefix=b'', suffix=b''):
        super().__init__()
        self.prefix = prefix
        self.suffix = suffix

    def __missing__(self, x):
        b = self[x] = self.prefix + enc_int(x) + self.suffix
        return b


# time_us values in [2**47, 2**55) are LONG1 with 7 bytes (enc_int)
_T7_LO, _T7_HI = 1 << 47, 1 << 55


class EventEncoder:
    """Encodes trace entries.  `write` is the reference path: it lays an
    entry out as chunks that each start with a save() (so FRAME boundaries
    fall where CPython's pickler puts them) and falls back to pickling a
    real dict (`slow`) until the keys, the action string and the frame dicts
    are in the memo.  `fast` builds the same bytes in one concatenation,
    from byte strings prepared once (the key references, everything up to
    the address per action, the constant tail) and caches (int opcodes,
    the frames list per stack template); it hands the entry to `write`
    when anything is not prepared yet or when the entry would cross the
    64 KiB frame target."""

    def __init__(self, w, objs):
        self.w = w
        self.objs = objs
        self.smemo = {}          # malloc serial -> BINGET bytes of its list
        self.trefs = {}          # template -> tuple of frame-dict get bytes
        self.tlists = {}         # id(template) -> (template, new-list bytes)
        self.fmt = objs.fmt
        self.has_time = self.fmt in ('2.1', 'newest') and not objs.npu
        self.has_cc = self.fmt == 'newest' and not objs.npu
        self.keys = None
        self.pre = {}            # action -> bytes up to the address value
        self.ints = _IntCache()
        self.sizes = self.streams = None
        # memo slots an entry takes besides a new frames list: the dict,
        # and the fresh 'N/A'
        self.nfixed = 2 if self.has_cc else 1

    def _keyrefs(self):
        memo = self.w.memo
        names = ['action', 'addr', 'size', 'stream', 'frames']
        if self.has_time:
            names.append('time_us')
        if self.has_cc:
            names += ['compile_context', 'user_metadata', '']
        out = {}
        for k in names:
            m = memo.get(id(k))
            if m is None:
                return None
            out[k] = enc_get(m[0])
        return out

    def _prepare(self):
        """Constant parts of an entry, once the keys are memoized."""
        K = self.keys
        self.k_size = K['size']
        self.k_stream = K['stream']
        self.k_time = K['time_us'] if self.has_time else b''
        mid = b''
        if self.has_cc:
            mid = (K['compile_context'] + b'\x8c\x03N/A\x94' +
                   K['user_metadata'] + K[''])
        self.tail_none = mid + b'u'
        self.mid_frames = mid + K['frames']
        # per-value caches of "key + value" byte strings
        self.sizes = _IntCache(self.k_size)
        self.streams = _IntCache(self.k_stream, self.k_time)
        self.fast = self._make_fast()

    def trim_caches(self):
        """Keeps the int caches bounded (called every 1000 entries)."""
        for c in (self.ints, self.sizes, self.streams):
            if c is not None and len(c) > 1 << 16:
                c.clear()

    def _template_refs(self, tmpl):
        r = self.trefs.get(tmpl)
        if r is None:
            memo = self.w.memo
            refs = []
            for k in tmpl:
                d = self.objs.frames.get(k)
                m = memo.get(id(d)) if d is not None else None
                if m is None:
                    return None
                refs.append(enc_get(m[0]))
            r = self.trefs[tmpl] = tuple(refs)
        return r

    def _new_list(self, tmpl):
        """Bytes of a new frames list for `tmpl` (None: frames unknown)."""
        refs = self._template_refs(tmpl)
        if refs is None:
            return None
        if not refs:
            data = b']\x94'
        elif len(refs) == 1:
            data = b']\x94' + refs[0] + b'a'
        else:
            data = b']\x94(' + b''.join(refs) + b'e'
        self.tlists[id(tmpl)] = (tmpl, data)
        return data

    def fast(self, action, addr, size, stream, t, serial, tmpl):
        """One entry; serial 0: no stack, else the stack (serial, tmpl).
        Until the keys are memoized every entry takes the reference path;
        then _prepare replaces this method by the closure _make_fast."""
        self._unprepared((action, addr, size, stream, t,
                          (serial, tmpl) if serial else None))

    def _make_fast(self):
        # Closure variables are cheaper to read than attributes of self.
        w = self.w
        pre_get = self.pre.get
        smemo = self.smemo
        smemo_get = smemo.get
        tlists_get = self.tlists.get
        ints, sizes, streams = self.ints, self.sizes, self.streams
        tail_none = self.tail_none
        mid_frames = self.mid_frames
        has_time = self.has_time
        join = b''.join
        nfixed = self.nfixed
        slow = self.write
        unprepared = self._unprepared
        new_list = self._new_list

        def fast(action, addr, size, stream, t, serial, tmpl):
            pre = pre_get(action)
            if pre is None:
                return unprepared((action, addr, size, stream, t,
                                   (serial, tmpl) if serial else None))
            new = False                 # a new frames list (memoized)
            if not serial:
                mid, lst = tail_none, b''
            else:
                mid = mid_frames
                lst = smemo_get(serial)
                if lst is None:
                    new = True
                    tl = tlists_get(id(tmpl))
                    if tl is not None and tl[0] is tmpl:
                        lst = tl[1]
                    else:
                        lst = new_list(tmpl)
                        if lst is None:
                            return slow((action, addr, size, stream, t,
                                         (serial, tmpl)))
                lst += b'u'
            if has_time:
                if _T7_LO <= t < _T7_HI:
                    tb = b'\x8a\x07' + t.to_bytes(7, 'little')
                else:
                    tb = enc_int(t)
                data = join((pre, ints[addr], sizes[size], streams[stream],
                             tb, mid, lst))
            else:
                data = join((pre, ints[addr], sizes[size], streams[stream],
                             mid, lst))
            buf = w.buf
            if len(buf) + len(data) >= FRAME_TARGET:
                return slow((action, addr, size, stream, t,
                             (serial, tmpl) if serial else None))
            buf += data
            n = w.n + nfixed
            if new:
                smemo[serial] = b'j' + n.to_bytes(4, 'little') if n > 255 \
                    else b'h' + bytes((n,))
                n += 1
            w.n = n
        return fast

    def _unprepared(self, ev):
        self.write(ev)
        action = ev[0]
        if self.keys is not None and action != 'oom':
            m = self.w.memo.get(id(action))
            if m is not None:
                if not self.pre:
                    self._prepare()
                self.pre[action] = (b'}\x94(' + self.keys['action'] +
                                    enc_get(m[0]) + self.keys['addr'])

    def write(self, ev):
        action, addr, size, stream, t, stk = ev
        w = self.w
        if self.keys is None or action == 'oom':
            return self.slow(ev)
        am = w.memo.get(id(action))
        if am is None:
            return self.slow(ev)
        refs = None
        if stk is not None and stk[0] not in self.smemo:
            refs = self._template_refs(stk[1])
            if refs is None:
                return self.slow(ev)
        K = self.keys
        c = [b'}\x94(', K['action'], enc_get(am[0]), K['addr'], enc_int(addr),
             K['size'], enc_int(size), K['stream'], enc_int(stream)]
        w.n += 1                                   # the entry dict
        if self.has_time:
            c += (K['time_us'], enc_int(t))
        if self.has_cc:
            c += (K['compile_context'], b'\x8c\x03N/A\x94', K['user_metadata'],
                  K[''])
            w.n += 1                               # fresh 'N/A'
        if stk is not None:
            c.append(K['frames'])
            if refs is None:
                c.append(self.smemo[stk[0]])
            else:
                self.smemo[stk[0]] = enc_get(w.n)
                w.n += 1
                if not refs:
                    c.append(b']\x94')
                elif len(refs) == 1:
                    c += (b']\x94', refs[0] + b'a')
                else:
                    c.append(b']\x94(')
                    c.extend(refs)
                    c[-1] += b'e'
        c[-1] += b'u'
        w.chunks(c)

    def slow(self, ev):
        w = self.w
        stk = ev[5]
        known = stk is not None and stk[0] in self.smemo
        obj = self.objs.entry(ev[:5] + (None,))
        lst = None
        if stk is not None:
            if known:
                lst = _MemoRef(self.smemo[stk[0]])
            else:
                lst = [self.objs.frame(k) for k in stk[1]]
            obj['frames'] = lst
        self._save_entry(obj)
        if stk is not None and not known:
            self.smemo[stk[0]] = enc_get(w.memo.pop(id(lst))[0])
        # the entry and its fresh 'N/A' are never referenced again
        cc = obj.get('compile_context')
        if cc is not None and len(cc) > 1:
            w.memo.pop(id(cc), None)
        w.memo.pop(id(obj), None)
        self.keys = self._keyrefs()

    def _save_entry(self, obj):
        w = self.w
        w.boundary()
        w.buf += b'}'
        w.memoize(obj)
        items = list(obj.items())
        w.buf += b'('
        for k, v in items:
            w.save(k)
            if isinstance(v, _MemoRef):
                w.boundary()
                w.buf += v.get
            else:
                w.save(v)
        w.buf += b'u'

    def release(self, serial):
        self.smemo.pop(serial, None)


class _MemoRef:
    """A frames list already in the memo (its BINGET bytes)."""
    __slots__ = ('get',)

    def __init__(self, get):
        self.get = get

