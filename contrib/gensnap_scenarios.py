"""gensnap_scenarios - the scenario drivers of contrib/gensnap.py.

Each scenario is a training loop (or a part of one) that calls malloc,
free and empty_cache on the simulator through a Ctx, and leaves what the
ground truth needs in `info`.  The `training` scenario lives in
gensnap_training.py.  Section numbers (§N) refer to doc/snapshot-format.md.
"""

from gensnap_alloc import (DEFAULT_POOL, GRAPH_POOL, GiB, MiB, OutOfMemory,
                           round_size, segment_alloc_size)
from gensnap_stacks import USER
from gensnap_training import scen_training

def u(name, line, file='train.py'):
    return (name, USER + file, line)


MAIN = (u('main', 131), u('<module>', 140))
TRAIN_STEP = (u('train_step', 112),) + MAIN


class Ctx:
    """What a scenario sees: malloc/free with call sites, steps, stop test."""

    def __init__(self, sim, stacks, rng, target):
        self.sim = sim
        self.stacks = stacks
        self.rng = rng
        self.target = target
        self.annotate = True

    def malloc(self, req, op, user, dev=0, stream=0, pool=DEFAULT_POOL,
               uses=()):
        sim = self.sim
        tmpl = self.stacks.cache.get((op, user)) or self.stacks.get(op, user)
        sim.serial += 1                        # Simulator.new_stack
        stk = (sim.serial, tmpl)
        sim.clock.now += 2 + int(self.rng.random() * 38)
        return sim.devs[dev].malloc(req, stream, stk, pool, uses)

    def free(self, blk, dev=0, delay=2):
        sim = self.sim
        sim.clock.now += 1 + int(self.rng.random() * 19)
        sim.devs[dev].free(blk, delay)

    def empty_cache(self, dev=0):
        self.sim.devs[dev].release_cached_blocks()

    def done(self):
        return self.sim.nev >= self.target

    def step(self, n, dev=0, stage='START'):
        self.sim.clock.advance(self.rng.randrange(500, 3000))
        if self.annotate:
            self.sim.annotate(dev, 'ProfilerStep#%d' % n, stage)


class Model:
    """A small MLP/transformer-ish model: params, grads, Adam state."""

    def __init__(self, ctx, layers, hidden, dev=0, stream=0, pool=DEFAULT_POOL):
        self.ctx, self.dev, self.stream, self.pool = ctx, dev, stream, pool
        self.layers, self.hidden = layers, hidden
        self.params = []
        self.state = []
        site = (u('__init__', 24, 'model.py'), u('build_model', 61), ) + MAIN
        for i in range(layers):
            self.params.append(ctx.malloc(hidden * hidden * 4, 'empty', site,
                                          dev, stream, pool))
            self.params.append(ctx.malloc(hidden * 4, 'empty', site, dev,
                                          stream, pool))

    def param_bytes(self):
        return sum(p.req for p in self.params)

    def forward(self, batch, acts):
        c, h = self.ctx, self.hidden
        for i in range(self.layers):
            fwd = (u('forward', 40 + (i % 3) * 6, 'model.py'),
                   u('train_step', 108)) + MAIN
            acts.append(c.malloc(batch * h * 4, 'linear', fwd, self.dev,
                                 self.stream, self.pool))
            tmp = c.malloc(batch * h * 4 + 1024 * (i % 2), 'layernorm', fwd,
                           self.dev, self.stream, self.pool)
            acts.append(c.malloc(batch * h * 4, 'relu', fwd, self.dev,
                                 self.stream, self.pool))
            c.free(tmp, self.dev)
        loss = c.malloc(4, 'loss', (u('train_step', 109),) + MAIN, self.dev,
                        self.stream, self.pool)
        acts.append(loss)

    def backward(self, batch, acts):
        c, h = self.ctx, self.hidden
        bwd = (u('train_step', 110),) + MAIN
        grads = []
        for i in reversed(range(self.layers)):
            g = c.malloc(batch * h * 4, 'backward', bwd, self.dev,
                         self.stream, self.pool)
            grads.append(c.malloc(h * h * 4, 'backward', bwd, self.dev,
                                  self.stream, self.pool))
            grads.append(c.malloc(h * 4, 'backward', bwd, self.dev,
                                  self.stream, self.pool))
            c.free(acts.pop(), self.dev)
            c.free(acts.pop(), self.dev)
            c.free(g, self.dev)
        while acts:
            c.free(acts.pop(), self.dev)
        return grads

    def step(self, grads):
        c = self.ctx
        opt = (u('train_step', 111),) + MAIN
        if not self.state:
            for p in self.params:
                for _ in range(2):
                    self.state.append(c.malloc(p.req, 'adam', opt, self.dev,
                                               self.stream, self.pool))
        tmp = [c.malloc(g.req, 'adam', opt, self.dev, self.stream, self.pool)
               for g in grads[:4]]
        for t in tmp:
            c.free(t, self.dev)
        for g in grads:                      # zero_grad(set_to_none=True)
            c.free(g, self.dev)


LEAK_SITE = ('collect_metrics', USER + 'metrics/tracker.py', 47)
LEAK_REQ = 786436
LEAK_BUDGET = 32 * GiB      # what the leak may hold at the end of a long run


def leak_every(ctx, events_per_step):
    """Steps between two leaked tensors: 1 (every step) unless --events
    asks for so many steps that one leak per step would exceed
    LEAK_BUDGET and run the device out of memory (over ~2.6 M events)."""
    steps = ctx.target // events_per_step + 1
    return max(1, -(-steps * round_size(LEAK_REQ) // LEAK_BUDGET))


def scen_leak(ctx, info):
    m = Model(ctx, 6, 1024)
    info['param_bytes'] = m.param_bytes()
    kept = []
    site = (u('collect_metrics', 47, 'metrics/tracker.py'),
            u('train_step', 112)) + MAIN
    n = 0
    every = info['leak_every'] = leak_every(ctx, 60)
    o = ctx.opts            # a rank of a set (gensnap_ranks.py) may differ

    def one(n, batch):
        acts = []
        x = ctx.malloc(batch * 1024 * 4, 'to', (u('train_step', 104),) + MAIN)
        m.forward(batch, acts)
        grads = m.backward(batch, acts)
        m.step(grads)
        ctx.free(x)
        if n % every == 0 and not o.no_leak:
            kept.append(ctx.malloc(LEAK_REQ, 'empty', site))   # the leak
        ctx.step(n, stage='END')
    while not ctx.done():
        ctx.step(n)
        batch = 64 + 8 * ctx.rng.randrange(0, 5)
        if n == o.peak_step:
            batch *= o.peak_factor
        one(n, batch)
        n += 1
    if o.oom_factor:
        # a larger batch on a device short of memory: larger ones until
        # one fails
        batch = 96
        try:
            for _ in range(64):
                batch *= o.oom_factor
                ctx.step(n)
                one(n, batch)
                n += 1
            raise SystemExit('gensnap: no out-of-memory within 64 steps')
        except OutOfMemory:
            info['oom'] = True
    info['leak_blocks'] = kept
    info['steps'] = n


def scen_frag(ctx, info):
    try:
        frag_steps(ctx, info)
    except OutOfMemory:         # --limit: the device filled up
        info['oom'] = True


def frag_steps(ctx, info):
    m = Model(ctx, 4, 1024)
    n = 0
    info['steps'] = 0
    while not ctx.done():
        ctx.step(n)
        seq = ctx.rng.choice([128, 256, 384, 640, 896, 1152, 1536, 2048, 2560])
        batch = 8 * seq + ctx.rng.randrange(0, 64)
        acts = []
        m.forward(batch, acts)
        big = ctx.malloc(batch * 4096 + 4, 'attn',
                         (u('forward', 77, 'model.py'), u('train_step', 108))
                         + MAIN)
        grads = m.backward(batch, acts)
        m.step(grads)
        ctx.free(big)
        ctx.step(n, stage='END')
        n += 1
        info['steps'] = n


def scen_oom(ctx, info):
    m = Model(ctx, 4, 1024)
    n = 0
    batch = 256
    try:
        while True:
            ctx.step(n)
            acts = []
            m.forward(batch, acts)
            big = ctx.malloc(batch * batch * 64, 'attn',
                             (u('forward', 77, 'model.py'),
                              u('train_step', 108)) + MAIN)
            acts.append(big)
            grads = m.backward(batch, acts)
            m.step(grads)
            ctx.step(n, stage='END')
            n += 1
            if ctx.done():      # --events N: steady steps first, then grow
                batch = batch * 5 // 4 + 16
    except OutOfMemory:
        info['oom'] = True
    info['steps'] = n


def scen_multi(ctx, info):
    side = 94823749283008
    models = [Model(ctx, 3, 512, dev=d) for d in range(2)]
    n = 0
    while not ctx.done():
        for d in range(2):
            ctx.step(n, dev=d)
            batch = 64 + 16 * ctx.rng.randrange(0, 4)
            # host->device copy on the side stream, consumed on stream 0:
            # record_stream(0) makes its free pending (§13.5 step 2).
            x = ctx.malloc(batch * 512 * 4, 'to', (u('train_step', 104),)
                           + MAIN, dev=d, stream=side + d * 0x1a0, uses=(0,))
            acts = []
            models[d].forward(batch, acts)
            ctx.free(x, dev=d, delay=1 + ctx.rng.randrange(3))
            grads = models[d].backward(batch, acts)
            models[d].step(grads)
            ctx.step(n, dev=d, stage='END')
        n += 1
    info['steps'] = n


def scen_expandable(ctx, info):
    m = Model(ctx, 3, 1024)
    n = 0
    while not ctx.done():
        ctx.step(n)
        seq = ctx.rng.choice([256, 512, 1024, 2048, 3072])
        acts = []
        m.forward(seq, acts)
        big = ctx.malloc(seq * 8192 + 12, 'attn',
                         (u('forward', 77, 'model.py'), u('train_step', 108))
                         + MAIN)
        grads = m.backward(seq, acts)
        m.step(grads)
        ctx.free(big)
        if n % 4 == 3:
            ctx.empty_cache()
        ctx.step(n, stage='END')
        n += 1
    info['steps'] = n


def scen_graphs(ctx, info):
    m = Model(ctx, 3, 512)
    cap = Model.__new__(Model)
    cap.__dict__.update(m.__dict__)
    cap.pool = GRAPH_POOL
    n = 0
    static = []
    while not ctx.done():
        ctx.step(n)
        acts = []
        if n == 2:
            # CUDA graph capture: activations come from the private pool
            cap.forward(96, acts)
            grads = cap.backward(96, acts)
            static = [ctx.malloc(96 * 512 * 4, 'linear',
                                 (u('capture', 90, 'graphs.py'),) + MAIN,
                                 pool=GRAPH_POOL) for _ in range(3)]
            for g in grads:
                ctx.free(g)
        else:
            m.forward(64, acts)
            grads = m.backward(64, acts)
            m.step(grads)
        if n % 3 == 2:
            ctx.empty_cache()   # never releases the private pool (§13.9)
        ctx.step(n, stage='END')
        n += 1
    info['steps'] = n
    info['static'] = static


# Pool ids as c10's MemPool hands them out: (N, 0) for a pool a CUDA graph
# makes for itself when capture_begin is given none, (0, N) for one the
# user makes (torch.cuda.MemPool(), torch.cuda.graph_pool_handle()).
GRAPH_OWN_POOL = (1, 0)
MEM_POOL = (0, 1)
CAPTURE_STREAM = 94823749283008


def scen_pools(ctx, info):
    """Two private pools beside the default one: a CUDA graph captured on
    a side stream into a pool of its own, whose temporaries stay cached
    there, and a torch.cuda.MemPool on the default stream holding a few
    buffers.  empty_cache releases neither (§13.9).  The run ends with a
    request of the default pool on stream 0 that fails although a free
    block large enough sits in the graph's pool: the allocator keeps
    free memory apart by (pool, stream)."""
    m = Model(ctx, 3, 512)
    cap = Model.__new__(Model)
    cap.__dict__.update(m.__dict__)
    cap.stream, cap.pool = CAPTURE_STREAM, GRAPH_OWN_POOL
    mem_site = (u('make_buffers', 33, 'pools.py'),) + TRAIN_STEP
    cap_site = (u('capture', 90, 'graphs.py'),) + MAIN
    n = 0
    kept = []
    while not ctx.done() or n < 4:
        ctx.step(n)
        acts = []
        if n == 1:
            # torch.cuda.graph(g): the capture's temporaries come from
            # the graph's own pool on the capture stream
            cap.forward(96, acts)
            grads = cap.backward(96, acts)
            work = ctx.malloc(7 * MiB + 300, 'linear', cap_site,
                              stream=CAPTURE_STREAM, pool=GRAPH_OWN_POOL)
            kept += [ctx.malloc(96 * 512 * 4, 'linear', cap_site,
                                stream=CAPTURE_STREAM, pool=GRAPH_OWN_POOL)
                     for _ in range(2)]
            ctx.free(work)
            for g in grads:
                ctx.free(g)
        elif n == 2:
            # with torch.cuda.use_mem_pool(pool): buffers of a MemPool
            bufs = [ctx.malloc(3 * MiB + 4096 * i, 'empty', mem_site,
                               pool=MEM_POOL) for i in range(4)]
            kept += bufs[::2]
            for b in bufs[1::2]:
                ctx.free(b)
        else:
            m.forward(64, acts)
            grads = m.backward(64, acts)
            m.step(grads)
        if n % 3 == 2:
            ctx.empty_cache()
        ctx.step(n, stage='END')
        n += 1
    info['steps'] = n
    info['static'] = kept
    # the last request: as large as the graph pool's largest free block,
    # on stream 0 in the default pool, on a device with no room for it
    ctx.empty_cache()
    d = ctx.sim.devs[0]
    big = max(b.size for (pid, _), pl in d.pools.items()
              if pid == GRAPH_OWN_POOL for b in pl.blocks.values())
    own = [b.size for (pid, _), pl in d.pools.items() if pid == DEFAULT_POOL
           for b in pl.blocks.values() if b.stream == 0]
    assert big > max(own, default=0), 'gensnap: pools: no isolated block'
    d.limit = d.reserved + segment_alloc_size(big) - 2 * MiB
    d.total_mem = d.limit + 512 * MiB
    try:
        ctx.malloc(big, 'attn', (u('forward', 77, 'model.py'),
                                 u('train_step', 108)) + MAIN)
        raise SystemExit('gensnap: pools: the last request did not fail')
    except OutOfMemory:
        info['oom'] = True


def scen_npu(ctx, info):
    stream = 1815786048
    m = Model(ctx, 4, 512, stream=stream)
    kept = []
    n = 0
    site = (u('collect_metrics', 47, 'metrics/tracker.py'),
            u('train_step', 112)) + MAIN
    every = info['leak_every'] = leak_every(ctx, 80)
    while not ctx.done():
        acts = []
        m.forward(64, acts)
        grads = m.backward(64, acts)
        m.step(grads)
        if n % every == 0:
            kept.append(ctx.malloc(LEAK_REQ, 'empty', site, stream=stream))
        if n % 5 == 4:
            ctx.empty_cache()
        n += 1
    info['steps'] = n
    info['leak_blocks'] = kept


def scen_rl(ctx, info):
    # imported here: gensnap_rl's truth builds on gensnap_truth, which
    # imports this module
    from gensnap_rl import scen_rl as rl
    rl(ctx, info)


SCENARIOS = {
    'leak': dict(fn=scen_leak, events=3000, fmt='newest'),
    'frag': dict(fn=scen_frag, events=3000, fmt='newest'),
    'oom': dict(fn=scen_oom, events=0, fmt='newest', limit=3 * GiB,
                total=16 * GiB),
    'multi': dict(fn=scen_multi, events=3000, fmt='newest', ndev=2),
    'expandable': dict(fn=scen_expandable, events=3000, fmt='newest',
                       expandable=True),
    'graphs': dict(fn=scen_graphs, events=3000, fmt='newest'),
    # a CUDA graph's own pool and a MemPool; ends in an OOM whose free
    # memory sits in another pool and stream
    'pools': dict(fn=scen_pools, events=1500, fmt='newest'),
    'wrapped': dict(fn=scen_leak, events=5000, fmt='newest', max_entries=2000),
    'legacy': dict(fn=scen_leak, events=2000, fmt='2.0'),
    'npu': dict(fn=scen_npu, events=3000, fmt='newest', npu=True),
    # one step unless --steps or --events say more; stacks="all" as the
    # real training captures (gensnap_training.py)
    'training': dict(fn=scen_training, events=0, fmt='newest', stacks='cpp',
                     stage_first=True),
    # RL iterations in annotated phases, a leak in one (gensnap_rl.py)
    'rl': dict(fn=scen_rl, events=2500, fmt='newest'),
}

