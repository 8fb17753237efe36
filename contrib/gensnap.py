#!/usr/bin/env python3
"""gensnap.py - generate realistic PyTorch CUDA memory snapshots (and prove them).

Standard library only.  Section numbers (§N) refer to docs/snapshot-format.md.

The generator has three parts:
  * a simulator of the CUDA caching allocator (§13) that emits trace events;
  * scenario drivers (training loops) that call malloc/free/empty_cache on it;
  * writers: an in-memory one (builds the Python objects with the sharing a
    real snapshot has, §8.3, and calls pickle.dump) and a streaming one that
    writes the same protocol-4 byte stream opcode by opcode (§8.2) without
    holding the events in memory (used with --events / --stream).

`--self-check FILE` loads a pickle with a restricted unpickler and checks
that the trace replays to the final segments (§14).
"""

import argparse
import array
import bisect
import collections
import functools
import gc
import io
import json
import os
import pickle
import random
import struct
import sys
import tempfile
import time
import zlib

KiB = 1024
MiB = 1024 * 1024
GiB = 1024 * MiB

# §13.1 constants
K_MIN_BLOCK = 512
K_SMALL_SIZE = 1 * MiB
K_SMALL_BUFFER = 2 * MiB
K_MIN_LARGE_ALLOC = 10 * MiB
K_LARGE_BUFFER = 20 * MiB
K_ROUND_LARGE = 2 * MiB
U64_MAX = 2 ** 64 - 1

FREE, ALLOCATED, PENDING = 0, 1, 2
STATE_NAMES = {FREE: 'inactive', ALLOCATED: 'active_allocated',
               PENDING: 'active_pending_free'}
DEFAULT_POOL = (0, 0)
GRAPH_POOL = (0, 1)

FORMATS = ('1.13', '2.0', '2.1', 'newest')


class OutOfMemory(Exception):
    pass


def round_size(n, divisions=0):
    """§13.3 round_size; `divisions` models roundup_power2_divisions."""
    if n < K_MIN_BLOCK:
        return K_MIN_BLOCK
    if divisions > 0 and n > K_MIN_BLOCK * divisions:
        low = 1 << (n.bit_length() - 1)
        if low == n:
            return n
        step = low // divisions
        return (n + step - 1) // step * step
    return (n + K_MIN_BLOCK - 1) // K_MIN_BLOCK * K_MIN_BLOCK


def segment_alloc_size(size):
    """§13.4 step 3: bytes cudaMalloc'd for a request of rounded `size`."""
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return (size + K_ROUND_LARGE - 1) // K_ROUND_LARGE * K_ROUND_LARGE


def align_up(n, a):
    return (n + a - 1) // a * a


# ---------------------------------------------------------------------------
# Allocator simulator (§13)
# ---------------------------------------------------------------------------

class Block:
    __slots__ = ('addr', 'size', 'req', 'state', 'stream', 'pool', 'prev',
                 'next', 'stk', 'seg', 'mapped', 'uses')

    def __init__(self, addr, size, stream, pool, seg, mapped=True):
        self.addr = addr
        self.size = size
        self.req = 0
        self.state = FREE
        self.stream = stream
        self.pool = pool
        self.prev = None
        self.next = None
        self.stk = None
        self.seg = seg
        self.mapped = mapped
        self.uses = ()


class Segment:
    """One cudaMalloc'd region, or (expandable) one VA reservation."""
    __slots__ = ('addr', 'size', 'stream', 'kind', 'pool_id', 'stk', 'head',
                 'expandable', 'page')

    def __init__(self, addr, size, stream, kind, pool_id, stk, expandable=False,
                 page=0):
        self.addr = addr
        self.size = size
        self.stream = stream
        self.kind = kind
        self.pool_id = pool_id
        self.stk = stk
        self.head = None
        self.expandable = expandable
        self.page = page


ADDR_BITS = 48                  # device addresses and sizes stay below 2**48
ADDR_MASK = (1 << ADDR_BITS) - 1
SORTED_LOAD = 512


class Pool:
    """A BlockPool: free blocks ordered by (stream, size, address) (§13.2).

    Per stream, the keys size << ADDR_BITS | address are kept sorted as a
    list of short sorted runs (at most 2 * SORTED_LOAD each) plus the list
    of the runs' maxima: insert, remove and lower bound cost O(log n +
    SORTED_LOAD) however many free blocks pile up (one flat sorted list
    costs an O(n) memmove per insert or remove, which made long runs of
    the leak scenario slow down as its live set grew)."""

    def __init__(self, kind, pool_id):
        self.kind = kind
        self.pool_id = pool_id
        self.streams = {}        # stream -> (runs, maxima)
        self.blocks = {}         # address -> Block
        # addresses of free blocks that span a whole segment: what
        # empty_cache can release, without scanning every free block
        self.whole = set()

    def insert(self, b):
        k = b.size << ADDR_BITS | b.addr
        self.blocks[b.addr] = b
        if b.prev is None and b.next is None:
            self.whole.add(b.addr)
        st = self.streams.get(b.stream)
        if st is None:
            self.streams[b.stream] = ([[k]], [k])
            return
        runs, maxes = st
        i = bisect.bisect_left(maxes, k)
        if i == len(maxes):
            if not maxes:
                runs.append([k])
                maxes.append(k)
                return
            i -= 1
            run = runs[i]
            run.append(k)
            maxes[i] = k
        else:
            run = runs[i]
            bisect.insort(run, k)
        if len(run) > 2 * SORTED_LOAD:
            runs.insert(i + 1, run[SORTED_LOAD:])
            del run[SORTED_LOAD:]
            maxes.insert(i, run[-1])

    def remove(self, b):
        k = b.size << ADDR_BITS | b.addr
        del self.blocks[b.addr]
        self.whole.discard(b.addr)
        runs, maxes = self.streams[b.stream]
        i = bisect.bisect_left(maxes, k)
        run = runs[i]
        j = bisect.bisect_left(run, k)
        assert run[j] == k
        del run[j]
        if not run:
            del runs[i]
            del maxes[i]
        elif j == len(run):
            maxes[i] = run[-1]

    def lower_bound(self, stream, size):
        """The first free block of `stream` with at least `size` bytes."""
        st = self.streams.get(stream)
        if st is None:
            return None
        runs, maxes = st
        k = size << ADDR_BITS
        i = bisect.bisect_left(maxes, k)
        if i == len(maxes):
            return None
        run = runs[i]
        return self.blocks[run[bisect.bisect_left(run, k)] & ADDR_MASK]

    @property
    def keys(self):
        """(stream, size, address) of every free block, in pool order."""
        return [(st, k >> ADDR_BITS, k & ADDR_MASK)
                for st in sorted(self.streams)
                for run in self.streams[st][0] for k in run]


class VASpace:
    """First-fit device virtual address allocator (what cudaMalloc returns)."""

    def __init__(self, base, size):
        assert 0 < base and base + size <= 1 << ADDR_BITS
        self.free = [(base, size)]

    def alloc(self, size, align=K_SMALL_BUFFER):
        for i, (a, s) in enumerate(self.free):
            start = align_up(a, align)
            if start + size <= a + s:
                rest = []
                if start > a:
                    rest.append((a, start - a))
                if start + size < a + s:
                    rest.append((start + size, a + s - start - size))
                self.free[i:i + 1] = rest
                return start
        raise RuntimeError('device address space exhausted')

    def release(self, addr, size):
        bisect.insort(self.free, (addr, size))
        merged = []
        for a, s in self.free:
            if merged and merged[-1][0] + merged[-1][1] == a:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((a, s))
        self.free = merged


class Clock:
    """Epoch microseconds, non-decreasing (§13.11)."""

    def __init__(self, start):
        self.now = start
        self.n = 0

    def stamp(self):
        self.n += 1
        self.now += 1 + (self.n * 7) % 4
        return self.now

    def advance(self, us):
        self.now += us


class DeviceAllocator:
    """DeviceCachingAllocator for one device (§13)."""

    def __init__(self, dev, sim, total_mem, limit, expandable=False,
                 max_split=None, divisions=0):
        self.dev = dev
        self.sim = sim
        self.total_mem = total_mem
        self.limit = limit
        self.expandable = expandable
        self.max_split = max_split if max_split else 2 ** 63
        self.max_non_split_rounding = K_LARGE_BUFFER
        self.divisions = divisions
        self.pools = {}
        self.segments = {}          # address -> Segment (non-expandable)
        self.ranges = {}            # (stream, kind) -> Segment (expandable VA)
        self.pending = []           # [due_tick, block]
        self.tick = 0
        self.reserved = 0
        self.allocated_req = 0      # sum requested of active_allocated blocks
        self.allocated_size = 0
        base = 0x7f3a00000000 - dev * 0x20000000000
        self.va = VASpace(base, 0x10000000000)
        self.exp_base = base - 0x40000000000
        self.live = {}              # address -> Block (allocated or pending)

        # emit(action, addr, size, stream, stk): the simulator's, for this
        # device (a partial, not a method: one Python call less per event)
        self.emit = functools.partial(sim.emit, dev)

    # -- helpers ------------------------------------------------------------

    def pool(self, pool_id, kind):
        p = self.pools.get((pool_id, kind))
        if p is None:
            p = self.pools[(pool_id, kind)] = Pool(kind, pool_id)
        return p

    # -- malloc (§13.4) -----------------------------------------------------
    def malloc(self, req, stream, stk, pool_id=DEFAULT_POOL, uses=()):
        # The hottest path of the simulation: round_size, Pool.lower_bound
        # and alloc_found_block are inlined for the common cases.
        self.tick += 1
        if self.pending:
            self.process_events()
        if req >= K_MIN_BLOCK and not self.divisions:
            size = (req + K_MIN_BLOCK - 1) // K_MIN_BLOCK * K_MIN_BLOCK
        else:
            size = round_size(req, self.divisions)
        kind = 'small' if size <= K_SMALL_SIZE else 'large'
        pool = self.pools.get((pool_id, kind)) or self.pool(pool_id, kind)
        blk = None
        st = pool.streams.get(stream)
        if st is not None:                     # Pool.lower_bound
            runs, maxes = st
            k = size << ADDR_BITS
            i = bisect.bisect_left(maxes, k)
            if i < len(maxes):
                run = runs[i]
                blk = pool.blocks[run[bisect.bisect_left(run, k)] & ADDR_MASK]
                if self.max_split < 2 ** 62:
                    blk = self.get_free_block(pool, stream, size)
        if blk is None:
            expandable = self.expandable and pool_id == DEFAULT_POOL
            blk = self.alloc_block(pool, stream, size, stk, expandable)
            if blk is None:
                self.release_available_cached_blocks(pool, stream, size)
                blk = self.alloc_block(pool, stream, size, stk, expandable)
            if blk is None:
                self.release_cached_blocks()
                blk = self.alloc_block(pool, stream, size, stk, expandable)
            if blk is None:
                device_free = self.total_mem - self.reserved - 512 * MiB
                self.emit('oom', max(device_free, 0), size, stream, stk)
                raise OutOfMemory(size)
        # alloc_found_block (§13.4 step 9): a split keeps the lowest
        # addresses for the allocation
        if pool.blocks.get(blk.addr) is blk:
            pool.remove(blk)
        remaining = blk.size - size             # should_split (step 8)
        if kind == 'small' or blk.seg.expandable:
            split = remaining >= K_MIN_BLOCK
        else:
            split = size < self.max_split and remaining > K_SMALL_SIZE
        if split:
            new = Block(blk.addr, size, blk.stream, pool, blk.seg)
            prev = new.prev = blk.prev
            new.next = blk
            if prev is not None:
                prev.next = new
            elif blk.seg.head is blk:
                blk.seg.head = new
            blk.prev = new
            blk.addr += size
            blk.size = remaining
            pool.insert(blk)         # remainder keeps its stale req (§4)
            blk = new
        blk.state = ALLOCATED
        blk.req = req
        blk.stk = stk
        blk.uses = uses
        self.emit('alloc', blk.addr, req, stream, stk)
        if stk is not None:                    # Simulator.hold, inlined
            refs = self.sim.refs
            refs[stk[0]] = refs.get(stk[0], 0) + 1
        self.allocated_req += req
        self.allocated_size += blk.size
        self.live[blk.addr] = blk
        return blk

    def get_free_block(self, pool, stream, size):
        """§13.4 step 4: lower_bound on (stream, size), one candidate."""
        b = pool.lower_bound(stream, size)
        if b is None:
            return None
        if size < self.max_split and b.size >= self.max_split:
            return None
        if size >= self.max_split and \
                b.size >= size + self.max_non_split_rounding:
            return None
        return b

    def should_split(self, blk, size):
        """§13.4 step 8."""
        remaining = blk.size - size
        if blk.pool.kind == 'small' or blk.seg.expandable:
            return remaining >= K_MIN_BLOCK
        return size < self.max_split and remaining > K_SMALL_SIZE

    def alloc_block(self, pool, stream, size, stk, expandable):
        if expandable:
            return self.map_more(pool, stream, size, stk)
        alloc_size = segment_alloc_size(size)
        if self.reserved + alloc_size > self.limit:
            return None
        addr = self.va.alloc(alloc_size)
        seg = Segment(addr, alloc_size, stream, pool.kind, pool.pool_id, stk)
        blk = Block(addr, alloc_size, stream, pool, seg)
        seg.head = blk
        self.segments[addr] = seg
        self.emit('segment_alloc', addr, alloc_size, stream, stk)
        self.reserved += alloc_size
        self.sim.hold(stk)
        return blk

    # -- expandable segments (§13.8) ------------------------------------
    def exp_range(self, stream, kind):
        key = (stream, kind)
        rng = self.ranges.get(key)
        if rng is None:
            page = K_SMALL_BUFFER if kind == 'small' else K_LARGE_BUFFER
            size = align_up(self.total_mem * 9 // 8, page)
            addr = self.exp_base
            self.exp_base -= align_up(size, 1 << 36) + (1 << 36)
            assert 0 < addr and addr + size <= 1 << ADDR_BITS
            rng = Segment(addr, size, stream, kind, DEFAULT_POOL, None, True,
                          page)
            head = Block(addr, size, stream, None, rng, mapped=False)
            rng.head = head
            self.ranges[key] = rng
        return rng

    def map_more(self, pool, stream, size, stk):
        rng = self.exp_range(stream, pool.kind)
        u = rng.head
        while u is not None:
            if not u.mapped:
                prev = u.prev if (u.prev is not None and u.prev.mapped and
                                  u.prev.state == FREE) else None
                have = prev.size if prev is not None else 0
                need = align_up(size - have, rng.page)
                if need <= u.size:
                    if self.reserved + need > self.limit:
                        return None
                    return self.map_at(pool, rng, u, need, stk)
            u = u.next
        return None

    def map_at(self, pool, rng, u, length, stk):
        if length < u.size:
            m = Block(u.addr, length, u.stream, pool, rng)
            m.prev, m.next = u.prev, u
            if u.prev is not None:
                u.prev.next = m
            else:
                rng.head = m
            u.prev = m
            u.addr += length
            u.size -= length
        else:
            m = u
            m.mapped = True
            m.pool = pool
        m.state = FREE
        m.req = 0
        self.emit('segment_map', m.addr, length, rng.stream, stk)
        self.reserved += length
        return self.merge_free(m, pool)

    def unmap_block(self, blk):
        rng = blk.seg
        rel = blk.addr - rng.addr          # pages are relative to the VA base
        start = rng.addr + align_up(rel, rng.page)
        end = rng.addr + (rel + blk.size) // rng.page * rng.page
        if end <= start:
            return
        pool = blk.pool
        pool.remove(blk)
        tail_end = blk.addr + blk.size
        if start > blk.addr:          # keep [addr, start) mapped and free
            blk.size = start - blk.addr
            pool.insert(blk)
            mid = Block(start, end - start, blk.stream, pool, rng)
            mid.prev, mid.next = blk, blk.next
            if blk.next is not None:
                blk.next.prev = mid
            blk.next = mid
        else:
            mid = blk
            mid.size = end - start
        if end < tail_end:
            tail = Block(end, tail_end - end, blk.stream, pool, rng)
            tail.prev, tail.next = mid, mid.next
            if mid.next is not None:
                mid.next.prev = tail
            mid.next = tail
            pool.insert(tail)
        mid.mapped = False
        mid.state = FREE
        mid.pool = None
        self.reserved -= end - start
        self.emit('segment_unmap', start, end - start, rng.stream, None)
        # merge neighbouring unmapped runs
        for nb in (mid.next, mid.prev):
            if nb is not None and not nb.mapped:
                self.absorb(mid, nb)

    def absorb(self, dst, src):
        """Merge address neighbour `src` into `dst` (try_merge_blocks)."""
        if dst.prev is src:
            dst.addr = src.addr
            dst.prev = src.prev
            if src.prev is not None:
                src.prev.next = dst
            elif dst.seg.head is src:
                dst.seg.head = dst
        else:
            dst.next = src.next
            if src.next is not None:
                src.next.prev = dst
        dst.size += src.size

    def merge_free(self, blk, pool):
        prev, nxt = blk.prev, blk.next
        if prev is not None and prev.mapped and prev.state == FREE:
            prev.pool.remove(prev)
            self.absorb(blk, prev)
        if nxt is not None and nxt.mapped and nxt.state == FREE:
            nxt.pool.remove(nxt)
            self.absorb(blk, nxt)
        pool.insert(blk)
        return blk

    # -- free (§13.5) -------------------------------------------------------
    def free(self, blk, delay=2):
        self.emit('free_requested', blk.addr, blk.req, blk.stream, blk.stk)
        self.allocated_req -= blk.req
        self.allocated_size -= blk.size
        if blk.uses:
            blk.state = PENDING
            self.pending.append([self.tick + delay, blk])
        else:
            self.free_block(blk)

    def free_block(self, blk):
        stk = blk.stk
        self.emit('free_completed', blk.addr, blk.req, blk.stream, stk)
        if stk is not None:                    # Simulator.release, inlined
            refs = self.sim.refs
            n = refs.get(stk[0], 0) - 1
            if n <= 0:
                refs.pop(stk[0], None)
                self.sim.sink.release(stk[0])
            else:
                refs[stk[0]] = n
        del self.live[blk.addr]
        blk.state = FREE
        blk.stk = None
        blk.uses = ()
        # merge_free, inlined
        prev, nxt = blk.prev, blk.next
        if prev is not None and prev.mapped and prev.state == FREE:
            prev.pool.remove(prev)
            self.absorb(blk, prev)
        if nxt is not None and nxt.mapped and nxt.state == FREE:
            nxt.pool.remove(nxt)
            self.absorb(blk, nxt)
        blk.pool.insert(blk)

    def process_events(self, everything=False):
        """§13.4 step 1: completed record_stream events -> free_completed."""
        if not self.pending:
            return
        keep = []
        for due, blk in self.pending:
            if everything or due <= self.tick:
                self.free_block(blk)
            else:
                keep.append([due, blk])
        self.pending = keep

    # -- release (§13.6) -----------------------------------------------------
    def release_block(self, blk):
        seg = blk.seg
        blk.pool.remove(blk)
        del self.segments[seg.addr]
        seg.head = None              # no Segment <-> Block cycle left behind
        self.reserved -= seg.size
        self.va.release(seg.addr, seg.size)
        self.emit('segment_free', seg.addr, seg.size, seg.stream, seg.stk)
        self.sim.release(seg.stk)

    def release_pool(self, pool):
        if self.expandable and pool.pool_id == DEFAULT_POOL:
            keys = pool.keys            # every free block can be unmapped
        else:
            # only whole-segment blocks can go; a free block becomes whole
            # only by merging, which reinserts it (same order as pool.keys)
            keys = sorted((b.stream, b.size, b.addr) for b in
                          (pool.blocks[a] for a in pool.whole))
        for k in keys:
            blk = pool.blocks.get(k[2])
            if blk is None or blk.size != k[1]:
                continue
            if blk.seg.expandable:
                self.unmap_block(blk)
            elif blk.prev is None and blk.next is None:
                self.release_block(blk)

    def release_cached_blocks(self):
        """empty_cache(): pending frees first, large then small (§6.2)."""
        self.process_events(everything=True)
        for kind in ('large', 'small'):
            pool = self.pools.get((DEFAULT_POOL, kind))
            if pool is not None:
                self.release_pool(pool)

    def release_available_cached_blocks(self, pool, stream, size):
        """§13.4 step 6, only meaningful when max_split_size is set."""
        if self.max_split >= 2 ** 62 or pool.kind != 'large':
            return
        cands = [pool.blocks[k[2]] for k in pool.keys
                 if k[0] == stream and k[1] >= self.max_split]
        fit = [b for b in cands if b.size >= max(size, self.max_split)]
        victims = fit[:1] if fit else sorted(cands, key=lambda b: -b.size)
        freed = 0
        for b in victims:
            if b.prev is None and b.next is None:
                self.release_block(b)
                freed += b.size
                if not fit and freed >= size:
                    break

    # -- snapshot (§13.10) ----------------------------------------------------
    def snapshot(self):
        out = []
        for seg in self.segments.values():
            out.append(self._seg_record(seg, seg.head, seg.stk, False))
        for rng in self.ranges.values():
            b = rng.head
            while b is not None:
                if b.mapped:
                    out.append(self._seg_record(rng, b, None, True))
                    while b is not None and b.mapped:
                        b = b.next
                else:
                    b = b.next
        out.sort(key=lambda s: s['address'])
        return out

    def _seg_record(self, seg, head, stk, expandable):
        blocks = []
        b = head
        while b is not None and b.mapped:
            blocks.append((b.addr, b.size, b.req, b.state,
                           b.stk if b.state != FREE else None))
            b = b.next
        return {'device': self.dev, 'address': head.addr,
                'total_size': sum(x[1] for x in blocks), 'stream': seg.stream,
                'kind': seg.kind, 'pool_id': seg.pool_id,
                'expandable': expandable, 'stk': stk, 'blocks': blocks}


class Simulator:
    """All devices, the clock, malloc serials and the event sink."""

    def __init__(self, sink, ndev=1, total_mem=80 * GiB, limit=None,
                 expandable=False, max_split=None, start_us=1718000000000000):
        self.sink = sink
        self.clock = Clock(start_us)
        self.serial = 0
        self.refs = {}
        self.nev = 0
        if type(sink) is CountSink:
            # the counting run needs neither times nor a sink call per event
            self.counts = sink.counts
            self.emit = self.count_event
        elif hasattr(sink, 'make_emit'):
            self.emit = sink.make_emit(self)
        self.devs = [DeviceAllocator(d, self, total_mem,
                                     limit if limit else total_mem - GiB,
                                     expandable, max_split)
                     for d in range(ndev)]

    def new_stack(self, template):
        self.serial += 1
        return (self.serial, template)

    def emit(self, dev, action, addr, size, stream, stk):
        self.nev += 1
        c = self.clock                         # Clock.stamp, inlined
        c.n += 1
        c.now += 1 + (c.n * 7) % 4
        self.sink.event(dev, action, addr, size, stream, c.now, stk)

    def count_event(self, dev, action, addr, size, stream, stk):
        self.nev += 1
        self.counts[dev] += 1

    def hold(self, stk):
        if stk is not None:
            s = stk[0]
            self.refs[s] = self.refs.get(s, 0) + 1

    def release(self, stk):
        if stk is None:
            return
        s = stk[0]
        n = self.refs.get(s, 0) - 1
        if n <= 0:
            self.refs.pop(s, None)
            self.sink.release(s)
        else:
            self.refs[s] = n

    def annotate(self, dev, name, stage):
        self.sink.annotation(name, stage, dev, self.clock.stamp())


# ---------------------------------------------------------------------------
# Call stacks (§5, §9, §16.7)
# ---------------------------------------------------------------------------

USER = '/home/alice/proj/'
TORCH = '/opt/conda/lib/python3.11/site-packages/torch/'
NN = TORCH + 'nn/modules/'

PY_OPS = {
    'linear': [('forward', NN + 'linear.py', 125)],
    'relu': [('relu', TORCH + 'nn/functional.py', 1704),
             ('forward', NN + 'activation.py', 133)],
    'layernorm': [('layer_norm', TORCH + 'nn/functional.py', 2900),
                  ('forward', NN + 'normalization.py', 217)],
    'attn': [('scaled_dot_product_attention', TORCH + 'nn/functional.py', 5860),
             ('forward', NN + 'activation.py', 1368)],
    'backward': [('_engine_run_backward', TORCH + 'autograd/graph.py', 825),
                 ('backward', TORCH + 'autograd/__init__.py', 347),
                 ('backward', TORCH + '_tensor.py', 581)],
    'adam': [('_multi_tensor_adam', TORCH + 'optim/adam.py', 735),
             ('adam', TORCH + 'optim/adam.py', 922),
             ('step', TORCH + 'optim/adam.py', 247),
             ('wrapper', TORCH + 'optim/optimizer.py', 487)],
    'to': [('pin_and_copy', USER + 'data/loader.py', 88)],
    'empty': [],
    'loss': [('cross_entropy', TORCH + 'nn/functional.py', 3479),
             ('forward', NN + 'loss.py', 1295)],
}
MODULE_CALL = [('_call_impl', NN + 'module.py', 1747),
               ('_wrapped_call_impl', NN + 'module.py', 1736)]

CPP_COMMON = [
    ('torch::unwind::unwind()', '??', 0),
    ('torch::CapturedTraceback::gather(bool, bool, bool)', '??', 0),
    ('c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc('
     'signed char, unsigned long, CUstream_st*)', 'CUDACachingAllocator.cpp', 0),
    ('c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc('
     'void**, signed char, unsigned long, CUstream_st*)', '??', U64_MAX),
    ('c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate('
     'unsigned long)', 'CUDACachingAllocator.cpp', 0),
    ('c10::StorageImpl::StorageImpl(c10::StorageImpl::use_byte_size_t, '
     'c10::SymInt const&, c10::Allocator*, bool)', '??', U64_MAX),
    ('at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, '
     'c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, '
     'std::optional<c10::MemoryFormat>)', 'EmptyTensor.cpp', 0),
    ('at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, '
     'c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)',
     '??', 0),
    ('at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, '
     'std::optional<c10::Device>, std::optional<c10::MemoryFormat>)',
     'EmptyTensor.cpp', 0),
    ('at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>, '
     'std::optional<c10::Layout>, std::optional<c10::Device>, '
     'std::optional<bool>, std::optional<c10::MemoryFormat>)', '??', U64_MAX),
]
CPP_DISPATCH = [
    ('c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::'
     'WrapFunctionIntoFunctor_<c10::CompileTimeFunctionPointer<at::Tensor '
     '(c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>), '
     '&at::(anonymous namespace)::wrapper_CUDA_%s>>>::call' % i,
     '??', 0) for i in ('empty', 'mm', 'relu', 'layer_norm', 'sdpa', 'add')
]
CPP_AUTOGRAD = [
    ('at::_ops::%s::redispatch(c10::DispatchKeySet, c10::ArrayRef<c10::SymInt>)'
     % k, 'Operators_%d.cpp' % (i % 5), 0)
    for i, k in enumerate(('empty_memory_format', 'mm', 'addmm', 'relu',
                           'native_layer_norm', 'add_Tensor'))
] + [
    ('torch::autograd::VariableType::(anonymous namespace)::%s(c10::'
     'DispatchKeySet, at::Tensor const&, at::Tensor const&)' % k,
     'VariableType_%d.cpp' % i, 0)
    for i, k in enumerate(('mm', 'addmm', 'relu', 'layer_norm'))
] + [
    ('c10::impl::BoxedKernelWrapper<at::Tensor (at::Tensor const&), void>::call'
     '(c10::BoxedKernel const&, c10::OperatorHandle const&, '
     'c10::DispatchKeySet)', '??', U64_MAX),
    ('c10::Dispatcher::callBoxed(c10::OperatorHandle const&, '
     'std::vector<c10::IValue>*) const', 'Dispatcher.h', 0),
    ('torch::autograd::autogradNotImplementedFallbackImpl(c10::OperatorHandle '
     'const&, c10::DispatchKeySet, std::vector<c10::IValue>*)',
     'autograd_not_implemented_fallback.cpp', 0),
    ('torch::ADInplaceOrView::(anonymous namespace)::wrapper(c10::'
     'DispatchKeySet, at::Tensor const&)', 'ADInplaceOrViewType_0.cpp', 0),
    ('at::functionalization::impl::functionalize_op_helper', '??', 0),
    ('torch::jit::invokeOperatorFromPython(std::vector<std::shared_ptr<'
     'torch::jit::Operator>> const&, pybind11::args, pybind11::kwargs const&, '
     'std::optional<c10::DispatchKey>)', 'pybind_utils.cpp', 0),
    ('pybind11::cpp_function::dispatcher(_object*, _object*, _object*)', '??',
     U64_MAX),
]
CPP_PYBIND = [
    ('torch::PythonArgParser::raw_parse(_object*, _object*, _object*, '
     '_object**)', 'python_arg_parser.cpp', 0),
    ('torch::handle_torch_function_no_python_arg_parser(c10::ArrayRef<'
     'pybind11::handle>, _object*, _object*, char const*, _object*, char const*, '
     'torch::TorchFunctionName)', 'python_arg_parser.cpp', 0),
    ('THPFunction_apply(_object*, _object*)', 'python_function.cpp', 0),
    ('torch::autograd::Engine::execute(std::vector<torch::autograd::Edge> '
     'const&, std::vector<at::Tensor> const&, bool, bool, bool, '
     'std::vector<torch::autograd::Edge> const&)', 'engine.cpp', 0),
    ('torch::autograd::python::PythonEngine::execute(std::vector<torch::'
     'autograd::Edge> const&, std::vector<at::Tensor> const&, bool, bool, bool, '
     'std::vector<torch::autograd::Edge> const&)', 'python_engine.cpp', 0),
    ('c10::detail::_str_wrapper<char const*>::call(char const*)', '??', 0),
    ('at::native::structured_mm_out_cuda::impl(at::Tensor const&, at::Tensor '
     'const&, at::Tensor const&)', 'Blas.cpp', 0),
    ('at::native::(anonymous namespace)::addmm_out_cuda_impl(at::Tensor&, '
     'at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar '
     'const&, c10::Scalar const&, at::native::Activation)', 'Blas.cpp', 0),
    ('at::cuda::blas::gemm<float>(char, char, long, long, long, float, float '
     'const*, long, float const*, long, float, float*, long)', '??', U64_MAX),
    ('at::(anonymous namespace)::structured_mm_out_cuda_functional::set_output'
     '_raw_strided(long, c10::ArrayRef<long>, c10::ArrayRef<long>, '
     'c10::TensorOptions, c10::ArrayRef<at::Dimname>)', 'RegisterCUDA.cpp', 0),
    ('at::meta::structured_mm::meta(at::Tensor const&, at::Tensor const&)',
     'LinearAlgebra.cpp', 0),
    ('at::TensorIteratorBase::build(at::TensorIteratorConfig&)',
     'TensorIterator.cpp', 0),
]
CPP_TAIL = [
    ('at::_ops::%s::call(c10::ArrayRef<c10::SymInt>, '
     'std::optional<c10::ScalarType>)', 'Operators_2.cpp', 0),
    ('torch::autograd::THPVariable_%s(_object*, _object*, _object*)',
     'python_torch_functions_0.cpp', 0),
    ('cfunction_call', '??', U64_MAX),
    ('_PyObject_MakeTpCall', 'Objects/call.c', 0),
]
CPYTHON = [
    ('_PyEval_EvalFrameDefault', 'Python/ceval.c', 0),
    ('_PyEval_Vector', 'Python/ceval.c', 0),
    ('_PyVectorcall_Call', 'Objects/call.c', 0),
    ('_PyFunction_Vectorcall', '??', U64_MAX),
    ('PyObject_Call', 'Objects/call.c', 0),
    ('method_vectorcall', 'Objects/classobject.c', 0),
    ('slot_tp_call', '??', U64_MAX),
    ('_PyObject_MakeTpCall', 'Objects/call.c', 0),
]
CPP_ROOT = [('Py_RunMain', 'Modules/main.c', 0),
            ('Py_BytesMain', '??', U64_MAX),
            ('__libc_start_main', '??', 0),
            ('_start', '??', 0)]


class StackFactory:
    """Builds stack templates: tuples of (name, filename, line), innermost first."""

    def __init__(self, mode):
        self.mode = mode
        self.cache = {}

    def get(self, op, user):
        key = (op, user)
        t = self.cache.get(key)
        if t is None:
            t = self.cache[key] = self._build(op, user)
        return t

    def _build(self, op, user):
        py = list(PY_OPS[op])
        if py and py[-1][1].startswith(NN):
            py += MODULE_CALL
        for i, fr in enumerate(user):
            py.append(fr)
            if i + 1 < len(user) and fr[1].endswith('model.py'):
                py += MODULE_CALL
        if self.mode != 'cpp':
            return tuple(py)
        idx = sum(map(ord, op)) % len(CPP_DISPATCH)
        frames = list(CPP_COMMON)
        frames += CPP_DISPATCH[idx:] + CPP_DISPATCH[:idx]
        frames += CPP_AUTOGRAD[idx:] + CPP_AUTOGRAD[:idx]
        frames += CPP_PYBIND[idx % 3:]
        frames += [(n % op if '%s' in n else n, f, l) for n, f, l in CPP_TAIL]
        for j, fr in enumerate(py):
            frames += CPYTHON + CPYTHON[2:4 + j % 3]
            frames.append(fr)
        frames += CPP_ROOT
        return tuple(frames)


def first_user_frame(frames):
    """First .py frame outside the framework (§16.7)."""
    for f in frames:
        fn = f['filename'].replace('\\', '/')
        if not fn.endswith('.py'):
            continue
        if 'torch/' in fn or 'site-packages/' in fn:
            continue
        return f
    return None


# ---------------------------------------------------------------------------
# Scenario drivers
# ---------------------------------------------------------------------------

def u(name, line, file='train.py'):
    return (name, USER + file, line)


MAIN = (u('main', 131), u('<module>', 140))
TRAIN_STEP = (u('train_step', 112),) + MAIN


class Ctx:
    """What a scenario sees: malloc/free with call sites, steps, stop test."""

    def __init__(self, sim, stacks, rng, target):
        self.sim = sim
        self.stacks = stacks
        self.rng = rng
        self.target = target
        self.annotate = True

    def malloc(self, req, op, user, dev=0, stream=0, pool=DEFAULT_POOL,
               uses=()):
        sim = self.sim
        tmpl = self.stacks.cache.get((op, user)) or self.stacks.get(op, user)
        sim.serial += 1                        # Simulator.new_stack
        stk = (sim.serial, tmpl)
        sim.clock.now += 2 + int(self.rng.random() * 38)
        return sim.devs[dev].malloc(req, stream, stk, pool, uses)

    def free(self, blk, dev=0, delay=2):
        sim = self.sim
        sim.clock.now += 1 + int(self.rng.random() * 19)
        sim.devs[dev].free(blk, delay)

    def empty_cache(self, dev=0):
        self.sim.devs[dev].release_cached_blocks()

    def done(self):
        return self.sim.nev >= self.target

    def step(self, n, dev=0, stage='START'):
        self.sim.clock.advance(self.rng.randrange(500, 3000))
        if self.annotate:
            self.sim.annotate(dev, 'ProfilerStep#%d' % n, stage)


class Model:
    """A small MLP/transformer-ish model: params, grads, Adam state."""

    def __init__(self, ctx, layers, hidden, dev=0, stream=0, pool=DEFAULT_POOL):
        self.ctx, self.dev, self.stream, self.pool = ctx, dev, stream, pool
        self.layers, self.hidden = layers, hidden
        self.params = []
        self.state = []
        site = (u('__init__', 24, 'model.py'), u('build_model', 61), ) + MAIN
        for i in range(layers):
            self.params.append(ctx.malloc(hidden * hidden * 4, 'empty', site,
                                          dev, stream, pool))
            self.params.append(ctx.malloc(hidden * 4, 'empty', site, dev,
                                          stream, pool))

    def param_bytes(self):
        return sum(p.req for p in self.params)

    def forward(self, batch, acts):
        c, h = self.ctx, self.hidden
        for i in range(self.layers):
            fwd = (u('forward', 40 + (i % 3) * 6, 'model.py'),
                   u('train_step', 108)) + MAIN
            acts.append(c.malloc(batch * h * 4, 'linear', fwd, self.dev,
                                 self.stream, self.pool))
            tmp = c.malloc(batch * h * 4 + 1024 * (i % 2), 'layernorm', fwd,
                           self.dev, self.stream, self.pool)
            acts.append(c.malloc(batch * h * 4, 'relu', fwd, self.dev,
                                 self.stream, self.pool))
            c.free(tmp, self.dev)
        loss = c.malloc(4, 'loss', (u('train_step', 109),) + MAIN, self.dev,
                        self.stream, self.pool)
        acts.append(loss)

    def backward(self, batch, acts):
        c, h = self.ctx, self.hidden
        bwd = (u('train_step', 110),) + MAIN
        grads = []
        for i in reversed(range(self.layers)):
            g = c.malloc(batch * h * 4, 'backward', bwd, self.dev,
                         self.stream, self.pool)
            grads.append(c.malloc(h * h * 4, 'backward', bwd, self.dev,
                                  self.stream, self.pool))
            grads.append(c.malloc(h * 4, 'backward', bwd, self.dev,
                                  self.stream, self.pool))
            c.free(acts.pop(), self.dev)
            c.free(acts.pop(), self.dev)
            c.free(g, self.dev)
        while acts:
            c.free(acts.pop(), self.dev)
        return grads

    def step(self, grads):
        c = self.ctx
        opt = (u('train_step', 111),) + MAIN
        if not self.state:
            for p in self.params:
                for _ in range(2):
                    self.state.append(c.malloc(p.req, 'adam', opt, self.dev,
                                               self.stream, self.pool))
        tmp = [c.malloc(g.req, 'adam', opt, self.dev, self.stream, self.pool)
               for g in grads[:4]]
        for t in tmp:
            c.free(t, self.dev)
        for g in grads:                      # zero_grad(set_to_none=True)
            c.free(g, self.dev)


LEAK_SITE = ('collect_metrics', USER + 'metrics/tracker.py', 47)
LEAK_REQ = 786436
LEAK_BUDGET = 32 * GiB      # what the leak may hold at the end of a long run


def leak_every(ctx, events_per_step):
    """Steps between two leaked tensors: 1 (every step) unless --events
    asks for so many steps that one leak per step would exceed
    LEAK_BUDGET and run the device out of memory (over ~2.6 M events)."""
    steps = ctx.target // events_per_step + 1
    return max(1, -(-steps * round_size(LEAK_REQ) // LEAK_BUDGET))


def scen_leak(ctx, info):
    m = Model(ctx, 6, 1024)
    info['param_bytes'] = m.param_bytes()
    kept = []
    site = (u('collect_metrics', 47, 'metrics/tracker.py'),
            u('train_step', 112)) + MAIN
    n = 0
    every = info['leak_every'] = leak_every(ctx, 60)
    while not ctx.done():
        ctx.step(n)
        acts = []
        batch = 64 + 8 * ctx.rng.randrange(0, 5)
        x = ctx.malloc(batch * 1024 * 4, 'to', (u('train_step', 104),) + MAIN)
        m.forward(batch, acts)
        grads = m.backward(batch, acts)
        m.step(grads)
        ctx.free(x)
        if n % every == 0:
            kept.append(ctx.malloc(LEAK_REQ, 'empty', site))   # the leak
        ctx.step(n, stage='END')
        n += 1
    info['leak_blocks'] = kept
    info['steps'] = n


def scen_frag(ctx, info):
    m = Model(ctx, 4, 1024)
    n = 0
    while not ctx.done():
        ctx.step(n)
        seq = ctx.rng.choice([128, 256, 384, 640, 896, 1152, 1536, 2048, 2560])
        batch = 8 * seq + ctx.rng.randrange(0, 64)
        acts = []
        m.forward(batch, acts)
        big = ctx.malloc(batch * 4096 + 4, 'attn',
                         (u('forward', 77, 'model.py'), u('train_step', 108))
                         + MAIN)
        grads = m.backward(batch, acts)
        m.step(grads)
        ctx.free(big)
        ctx.step(n, stage='END')
        n += 1
    info['steps'] = n


def scen_oom(ctx, info):
    m = Model(ctx, 4, 1024)
    n = 0
    batch = 256
    try:
        while True:
            ctx.step(n)
            acts = []
            m.forward(batch, acts)
            big = ctx.malloc(batch * batch * 64, 'attn',
                             (u('forward', 77, 'model.py'),
                              u('train_step', 108)) + MAIN)
            acts.append(big)
            grads = m.backward(batch, acts)
            m.step(grads)
            ctx.step(n, stage='END')
            n += 1
            if ctx.done():      # --events N: steady steps first, then grow
                batch = batch * 5 // 4 + 16
    except OutOfMemory:
        info['oom'] = True
    info['steps'] = n


def scen_multi(ctx, info):
    side = 94823749283008
    models = [Model(ctx, 3, 512, dev=d) for d in range(2)]
    n = 0
    while not ctx.done():
        for d in range(2):
            ctx.step(n, dev=d)
            batch = 64 + 16 * ctx.rng.randrange(0, 4)
            # host->device copy on the side stream, consumed on stream 0:
            # record_stream(0) makes its free pending (§13.5 step 2).
            x = ctx.malloc(batch * 512 * 4, 'to', (u('train_step', 104),)
                           + MAIN, dev=d, stream=side + d * 0x1a0, uses=(0,))
            acts = []
            models[d].forward(batch, acts)
            ctx.free(x, dev=d, delay=1 + ctx.rng.randrange(3))
            grads = models[d].backward(batch, acts)
            models[d].step(grads)
            ctx.step(n, dev=d, stage='END')
        n += 1
    info['steps'] = n


def scen_expandable(ctx, info):
    m = Model(ctx, 3, 1024)
    n = 0
    while not ctx.done():
        ctx.step(n)
        seq = ctx.rng.choice([256, 512, 1024, 2048, 3072])
        acts = []
        m.forward(seq, acts)
        big = ctx.malloc(seq * 8192 + 12, 'attn',
                         (u('forward', 77, 'model.py'), u('train_step', 108))
                         + MAIN)
        grads = m.backward(seq, acts)
        m.step(grads)
        ctx.free(big)
        if n % 4 == 3:
            ctx.empty_cache()
        ctx.step(n, stage='END')
        n += 1
    info['steps'] = n


def scen_graphs(ctx, info):
    m = Model(ctx, 3, 512)
    cap = Model.__new__(Model)
    cap.__dict__.update(m.__dict__)
    cap.pool = GRAPH_POOL
    n = 0
    static = []
    while not ctx.done():
        ctx.step(n)
        acts = []
        if n == 2:
            # CUDA graph capture: activations come from the private pool
            cap.forward(96, acts)
            grads = cap.backward(96, acts)
            static = [ctx.malloc(96 * 512 * 4, 'linear',
                                 (u('capture', 90, 'graphs.py'),) + MAIN,
                                 pool=GRAPH_POOL) for _ in range(3)]
            for g in grads:
                ctx.free(g)
        else:
            m.forward(64, acts)
            grads = m.backward(64, acts)
            m.step(grads)
        if n % 3 == 2:
            ctx.empty_cache()   # never releases the private pool (§13.9)
        ctx.step(n, stage='END')
        n += 1
    info['steps'] = n
    info['static'] = static


def scen_npu(ctx, info):
    stream = 1815786048
    m = Model(ctx, 4, 512, stream=stream)
    kept = []
    n = 0
    site = (u('collect_metrics', 47, 'metrics/tracker.py'),
            u('train_step', 112)) + MAIN
    every = info['leak_every'] = leak_every(ctx, 80)
    while not ctx.done():
        acts = []
        m.forward(64, acts)
        grads = m.backward(64, acts)
        m.step(grads)
        if n % every == 0:
            kept.append(ctx.malloc(LEAK_REQ, 'empty', site, stream=stream))
        if n % 5 == 4:
            ctx.empty_cache()
        n += 1
    info['steps'] = n
    info['leak_blocks'] = kept


SCENARIOS = {
    'leak': dict(fn=scen_leak, events=3000, fmt='newest'),
    'frag': dict(fn=scen_frag, events=3000, fmt='newest'),
    'oom': dict(fn=scen_oom, events=0, fmt='newest', limit=3 * GiB,
                total=16 * GiB),
    'multi': dict(fn=scen_multi, events=3000, fmt='newest', ndev=2),
    'expandable': dict(fn=scen_expandable, events=3000, fmt='newest',
                       expandable=True),
    'graphs': dict(fn=scen_graphs, events=3000, fmt='newest'),
    'wrapped': dict(fn=scen_leak, events=5000, fmt='newest', max_entries=2000),
    'legacy': dict(fn=scen_leak, events=2000, fmt='2.0'),
    'npu': dict(fn=scen_npu, events=3000, fmt='newest', npu=True),
}


# ---------------------------------------------------------------------------
# Event sinks
# ---------------------------------------------------------------------------

class CountSink:
    """Pass 1 of streaming: counts events per device."""

    def __init__(self, ndev):
        self.counts = [0] * ndev
        self.nann = 0

    def event(self, dev, action, addr, size, stream, t, stk):
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

    def event(self, dev, action, addr, size, stream, t, stk):
        if self.skip[dev]:
            self.skip[dev] -= 1
            self.dropped[dev] += 1
            return
        self.traces[dev].append((action, addr, size, stream, t, stk))
        for o in self.observers:
            o(dev, action, addr, size)

    def release(self, serial):
        pass

    def annotation(self, name, stage, dev, t):
        self.annotations.append((name, stage, dev, t))


# ---------------------------------------------------------------------------
# Building the Python objects (§2-§6, sharing as §8.3)
# ---------------------------------------------------------------------------

def fresh(s):
    """A new str object equal to s (as py::str per frame gives, §8.3).
    CPython returns its cached singletons for '' and 1-char strings."""
    return s.encode('utf-8').decode('utf-8')


class Objects:
    """Turns simulator records into snapshot objects for one format."""

    def __init__(self, fmt, npu=False):
        self.fmt = fmt
        self.npu = npu
        self.frames = {}
        self.lists = {}
        self.empty = []          # the shared empty_frames list

    def frame(self, key):
        d = self.frames.get(key)
        if d is None:
            name, filename, line = key
            d = self.frames[key] = {'name': fresh(name),
                                    'filename': fresh(filename), 'line': line}
        return d

    def stack(self, stk):
        if stk is None:
            return self.empty
        lst = self.lists.get(stk[0])
        if lst is None:
            lst = self.lists[stk[0]] = [self.frame(k) for k in stk[1]]
        return lst

    def release(self, serial):
        self.lists.pop(serial, None)

    # -- segments ---------------------------------------------------------------
    def segment(self, rec):
        blocks = rec['blocks']
        active = [b for b in blocks if b[3] != FREE]
        d = {'device': rec['device'], 'address': rec['address'],
             'total_size': rec['total_size'],
             'allocated_size': sum(b[1] for b in blocks if b[3] == ALLOCATED),
             'active_size': sum(b[1] for b in active)}
        fmt = self.fmt
        if fmt != '1.13':
            d['requested_size'] = sum(b[2] for b in active)
        d['stream'] = rec['stream']
        if self.npu:
            d['segment_pool_id'] = tuple([rec['pool_id'][0], rec['pool_id'][1]])
        d['segment_type'] = rec['kind']
        if fmt in ('2.1', 'newest'):
            if not self.npu:
                d['segment_pool_id'] = tuple([rec['pool_id'][0],
                                              rec['pool_id'][1]])
            d['is_expandable'] = rec['expandable']
            frames = self.stack(rec['stk'])
            if not frames:
                d['frames'] = frames
            d['blocks'] = [self.block(b) for b in blocks]
            if frames:
                d['frames'] = frames
        else:
            d['blocks'] = [self.block(b) for b in blocks]
        return d

    def block(self, b):
        addr, size, req, state, stk = b
        if self.fmt in ('2.1', 'newest'):
            return {'address': addr, 'size': size, 'requested_size': req,
                    'state': STATE_NAMES[state], 'frames': self.stack(stk)}
        d = {'size': size}
        if self.fmt == '2.0':
            d['requested_size'] = req
        d['state'] = STATE_NAMES[state]
        if state != FREE and stk is not None:
            if self.fmt == '1.13':      # fresh frame dicts per entry (§4)
                fr = [{'filename': fresh(f), 'name': fresh(n), 'line': l}
                      for n, f, l in stk[1]]
            else:
                fr = self.stack(stk)
            d['history'] = [{'addr': addr, 'real_size': req, 'frames': fr}]
        return d

    # -- trace entries ------------------------------------------------------------
    def entry(self, ev):
        action, addr, size, stream, t, stk = ev
        d = {'action': action}
        if action == 'oom':
            d['device_free'] = addr
        else:
            d['addr'] = addr
        d['size'] = size
        d['stream'] = stream
        if self.fmt in ('2.1', 'newest') and not self.npu:
            d['time_us'] = t
        if self.fmt == 'newest' and not self.npu:
            d['compile_context'] = fresh('N/A')
            d['user_metadata'] = fresh('')
        if stk is not None:
            d['frames'] = self.stack(stk)
        return d


def allocator_settings(expandable, max_split):
    conf = 'expandable_segments:True' if expandable else ''
    return {'PYTORCH_CUDA_ALLOC_CONF': conf,
            'max_split_size': max_split if max_split else -1,
            'garbage_collection_threshold': 0.0,
            'expandable_segments': bool(expandable),
            'pinned_num_register_threads': 1,
            'release_lock_on_cudamalloc': False,
            'pinned_use_cuda_host_register': False,
            'graph_capture_record_stream_reuse': False,
            'roundup_power2_divisions': {str(1 << i): 0 for i in range(16)}}


def annotation_obj(a):
    name, stage, dev, t = a
    return {'name': fresh(name), 'stage': stage, 'device': dev, 'time_us': t}


# ---------------------------------------------------------------------------
# Streaming pickle writer (§8.2: mirrors CPython's _pickle for these objects)
# ---------------------------------------------------------------------------

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
            observe(dev, action, addr, size)
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


# ---------------------------------------------------------------------------
# Running a scenario
# ---------------------------------------------------------------------------

class Params:
    def __init__(self, a):
        spec = SCENARIOS[a.scenario]
        self.scenario = a.scenario
        self.fn = spec['fn']
        self.fmt = a.format or spec['fmt']
        if self.fmt == 'newest' and spec.get('npu') is None and a.npu:
            pass
        self.npu = a.npu or spec.get('npu', False)
        self.events = a.events if a.events is not None else spec['events']
        self.ndev = spec.get('ndev', 1)
        self.limit = spec.get('limit')
        self.total = spec.get('total', 80 * GiB)
        self.expandable = spec.get('expandable', False) or a.expandable
        self.max_split = a.max_split_size
        self.max_entries = a.max_entries if a.max_entries is not None \
            else spec.get('max_entries')
        self.stacks = a.stacks
        self.seed = a.seed
        self.proto = a.protocol


def make_sim(p, sink):
    rng = random.Random(p.seed)
    start = 1718000000000000 + p.seed * 86400 * 1000000
    sim = Simulator(sink, p.ndev, p.total, p.limit, p.expandable, p.max_split,
                    start)
    ctx = Ctx(sim, StackFactory(p.stacks), rng, p.events)
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


def run_scenario(p, sink, tracker=None):
    sim, ctx = make_sim(p, sink)
    if tracker is not None:
        tracker.attach(sim)
    info = {}
    ws = None
    if p.npu:
        ws = workspace_prefix(p, sim)
        for ev in ws_events(ws):            # head of the trace (§16.4)
            sink.event(0, *ev)
    p.fn(ctx, info)
    return sim, info, ws


def final_segments(sim, ws):
    segs = []
    for d in sim.devs:
        s = d.snapshot()
        if ws is not None and d.dev == 0:
            s.append(ws[0])
            s.sort(key=lambda r: r['address'])
        segs.extend(s)
    return segs


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
                                                       p.max_split)
        top['external_annotations'] = [annotation_obj(a)
                                       for a in sink.annotations]
    return top


def generate_in_memory(p, out_path, truth_path):
    skip = None
    if p.max_entries:
        count = CountSink(p.ndev)
        run_scenario(p, count)
        skip = [max(0, c - p.max_entries) for c in count.counts]
    sink = ListSink(p.ndev, skip)
    tracker = TruthTracker(p)
    sink.observers.append(tracker.observe)
    sim, info, ws = run_scenario(p, sink, tracker)
    obj = build_object(p, sim, sink, ws)
    with open(out_path, 'wb') as f:
        pickle.dump(obj, f, protocol=p.proto)
    if truth_path:
        truth = tracker.finish(sim, info, sink, ws, obj)
        write_json(truth_path, truth)


def generate_streaming(p, out_path, truth_path):
    if p.fmt == '1.13' or p.proto < 4:
        raise SystemExit('gensnap: streaming needs --format 2.0/2.1/newest '
                         'and --protocol 4 or 5')
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
    dt_s = time.time() - t0
    c2 = time.process_time()
    sys.stderr.write(
        'gensnap: %d events, %d bytes, %.1f bytes/event; %.1f s wall: '
        '%.1f MB/s; %.1f s CPU: %.1f MB/s (simulation %.1f s, writing '
        '%.1f s)\n' % (
            nev, nbytes, nbytes / max(nev, 1), dt_s,
            nbytes / 1e6 / max(dt_s, 1e-9), c2 - c0,
            nbytes / 1e6 / max(c2 - c0, 1e-9), c1 - c0, c2 - c1))


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
    tracker = TruthTracker(p)
    state = _SimState(p.ndev)
    tracker.attach(state)
    observe = tracker.observe if truth_path else None
    with open(out_path, 'wb') as f:
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
        if ndev > 1:
            w.buf += b'e'
        else:
            w.buf += b'a'
        if p.fmt == 'newest' and not p.npu:
            w.save('allocator_settings')
            w.save(allocator_settings(p.expandable, p.max_split))
            w.save('external_annotations')
            w.save([annotation_obj(a) for a in spool.annotations])
        w.buf += b'u'
        w.finish()
    if truth_path:
        fake = ListSink(p.ndev)
        fake.dropped = skip
        fake.annotations = spool.annotations
        write_json(truth_path, tracker.finish(sim, info, fake, ws, None,
                                              segrecs=segrecs))
    return sum(wcounts), os.path.getsize(out_path), skip


def write_json(path, obj):
    with open(path, 'w') as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write('\n')


# ---------------------------------------------------------------------------
# Ground truth (computed while generating, from the simulator)
# ---------------------------------------------------------------------------

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
            r = round_size(LEAK_REQ)
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


# ---------------------------------------------------------------------------
# Self-check (§14)
# ---------------------------------------------------------------------------

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


def self_check(path, quiet=False):
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
    for si, s in enumerate(segs):
        errs += check_segment(si, s)
        finals[s.get('device', 0)].append(s)
    for d, tr in enumerate(traces):
        if tr:
            errs += check_trace(d, tr, finals.get(d, []))
    if not quiet:
        nev = sum(len(t) for t in traces)
        print('%s: %d segments, %d events: %s' % (
            path, len(segs), nev, 'consistent' if not errs else
            '%d problems' % len(errs)))
    return errs


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
        r = b.get('requested_size')
        if r is None and b.get('history'):
            r = b['history'][0].get('real_size', 0)
        if st != 'inactive':
            active += b['size']
            req += r or 0
            if r is not None and not (round_size(r) <= b['size']):
                errs.append('%s: block %d size %d < round(%d)' % (
                    where, bi, b['size'], r))
            if STRICT and r is not None and s.get('segment_type') == 'small' and \
                    b['size'] != round_size(r):
                errs.append('%s: small block %d size %d != round(%d) '
                            '(should have been split, §13.4)' % (
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
    if not s.get('is_expandable') and addr % K_SMALL_BUFFER:
        errs.append('%s: not 2 MiB aligned' % where)
    return errs


def check_trace(d, tr, finals):
    """Undo the trace from the final segments (§10.4) to get the state at
    trace start, then replay it forward checking every event and compare
    the result with the final segments."""
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
    # forwards
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
                if a + round_size(size) > sa + ss:
                    bad(i, 'alloc %#x+%d overruns segment' % (a, size))
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
        elif act == 'segment_alloc':
            if find_seg(fixed, exp, a) is not None:
                bad(i, 'segment_alloc %#x overlaps' % a)
            if a % K_SMALL_BUFFER:
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
# Command line
# ---------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(
        description='Generate realistic PyTorch CUDA memory snapshots.')
    ap.add_argument('--scenario', choices=sorted(SCENARIOS), default='leak')
    ap.add_argument('--format', choices=FORMATS)
    ap.add_argument('--npu', action='store_true',
                    help='torch_npu (Ascend) style snapshot (§16.4)')
    ap.add_argument('--protocol', type=int, choices=(2, 3, 4, 5), default=4)
    ap.add_argument('--max-entries', type=int,
                    help='ring buffer size: keep only the last N events')
    ap.add_argument('--stacks', choices=('python', 'cpp'), default='python')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--events', type=int,
                    help='approximate number of events (scales the run; '
                         'large values stream to disk)')
    ap.add_argument('--stream', action='store_true',
                    help='use the streaming writer even for small runs')
    ap.add_argument('--expandable', action='store_true',
                    help='expandable_segments:True')
    ap.add_argument('--max-split-size', type=int, default=None)
    ap.add_argument('-o', '--output', default='snapshot.pickle')
    ap.add_argument('--truth', help='write ground truth JSON here')
    ap.add_argument('--self-check', metavar='FILE', nargs='+',
                    help='check FILE(s) and exit')
    ap.add_argument('--strict', action='store_true',
                    help='with --self-check: also check CUDA block-size rules '
                         '(small-pool blocks split at 512 B; torch_npu pads '
                         'sizes, so real NPU files fail this)')
    return ap.parse_args(argv)


STREAM_THRESHOLD = 200000
STRICT = False


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.self_check:
        global STRICT
        STRICT = a.strict
        rc = 0
        for path in a.self_check:
            errs = self_check(path)
            for e in errs:
                print('  ' + e)
            if errs:
                rc = 1
        return rc
    if a.scenario == 'npu':
        a.npu = True
    p = Params(a)
    if p.npu and p.fmt not in ('newest', '2.1'):
        raise SystemExit('gensnap: --npu needs a 2.1+ layout')
    # The simulator's blocks form reference cycles only while they are in
    # use (released segments are unlinked), so cyclic garbage collection
    # finds nothing during a run; switching it off saves its periodic
    # traversals of the growing live set (about a tenth of the run time).
    gc.disable()
    if a.stream or (p.events or 0) >= STREAM_THRESHOLD:
        generate_streaming(p, a.output, a.truth)
    else:
        generate_in_memory(p, a.output, a.truth)
    return 0


if __name__ == '__main__':
    sys.exit(main())
