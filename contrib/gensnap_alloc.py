"""gensnap_alloc - the caching allocator simulator of contrib/gensnap.py.

A model of PyTorch's CUDA caching allocator (doc/snapshot-format.md §13)
and of torch_npu's, which differs in its rounding (§16.12): devices,
block pools, segments, expandable segments, pending frees, empty_cache,
and the events they record.  Section numbers (§N) refer to
doc/snapshot-format.md.
"""

import bisect
import functools

from gensnap_sinks import CountSink

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


class OutOfMemory(Exception):
    pass


def round_size(n, divisions=0):
    """§13.3 round_size; `divisions` models roundup_power2_divisions: one
    number, or the settings (gensnap_conf.AllocConf), whose divisions
    count per interval when more than 1 (§13.12).  torch_npu adds its
    pad to n first (§16.12, DeviceAllocator.pad)."""
    if n < K_MIN_BLOCK:
        return K_MIN_BLOCK
    if not isinstance(divisions, int):
        divisions = divisions.divisions_for(n)
        if divisions < 2:
            divisions = 0
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


def expandable_size(b):
    """A free block's size with the unmapped space right after it."""
    n = b.next
    return b.size + (n.size if n is not None and not n.mapped else 0)


# ---------------------------------------------------------------------------
# Allocator simulator (§13)
# ---------------------------------------------------------------------------

class Block:
    __slots__ = ('addr', 'size', 'req', 'state', 'stream', 'pool', 'prev',
                 'next', 'stk', 'seg', 'mapped', 'uses', 'gc')

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
        self.gc = 0


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
        self.gc_calls = 0        # get_free_block calls, for gc ages
        self.streams = {}        # stream -> (runs, maxima)
        self.blocks = {}         # address -> Block
        # addresses of free blocks that span a whole segment: what
        # empty_cache can release, without scanning every free block
        self.whole = set()

    def insert(self, b):
        k = b.size << ADDR_BITS | b.addr
        self.blocks[b.addr] = b
        b.gc = self.gc_calls
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
        return self.lower_bound_key(stream, size, 0)

    def lower_bound_key(self, stream, size, addr):
        """The first free block of `stream` at or after (size, addr)."""
        st = self.streams.get(stream)
        if st is None:
            return None
        runs, maxes = st
        k = size << ADDR_BITS | addr
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
                 max_split=None, divisions=0, pad=0, conf=None):
        self.dev = dev
        self.sim = sim
        self.total_mem = total_mem
        self.limit = limit
        self.expandable = expandable
        self.max_split = max_split if max_split else 2 ** 63
        self.max_non_split_rounding = K_LARGE_BUFFER
        self.divisions = divisions
        # --alloc-conf (gensnap_conf.AllocConf): PyTorch's rules where the
        # generator's older ones differ (§13.12): the expandable best fit
        # counts the unmapped space after a block, rounding by interval,
        # garbage collection.  Without it the older rules keep the bytes
        # of the committed fixtures.
        self.conf = conf
        self.gc_threshold = 0.0
        if conf is not None:
            self.expandable = conf.expandable
            self.max_split = conf.max_split if conf.max_split else 2 ** 63
            self.max_non_split_rounding = conf.max_non_split_rounding
            self.divisions = conf if any(conf.divisions) else 0
            self.gc_threshold = conf.gc_threshold
        # torch_npu's round_size adds AddPadSize() bytes (32; 0 on Ascend950
        # with CANN >= 9.1.0) to every request before rounding (§16.12)
        self.pad = pad
        self.pools = {}
        self.segments = {}          # address -> Segment (non-expandable)
        self.ranges = {}            # (stream, kind) -> Segment (expandable VA)
        self.pending = []           # [due_tick, block]
        self.tick = 0
        self.reserved = 0
        self.peak_reserved = 0
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
        n = req + self.pad
        if n >= K_MIN_BLOCK and not self.divisions:
            size = (n + K_MIN_BLOCK - 1) // K_MIN_BLOCK * K_MIN_BLOCK
        else:
            size = round_size(n, self.divisions)
        kind = 'small' if size <= K_SMALL_SIZE else 'large'
        pool = self.pools.get((pool_id, kind)) or self.pool(pool_id, kind)
        blk = None
        looked = False
        st = pool.streams.get(stream)
        if st is not None:                     # Pool.lower_bound
            runs, maxes = st
            k = size << ADDR_BITS
            i = bisect.bisect_left(maxes, k)
            if i < len(maxes):
                run = runs[i]
                blk = pool.blocks[run[bisect.bisect_left(run, k)] & ADDR_MASK]
                if self.max_split < 2 ** 62 or self.conf is not None:
                    blk = self.get_free_block(pool, stream, size)
                    looked = True
        if not looked and self.gc_threshold:
            pool.gc_calls += 1                 # get_free_block's count
        if blk is None:
            expandable = self.expandable and pool_id == DEFAULT_POOL
            if self.gc_threshold and self.limit:
                self.garbage_collect()
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
        if kind == 'small' or blk.seg.expandable or \
                (self.conf is not None and self.expandable):
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
        if self.gc_threshold:
            pool.gc_calls += 1
        b = pool.lower_bound(stream, size)
        if b is None:
            return None
        if self.conf is not None and b.seg.expandable:
            # best fit counts the unmapped space a block can grow into
            # (get_free_block's expandable_size, §13.12)
            while b.seg.expandable:
                n = pool.lower_bound_key(stream, b.size, b.addr + 1)
                if n is None or expandable_size(n) >= expandable_size(b):
                    break
                b = n
        if size < self.max_split and b.size >= self.max_split:
            return None
        if size >= self.max_split and \
                b.size >= size + self.max_non_split_rounding:
            return None
        return b

    def garbage_collect(self):
        """garbage_collect_cached_blocks (§13.12): while reserved exceeds
        the threshold share of the limit, free whole cached large blocks
        at least as old (in lookups since they were cached) as the
        average."""
        thr = int(self.gc_threshold * self.limit)
        if self.reserved <= thr:
            return
        pool = self.pools.get((DEFAULT_POOL, 'large'))
        if pool is None:
            return
        target = self.reserved - thr

        def whole(b):
            return b.prev is None and b.next is None and \
                not b.seg.expandable
        free = [pool.blocks[k[2]] for k in pool.keys]
        ages = [pool.gc_calls - b.gc for b in free if whole(b)]
        total, count = sum(ages), len(ages)
        reclaimed, freed = 0, True
        while reclaimed < target and freed and count > 0:
            avg = total / count
            freed = False
            for k in pool.keys:
                b = pool.blocks.get(k[2])
                if b is None or not whole(b):
                    continue
                age = pool.gc_calls - b.gc
                if age >= avg:
                    freed = True
                    reclaimed += b.size
                    total -= age
                    count -= 1
                    self.release_block(b)

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
        if self.reserved > self.peak_reserved:
            self.peak_reserved = self.reserved
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
        if self.reserved > self.peak_reserved:
            self.peak_reserved = self.reserved
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
    def free(self, blk, delay=2, fstk=None):
        """`fstk`: the stack of the free itself (context='all' records one
        per free, §1.2; both free events share it); None: the frees share
        the alloc's stack (context='alloc')."""
        self.emit('free_requested', blk.addr, blk.req, blk.stream,
                  fstk or blk.stk)
        self.allocated_req -= blk.req
        self.allocated_size -= blk.size
        if blk.uses:
            assert fstk is None, 'free stacks of pending frees: not modelled'
            blk.state = PENDING
            self.pending.append([self.tick + delay, blk])
        else:
            self.free_block(blk, fstk)

    def free_block(self, blk, fstk=None):
        stk = blk.stk
        self.emit('free_completed', blk.addr, blk.req, blk.stream,
                  fstk or stk)
        if fstk is not None:                   # used by these two events only
            self.sim.sink.release(fstk[0])
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
                 expandable=False, max_split=None, start_us=1718000000000000,
                 pad=0, conf=None):
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
                                     expandable, max_split, pad=pad,
                                     conf=conf)
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

    def annotate_memory(self, dev, addr, size, stream, meta, stk):
        """An annotate trace event (PyTorch 2.14, §17.1): metadata
        attached to the live allocation at addr."""
        self.nev += 1
        self.sink.event(dev, 'annotate', addr, size, stream,
                        self.clock.stamp(), stk, meta)

    def annotate(self, dev, name, stage):
        self.sink.annotation(name, stage, dev, self.clock.stamp())

    def unrecorded(self, fn):
        """Runs fn() with no event recorded, as allocations made before
        _record_memory_history() are: their blocks end up in the final
        segments, never in the trace (§16.8)."""
        saved = [d.emit for d in self.devs]
        for d in self.devs:
            d.emit = _discard
        try:
            return fn()
        finally:
            for d, e in zip(self.devs, saved):
                d.emit = e


def _discard(*args):
    pass

