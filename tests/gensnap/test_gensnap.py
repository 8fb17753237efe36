#!/usr/bin/env python3
"""Unit tests for contrib/gensnap.py (stdlib unittest).  Section numbers
(§N) refer to doc/snapshot-format.md.

Run: top_srcdir=. python3 tests/gensnap/test_gensnap.py
"""
import collections
import json
import os
import pickle
import pickletools
import shutil
import subprocess
import sys
import tempfile
import unittest

TOP = os.environ.get('top_srcdir') or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(TOP, 'contrib'))
import gensnap_alloc as g  # noqa: E402
import gensnap_check as chk  # noqa: E402
import gensnap_stacks as stacks  # noqa: E402

MiB = g.MiB
GEN = os.path.join(TOP, 'tests', 'data', 'gen')


class Rec:
    """Event sink that records (action, addr, size, stream)."""

    def __init__(self):
        self.ev = []

    def event(self, dev, action, addr, size, stream, t, stk):
        self.ev.append((action, addr, size, stream))

    def release(self, serial):
        pass

    def annotation(self, *a):
        pass


def new_dev(**kw):
    rec = Rec()
    sim = g.Simulator(rec, **kw)
    return sim, sim.devs[0], rec


def malloc(sim, dev, n, stream=0, **kw):
    return dev.malloc(n, stream, sim.new_stack((('f', '/x.py', 1),)), **kw)


class FakeBlock:
    def __init__(self, addr, size, stream):
        self.addr, self.size, self.stream = addr, size, stream
        self.prev = self.next = None


class PoolOrder(unittest.TestCase):
    def test_against_sorted_list(self):
        """Pool keeps (stream, size, address) order through splits of its
        sorted runs: lower_bound and keys agree with a plain sorted list."""
        import bisect
        import random
        rng = random.Random(7)
        pool = g.Pool('small', g.DEFAULT_POOL)
        ref = []                      # sorted (stream, size, addr)
        blocks = {}
        base = 0x7f0000000000
        for step in range(12000):
            if ref and rng.random() < 0.4:
                key = ref.pop(rng.randrange(len(ref)))
                pool.remove(blocks.pop(key[2]))
            else:
                addr = base + rng.randrange(1 << 22) * 512
                if addr in blocks:
                    continue
                st = rng.choice((0, 7))
                b = FakeBlock(addr, 512 * rng.randrange(1, 400), st)
                blocks[addr] = b
                bisect.insort(ref, (st, b.size, addr))
                pool.insert(b)
            if step % 997 == 0:
                self.assertEqual(pool.keys, ref)
            st = rng.choice((0, 7))
            size = 512 * rng.randrange(1, 420)
            i = bisect.bisect_left(ref, (st, size))
            got = pool.lower_bound(st, size)
            if i < len(ref) and ref[i][0] == st:
                self.assertIsNotNone(got)
                self.assertEqual((got.stream, got.size, got.addr), ref[i])
            else:
                self.assertIsNone(got)
        self.assertGreater(len(pool.streams[0][0]), 1)   # runs were split
        self.assertEqual(pool.keys, ref)


class Allocator(unittest.TestCase):
    def test_round_size(self):
        self.assertEqual(g.round_size(1), 512)
        self.assertEqual(g.round_size(512), 512)
        self.assertEqual(g.round_size(513), 1024)
        self.assertEqual(g.round_size(9000, 4), 10240)   # 8 KiB..16 KiB in 4 steps
        self.assertEqual(g.round_size(1200, 4), 1536)    # <= 512*d: plain rounding
        self.assertEqual(g.round_size(4096, 4), 4096)
        self.assertEqual(g.segment_alloc_size(MiB), 2 * MiB)
        self.assertEqual(g.segment_alloc_size(MiB + 512), 20 * MiB)
        self.assertEqual(g.segment_alloc_size(11 * MiB + 1), 12 * MiB)

    def test_npu_pad(self):
        """torch_npu adds 32 bytes before rounding (§16.12): 16 KiB takes
        16.5 KiB, 8 bytes take 512, and a 1 MiB request leaves the small
        pool; with pad 0 the CUDA sizes come back."""
        for pad, want in ((32, (16896, 512, 1536, 2560)),
                          (0, (16384, 512, 1024, 2048))):
            sim, dev, rec = new_dev(pad=pad)
            got = tuple(malloc(sim, dev, n).size for n in (16384, 8, 1024,
                                                            2048))
            self.assertEqual(got, want)
            b = malloc(sim, dev, MiB)
            self.assertEqual(b.pool.kind, 'large' if pad else 'small')
            self.assertEqual(b.size, MiB + 512 if pad else MiB)

    def test_npu_rule_found(self):
        """The checker finds torch_npu's rounding in the npu fixture and
        CUDA's in the others, from the blocks alone."""
        for name, pad in (('npu', 32), ('leak', 0), ('multi', 0)):
            snap = chk.safe_load(os.path.join(GEN, name + '.pickle'))
            segs = [s for s in snap['segments'] if s['device'] == 0]
            self.assertEqual(chk.device_pad(segs), pad, name)

    def test_small_split_and_merge(self):
        sim, dev, rec = new_dev()
        a = malloc(sim, dev, 1000)
        b = malloc(sim, dev, 3000)
        self.assertEqual([e[0] for e in rec.ev],
                         ['segment_alloc', 'alloc', 'alloc'])
        self.assertEqual(b.addr, a.addr + 1024)       # packs upward
        self.assertEqual(b.size, 3072)
        dev.free(a)
        dev.free(b)
        # everything merged back into one 2 MiB free block
        pool = dev.pools[(g.DEFAULT_POOL, 'small')]
        self.assertEqual(pool.keys, [(0, 2 * MiB, a.addr)])

    def test_large_split_rule(self):
        sim, dev, rec = new_dev()
        a = malloc(sim, dev, 19 * MiB + 600 * 1024)   # remainder <= 1 MiB
        self.assertEqual(a.size, 20 * MiB)
        sim, dev, rec = new_dev()
        b = malloc(sim, dev, 5 * MiB)                 # tail stays cached
        self.assertEqual(b.size, 5 * MiB)
        c = malloc(sim, dev, 3 * MiB)
        self.assertEqual(c.addr, b.addr + 5 * MiB)
        self.assertEqual(sum(e[0] == 'segment_alloc' for e in rec.ev), 1)

    def test_best_fit_same_stream(self):
        sim, dev, rec = new_dev()
        x = [malloc(sim, dev, n) for n in (4096, 512, 8192, 512, 2048, 512)]
        dev.free(x[0])
        dev.free(x[2])
        dev.free(x[4])
        y = malloc(sim, dev, 2000)       # smallest fitting block: x[4]
        self.assertEqual(y.addr, x[4].addr)
        z = malloc(sim, dev, 2000, stream=77)   # other stream: new segment
        self.assertEqual(rec.ev[-2][0], 'segment_alloc')
        self.assertEqual(z.stream, 77)

    def test_expandable_mapping(self):
        sim, dev, rec = new_dev(expandable=True)
        a = malloc(sim, dev, 3 * MiB)
        b = malloc(sim, dev, 30 * MiB)
        acts = [e[0] for e in rec.ev]
        self.assertNotIn('segment_alloc', acts)
        maps = [e for e in rec.ev if e[0] == 'segment_map']
        self.assertEqual([m[2] for m in maps], [20 * MiB, 20 * MiB])
        self.assertEqual(maps[1][1], maps[0][1] + 20 * MiB)   # contiguous
        self.assertEqual(b.addr, a.addr + 3 * MiB)
        dev.free(a)
        dev.free(b)
        dev.release_cached_blocks()
        self.assertEqual([e[0] for e in rec.ev[-1:]], ['segment_unmap'])
        self.assertEqual(dev.reserved, 0)
        self.assertEqual(dev.snapshot(), [])

    def test_empty_cache_order(self):
        sim, dev, rec = new_dev()
        s1 = malloc(sim, dev, 1000, stream=5)
        s0 = malloc(sim, dev, 1000)
        big = malloc(sim, dev, 30 * MiB)
        mid = malloc(sim, dev, 12 * MiB)
        for b in (s1, s0, big, mid):
            dev.free(b)
        rec.ev.clear()
        dev.release_cached_blocks()
        got = [(e[0], e[2], e[3]) for e in rec.ev]
        self.assertEqual(got, [('segment_free', 12 * MiB, 0),
                               ('segment_free', 30 * MiB, 0),
                               ('segment_free', 2 * MiB, 0),
                               ('segment_free', 2 * MiB, 5)])

    def test_pending_free(self):
        sim, dev, rec = new_dev()
        a = malloc(sim, dev, 1000, stream=9, uses=(0,))
        dev.free(a, delay=1)
        self.assertEqual(rec.ev[-1][0], 'free_requested')
        self.assertEqual(a.state, g.PENDING)
        malloc(sim, dev, 1000)           # process_events completes it
        self.assertEqual([e[0] for e in rec.ev[-3:]],
                         ['free_completed', 'segment_alloc', 'alloc'])

    def test_oom(self):
        sim, dev, rec = new_dev(limit=64 * MiB, total_mem=1 << 34)
        a = malloc(sim, dev, 40 * MiB)
        dev.free(a)
        malloc(sim, dev, 50 * MiB + 1)   # frees the cached 40 MiB first
        self.assertIn('segment_free', [e[0] for e in rec.ev])
        with self.assertRaises(g.OutOfMemory):
            malloc(sim, dev, 30 * MiB)
        self.assertEqual(rec.ev[-1][0], 'oom')
        self.assertEqual(rec.ev[-1][2], 30 * MiB)


class Checker(unittest.TestCase):
    def test_block_size_for(self):
        """The checker's own size rule: CUDA (§13.3) and torch_npu's +32
        pad (§16.12, with the examples measured on real NPU files)."""
        self.assertEqual(chk.block_size_for(1), 512)
        self.assertEqual(chk.block_size_for(512), 512)
        self.assertEqual(chk.block_size_for(513), 1024)
        self.assertEqual(chk.block_size_for(16384), 16384)
        self.assertEqual(chk.block_size_for(16384, 32), 16896)
        self.assertEqual(chk.block_size_for(8, 32), 512)
        self.assertEqual(chk.block_size_for(480, 32), 512)
        self.assertEqual(chk.block_size_for(481, 32), 1024)
        self.assertEqual(chk.block_size_for(1024, 32), 1536)

    def test_overlap(self):
        """Two live blocks sharing bytes are reported, even when each alloc
        lies inside its segment and at a fresh address."""
        base = 0x7f0000000000

        def ev(action, addr, size):
            return {'action': action, 'addr': addr, 'size': size,
                    'stream': 0, 'time_us': 1}

        def snap(second):
            trace = [ev('segment_alloc', base, 2 * MiB),
                     ev('alloc', base, 1000), ev('alloc', second, 100)]
            for a, n in ((base, 1000), (second, 100)):
                trace += [ev('free_requested', a, n),
                          ev('free_completed', a, n)]
            seg = {'device': 0, 'address': base, 'total_size': 2 * MiB,
                   'allocated_size': 0, 'active_size': 0,
                   'requested_size': 0, 'stream': 0, 'segment_type': 'small',
                   'blocks': [{'address': base, 'size': 2 * MiB,
                               'requested_size': 0, 'state': 'inactive'}]}
            return {'segments': [seg], 'device_traces': [trace]}

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 's.pickle')
            for second, want in ((base + 1024, []), (base + 512, 1)):
                with open(path, 'wb') as f:
                    pickle.dump(snap(second), f)
                errs = chk.self_check(path, quiet=True)
                if want == []:
                    self.assertEqual(errs, [])
                else:
                    self.assertEqual(len(errs), 1, errs)
                    self.assertIn('overlaps the live block at %#x' % base,
                                  errs[0])

    def test_shares_no_code(self):
        """The checker imports nothing of the generator, so a mistake in
        the simulator's rounding cannot pass both."""
        import ast
        path = os.path.join(TOP, 'contrib', 'gensnap_check.py')
        with open(path) as f:
            tree = ast.parse(f.read())
        names = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names.append(node.module)
        self.assertTrue(names)
        self.assertEqual([n for n in names if n.startswith('gensnap')], [])


def gen(tmp, name, *args):
    out = os.path.join(tmp, name + '.pickle')
    tr = os.path.join(tmp, name + '.json')
    subprocess.check_call([sys.executable, os.path.join(TOP, 'contrib',
                                                        'gensnap.py')]
                          + list(args) + ['-o', out, '--truth', tr],
                          stderr=subprocess.DEVNULL)
    with open(tr) as f:
        return out, json.load(f)


def load(path):
    return chk.safe_load(path)


def first_user(frames):
    f = stacks.first_user_frame(frames)
    return (f['filename'], f['line'], f['name']) if f else None


def timeline_peak(snap, dev=0):
    """doc/snapshot-format.md §10.2 Active Memory Timeline, phases 1-5,
    without drawing."""
    trace = snap['device_traces'][dev]
    merged = []
    for e in trace:
        if e['action'] == 'free_completed' and merged and \
                merged[-1]['action'] == 'free_requested' and \
                merged[-1]['addr'] == e['addr']:
            merged[-1] = dict(merged[-1], action='free', idx=merged[-1]['idx'])
            continue
        merged.append(dict(e, idx=len(merged)))
    elements, actions, initial, addr_to = [], [], [], {}
    for e in merged:
        if e['action'] == 'alloc':
            elements.append(e)
            addr_to[e['addr']] = len(elements) - 1
            actions.append(len(elements) - 1)
        elif e['action'] in ('free', 'free_completed'):
            if e['addr'] in addr_to:
                actions.append(addr_to.pop(e['addr']))
            else:
                elements.append(e)
                initial.append(len(elements) - 1)
                actions.append(len(elements) - 1)
    for s in snap['segments']:
        if s['device'] != dev:
            continue
        for b in s['blocks']:
            if b['state'] == 'active_allocated' and b['address'] not in addr_to:
                elements.append({'size': b['requested_size']})
                initial.append(len(elements) - 1)
    live = set(initial)
    total = sum(elements[i]['size'] for i in initial)
    best, best_at = None, None
    raw = [e for e in merged]
    for k, i in enumerate(actions):
        if i in live:
            live.discard(i)
            total -= elements[i]['size']
        else:
            live.add(i)
            total += elements[i]['size']
        if best is None or total > best:
            best, best_at = total, k
    return best, best_at


class Files(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='gensnap-test.')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_memo_sharing(self):
        path = os.path.join(GEN, 'leak.pickle')
        with open(path, 'rb') as f:
            data = f.read()
        ops = collections.Counter(op.name for op, _, _ in
                                  pickletools.genops(data))
        snap = load(path)
        tr = snap['device_traces'][0]
        allocs = sum(e['action'] == 'alloc' for e in tr)
        # one new list per malloc (+ segment lists, device lists, ...)
        self.assertLess(ops['EMPTY_LIST'], allocs + 60)
        self.assertGreater(ops['LONG_BINGET'] + ops['BINGET'], 10 * len(tr))
        by_addr = {}
        for e in tr:
            if e['action'] == 'alloc':
                by_addr[e['addr']] = e['frames']
            elif e['action'].startswith('free_') and e['addr'] in by_addr:
                self.assertIs(e['frames'], by_addr[e['addr']])
        frames = {}
        for e in tr:
            for fr in e.get('frames', []):
                key = (fr['name'], fr['filename'], fr['line'])
                self.assertIs(frames.setdefault(key, fr), fr)

    def test_stream_equals_pickle_dump(self):
        for args in (['--scenario', 'frag'], ['--scenario', 'npu'],
                     ['--scenario', 'leak', '--stacks', 'cpp',
                      '--events', '1200'],
                     ['--scenario', 'multi', '--events', '2500'],
                     ['--scenario', 'oom', '--events', '2000'],
                     ['--scenario', 'legacy', '--events', '2500'],
                     ['--scenario', 'expandable', '--events', '2500'],
                     ['--scenario', 'graphs', '--stacks', 'cpp',
                      '--events', '2500'],
                     ['--scenario', 'leak', '--events', '3000',
                      '--max-entries', '1001'],
                     ['--scenario', 'leak', '--events', '300',
                      '--max-entries', '1']):
            a, ta = gen(self.tmp, 'a', *args)
            b, tb = gen(self.tmp, 'b', *(args + ['--stream']))
            with open(a, 'rb') as fa, open(b, 'rb') as fb:
                self.assertEqual(fa.read(), fb.read(), args)
            self.assertEqual(ta, tb)

    def test_determinism(self):
        a, _ = gen(self.tmp, 'd1', '--scenario', 'multi', '--events', '600')
        b, _ = gen(self.tmp, 'd2', '--scenario', 'multi', '--events', '600')
        with open(a, 'rb') as fa, open(b, 'rb') as fb:
            self.assertEqual(fa.read(), fb.read())

    def test_truncation(self):
        p, t = gen(self.tmp, 'w', '--scenario', 'leak', '--events', '1500',
                   '--max-entries', '400')
        snap = load(p)
        tr = snap['device_traces'][0]
        self.assertEqual(len(tr), 400)
        dd = t['devices'][0]
        self.assertGreater(dd['dropped_events'], 0)
        seen = set()
        unmatched = 0
        for e in tr:
            if e['action'] == 'alloc':
                seen.add(e['addr'])
            elif e['action'] == 'free_completed' and e['addr'] not in seen:
                unmatched += 1
        self.assertEqual(unmatched, dd['unmatched_frees'])
        self.assertGreater(dd['ghost_blocks'], 0)
        self.assertEqual(chk.self_check(p, quiet=True), [])

    def check_peak(self, name):
        snap = load(os.path.join(GEN, name + '.pickle'))
        with open(os.path.join(GEN, name + '.truth.json')) as f:
            truth = json.load(f)
        peak, _ = timeline_peak(snap)
        self.assertEqual(peak, truth['devices'][0]['timeline_peak'], name)

    def test_truth_peaks(self):
        for name in ('leak', 'frag', 'oom', 'wrapped', 'graphs', 'expandable'):
            self.check_peak(name)

    def test_truth_leak(self):
        snap = load(os.path.join(GEN, 'leak.pickle'))
        with open(os.path.join(GEN, 'leak.truth.json')) as f:
            truth = json.load(f)['leak']
        sites = collections.Counter()
        for s in snap['segments']:
            for b in s['blocks']:
                if b['state'] == 'active_allocated':
                    sites[first_user(b['frames'])] += 1
        site = (truth['filename'], truth['line'], truth['name'])
        self.assertEqual(sites[site], truth['count'])
        caller = [fr for fr in next(
            b['frames'] for s in snap['segments'] for b in s['blocks']
            if b['frames'] and first_user(b['frames']) == site)
            if fr['name'] == 'train_step']
        self.assertEqual(caller[0]['line'], truth['caller']['line'])
        self.assertLess(truth['total_requested'],
                        truth['param_bytes'] + truth['optimizer_state_bytes'])

    def test_truth_frag(self):
        snap = load(os.path.join(GEN, 'frag.pickle'))
        with open(os.path.join(GEN, 'frag.truth.json')) as f:
            truth = json.load(f)
        tr = snap['device_traces'][0]
        last = max(i for i, e in enumerate(tr) if e['action'] == 'segment_alloc')
        fr = truth['frag']
        self.assertEqual(last, fr['last_segment_alloc_event'])
        reserved = alloc = 0
        live = {}
        for e in tr[:last]:
            a = e['action']
            if a == 'segment_alloc':
                reserved += e['size']
            elif a == 'segment_free':
                reserved -= e['size']
            elif a == 'alloc':
                live[e['addr']] = e['size']
            elif a == 'free_requested':
                live.pop(e['addr'])
        self.assertEqual(reserved, fr['reserved_before'])
        self.assertEqual(sum(live.values()), fr['allocated_before'])
        self.assertEqual(tr[last + 1]['size'], fr['request'])
        segs = snap['segments']
        d = truth['devices'][0]
        self.assertEqual(sum(s['total_size'] for s in segs), d['reserved'])
        self.assertEqual(sum(b['requested_size'] for s in segs
                             for b in s['blocks']
                             if b['state'] == 'active_allocated'),
                         d['allocated'])
        self.assertEqual(max(b['size'] for s in segs for b in s['blocks']
                             if b['state'] == 'inactive'),
                         d['largest_free_block'])

    def test_truth_oom(self):
        snap = load(os.path.join(GEN, 'oom.pickle'))
        with open(os.path.join(GEN, 'oom.truth.json')) as f:
            oom = json.load(f)['oom']
        tr = snap['device_traces'][0]
        self.assertEqual(tr[-1]['action'], 'oom')
        self.assertEqual(len(tr) - 1, oom['event_index'])
        self.assertEqual(tr[-1]['size'], oom['request'])
        self.assertEqual(tr[-1]['device_free'], oom['device_free'])

    def test_fixtures_consistent(self):
        for f in sorted(os.listdir(GEN)):
            if f.endswith('.pickle'):
                self.assertEqual(chk.self_check(os.path.join(GEN, f), quiet=True),
                                 [], f)


if __name__ == '__main__':
    unittest.main()
