#!/usr/bin/env python3
"""Output bytes of contrib/gensnap.py against recorded digests.

usage: bytes.py [--update] [--gen FILE]

Runs gensnap in this process over a set of configurations (scenarios x
formats x stack kinds x in-memory/streaming, protocols, ring buffers,
options) and compares the SHA-256 of each output pickle and truth file
with tests/gensnap/bytes.sha256.  The digests were recorded before the
generator was split into modules; a configuration whose bytes change on
purpose is re-recorded with --update and named in the commit.  --gen
runs another copy of the generator (a single-file one included).
"""
import hashlib
import importlib.util
import os
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.environ.get('top_srcdir') or os.path.join(HERE, '..', '..')
DIGESTS = os.path.join(HERE, 'bytes.sha256')


def configs():
    out = []
    for s in ('leak', 'frag', 'oom', 'multi', 'expandable', 'graphs',
              'wrapped', 'legacy', 'npu'):
        base = ['--scenario', s, '--events', '600']
        out.append(base + ['--format', 'newest'])
        out.append(base + ['--format', 'newest', '--stacks', 'cpp',
                           '--stream'])
        out.append(base + ['--format', '2.1', '--stacks', 'cpp'])
        if s != 'npu':
            out.append(base + ['--format', '2.0', '--stream'])
            out.append(base + ['--format', '1.13', '--stacks', 'cpp'])
    for p in ('2', '3', '5'):
        out.append(['--scenario', 'frag', '--events', '500', '--protocol', p])
    out += [['--scenario', 'leak', '--events', '1500', '--max-entries', '500',
             '--stream'],
            ['--scenario', 'frag', '--expandable', '--events', '800'],
            ['--scenario', 'frag', '--max-split-size', '8388608',
             '--events', '1200', '--stream'],
            ['--scenario', 'leak', '--npu', '--events', '800'],
            ['--scenario', 'leak', '--npu', '--events', '800',
             '--npu-pad', '0'],
            ['--scenario', 'npu', '--events', '600', '--npu-pad', '0'],
            ['--scenario', 'multi', '--seed', '7', '--events', '800'],
            ['--scenario', 'oom', '--stacks', 'cpp', '--stream']]
    return out


def load(gen):
    spec = importlib.util.spec_from_file_location('gensnap_under_test', gen)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(gen)))
    spec.loader.exec_module(mod)
    return mod


def digest(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()[:32]


def main(argv):
    update = '--update' in argv
    gen = os.path.join(TOP, 'contrib', 'gensnap.py')
    if '--gen' in argv:
        gen = argv[argv.index('--gen') + 1]
    mod = load(gen)
    got = {}
    with tempfile.TemporaryDirectory(prefix='gensnap-bytes.') as tmp:
        out, tr = os.path.join(tmp, 'x.pickle'), os.path.join(tmp, 'x.json')
        err = sys.stderr
        for args in configs():
            sys.stderr = open(os.devnull, 'w')      # the streaming summary
            try:
                mod.main(args + ['-o', out, '--truth', tr])
            finally:
                sys.stderr.close()
                sys.stderr = err
            got[' '.join(args)] = '%s %s' % (digest(out), digest(tr))
    if update:
        with open(DIGESTS, 'w') as f:
            for k in sorted(got):
                f.write('%s  %s\n' % (got[k], k))
        print('bytes.py: %d digests written' % len(got))
        return 0
    want = {}
    with open(DIGESTS) as f:
        for line in f:
            pk, tk, args = line.rstrip('\n').split(' ', 2)
            want[args.strip()] = '%s %s' % (pk, tk)
    bad = 0
    for k in sorted(set(want) | set(got)):
        if want.get(k) != got.get(k):
            print('bytes.py: differs: %s (want %s, got %s)'
                  % (k, want.get(k), got.get(k)))
            bad += 1
    print('bytes.py: %d configurations, %d differ' % (len(got), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
