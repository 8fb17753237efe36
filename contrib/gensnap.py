#!/usr/bin/env python3
"""gensnap.py - generate realistic PyTorch CUDA memory snapshots (and prove them).

Standard library only.  Section numbers (§N) refer to doc/snapshot-format.md.

The generator has three parts, each in a module beside this file:
  * a simulator of the CUDA caching allocator (§13) that emits trace events
    (gensnap_alloc.py);
  * scenario drivers (training loops) that call malloc/free/empty_cache on
    it (gensnap_scenarios.py, with their call stacks in gensnap_stacks.py);
  * writers: an in-memory one (builds the Python objects with the sharing a
    real snapshot has, §8.3, gensnap_objects.py, and calls pickle.dump) and a
    streaming one that writes the same protocol-4 byte stream opcode by
    opcode (§8.2, gensnap_pickle.py) without holding the events in memory
    (gensnap_sinks.py; used with --events / --stream).
gensnap_run.py runs a scenario and writes the files, gensnap_truth.py the
ground truth.  `--self-check FILE` loads a pickle with a restricted
unpickler and checks that the trace replays to the final segments (§14,
gensnap_check.py, which shares no code with the generator).
"""

import argparse
import gc
import os
import sys

# The modules live beside this file (any cwd, the release tarball); no
# bytecode caches are written into the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from gensnap_check import self_check  # noqa: E402
from gensnap_run import (FORMATS, STREAM_THRESHOLD, Params,  # noqa: E402
                         generate_in_memory, generate_streaming)
from gensnap_scenarios import SCENARIOS  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description='Generate realistic PyTorch CUDA memory snapshots.')
    ap.add_argument('--scenario', choices=sorted(SCENARIOS), default='leak')
    ap.add_argument('--format', choices=FORMATS)
    ap.add_argument('--npu', action='store_true',
                    help='torch_npu (Ascend) style snapshot (§16.4)')
    ap.add_argument('--npu-pad', type=int, default=32, metavar='BYTES',
                    help='bytes torch_npu adds to a request before rounding '
                         'it to 512 (AddPadSize(): 32; 0 on Ascend950 with '
                         'CANN >= 9.1.0) (§16.12)')
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
                    help='with --self-check: also require small-pool blocks '
                         'to be exactly the rounded request (CUDA rounding, '
                         'or torch_npu\'s +32 pad, one rule per device)')
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.self_check:
        rc = 0
        for path in a.self_check:
            errs = self_check(path, strict=a.strict)
            for e in errs:
                print('  ' + e)
            if errs:
                rc = 1
        return rc
    if a.scenario == 'npu':
        a.npu = True
    if a.npu_pad < 0:
        raise SystemExit('gensnap: --npu-pad must be 0 or more')
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
