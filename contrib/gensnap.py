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

import gensnap_2026  # noqa: E402
from gensnap_check import check_truth, self_check  # noqa: E402
from gensnap_conf import AllocConf, ConfError  # noqa: E402
from gensnap_fast import fast_refusal, generate_fast  # noqa: E402
from gensnap_run import (FORMATS, OUTPUT_FORMATS,  # noqa: E402
                         STREAM_THRESHOLD, Params, generate_in_memory,
                         generate_streaming, output_format)
from gensnap_ranks import generate_ranks  # noqa: E402
from gensnap_rundir import generate_run_dir  # noqa: E402
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
    ap.add_argument('--ring-flag', action='store_true',
                    help='with --max-entries and --format newest: write '
                         'allocator_settings trace_alloc_overflowed and '
                         'trace_alloc_max_entries per device (PyTorch '
                         '2.14), and ring_buffer_overflowed in the truth')
    ap.add_argument('--stacks', choices=('python', 'cpp'),
                    help='Python frames only, or C++ and Python frames as '
                         'stacks="all" records them (default: python; cpp '
                         'for training)')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--events', type=int,
                    help='approximate number of events (scales the run; '
                         'large values stream to disk)')
    ap.add_argument('--stream', action='store_true',
                    help='use the streaming writer even for small runs')
    ap.add_argument('--expandable', action='store_true',
                    help='expandable_segments:True')
    ap.add_argument('--max-split-size', type=int, default=None)
    ap.add_argument('--alloc-conf', metavar='SETTINGS',
                    help='allocator settings as PYTORCH_CUDA_ALLOC_CONF '
                         '(expandable_segments:True, max_split_size_mb:N, '
                         'roundup_power2_divisions:N or [MIB:N,...], '
                         'garbage_collection_threshold:F), written to the '
                         'file\'s allocator_settings; PyTorch\'s rules where '
                         'the generator\'s older ones differ (§13.12)')
    ap.add_argument('--limit', type=int, metavar='BYTES',
                    help='device memory the run may use: a segment or a '
                         'page map that does not fit fails, and the run '
                         'ends with an oom event (frag, oom scenarios)')
    t = ap.add_argument_group('training scenario')
    t.add_argument('--layers', type=int, help='transformer blocks (24)')
    t.add_argument('--hidden', type=int, help='hidden size (1024)')
    t.add_argument('--batch', type=int, help='sequences per batch (4)')
    t.add_argument('--seq', type=int, help='tokens per sequence (256)')
    t.add_argument('--vocab', type=int, help='vocabulary size (10000)')
    t.add_argument('--steps', type=int,
                   help='training steps (default: one, or as many as '
                        '--events needs)')
    t.add_argument('--profiler', action='store_true',
                   help='ProfilerStep#N annotations around each step')
    t.add_argument('--leak', action='store_true',
                   help='plant a leak in user code: one tensor kept per step')
    t.add_argument('--fast', action='store_true',
                   help='with --events N: simulate until a step repeats '
                        'the allocator state, then write that step\'s bytes '
                        'again (times shifted) until N events; ~20x faster '
                        'for big files, the truth as exact')
    t = ap.add_argument_group('rl scenario')
    t.add_argument('--phase-marks', choices=('ranges', 'annotate'),
                   default='ranges',
                   help='how the program marks its phases: record_function '
                        'ranges (external_annotations), or annotate events '
                        '(PyTorch 2.14): a small tensor allocated at the '
                        'start of each phase, annotated with '
                        "{'phase': NAME} and freed at its end; "
                        'Optimizer.step and zero_grad stay ranges, as '
                        'torch records them (in-memory writer only)')
    r = ap.add_argument_group('rank sets (training and leak scenarios)')
    r.add_argument('--ranks', type=int, metavar='N',
                   help='write N rank files of one job: -o DIR/ (or an '
                        'existing directory) or -o PREFIX, default the '
                        'current directory; one leaking rank, one peaking '
                        'higher; the set truth goes to --truth or '
                        'PREFIXranks.truth.json')
    r.add_argument('--ranks-oom', action='store_true',
                   help='with --ranks: one more rank ends in an OOM')
    r.add_argument('--run-dir', metavar='LAYOUT',
                   help='with --ranks and --steps: a run directory under -o '
                        'DIR, one dump per rank per step of the training '
                        'scenario as verl, torchtitan or a pattern with '
                        '{rank} and {step} names them; one leaking rank, '
                        'one heavy rank, one OOM dump, one empty file; the '
                        'truth goes to --truth or DIR/run.truth.json')
    ap.add_argument('-o', '--output',
                    help='output file (default snapshot.pickle)')
    ap.add_argument('--output-format', choices=OUTPUT_FORMATS,
                    help='write the snapshot as a pickle, as JSON (json.dump '
                         'of the same objects), or either gzip-compressed '
                         '(default: from the output name: .json, .json.gz, '
                         '.pickle.gz, else a pickle)')
    ap.add_argument('--truth', help='write ground truth JSON here (with '
                    '--self-check: check this truth against the one FILE)')
    ap.add_argument('--self-check', metavar='FILE', nargs='+',
                    help='check FILE(s) and exit')
    ap.add_argument('--strict', action='store_true',
                    help='with --self-check: also require small-pool blocks '
                         'to be exactly the rounded request (CUDA rounding, '
                         'or torch_npu\'s +32 pad, one rule per device)')
    gensnap_2026.add_options(ap)
    return ap.parse_args(argv)


def check_training_args(a):
    given = [k for k in ('layers', 'hidden', 'batch', 'seq', 'vocab', 'steps')
             if getattr(a, k) is not None]
    if a.scenario != 'training':
        if given or a.profiler or a.leak:
            raise SystemExit('gensnap: --%s is an option of the training '
                             'scenario' % (given[0] if given else
                                           'profiler' if a.profiler
                                           else 'leak'))
        return
    for k in given:
        if getattr(a, k) < 1:
            raise SystemExit('gensnap: --%s must be 1 or more' % k)
    if a.npu:
        raise SystemExit('gensnap: the training scenario is CUDA only')


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.self_check:
        if a.truth and len(a.self_check) != 1:
            raise SystemExit('gensnap: --truth checks one file')
        rc = 0
        for path in a.self_check:
            errs = self_check(path, strict=a.strict)
            if a.truth and not errs:
                errs = check_truth(path, a.truth)
                if not errs:
                    print('%s: the truth in %s holds' % (path, a.truth))
            for e in errs:
                print('  ' + e)
            if errs:
                rc = 1
        return rc
    if a.scenario == 'npu':
        a.npu = True
    if a.npu_pad < 0:
        raise SystemExit('gensnap: --npu-pad must be 0 or more')
    a.alloc_conf_parsed = None
    if a.alloc_conf is not None:
        if a.expandable or a.max_split_size:
            raise SystemExit('gensnap: --alloc-conf says what --expandable '
                             'and --max-split-size say: give one')
        try:
            a.alloc_conf_parsed = AllocConf(a.alloc_conf)
        except ConfError as e:
            raise SystemExit('gensnap: --alloc-conf: %s' % e)
    if a.limit is not None and a.limit <= 0:
        raise SystemExit('gensnap: --limit must be more than 0')
    check_training_args(a)
    if a.fast and fast_refusal(a):
        raise SystemExit('gensnap: --fast: ' + fast_refusal(a))
    p = Params(a)
    gensnap_2026.configure(p, a, STREAM_THRESHOLD)
    if p.npu and p.fmt not in ('newest', '2.1'):
        raise SystemExit('gensnap: --npu needs a 2.1+ layout')
    # The simulator's blocks form reference cycles only while they are in
    # use (released segments are unlinked), so cyclic garbage collection
    # finds nothing during a run; switching it off saves its periodic
    # traversals of the growing live set (about a tenth of the run time).
    gc.disable()
    if a.run_dir is not None:
        if a.ranks is None or a.ranks_oom:
            raise SystemExit('gensnap: --run-dir takes --ranks N (and no '
                             '--ranks-oom: a run has its OOM dump)')
        if a.scenario != 'training':
            raise SystemExit('gensnap: --run-dir runs the training '
                             'scenario (--scenario training)')
        generate_run_dir(p, a.run_dir, a.ranks, a.steps, a.output, a.truth)
        return 0
    if a.ranks is not None:
        generate_ranks(p, a.ranks, a.ranks_oom, a.output or './', a.truth,
                       lambda q, out, truth: generate(q, out, truth,
                                                      a.stream))
        return 0
    if a.ranks_oom:
        raise SystemExit('gensnap: --ranks-oom goes with --ranks')
    generate(p, a.output or 'snapshot.pickle', a.truth, a.stream)
    return 0


def generate(p, out, truth, stream):
    """Writes one file with the writer its size calls for; returns the
    simulator.  An OUT ending in .gz is written gzip-compressed."""
    # the format comes from OUT's name (write_output hands the writer a
    # temporary name) and a .gz is compressed once, by write_output
    fmt = output_format(out, getattr(p, 'out_fmt', None))
    if out.endswith('.gz') and fmt.endswith('.gz'):
        fmt = fmt[:-len('.gz')]
    p.out_fmt = fmt
    if p.fast:
        return gensnap_2026.write_output(
            out, lambda o: generate_fast(p, o, truth))
    if stream or p.estimated_events() >= STREAM_THRESHOLD:
        if p.phase_marks != 'ranges':
            raise SystemExit('gensnap: --phase-marks annotate needs the '
                             'in-memory writer (no --stream, fewer events)')
        return gensnap_2026.write_output(
            out, lambda o: generate_streaming(p, o, truth))
    return gensnap_2026.write_output(
        out, lambda o: generate_in_memory(p, o, truth))


if __name__ == '__main__':
    sys.exit(main())
