"""gensnap_rl - the `rl` scenario of contrib/gensnap.py and its truth.

An RL fine-tuning loop (PPO/GRPO style, one device) whose iterations run
in phases, each a record_function range in `external_annotations`:

  rollout          generation with a KV cache; response lengths vary, and
                   a rare long batch (every fifth iteration, from the
                   second) takes a KV cache many times larger, so reserved
                   memory stays far above allocated after it;
  ref_log_prob     the reference model's weights are loaded, its forward
                   gives the reference log-probs, the weights are
                   offloaded again;
  actor_log_prob   the actor's forward without gradients (the old
                   log-probs); user code keeps one tensor of statistics
                   every iteration (`rl/debug.py:31 record_stats`): the
                   planted leak, LEAK_REQ bytes per iteration;
  actor_update     the optimizer state is loaded, forward and backward,
                   `Optimizer.step#AdamW.step` and
                   `Optimizer.zero_grad#AdamW.zero_grad` inside it, the
                   state offloaded, and the batch (responses, log-probs)
                   freed.

What each phase leaves behind at its end: the rollout its responses, the
two log-prob passes their log-probs (all freed in the update) and the
actor pass the leaked tensor too.  The truth (RLTruth) records every
phase instance as the written trace shows it: its events, its peak and
where it falls, the bytes live at its start and those of them freed in
it, what it allocated and what of that is alive at its end by call site,
and the reserved bytes at its end; and the leak: its phase, site and
bytes per iteration.  Section numbers (§N) refer to doc/snapshot-format.md.
"""

import collections
import re

from gensnap_alloc import MiB
from gensnap_stacks import USER
from gensnap_truth import TruthTracker, site_of

LAYERS = 4
HIDDEN = 2048
VOCAB = 8000
BATCH = 8
PROMPT = 128
CHUNKS = 6                  # decoding, in chunks of tokens
LONG = 3072                 # the rare long response
SHORT = (192, 256, 320, 384, 448, 512)
LEAK_REQ = 3 * MiB + 4
LEAK_SITE = ('record_stats', USER + 'rl/debug.py', 31)
LEAK_CALLER = ('compute_log_prob', USER + 'rl/actor.py', 142)
PHASES = ('rollout', 'ref_log_prob', 'actor_log_prob', 'actor_update')
MARK_REQ = 512              # --phase-marks annotate: the marker tensor


def u(name, line, file):
    return (name, USER + file, line)


MAIN = (u('fit', 210, 'rl/trainer.py'), u('main', 31, 'train_rl.py'),
        u('<module>', 40, 'train_rl.py'))
ROLLOUT = (u('generate_sequences', 77, 'rl/rollout.py'),) + MAIN
DECODE = (u('decode_step', 118, 'rl/rollout.py'),) + ROLLOUT
REF = (u('compute_ref_log_prob', 64, 'rl/ref.py'),) + MAIN
ACTOR = (LEAK_CALLER,) + MAIN
UPDATE = (u('update_policy', 188, 'rl/actor.py'),) + MAIN
OFFLOAD = 'rl/offload.py'
MARK_STACK = (u('mark_phase', 12, 'rl/phases.py'),) + MAIN


def is_long(k):
    return k % 5 == 1


class RL:
    """The actor's weights, the batch in flight, the leak."""

    def __init__(self, ctx, info):
        self.ctx, self.info = ctx, info
        init = (u('__init__', 45, 'rl/actor.py'),) + MAIN
        self.weights = [ctx.malloc(HIDDEN * HIDDEN * 4, 'empty', init)
                        for _ in range(LAYERS)]
        self.batch = []
        self.leaked = []
        self.markers = {}

    def mark(self, name, stage):
        c = self.ctx
        if c.opts.phase_marks == 'annotate' and \
                not name.startswith('Optimizer.'):
            self.mark_annotate(name, stage)
        elif c.annotate:
            c.sim.annotate(0, name, stage)
            self.info['marks'].append((name, stage, c.sim.nev))

    def mark_annotate(self, name, stage):
        """--phase-marks annotate: the phase is the life of a marker
        tensor annotated with {'phase': NAME}: from the first event its
        allocation makes to its free_completed, so the marks give the
        same spans as the ranges would."""
        c = self.ctx
        if stage == 'START':
            self.info['marks'].append((name, stage, c.sim.nev))
            m = c.malloc(MARK_REQ, 'empty', MARK_STACK)
            c.sim.annotate_memory(0, m.addr, MARK_REQ, 0,
                                  "{'phase': '%s'}" % name, m.stk)
            self.markers[name] = m
        else:
            c.free(self.markers.pop(name))
            self.info['marks'].append((name, stage, c.sim.nev))

    def rollout(self, seq):
        c = self.ctx
        self.mark('rollout', 'START')
        kv = [c.malloc(2 * BATCH * seq * HIDDEN * 2, 'empty',
                       (u('allocate_kv_cache', 51, 'rl/kv_cache.py'),) +
                       ROLLOUT) for _ in range(LAYERS)]
        prompt = c.malloc(BATCH * PROMPT * 8, 'to',
                          (u('load_prompts', 70, 'rl/rollout.py'),) + MAIN)
        ct = (seq - PROMPT) // CHUNKS
        for _ in range(CHUNKS):
            for _ in range(LAYERS):
                qkv = c.malloc(BATCH * ct * 3 * HIDDEN * 4, 'linear',
                               DECODE)
                att = c.malloc(BATCH * ct * HIDDEN * 4, 'attn', DECODE)
                c.free(qkv)
                mlp = c.malloc(BATCH * ct * 4 * HIDDEN * 4, 'linear',
                               DECODE)
                c.free(mlp)
                c.free(att)
            logits = c.malloc(BATCH * ct * VOCAB * 4, 'linear',
                              (u('sample', 131, 'rl/rollout.py'),) + ROLLOUT)
            c.free(logits)
        resp = c.malloc(BATCH * seq * 8, 'empty',
                        (u('generate_sequences', 96, 'rl/rollout.py'),) +
                        MAIN)
        c.free(prompt)
        for b in kv:
            c.free(b)
        self.batch.append(resp)
        self.mark('rollout', 'END')

    def forward(self, seq, where, keep):
        """A forward over the batch; keep: the activations are saved
        for a backward (returned), else freed layer by layer."""
        c = self.ctx
        saved = []
        for _ in range(LAYERS):
            h = c.malloc(BATCH * seq * HIDDEN * 4, 'linear', where)
            t = c.malloc(BATCH * seq * 4 * HIDDEN * 4, 'linear', where)
            c.free(t)
            if keep:
                saved.append(h)
            else:
                c.free(h)
        logits = c.malloc(BATCH * seq * VOCAB * 4, 'linear', where)
        return saved, logits

    def log_probs(self, seq, where, line):
        c = self.ctx
        _, logits = self.forward(seq, where, False)
        lp = c.malloc(BATCH * seq * 4, 'empty',
                      (u(where[0][0], line, where[0][1][len(USER):]),) +
                      where[1:])
        c.free(logits)
        self.batch.append(lp)

    def ref_log_prob(self, seq):
        c = self.ctx
        self.mark('ref_log_prob', 'START')
        load = (u('load_to_gpu', 22, OFFLOAD),) + REF
        ref = [c.malloc(HIDDEN * HIDDEN * 4, 'empty', load)
               for _ in range(LAYERS)]
        self.log_probs(seq, REF, 71)
        for b in ref:                           # offloaded to the host
            c.free(b)
        self.mark('ref_log_prob', 'END')

    def actor_log_prob(self, seq):
        c = self.ctx
        self.mark('actor_log_prob', 'START')
        self.log_probs(seq, ACTOR, 150)
        self.leaked.append(c.malloc(LEAK_REQ, 'empty',
                                    (LEAK_SITE, LEAK_CALLER) + MAIN))
        self.mark('actor_log_prob', 'END')

    def actor_update(self, seq):
        c = self.ctx
        self.mark('actor_update', 'START')
        load = (u('load_optimizer', 40, OFFLOAD),) + UPDATE
        state = [c.malloc(w.req, 'empty', load) for w in self.weights
                 for _ in range(2)]
        saved, logits = self.forward(seq, UPDATE, True)
        loss = c.malloc(4, 'loss', (u('policy_loss', 201, 'rl/actor.py'),) +
                        UPDATE)
        c.free(logits)
        grads = []
        for h in reversed(saved):
            g = c.malloc(BATCH * seq * HIDDEN * 4, 'backward', UPDATE)
            grads.append(c.malloc(HIDDEN * HIDDEN * 4, 'backward', UPDATE))
            c.free(h)
            c.free(g)
        c.free(loss)
        self.mark('Optimizer.step#AdamW.step', 'START')
        tmp = [c.malloc(w.req, 'adam', UPDATE) for w in self.weights]
        for t in reversed(tmp):
            c.free(t)
        self.mark('Optimizer.step#AdamW.step', 'END')
        self.mark('Optimizer.zero_grad#AdamW.zero_grad', 'START')
        for g in grads:
            c.free(g)
        self.mark('Optimizer.zero_grad#AdamW.zero_grad', 'END')
        for b in state:                         # offloaded to the host
            c.free(b)
        for b in self.batch:
            c.free(b)
        self.batch = []
        self.mark('actor_update', 'END')


def scen_rl(ctx, info):
    info['marks'] = []
    rl = RL(ctx, info)
    k = 0
    while k < 4 or not ctx.done():
        resp = LONG if is_long(k) else ctx.rng.choice(SHORT)
        seq = PROMPT + resp
        rl.rollout(seq)
        rl.ref_log_prob(seq)
        rl.actor_log_prob(seq)
        rl.actor_update(seq)
        k += 1
    info['steps'] = k
    info['leak_blocks'] = rl.leaked


# ---- the truth ---------------------------------------------------------------

def phase_name(name):
    """ProfilerStep#3 is an instance of ProfilerStep: a trailing #N is
    the instance's number, not its phase."""
    return re.sub(r'#[0-9]+$', '', name)


def label(tmpl):
    s = site_of(tmpl) if tmpl else None
    return '%s:%d %s' % (s['filename'], s['line'], s['name']) if s else None


class RLTruth(TruthTracker):
    """Besides the base figures, every event's totals and every block's
    life, for the phases (finish())."""

    def __init__(self, p):
        super().__init__(p)
        self.total = []             # after each event
        self.reserved = []
        self.res = 0
        self.blocks = []            # [alloc event, bytes, site, free event]
        self.open = {}              # addr -> its entry in blocks

    def observe(self, dev, action, addr, size, tmpl=None):
        i = self.idx[dev]
        super().observe(dev, action, addr, size, tmpl)
        if dev != 0:
            return
        if action == 'alloc':
            b = [i, size, label(tmpl), None]
            self.blocks.append(b)
            self.open[addr] = b
        elif action == 'free_completed':
            b = self.open.pop(addr, None)
            if b is not None:
                b[3] = i
            else:                       # allocated before the trace
                self.blocks.append([-1, size, None, i])
        elif action in ('segment_alloc', 'segment_map'):
            self.res += size
        elif action in ('segment_free', 'segment_unmap'):
            self.res -= size
        self.total.append(self.cur[0])
        self.reserved.append(self.res)

    def finish(self, sim, info, sink, ws, obj, segrecs=None):
        out = super().finish(sim, info, sink, ws, obj, segrecs)
        dd = out['devices'][0]
        # blocks alive before the trace count from its start (§10.2)
        base = dd['ghost_bytes'] + dd['unmatched_free_bytes']
        res = dd['reserved'] - self.res
        out['phases'] = phases_truth(
            info['marks'], dd['dropped_events'],
            [t + base for t in self.total],
            [r + res for r in self.reserved], self.blocks, base)
        n = len(info['leak_blocks'])
        out['leak'] = {'phase': 'actor_log_prob',
                       'site': '%s:%d %s' % (LEAK_SITE[1], LEAK_SITE[2],
                                             LEAK_SITE[0]),
                       'filename': LEAK_SITE[1], 'line': LEAK_SITE[2],
                       'name': LEAK_SITE[0],
                       'caller': {'filename': LEAK_CALLER[1],
                                  'line': LEAK_CALLER[2],
                                  'name': LEAK_CALLER[0]},
                       'per_iteration_requested': LEAK_REQ, 'count': n,
                       'total_requested': n * LEAK_REQ}
        out['iterations'] = info['steps']
        out['long_iterations'] = [k for k in range(info['steps'])
                                  if is_long(k)]
        return out


def phases_truth(marks, skip, total, reserved, blocks, base):
    """Each phase instance wholly inside the written trace, in the order
    of their starts, by raw event index."""
    spans, start = [], {}
    for name, stage, n in marks:
        if stage == 'START':
            start[name] = n
        elif name in start:
            first, last = start.pop(name) - skip, n - 1 - skip
            if first >= 0 and last >= first:
                spans.append((first, last, phase_name(name)))
    spans.sort()
    seen = collections.Counter()
    out = []
    for first, last, name in spans:
        peak = max(range(first, last + 1), key=lambda i: (total[i], -i))
        left = collections.Counter()
        lcount = alloc = acount = freed = fcount = 0
        for a, size, site, f in blocks:
            if first <= a <= last:
                alloc += size
                acount += 1
                if f is None or f > last:
                    left[site] += size
                    lcount += 1
            elif a < first and f is not None and first <= f <= last:
                freed += size
                fcount += 1
        out.append({'phase': name, 'iteration': seen[name],
                    'first_event': first, 'last_event': last,
                    'alive_before_bytes': total[first - 1] if first
                    else base,
                    'freed_inside_bytes': freed,
                    'freed_inside_count': fcount,
                    'peak_bytes': total[peak], 'peak_event': peak,
                    'allocated_bytes': alloc, 'allocated_count': acount,
                    'left_bytes': sum(left.values()), 'left_count': lcount,
                    'left_sites': dict(sorted(left.items())),
                    'allocated_end_bytes': total[last],
                    'reserved_end_bytes': reserved[last]})
        seen[name] += 1
    return out
