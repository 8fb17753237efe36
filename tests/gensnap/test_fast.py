#!/usr/bin/env python3
"""Tests of gensnap's --fast writer (contrib/gensnap_fast.py, unittest).

Run: top_srcdir=. python3 tests/gensnap/test_fast.py

A --fast file repeats one simulated period of training steps by copying
its bytes.  Each test writes the same run both ways, --fast with
--events N and the exact simulation with --steps S (S: the steps the
fast run wrote), and requires the same truth sidecar, the same unpickled
snapshot apart from the times, times that still increase, and the truth
to hold when gensnap_check.py reads the fast file.
"""
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
SMALL = ['--scenario', 'training', '--layers', '2', '--hidden', '256']


def run(*args):
    return subprocess.run([sys.executable, GEN] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def without_times(snap):
    """The snapshot with every time_us dropped, and the trace's times."""
    times = []
    for tr in snap['device_traces']:
        for e in tr:
            if 'time_us' in e:
                times.append(e.pop('time_us'))
    for a in snap.get('external_annotations', ()):
        a.pop('time_us', None)
    return snap, times


class Fast(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmpd = tempfile.TemporaryDirectory(prefix='gensnap-fast.')
        cls.tmp = cls.tmpd.name

    @classmethod
    def tearDownClass(cls):
        cls.tmpd.cleanup()

    def both(self, name, args, events=6000):
        """Writes `args` with --fast and exactly; returns both paths and
        truths."""
        out = {}
        for how in ('fast', 'exact'):
            path = os.path.join(self.tmp, '%s-%s.pickle' % (name, how))
            truth = path[:-len('.pickle')] + '.json'
            extra = ['--fast', '--events', str(events)] if how == 'fast' \
                else ['--steps', str(out['fast'][1]['steps']['run'])]
            p = run(*(args + extra + ['-o', path, '--truth', truth]))
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(truth) as f:
                out[how] = (path, json.load(f))
        return out['fast'], out['exact']

    def same(self, name, args, events=6000):
        (fp, ft), (ep, et) = self.both(name, args, events)
        self.assertGreaterEqual(ft['devices'][0]['events'], events)
        # more steps than the head and the two simulated periods
        self.assertGreater(ft['steps']['run'], 8)
        self.assertEqual(ft, et)
        self.assertEqual(chk.self_check(fp, quiet=True, strict=True), [])
        self.assertEqual(chk.check_truth(fp, fp[:-len('.pickle')] +
                                         '.json'), [])
        fs, ftimes = without_times(chk.safe_load(fp))
        es, etimes = without_times(chk.safe_load(ep))
        self.assertEqual(fs, es)
        self.assertEqual(len(ftimes), len(etimes))
        self.assertTrue(all(a < b for a, b in zip(ftimes, ftimes[1:])))
        return ft

    def test_cpp_stacks(self):
        t = self.same('cpp', SMALL)
        self.assertEqual(t['steps']['count'], t['steps']['run'])

    def test_python_stacks(self):
        self.same('py', SMALL + ['--stacks', 'python'])

    def test_profiler_steps_renumbered(self):
        t = self.same('prof', SMALL + ['--profiler'])
        self.assertEqual(t['steps']['source'], 'profiler steps')

    def test_formats_and_protocol(self):
        self.same('f21', SMALL + ['--format', '2.1'])
        self.same('f20', SMALL + ['--format', '2.0'])
        self.same('p5', SMALL + ['--protocol', '5'])

    def test_refused(self):
        for args in (SMALL + ['--events', '5000', '--leak'],
                     SMALL + ['--steps', '5'],
                     SMALL,
                     SMALL + ['--events', '5000', '--max-entries', '900'],
                     ['--scenario', 'leak', '--events', '5000']):
            p = run(*(args + ['--fast', '-o',
                              os.path.join(self.tmp, 'never.pickle')]))
            self.assertNotEqual(p.returncode, 0, args)
            self.assertIn(b'gensnap: --fast: ', p.stderr)
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
            self.assertFalse(os.path.exists(os.path.join(self.tmp,
                                                         'never.pickle')))


if __name__ == '__main__':
    unittest.main()
