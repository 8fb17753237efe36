#!/usr/bin/env python3
"""Tests of gensnap's training scenario and rank sets (stdlib unittest).

Run: top_srcdir=. python3 tests/gensnap/test_training.py

The truth of each generated file is checked by gensnap_check.py, which
reads only the file and shares no code with the generator; these tests
also compare the file's shape with the real one-step training capture in
tests/data/real/.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile
import unittest

TOP = os.environ.get('top_srcdir') or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(TOP, 'contrib'))
import gensnap_check as chk  # noqa: E402

GEN = os.path.join(TOP, 'contrib', 'gensnap.py')
REAL = os.path.join(TOP, 'tests', 'data', 'real',
                    'cuda_train_one_step.pickle')
SMALL = ['--scenario', 'training', '--layers', '2', '--hidden', '256']


def run(*args):
    subprocess.check_call([sys.executable, GEN] + list(args),
                          stderr=subprocess.DEVNULL)


def alive_at_end(trace):
    live = {}
    for i, e in enumerate(trace):
        if e['action'] == 'alloc':
            live[e['addr']] = i
        elif e['action'] == 'free_completed':
            live.pop(e['addr'], None)
    return live


class Generated(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmpd = tempfile.TemporaryDirectory(prefix='gensnap-training.')
        cls.tmp = cls.tmpd.name
        cls.files = {}

    @classmethod
    def tearDownClass(cls):
        cls.tmpd.cleanup()

    def gen(self, name, *args):
        if name not in self.files:
            out = os.path.join(self.tmp, name + '.pickle')
            tr = os.path.join(self.tmp, name + '.json')
            run(*(list(args) + ['-o', out, '--truth', tr]))
            with open(tr) as f:
                self.files[name] = (out, json.load(f))
        return self.files[name]

    def holds(self, path, truth):
        self.assertEqual(chk.self_check(path, quiet=True, strict=True), [])
        tpath = path[:-len('.pickle')] + '.json'
        self.assertEqual(chk.check_truth(path, tpath), [])


class Truth(Generated):
    def test_1k_events(self):
        """About 1 000 events: whole steps, the truth holds."""
        path, t = self.gen('k1', *(SMALL + ['--events', '1000']))
        self.holds(path, t)
        self.assertGreaterEqual(t['devices'][0]['events'], 1000)
        self.assertGreaterEqual(t['steps']['count'], 2)
        self.assertEqual(t['steps']['source'], 'optimizer annotations')
        self.assertEqual(t['steps']['outside'], 0)

    def test_one_step_like_the_real_file(self):
        """One step: optimizer state = 2 x the parameters, gradients = the
        parameters, at the last event (AdamW, nothing freed by zero_grad
        yet), as in the real one-step capture."""
        path, t = self.gen('one', *SMALL)
        self.holds(path, t)
        last = t['categories']['at_last_event']
        pb = t['model']['parameter_bytes']
        self.assertEqual(last['parameter'], pb)
        self.assertEqual(last['gradient'], pb)
        self.assertEqual(last['optimizer_state'], 2 * pb)
        self.assertEqual(last['activation'], 0)
        self.assertEqual(t['steps']['count'], 1)
        # lazily created state: a loop of 2 x parameters allocations inside
        # the one Optimizer.step, not steps
        snap = chk.safe_load(path)
        tr = snap['device_traces'][0]
        (a, b), = t['steps']['optimizer_step_ranges']
        state = [e for e in tr[a:b + 1] if e['action'] == 'alloc' and
                 '_init_group' in chk.frames_text(e['frames'])]
        self.assertEqual(len(state), 2 * t['model']['parameters'])

    def test_parameters_before_the_trace(self):
        path, t = self.gen('one', *SMALL)
        snap = chk.safe_load(path)
        tr = snap['device_traces'][0]
        live = alive_at_end(tr)
        pre = [b for s in snap['segments'] for b in s['blocks']
               if b['state'] == 'active_allocated' and
               b['address'] not in live]
        self.assertEqual(len(pre), t['model']['parameters'])
        self.assertEqual(sum(b['requested_size'] for b in pre),
                         t['model']['parameter_bytes'])
        self.assertTrue(all(b['frames'] == [] for b in pre))
        self.assertEqual(t['devices'][0]['ghost_blocks'], len(pre))

    def test_gradients_on_the_engine_thread(self):
        """With C++ stacks the backward's allocations have no Python frame;
        with Python-only stacks they have no frame at all."""
        for name, extra in (('one', []), ('py', ['--stacks', 'python'])):
            path, t = self.gen(name, *(SMALL + extra))
            tr = chk.safe_load(path)['device_traces'][0]
            engine = [e for e in tr if e['action'] == 'alloc' and
                      ('thread_main' in chk.frames_text(e['frames']) or
                       not e['frames'])]
            self.assertGreater(len(engine), t['model']['parameters'])
            for e in engine:
                self.assertFalse([f for f in e['frames']
                                  if f['filename'].endswith('.py')])
            grads = [e for e in engine if 'AccumulateGrad' in
                     chk.frames_text(e['frames'])]
            self.assertEqual(bool(grads), name == 'one')

    def test_annotations_as_real(self):
        """The annotations have the real file's keys in its order."""
        path, _ = self.gen('one', *SMALL)
        real = chk.safe_load(REAL)['external_annotations']
        got = chk.safe_load(path)['external_annotations']
        self.assertEqual([list(a) for a in got[:1]],
                         [list(a) for a in real[:1]])
        names = collections.Counter((a['name'], a['stage']) for a in got)
        for n in ('Optimizer.step#AdamW.step',
                  'Optimizer.zero_grad#AdamW.zero_grad'):
            self.assertEqual(names[(n, 'START')], 1)
            self.assertEqual(names[(n, 'END')], 1)

    def test_frames_as_real(self):
        """The allocator, unwinder, engine and free frames are the real
        capture's own, and frees have stacks of their own
        (context='all'), shared by the free_requested/free_completed
        pair."""
        path, _ = self.gen('one', *SMALL)
        real = set()
        for e in chk.safe_load(REAL)['device_traces'][0]:
            real.update((f['name'], f['filename']) for f in e['frames'])
        tr = chk.safe_load(path)['device_traces'][0]
        gen = set()
        for e in tr:
            gen.update((f['name'], f['filename']) for f in e['frames'])
        must = [n for n in gen if n[0].startswith((
            'torch::unwind', 'torch::CapturedTraceback',
            'torch::cuda::(anonymous namespace)::gather',
            'c10::cuda::CUDACachingAllocator', 'torch::autograd::Engine::',
            'c10::TensorImpl::~TensorImpl', 'THPVariable_dealloc',
            'at::detail::empty_cuda', 'torch::autograd::AccumulateGrad::'))]
        self.assertGreater(len(must), 10)
        self.assertEqual([n for n in must if n not in real], [])
        allocs = {}
        pairs = 0
        for i, e in enumerate(tr):
            if e['action'] == 'alloc':
                allocs[e['addr']] = e['frames']
            elif e['action'] == 'free_completed':
                prev = tr[i - 1]
                self.assertEqual(prev['action'], 'free_requested')
                self.assertIs(prev['frames'], e['frames'])
                self.assertIsNot(e['frames'], allocs[e['addr']])
                pairs += 1
        self.assertGreater(pairs, 100)

    def test_sizes_like_the_real_file(self):
        """Default model: tensors of 1-256 MiB, none above ~1% of the
        peak, hundreds of distinct stacks."""
        path, t = self.gen('default', '--scenario', 'training')
        self.holds(path, t)
        tr = chk.safe_load(path)['device_traces'][0]
        sizes = [e['size'] for e in tr if e['action'] == 'alloc']
        peak = t['devices'][0]['timeline_peak']
        self.assertLess(max(sizes), peak / 100)
        self.assertLessEqual(max(sizes), 256 << 20)
        self.assertGreater(sum(1 << 20 <= s for s in sizes), len(sizes) / 2)
        stacks = {tuple((f['name'], f['filename'], f['line'])
                        for f in e['frames']) for e in tr}
        self.assertGreater(len(stacks), 500)
        self.assertEqual(t['model']['parameters'], 219)

    def test_stacks_grow_with_layers(self):
        counts = []
        for layers in ('1', '4'):
            path, _ = self.gen('l' + layers, '--scenario', 'training',
                               '--layers', layers, '--hidden', '128')
            tr = chk.safe_load(path)['device_traces'][0]
            counts.append(len({tuple((f['name'], f['line'])
                                     for f in e['frames']) for e in tr}))
        self.assertGreater(counts[1], 2 * counts[0])

    def test_leak_profiler_python(self):
        """--leak --profiler with Python-only stacks: the steps come from
        ProfilerStep, the leak is one tensor per step at its site."""
        path, t = self.gen('lp', *(SMALL + ['--steps', '3', '--leak',
                                            '--profiler', '--stacks',
                                            'python']))
        self.holds(path, t)
        self.assertEqual(t['steps']['source'], 'profiler steps')
        self.assertEqual(t['steps']['count'], 3)
        lk = t['leak']
        self.assertEqual(lk['count'], 3)
        self.assertEqual(lk['site'], 'metrics/tracker.py:47')
        self.assertEqual(t['categories']['at_last_event']['other'],
                         lk['total_requested'] + 2 * 8 * 4 * 256)

    def test_stream_equals_pickle_dump(self):
        args = SMALL + ['--steps', '2', '--leak']
        a, ta = self.gen('s1', *args)
        b, tb = self.gen('s2', *(args + ['--stream']))
        with open(a, 'rb') as fa, open(b, 'rb') as fb:
            self.assertEqual(fa.read(), fb.read())
        self.assertEqual(ta, tb)

    def test_ring_buffer(self):
        path, t = self.gen('ring', *(SMALL + ['--steps', '3',
                                              '--max-entries', '900']))
        self.holds(path, t)
        self.assertGreater(t['devices'][0]['unmatched_frees'], 0)
        self.assertLess(t['steps']['count'], 3)

    def test_checker_catches_a_wrong_truth(self):
        path, t = self.gen('one', *SMALL)
        for key, change in (('gradient', 512), ('activation', 4)):
            bad = json.loads(json.dumps(t))
            bad['categories']['at_peak'][key] += change
            p = os.path.join(self.tmp, 'bad.json')
            with open(p, 'w') as f:
                json.dump(bad, f)
            errs = chk.check_truth(path, p)
            self.assertTrue(any('at_peak' in e for e in errs), errs)
        bad = json.loads(json.dumps(t))
        bad['steps']['ranges'][0][1] -= 1
        with open(p, 'w') as f:
            json.dump(bad, f)
        self.assertTrue(any('step ranges' in e for e in
                            chk.check_truth(path, p)))

    def test_checker_rules_on_the_real_file(self):
        """The checker's category rules, applied to the real one-step
        capture: gradients and optimizer state within 3% of 1x and 2x
        the parameters."""
        snap = chk.safe_load(REAL)
        tr = snap['device_traces'][0]
        marks = chk.annotation_events(snap, tr)
        source, ranges = chk.steps_of(marks, len(tr))
        self.assertEqual((source, len(ranges)), ('optimizer annotations', 1))
        _, _, ghosts, _ = chk.timeline(tr, snap['segments'])
        cats = chk.categorize(tr, marks, ranges, ghosts)
        got = chk.category_bytes(tr, cats, ghosts, len(tr) - 1)
        p = got['parameter']
        self.assertAlmostEqual(got['gradient'] / p, 1, delta=0.03)
        self.assertAlmostEqual(got['optimizer_state'] / p, 2, delta=0.06)


class Ranks(Generated):
    def check_set(self, d, t, n, oom):
        self.assertEqual(t['ranks'], n)
        per = t['per_rank']
        roles = collections.Counter(r['role'] for r in per)
        self.assertEqual(roles['leak'], 1)
        self.assertEqual(roles['peak'], 1)
        self.assertEqual(roles['oom'], 1 if oom else 0)
        top = max(per, key=lambda r: r['peak'])
        self.assertEqual(t['peak_rank'], top['rank'])
        self.assertEqual(top['role'], 'peak')
        self.assertEqual(t['leak_rank'],
                         next(r['rank'] for r in per if r['role'] == 'leak'))
        for r in per:
            path = os.path.join(d, r['file'])
            with open(os.path.join(d, r['truth'])) as f:
                rt = json.load(f)
            self.assertEqual(chk.self_check(path, quiet=True), [])
            self.assertEqual(chk.check_truth(path, os.path.join(
                d, r['truth'])), [])
            self.assertEqual(rt['devices'][0]['timeline_peak'], r['peak'])
            self.assertEqual(rt['devices'][0]['timeline_peak_event'],
                             r['peak_event'])
            tr = chk.safe_load(path)['device_traces'][0]
            leaked = [i for i in alive_at_end(tr).values()
                      if tr[i]['frames'] and
                      any(f['filename'] == t['leak']['filename'] and
                          f['line'] == t['leak']['line']
                          for f in tr[i]['frames'])]
            if r['role'] == 'leak':
                self.assertEqual(len(leaked), t['leak']['count'])
                self.assertGreater(len(leaked), 1)
            else:
                self.assertEqual(leaked, [])
            if r['role'] == 'oom':
                self.assertEqual(tr[-1]['action'], 'oom')
                self.assertEqual(r['oom_event'], len(tr) - 1)
            else:
                self.assertNotEqual(tr[-1]['action'], 'oom')
        self.assertEqual(t['oom_rank'], next(
            (r['rank'] for r in per if r['role'] == 'oom'), None))

    def test_training_set(self):
        d = os.path.join(self.tmp, 'train/')
        run(*(SMALL + ['--steps', '3', '--ranks', '4', '--ranks-oom',
                       '-o', d]))
        with open(os.path.join(d, 'ranks.truth.json')) as f:
            t = json.load(f)
        self.check_set(d, t, 4, True)
        # most ranks alike, not identical: same steps, other bytes
        normal = [r for r in t['per_rank'] if r['role'] == 'normal']
        self.assertEqual(len(normal), 1)

    def test_leak_set_with_prefix(self):
        d = os.path.join(self.tmp, 'leakset')
        os.makedirs(d)
        truth = os.path.join(self.tmp, 'set.json')
        run('--scenario', 'leak', '--events', '900', '--ranks', '4',
            '-o', os.path.join(d, 'job7-'), '--truth', truth)
        with open(truth) as f:
            t = json.load(f)
        self.assertEqual(sorted(os.listdir(d))[:2],
                         ['job7-rank0.pickle', 'job7-rank0.truth.json'])
        self.check_set(d, t, 4, False)
        normal = [r for r in t['per_rank'] if r['role'] == 'normal']
        files = set()
        for r in normal:
            with open(os.path.join(d, r['file']), 'rb') as f:
                files.add(f.read())
        self.assertEqual(len(files), len(normal))    # seeds differ

    def test_bad_requests(self):
        for args in (['--scenario', 'frag', '--ranks', '3'],
                     ['--scenario', 'leak', '--ranks', '2', '--ranks-oom'],
                     ['--scenario', 'leak', '--ranks-oom'],
                     ['--scenario', 'leak', '--layers', '3'],
                     ['--scenario', 'training', '--layers', '0']):
            p = subprocess.run([sys.executable, GEN] + args + [
                '-o', os.path.join(self.tmp, 'never/')],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertNotEqual(p.returncode, 0, args)
            self.assertIn(b'gensnap: ', p.stderr)
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)


if __name__ == '__main__':
    unittest.main()
