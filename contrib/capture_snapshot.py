#!/usr/bin/env python3
"""capture_snapshot.py - record real PyTorch CUDA memory snapshots.

Needs a machine with a CUDA GPU and torch >= 2.1.  Runs three small training
loops with torch.cuda.memory._record_memory_history() on and dumps, for each,
<outdir>/<name>.pickle (torch.cuda.memory._dump_snapshot) and <name>.json
(torch version, command line, device name, settings).

  leak   a tensor appended to a module-level list every step
  frag   variable-length sequence batches (reserved grows above allocated)
  oom    growing batches until torch.cuda.OutOfMemoryError, under
         torch.cuda.set_per_process_memory_fraction so the rest of the GPU
         is untouched

Usage: capture_snapshot.py [-o OUTDIR] [--steps N] [--max-entries N]
                           [--stacks python|all] [--only leak,frag,oom]
"""

import argparse
import json
import os
import platform
import sys

LEAKED = []        # the leak: module-level list that keeps one tensor a step


def need_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.exit('capture_snapshot.py: PyTorch is not installed '
                 '(pip install torch); nothing captured')
    if not torch.cuda.is_available():
        sys.exit('capture_snapshot.py: torch %s sees no CUDA device; this '
                 'script needs a GPU' % torch.__version__)
    return torch


def make_model(torch, hidden, layers):
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(hidden, hidden), torch.nn.ReLU()]
    return torch.nn.Sequential(*mods).cuda()


def collect_metrics(torch, out):
    # keeps a copy forever: the leak users hunt for
    LEAKED.append(out.detach().float().mean(0, keepdim=True).repeat(64, 1))


def train_step(torch, model, opt, x, leak):
    out = model(x)
    loss = out.float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if leak:
        collect_metrics(torch, out)
    return loss.item()


def start_recording(torch, args):
    torch.cuda.memory._record_memory_history(
        enabled='all', context='all', stacks=args.stacks,
        max_entries=args.max_entries)


def stop_recording(torch):
    torch.cuda.memory._record_memory_history(enabled=None)


def dump(torch, args, name, extra):
    path = os.path.join(args.outdir, name + '.pickle')
    torch.cuda.memory._dump_snapshot(path)
    meta = {
        'name': name,
        'torch_version': torch.__version__,
        'cuda_version': torch.version.cuda,
        'device_name': torch.cuda.get_device_name(0),
        'device_capability': list(torch.cuda.get_device_capability(0)),
        'python': platform.python_version(),
        'command_line': sys.argv,
        'max_entries': args.max_entries,
        'stacks': args.stacks,
        'alloc_conf': os.environ.get('PYTORCH_CUDA_ALLOC_CONF', ''),
        'max_memory_allocated': torch.cuda.max_memory_allocated(),
        'max_memory_reserved': torch.cuda.max_memory_reserved(),
    }
    meta.update(extra)
    with open(os.path.join(args.outdir, name + '.json'), 'w') as f:
        json.dump(meta, f, indent=1)
    print('wrote %s (%d bytes)' % (path, os.path.getsize(path)))


def reset(torch):
    LEAKED.clear()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def case_leak(torch, args):
    reset(torch)
    model = make_model(torch, 1024, 6)
    opt = torch.optim.Adam(model.parameters())
    start_recording(torch, args)
    for step in range(args.steps):
        with torch.profiler.record_function('ProfilerStep#%d' % step):
            x = torch.randn(64, 1024, device='cuda')
            train_step(torch, model, opt, x, leak=True)
    torch.cuda.synchronize()
    dump(torch, args, 'leak', {'steps': args.steps,
                               'leak_site': 'collect_metrics',
                               'leaked_tensors': len(LEAKED)})
    stop_recording(torch)
    del model, opt


def case_frag(torch, args):
    reset(torch)
    model = make_model(torch, 1024, 4)
    opt = torch.optim.Adam(model.parameters())
    gen = torch.Generator().manual_seed(0)
    start_recording(torch, args)
    for step in range(args.steps):
        seq = int(torch.randint(16, 512, (1,), generator=gen)) * 8
        x = torch.randn(seq, 1024, device='cuda')
        train_step(torch, model, opt, x, leak=False)
    torch.cuda.synchronize()
    dump(torch, args, 'frag', {'steps': args.steps})
    stop_recording(torch)
    del model, opt


def case_oom(torch, args):
    reset(torch)
    total = torch.cuda.get_device_properties(0).total_memory
    fraction = min(0.9, (2 << 30) / total)     # about 2 GiB for this process
    torch.cuda.set_per_process_memory_fraction(fraction, 0)
    model = make_model(torch, 1024, 4)
    opt = torch.optim.Adam(model.parameters())
    start_recording(torch, args)
    batch, step, err = 1024, 0, None
    try:
        while step < 10000:
            x = torch.randn(batch, 1024, device='cuda')
            train_step(torch, model, opt, x, leak=False)
            batch = batch * 5 // 4
            step += 1
    except torch.cuda.OutOfMemoryError as e:      # the case we want
        err = str(e).splitlines()[0]
    dump(torch, args, 'oom', {'fraction': fraction, 'last_batch': batch,
                              'steps': step, 'error': err})
    stop_recording(torch)
    torch.cuda.set_per_process_memory_fraction(1.0, 0)
    del model, opt


CASES = {'leak': case_leak, 'frag': case_frag, 'oom': case_oom}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-o', '--outdir', default='.')
    ap.add_argument('--steps', type=int, default=30)
    ap.add_argument('--max-entries', type=int, default=100000)
    ap.add_argument('--stacks', choices=('python', 'all'), default='python')
    ap.add_argument('--only', default='leak,frag,oom')
    args = ap.parse_args()
    torch = need_torch()
    os.makedirs(args.outdir, exist_ok=True)
    for name in args.only.split(','):
        if name not in CASES:
            sys.exit('capture_snapshot.py: unknown case %r' % name)
        CASES[name](torch, args)
    return 0


if __name__ == '__main__':
    sys.exit(main())
