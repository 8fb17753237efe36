#!/usr/bin/env python3
"""Unit tests of gensnap's PyTorch 2.14 options (contrib/gensnap_2026.py,
stdlib unittest): what each writes, read back from the pickle with no
help from the generator or snapview.  Section numbers (§N) refer to
doc/snapshot-format.md.

Run: top_srcdir=. python3 tests/gensnap/test_2026.py
"""
import gzip
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import unittest

TOP = os.environ.get('top_srcdir') or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.dont_write_bytecode = True
GENSNAP = os.path.join(TOP, 'contrib', 'gensnap.py')


class Gen2026(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='gensnap2026.')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def gen(self, name, *args):
        out = os.path.join(self.tmp, name)
        subprocess.run([sys.executable, GENSNAP, '--format', 'newest',
                        '--seed', '3', '-o', out] + list(args), check=True)
        if out.endswith('.gz'):
            with gzip.open(out, 'rb') as f:
                return pickle.load(f)
        with open(out, 'rb') as f:
            return pickle.load(f)

    def test_annotate_on_live_allocations(self):
        s = self.gen('a.pickle', '--scenario', 'leak', '--events', '2000',
                     '--annotate-tensors')
        live, n = {}, 0
        for e in s['device_traces'][0]:
            a = e['action']
            if a == 'alloc':
                live[e['addr']] = e['size']
            elif a == 'free_requested':
                live.pop(e['addr'], None)
            elif a == 'annotate':
                n += 1
                # §17.1: on a live allocation, its size, a metadata string
                self.assertIn(e['addr'], live)
                self.assertEqual(e['size'], live[e['addr']])
                self.assertTrue(e['user_metadata'].startswith("{'tag': "))
                continue
            self.assertEqual(e.get('user_metadata'), '')
        self.assertGreater(n, 10)

    def test_host_blocks_are_powers_of_two(self):
        s = self.gen('h.pickle', '--scenario', 'leak', '--events', '500',
                     '--host')
        self.assertTrue(s['host_segments'] and s['host_traces'])
        big = 0
        for seg in s['host_segments']:
            self.assertNotIn('device', seg)
            self.assertEqual(len(seg['blocks']), 1)
            b = seg['blocks'][0]
            z = seg['total_size']
            self.assertEqual(b['size'], z)
            self.assertEqual(z & (z - 1), 0)
            if b['state'] != 'inactive':
                self.assertLessEqual(b['requested_size'], z)
                self.assertGreater(2 * b['requested_size'], z)
            if z == 32 << 30:
                big = b['requested_size']
        self.assertEqual(big, int(20.4 * (1 << 30)))    # sglang#37285
        # every alloc lands on a segment_alloc'd block that is free
        segs, busy = {}, set()
        for e in s['host_traces']:
            a, addr = e['action'], e['addr']
            if a == 'segment_alloc':
                segs[addr] = e['size']
            elif a == 'alloc':
                self.assertIn(addr, segs)
                self.assertNotIn(addr, busy)
                self.assertLessEqual(e['size'], segs[addr])
                busy.add(addr)
            elif a == 'free_completed':
                busy.discard(addr)
            elif a == 'segment_free':
                self.assertNotIn(addr, busy)
                del segs[addr]

    def test_pool_ids(self):
        s = self.gen('p.pickle', '--scenario', 'graphs', '--events', '1500',
                     '--pool-ids')
        pools = {seg['address']: seg['segment_pool_id']
                 for seg in s['segments']}
        private = 0
        for e in s['device_traces'][0]:
            p = e['pool_id']
            self.assertIsInstance(p, tuple)
            self.assertEqual(len(p), 2)
            if e['action'] == 'segment_alloc' and e['addr'] in pools:
                self.assertEqual(p, pools[e['addr']])
            private += p != (0, 0)
        self.assertGreater(private, 0)

    def test_no_trace_keeps_the_segments(self):
        full = self.gen('f.pickle', '--scenario', 'multi', '--events', '800')
        s = self.gen('n.pickle', '--scenario', 'multi', '--events', '800',
                     '--no-trace')
        self.assertEqual(s['device_traces'], [[], []])
        self.assertEqual(s['segments'], full['segments'])
        self.assertNotIn('external_annotations', s)

    def test_xpu_and_skip_actions(self):
        s = self.gen('x.pickle', '--scenario', 'leak', '--events', '500',
                     '--xpu', '--skip-actions', 'free_requested,oom')
        st = s['allocator_settings']
        self.assertIn('PYTORCH_XPU_ALLOC_CONF', st)
        self.assertNotIn('PYTORCH_CUDA_ALLOC_CONF', st)
        acts = {e['action'] for e in s['device_traces'][0]}
        self.assertNotIn('free_requested', acts)
        self.assertIn('free_completed', acts)

    def test_gzip_is_the_plain_pickle(self):
        args = ('--scenario', 'frag', '--events', '600', '--host')
        self.gen('z.pickle', *args)
        self.gen('z.pickle.gz', *args)
        z = os.path.join(self.tmp, 'z.pickle.gz')
        with gzip.open(z, 'rb') as f, \
                open(os.path.join(self.tmp, 'z.pickle'), 'rb') as g:
            self.assertEqual(f.read(), g.read())
        with open(z, 'rb') as f:
            first = f.read()
        self.gen('z.pickle.gz', *args)
        with open(z, 'rb') as f:
            self.assertEqual(f.read(), first)     # same arguments, bytes
        self.assertFalse([n for n in os.listdir(self.tmp) if '.tmp' in n])

    def test_json_gz_is_the_plain_json(self):
        # the format comes from OUT's name, whatever temporary name the
        # gzip wrapper writes through, and the file is compressed once
        args = ['--scenario', 'leak', '--events', '800']
        for name, extra in (('j.json', []), ('j.json.gz', []),
                            ('k.gz', ['--output-format', 'json.gz'])):
            out = os.path.join(self.tmp, name)
            subprocess.run([sys.executable, GENSNAP, '--format', 'newest',
                            '--seed', '3', '-o', out] + args + extra,
                           check=True)
        with open(os.path.join(self.tmp, 'j.json'), 'rb') as f:
            plain = f.read()
        self.assertEqual(plain[:1], b'{')
        for name in ('j.json.gz', 'k.gz'):
            with gzip.open(os.path.join(self.tmp, name), 'rb') as f:
                self.assertEqual(f.read(), plain)


if __name__ == '__main__':
    unittest.main()
