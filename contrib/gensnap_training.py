"""gensnap_training - the `training` scenario of contrib/gensnap.py.

A transformer trained with AdamW, as real one-step and many-step captures
show it (doc/snapshot-format.md §16.8, §16.13, §16.14):

  * the parameters are allocated before recording starts: alive in the
    final segments (no frames), never in the trace;
  * each step: optimizer.zero_grad(set_to_none=True) frees the previous
    gradients; the forward pass saves activations layer by layer and frees
    its temporaries; loss.backward() runs on the autograd engine's thread,
    so its allocations have C++-only stacks (no Python frame at all with
    Python-only stacks): gradients of activations, freed as they are
    consumed, the saved activations freed layer by layer, and the
    parameters' gradients from AccumulateGrad; optimizer.step() creates
    AdamW's exp_avg and exp_avg_sq lazily, one pair per parameter, in a loop
    inside the first step, then takes one temporary per parameter
    (_foreach_sqrt) and frees them;
  * one cuBLAS workspace per thread (getNewWorkspace), taken by the first
    matrix product of the forward and of the backward, never freed;
  * `Optimizer.zero_grad#AdamW.zero_grad` and `Optimizer.step#AdamW.step`
    START/END annotations (and `ProfilerStep#N` with --profiler);
  * frees carry their own stacks (context='all');
  * an optional leak in user code (`--leak`): one tensor kept per step.

Every stack template carries the category of the tensor it allocates or
frees (Template.cat), which the ground truth adds up; the categories are
those of CATEGORIES.  Section numbers (§N) refer to
doc/snapshot-format.md.
"""

from gensnap_alloc import GiB, OutOfMemory, round_size
from gensnap_stacks import MODULE_CALL, TORCH, USER

CATEGORIES = ('parameter', 'gradient', 'optimizer_state', 'activation',
              'temporary', 'workspace', 'other')

MODEL = USER + 'model.py'
NNU = USER + 'nn_utils.py'
TRAIN = USER + 'train.py'
METRICS = USER + 'metrics/tracker.py'
OPTIM = TORCH + 'optim/'

# train.py: the loop, one line per call of a step
MAIN = (('main', TRAIN, 201), ('<module>', TRAIN, 230))
L_BATCH, L_ZERO, L_FWD, L_LOSS, L_BWD, L_LEAK, L_STEP = 84, 86, 88, 89, 90, \
    91, 92
TF_EMBED, TF_LAYER0 = 250, 260     # Transformer.forward (layers unrolled)
LEAK_SITE = ('collect_metrics', METRICS, 47)
WORKSPACE = 4096 * 1024 * 2 + 16 * 1024 * 8   # cuBLAS default, as observed
VOCAB = 10000


class Template(tuple):
    """A stack template (frames, innermost first) that knows the category
    of the tensor it allocates or frees.  Equal templates of different
    categories stay distinct objects (the writers key templates by id)."""


def template(frames, cat):
    t = Template(frames)
    t.cat = cat
    return t


# ---------------------------------------------------------------------------
# C++ frames (stacks="all", §16.7): as the allocator's unwinder records them
# ---------------------------------------------------------------------------

NOLINE = '??'
CAPTURE = (('torch::unwind::unwind()', NOLINE, 0),
           ('torch::CapturedTraceback::gather(bool, bool, bool)', NOLINE, 0),
           ('torch::cuda::(anonymous namespace)::gather_with_cpp()',
            'memory_snapshot.cpp', 0))
_NATIVE = 'c10::cuda::CUDACachingAllocator::Native::'
MALLOC = ((_NATIVE + 'DeviceCachingAllocator::malloc(unsigned long, '
           'CUstream_st*)', 'CUDACachingAllocator.cpp', 0),
          (_NATIVE + 'NativeCachingAllocator::malloc(void**, signed char, '
           'unsigned long, CUstream_st*)', '', 0),
          (_NATIVE + 'NativeCachingAllocator::allocate(unsigned long)', '',
           0))
FREE = ((_NATIVE + 'DeviceCachingAllocator::free(' + _NATIVE +
         '(anonymous namespace)::Block*)', 'CUDACachingAllocator.cpp', 0),
        ('c10::intrusive_ptr<c10::StorageImpl, c10::detail::intrusive_target_'
         'default_null_type<c10::StorageImpl> >::reset_not_null_(c10::'
         'StorageImpl*)', '', 0),
        ('c10::TensorImpl::~TensorImpl() [clone .localalias]',
         'TensorImpl.cpp', 0))
_OPT = ('std::optional<c10::ScalarType>, std::optional<c10::Layout>, '
        'std::optional<c10::Device>, std::optional<bool>')
EMPTY = (('at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, '
          'c10::DispatchKeySet, c10::ScalarType, std::optional<c10::'
          'MemoryFormat>)', NOLINE, 0),
         ('at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, '
          'std::optional<c10::Device>, std::optional<c10::MemoryFormat>)',
          NOLINE, 0),
         ('at::detail::empty_cuda(c10::ArrayRef<long>, ' + _OPT +
          ', std::optional<c10::MemoryFormat>)', NOLINE, 0),
         ('at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions '
          'const&)', NOLINE, 0))
EMPTY_STRIDED = (
    ('at::detail::empty_strided_generic(c10::ArrayRef<long>, c10::ArrayRef<'
     'long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType)', NOLINE,
     0),
    ('at::detail::empty_strided_cuda(c10::ArrayRef<long>, c10::ArrayRef<long>'
     ', c10::ScalarType, std::optional<c10::Device>)', NOLINE, 0),
    ('at::native::empty_strided_cuda(c10::ArrayRef<long>, c10::ArrayRef<long>'
     ', ' + _OPT + ')', NOLINE, 0),
    ('at::(anonymous namespace)::(anonymous namespace)::wrapper_CUDA__empty_'
     'strided(c10::ArrayRef<c10::SymInt>, c10::ArrayRef<c10::SymInt>, ' +
     _OPT + ')', 'RegisterCUDA_0.cpp', 0),
    ('at::_ops::empty_strided::call(c10::ArrayRef<c10::SymInt>, c10::'
     'ArrayRef<c10::SymInt>, ' + _OPT + ')', NOLINE, 0))
ENGINE = (('torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::'
           'autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::'
           'InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> '
           'const&)', NOLINE, 0),
          ('torch::autograd::Engine::thread_main(std::shared_ptr<torch::'
           'autograd::GraphTask> const&)', NOLINE, 0),
          ('torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::'
           'autograd::ReadyQueue> const&, bool)', NOLINE, 0),
          ('torch::autograd::python::PythonEngine::thread_init(int, std::'
           'shared_ptr<torch::autograd::ReadyQueue> const&, bool)', '', 0),
          ('std::error_code::default_error_condition() const', NOLINE, 0),
          ('pthread_condattr_setpshared', NOLINE, 0),
          ('__clone', NOLINE, 0))
NODE_CALL = (('torch::autograd::Node::operator()(std::vector<at::Tensor, '
              'std::allocator<at::Tensor> >&&)', '', 0),)
_VEC = 'std::vector<at::Tensor, std::allocator<at::Tensor> >&&'
ACCUMULATE = (
    ('at::_ops::new_empty_strided::call(at::Tensor const&, c10::ArrayRef<c10::'
     'SymInt>, c10::ArrayRef<c10::SymInt>, ' + _OPT + ')', NOLINE, 0),
    ('torch::autograd::utils::clone_obey_contract(at::Tensor const&, '
     'at::Tensor const&)', '', 0),
    ('void torch::autograd::AccumulateGrad::accumulateGrad<std::function<void '
     '(at::Tensor&&)> >(at::Tensor const&, at::Tensor&, at::Tensor const&, '
     'unsigned long, std::function<void (at::Tensor&&)> const&)', '', 0),
    ('torch::autograd::(anonymous namespace)::AccumulateGrad_apply_impl(' +
     _VEC + ', at::Tensor&, at::Tensor&, long, std::function<void '
     '(at::Tensor&&)> const&)', 'accumulate_grad.cpp', 0),
    ('torch::autograd::AccumulateGrad::apply(' + _VEC + ')', NOLINE, 0))
REDUCE = (('at::Tensor at::_sum_to<c10::SymInt>(at::Tensor, c10::ArrayRef<'
           'c10::SymInt>, bool)', '', 0),
          ('torch::autograd::InputMetadata::reduce_grad(at::Tensor&) const',
           NOLINE, 0),
          ('torch::autograd::InputMetadata::maybe_reduce(unsigned long, '
           'at::Tensor, std::function<std::string (std::string const&)> '
           'const&) const', NOLINE, 0),
          ('void torch::autograd::validate_outputs_impl<torch::autograd::'
           'Edge>(std::vector<torch::autograd::Edge, std::allocator<torch::'
           'autograd::Edge> > const&, std::vector<at::Tensor, std::allocator<'
           'at::Tensor> >&, std::function<std::string (std::string const&)> '
           'const&)', 'engine.cpp', 0))
WORKSPACE_CPP = (('at::cuda::getNewWorkspace()', 'CublasHandlePool.cpp', 0),
                 ('at::cuda::getCurrentCUDABlasHandle()',
                  'CublasHandlePool.cpp', 0),
                 ('void at::cuda::blas::gemm_internal_cublas<float>(char, '
                  'char, long, long, long, float, float const*, long, float '
                  'const*, long, float, float*, long)', 'CUDABlas.cpp', 0),
                 ('void at::cuda::blas::gemm<float>(char, char, long, long, '
                  'long, float, float const*, long, float const*, long, '
                  'float, float*, long)', 'CUDABlas.cpp', 0),
                 ('at::native::(anonymous namespace)::addmm_out_cuda_impl('
                  'at::Tensor&, at::Tensor const&, at::Tensor const&, '
                  'at::Tensor const&, c10::Scalar const&, c10::Scalar const&, '
                  'at::native::Activation)', 'Blas.cpp', 0),
                 ('at::native::structured_mm_out_cuda::impl(at::Tensor '
                  'const&, at::Tensor const&, at::Tensor const&)', 'Blas.cpp',
                  0))
PY_GLUE_CALL = (('_PyEval_EvalFrameDefault', NOLINE, 0),
                ('PyMethod_New', NOLINE, 0))
PY_GLUE = (('_PyEval_EvalFrameDefault', NOLINE, 0),
           ('_PyObject_Call_Prepend', NOLINE, 0),
           ('PyType_GetModule', NOLINE, 0),
           ('_PyObject_MakeTpCall', NOLINE, 0))
PY_ROOT = (('_PyEval_EvalFrameDefault', NOLINE, 0),
           ('PyEval_EvalCode', NOLINE, 0),
           ('PyRun_StringFlags', NOLINE, 0),
           ('_PyRun_SimpleFileObject', NOLINE, 0),
           ('_PyRun_SimpleFileObject', NOLINE, 0),
           ('_PyRun_AnyFileObject', NOLINE, 0),
           ('Py_RunMain', NOLINE, 0),
           ('Py_BytesMain', NOLINE, 0),
           ('__libc_init_first', NOLINE, 0),
           ('__libc_start_main', NOLINE, 0),
           ('_start', NOLINE, 0))
PY_DEALLOC = (('THPVariable_clear(THPVariable*)', 'python_variable.cpp', 0),
              ('THPVariable_dealloc(_object*)', 'python_variable.cpp', 0),
              ('PyType_FromModuleAndSpec', NOLINE, 0))

# ATen ops: argument list, Python binding, the file of the binding, and
# the VariableType shard
_T = 'at::Tensor const&'
OPS = {
    'pow_Tensor_Scalar': (_T + ', c10::Scalar const&', 'pow',
                          'python_variable_methods.cpp', 0),
    'mean_dim': (_T + ', c10::OptionalArrayRef<long>, bool, std::optional<'
                 'c10::ScalarType>', 'mean', 'python_variable_methods.cpp', 3),
    'add_Tensor': (_T + ', ' + _T + ', c10::Scalar const&', 'add',
                   'python_variable_methods.cpp', 2),
    'rsqrt': (_T, 'rsqrt', 'python_torch_functions_2.cpp', 1),
    'mul_Tensor': (_T + ', ' + _T, 'mul', 'python_variable_methods.cpp', 0),
    'mm': (_T + ', ' + _T, 'matmul', 'python_torch_functions_1.cpp', 3),
    'cat': ('c10::IListRef<at::Tensor> const&, long', 'cat',
            'python_torch_functions_0.cpp', 1),
    'bmm': (_T + ', ' + _T, 'bmm', 'python_torch_functions_0.cpp', 3),
    'div_Tensor': (_T + ', ' + _T, 'div', 'python_variable_methods.cpp', 0),
    'max_dim': (_T + ', long, bool', 'max', 'python_variable_methods.cpp', 2),
    'sub_Tensor': (_T + ', ' + _T + ', c10::Scalar const&', 'sub',
                   'python_variable_methods.cpp', 2),
    'exp': (_T, 'exp', 'python_torch_functions_1.cpp', 1),
    'sum_dim_IntList': (_T + ', c10::OptionalArrayRef<long>, bool, std::'
                        'optional<c10::ScalarType>', 'sum',
                        'python_variable_methods.cpp', 2),
    'sigmoid': (_T, 'sigmoid', 'python_torch_functions_2.cpp', 1),
    'log': (_T, 'log', 'python_torch_functions_0.cpp', 0),
    'gather': (_T + ', long, ' + _T + ', bool', 'gather',
               'python_torch_functions_1.cpp', 3),
    'index_Tensor': (_T + ', c10::List<std::optional<at::Tensor> > const&',
                     'getitem', '', 1),
    'embedding_dense_backward': (_T + ', ' + _T + ', c10::SymInt, c10::SymInt'
                                 ', bool', '', '', 2),
    'sigmoid_backward': (_T + ', ' + _T, '', '', 0),
    'ones_like': (_T + ', ' + _OPT + ', std::optional<c10::MemoryFormat>',
                  'ones_like', 'python_torch_functions_1.cpp', 0),
    'zeros_like': (_T + ', ' + _OPT + ', std::optional<c10::MemoryFormat>',
                   'zeros_like', 'python_torch_functions_2.cpp', 0),
    '_foreach_sqrt': ('c10::ArrayRef<at::Tensor>', '_foreach_sqrt',
                      'python_torch_functions_0.cpp', 1),
    '_to_copy': (_T + ', ' + _OPT + ', bool, std::optional<c10::'
                 'MemoryFormat>', 'to', 'python_variable_methods.cpp', 2),
}


def kernel(op):
    """Frames from the output's allocation up to at::_ops::OP::call."""
    args, _, _, vt = OPS[op]
    w = 'wrapper_CUDA_' + op
    return (('at::(anonymous namespace)::create_out(c10::ArrayRef<long>, '
             'c10::ArrayRef<long>, c10::TensorOptions const&)',
             'RegisterCUDA_0.cpp', 0),
            ('at::(anonymous namespace)::structured_%s_out_functional::'
             'set_output_raw_strided(long, c10::ArrayRef<long>, c10::ArrayRef<'
             'long>, c10::TensorOptions, c10::ArrayRef<at::Dimname>)' % op,
             'RegisterCUDA_0.cpp', 0),
            ('at::meta::structured_%s::meta(%s)' % (op, args), NOLINE, 0),
            ('c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::'
             'WrapFunctionIntoFunctor_<c10::CompileTimeFunctionPointer<'
             'at::Tensor (%s), &at::(anonymous namespace)::%s> > >::call('
             'c10::OperatorKernel*, c10::DispatchKeySet, %s)' % (args, w,
                                                                  args),
             'RegisterCUDA_0.cpp', 0),
            ('at::_ops::%s::redispatch(c10::DispatchKeySet, %s)' % (op, args),
             NOLINE, 0),
            ('torch::autograd::VariableType::(anonymous namespace)::%s(c10::'
             'DispatchKeySet, %s)' % (op, args), 'VariableType_%d.cpp' % vt,
             0),
            ('at::_ops::%s::call(%s)' % (op, args), NOLINE, 0))


def binding(op):
    _, name, fn, _ = OPS[op]
    return (('torch::autograd::THPVariable_%s(_object*, _object*, _object*)'
             % name, fn, 0),
            ('PyDescr_IsData', NOLINE, 0),
            ('PyObject_Vectorcall', NOLINE, 0))


def interleave(py):
    """Python frames as a stacks="all" capture lists them on the main
    thread: each followed by the interpreter frames that called it, the
    outermost one after the process's own root frames (as observed)."""
    out = []
    for i, fr in enumerate(py[:-1]):
        out.append(fr)
        nxt = py[i + 1]
        out += PY_GLUE_CALL if nxt[1] == MODULE_CALL[0][1] else PY_GLUE
    return tuple(out) + PY_ROOT + tuple(py[-1:])


def node_frames(node):
    return (('torch::autograd::generated::%s_apply_functional(%s, std::array<'
             'bool, 2ul>)' % (node, _VEC), 'Functions.cpp', 0),
            ('torch::autograd::generated::%s::apply(%s)' % (node, _VEC),
             NOLINE, 0))


class Stacks:
    """The training scenario's stack templates, one object per distinct
    (kind, call site, category); `mode` 'cpp' (stacks="all") or 'python'
    (Python frames only: nothing on the autograd thread)."""

    def __init__(self, mode):
        self.cpp = mode == 'cpp'
        self.cache = {}

    def get(self, key, cat, build):
        t = self.cache.get((key, cat))
        if t is None:
            frames = build()
            t = self.cache[(key, cat)] = template(frames, cat)
        return t

    def main(self, op, py, cat):
        """An op called from Python on the main thread."""
        def build():
            if not self.cpp:
                return py
            return CAPTURE + MALLOC + EMPTY + kernel(op) + binding(op) + \
                interleave(py)
        return self.get(('main', op, py), cat, build)

    def engine(self, node, op, cat):
        """An op run by an autograd node on the engine's thread."""
        def build():
            if not self.cpp:
                return ()
            return CAPTURE + MALLOC + EMPTY + kernel(op) + node_frames(node) \
                + NODE_CALL + ENGINE
        return self.get(('engine', node, op), cat, build)

    def accumulate(self):
        """A parameter's gradient, cloned by AccumulateGrad."""
        def build():
            if not self.cpp:
                return ()
            return CAPTURE + MALLOC + EMPTY_STRIDED + ACCUMULATE + \
                NODE_CALL + ENGINE
        return self.get(('accumulate',), 'gradient', build)

    def reduce(self):
        """A gradient summed to its parameter's shape (norm weights)."""
        def build():
            if not self.cpp:
                return ()
            return CAPTURE + MALLOC + EMPTY + kernel('sum_dim_IntList') + \
                REDUCE + ENGINE
        return self.get(('reduce',), 'gradient', build)

    def workspace(self, py):
        """cuBLAS's workspace, taken by the first matrix product of a
        thread (py: its Python frames; None on the engine's thread)."""
        def build():
            if not self.cpp:
                return py or ()
            tail = binding('mm') + interleave(py) if py else \
                node_frames('MmBackward0') + NODE_CALL + ENGINE
            return CAPTURE + MALLOC + WORKSPACE_CPP + kernel('mm')[3:] + tail
        return self.get(('workspace', py), 'workspace', build)

    def free_main(self, py, cat):
        """A tensor freed when Python drops its last reference."""
        def build():
            if not self.cpp:
                return py
            return CAPTURE + FREE + PY_DEALLOC + interleave(py)
        return self.get(('free_main', py), cat, build)

    def free_engine(self, node, cat):
        """A tensor freed on the engine's thread: a saved activation once
        its node has run (node), or a consumed gradient (node None)."""
        def build():
            if not self.cpp:
                return ()
            if node is None:
                return CAPTURE + FREE + (
                    ('std::vector<at::Tensor, std::allocator<at::Tensor> >::'
                     '~vector()', '', 0),) + ENGINE
            return CAPTURE + FREE + (
                ('torch::autograd::SavedVariable::reset_data()', NOLINE, 0),
                ('torch::autograd::generated::%s::release_variables()' % node,
                 NOLINE, 0)) + NODE_CALL + ENGINE
        return self.get(('free_engine', node), cat, build)


# ---------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------

def step_frames(line):
    return (('train_step', TRAIN, line),) + MAIN


def mod(inner, line):
    """Frames of `inner` called as a module from a forward at `line`."""
    return tuple(inner) + tuple(MODULE_CALL) + (('forward', MODEL, line),)


def fn(inner, line):
    """Frames of `inner` called as a plain function from a forward."""
    return tuple(inner) + (('forward', MODEL, line),)


def in_model(inner, block_line, layer):
    """Python frames of an op inside layer `layer`'s block: the layers are
    called one per line of Transformer.forward (an unrolled model, as
    torch.export or FX code writes one), so distinct stacks grow with the
    number of layers."""
    frames = mod(inner, block_line) if inner else \
        (('forward', MODEL, block_line),)
    return mod(frames, TF_LAYER0 + layer) + tuple(MODULE_CALL) + \
        step_frames(L_FWD)


LIN = (('forward', MODEL, 39),)          # Linear.forward: x @ W.T


def layer_ops():
    """One transformer block's forward, in order: (op, frames inside the
    block, block line, size, saved for backward, backward node, backward
    op, weight).  Sizes: 'ND' tokens x hidden, 'NF' tokens x 4 hidden, 'N'
    tokens, 'S' attention scores, 'BHT' one per head and query; weights:
    'norm' (hidden), 'DD', 'DF', 'FD'."""
    def norm(block_line):
        r = (('forward', MODEL, 101),)
        return [('pow_Tensor_Scalar', r, block_line, 'ND', False, None, None,
                 None),
                ('mean_dim', r, block_line, 'N', True, 'MeanBackward1',
                 'div_Tensor', None),
                ('add_Tensor', r, block_line, 'N', False, None, None, None),
                ('rsqrt', r, block_line, 'N', True, 'RsqrtBackward0',
                 'pow_Tensor_Scalar', None),
                ('mul_Tensor', (('forward', MODEL, 102),), block_line, 'ND',
                 True, 'MulBackward0', 'mul_Tensor', None),
                ('mul_Tensor', (('forward', MODEL, 104),), block_line, 'ND',
                 True, 'MulBackward0', 'mul_Tensor', 'norm')]

    def attn(op, inner, size, saved, node=None, bop=None, w=None):
        return (op, inner, 382, size, saved, node, bop, w)
    ops = norm(380)
    for line in (420, 421, 422):                      # q, k, v
        ops.append(attn('mm', mod(LIN, line), 'ND', True, 'MmBackward0', 'mm',
                        'DD'))
    for line in (424, 425):                           # rotary q, k
        rope = (('forward', MODEL, 147),)
        ops += [attn('mul_Tensor', mod(rope, line), 'ND', False),
                attn('mul_Tensor', mod(rope, line), 'ND', False),
                attn('cat', mod((('forward', MODEL, 150),), line), 'ND', True,
                     'CatBackward0', 'mul_Tensor')]
    sdpa = (('attention', MODEL, 427),)
    ops += [attn('bmm', fn(sdpa, 427), 'S', False),
            attn('div_Tensor', fn(sdpa, 427), 'S', True, 'DivBackward0',
                 'div_Tensor')]
    for op, line, size, saved, node, bop in (
            ('max_dim', 5, 'BHT', False, None, None),
            ('sub_Tensor', 5, 'S', False, None, None),
            ('exp', 6, 'S', True, 'ExpBackward0', 'mul_Tensor'),
            ('sum_dim_IntList', 7, 'BHT', False, None, None),
            ('div_Tensor', 7, 'S', True, 'DivBackward0', 'div_Tensor')):
        ops.append(attn(op, fn((('softmax', NNU, line),), 430), size, saved,
                        node, bop))
    ops += [attn('bmm', fn((('attention', MODEL, 434),), 434), 'ND', True,
                 'BmmBackward0', 'bmm'),
            attn('mm', mod(LIN, 436), 'ND', True, 'MmBackward0', 'mm', 'DD'),
            ('add_Tensor', (), 383, 'ND', True, 'AddBackward0', None, None)]
    ops += norm(385)
    for op, inner, size, node, bop, w in (
            ('mm', mod(LIN, 530), 'NF', 'MmBackward0', 'mm', 'DF'),
            ('sigmoid', (('forward', MODEL, 532),), 'NF', 'SigmoidBackward0',
             'sigmoid_backward', None),
            ('mul_Tensor', (('forward', MODEL, 532),), 'NF', 'MulBackward0',
             'mul_Tensor', None),
            ('mm', mod(LIN, 533), 'NF', 'MmBackward0', 'mm', 'DF'),
            ('mul_Tensor', (('forward', MODEL, 534),), 'NF', 'MulBackward0',
             'mul_Tensor', None),
            ('mm', mod(LIN, 535), 'ND', 'MmBackward0', 'mm', 'FD')):
        ops.append((op, inner, 386, size, True, node, bop, w))
    ops.append(('add_Tensor', (), 387, 'ND', True, 'AddBackward0', None, None))
    return tuple(ops)


LAYER_OPS = layer_ops()
# parameters of one block, in registration order (what AdamW loops over)
LAYER_PARAMS = ('norm', 'DD', 'DD', 'DD', 'DD', 'norm', 'DF', 'DF', 'FD')
# a weight's input (what its gradient of the input is shaped as)
WEIGHT_INPUT = {'norm': 'ND', 'DD': 'ND', 'DF': 'ND', 'FD': 'NF', 'VD': 'ND'}


def sizes(opts, seq):
    """Bytes (fp32) of each shape kind for a batch of `seq` tokens."""
    B, T, D, V = opts.batch, seq, opts.hidden, opts.vocab
    H = max(1, D // 64)
    N = B * T
    return {'ND': 4 * N * D, 'NF': 16 * N * D, 'N': 4 * N,
            'S': 4 * B * H * T * T, 'BHT': 4 * B * H * T, 'NV': 4 * N * V,
            'V': 4 * B * V, 'DD': 4 * D * D, 'DF': 16 * D * D,
            'FD': 16 * D * D, 'norm': 4 * D, 'VD': 4 * V * D, 'tok': 8 * N}


class Training:
    """One model and its AdamW optimizer on device 0."""

    def __init__(self, ctx, info):
        o = ctx.opts
        self.ctx, self.info, self.opts = ctx, info, o
        self.sim = ctx.sim
        self.dev = self.sim.devs[0]
        self.rng = ctx.rng
        self.st = Stacks(o.stacks)
        self.size = sizes(o, o.seq)
        self.params = []            # blocks, in registration order
        self.grads = {}             # parameter index -> block
        self.state = []
        self.batch = []
        self.leaked = []
        self.ws_main = self.ws_engine = None
        self.annotate = ctx.annotate
        self.plans = {}

    # -- allocation with call sites ----------------------------------------
    def alloc(self, size, tmpl):
        sim = self.sim
        sim.serial += 1
        sim.clock.now += 2 + int(self.rng.random() * 38)
        return self.dev.malloc(size, 0, (sim.serial, tmpl))

    def free(self, blk, tmpl):
        sim = self.sim
        sim.serial += 1
        sim.clock.now += 1 + int(self.rng.random() * 19)
        self.dev.free(blk, 2, (sim.serial, tmpl))

    def mark(self, name, stage):
        """An annotation, and for the truth the number of events before
        it."""
        if self.annotate:
            self.sim.annotate(0, name, stage)
            self.info['marks'].append((name, stage, self.sim.nev))

    # -- before recording: the parameters ---------------------------------
    def build(self):
        none = template((), 'parameter')
        kinds = ['VD'] + list(LAYER_PARAMS) * self.opts.layers + \
            ['norm', 'VD']

        def make():
            for k in kinds:
                self.params.append(self.alloc(self.size[k], none))
        self.sim.unrecorded(make)
        self.info['param_bytes'] = sum(b.req for b in self.params)
        self.info['params'] = len(self.params)

    def plan(self, layer):
        """Layer `layer`'s forward with its templates, made once."""
        p = self.plans.get(layer)
        if p is None:
            p = []
            widx = {}
            base = 1 + layer * len(LAYER_PARAMS)
            for i, k in enumerate(LAYER_PARAMS):
                widx.setdefault(k, []).append(base + i)
            for op, inner, bl, size, keep, node, bop, w in LAYER_OPS:
                py = in_model(inner, bl, layer)
                cat = 'activation' if keep else 'temporary'
                p.append((size, self.st.main(op, py, cat),
                          None if keep else self.st.free_main(py, cat),
                          node, bop, w, widx[w].pop(0) if w else None,
                          py if op == 'mm' else None))
            self.plans[layer] = p
        return p

    # -- one training step --------------------------------------------------
    def step(self, n, seq):
        self.size = sizes(self.opts, seq)
        if self.opts.profiler:
            self.mark('ProfilerStep#%d' % n, 'START')
        self.zero_grad()
        self.load_batch()
        saved = self.forward()
        self.backward(saved)
        if self.opts.leak and n % self.info['leak_every'] == 0:
            self.leak()
        self.optimizer_step()
        if self.opts.profiler:
            self.mark('ProfilerStep#%d' % n, 'END')

    def zero_grad(self):
        """zero_grad(set_to_none=True): every gradient is freed."""
        self.mark('Optimizer.zero_grad#AdamW.zero_grad', 'START')
        py = (('zero_grad', OPTIM + 'optimizer.py', 968),
              ('_fn', TORCH + '_dynamo/eval_frame.py', 838)) + \
            step_frames(L_ZERO)
        t = self.st.free_main(py, 'gradient')
        for i in range(len(self.params)):
            g = self.grads.pop(i, None)
            if g is not None:
                self.free(g, t)
        self.mark('Optimizer.zero_grad#AdamW.zero_grad', 'END')

    def load_batch(self):
        """x, y = batch.to(device): the last step's pair is freed as the
        names are rebound."""
        py = (('to_device', USER + 'data/loader.py', 88),) + \
            step_frames(L_BATCH)
        t = self.st.main('_to_copy', py, 'other')
        new = [self.alloc(self.size['tok'], t) for _ in range(2)]
        ft = self.st.free_main(step_frames(L_BATCH), 'other')
        for b in self.batch:
            self.free(b, ft)
        self.batch = new

    def forward(self):
        """The saved activations, in order, each with what backward needs:
        (block, node, backward op, weight, parameter index)."""
        size, st = self.size, self.st
        saved = []
        emb = mod((('forward', MODEL, 54),), TF_EMBED) + tuple(MODULE_CALL) \
            + step_frames(L_FWD)
        saved.append((self.alloc(size['ND'], st.main(
            'index_Tensor', emb, 'activation')), 'EmbeddingBackward0',
            'embedding_dense_backward', 'VD', 0))
        for layer in range(self.opts.layers):
            for kind, at, ft, node, bop, w, pidx, mm in self.plan(layer):
                if mm is not None and self.ws_main is None:
                    self.ws_main = self.alloc(WORKSPACE, st.workspace(mm))
                blk = self.alloc(size[kind], at)
                if ft is None:
                    saved.append((blk, node, bop, w, pidx))
                else:
                    self.free(blk, ft)
        # the final norm, the head, the loss
        L = self.opts.layers
        pi = 1 + L * len(LAYER_PARAMS)
        tail = tuple(MODULE_CALL) + step_frames(L_FWD)
        fin = mod((('forward', MODEL, 104),), TF_LAYER0 + L + 1) + tail
        saved.append((self.alloc(size['ND'], st.main(
            'mul_Tensor', fin, 'activation')), 'MulBackward0', 'mul_Tensor',
            'norm', pi))
        lm = mod(LIN, TF_LAYER0 + L + 2) + tail
        saved.append((self.alloc(size['NV'], st.main('mm', lm, 'activation')),
                      'MmBackward0', 'mm', 'VD', pi + 1))
        for op, line, kind, node in (
                ('max_dim', 12, 'N', None),
                ('sub_Tensor', 13, 'NV', 'SubBackward0'),
                ('exp', 13, 'NV', None),
                ('sum_dim_IntList', 14, 'N', None),
                ('log', 14, 'N', 'LogBackward0'),
                ('gather', 15, 'N', 'GatherBackward0'),
                ('mean_dim', 16, 'N1', 'MeanBackward0')):
            py = (('forward', NNU, line),) + tuple(MODULE_CALL) + \
                step_frames(L_LOSS)
            n = 4 if kind == 'N1' else size[kind]
            if node is None:
                blk = self.alloc(n, st.main(op, py, 'temporary'))
                self.free(blk, st.free_main(py, 'temporary'))
            else:
                blk = self.alloc(n, st.main(op, py, 'activation'))
                saved.append((blk, node, 'div_Tensor', None, None))
        return saved

    def backward(self, saved):
        """loss.backward(): the engine walks the graph back to front, on
        its own thread."""
        size, st = self.size, self.st
        py = (('_make_grads', TORCH + 'autograd/__init__.py', 231),
              ('backward', TORCH + 'autograd/__init__.py', 374),
              ('backward', TORCH + '_tensor.py', 631)) + step_frames(L_BWD)
        grad = self.alloc(4, st.main('ones_like', py, 'temporary'))
        grad_free = st.free_engine(None, 'temporary')
        for blk, node, bop, w, pidx in reversed(saved):
            new = None
            if node == 'EmbeddingBackward0':
                self.grads[pidx] = self.alloc(size['VD'], st.engine(
                    node, bop, 'gradient'))
            else:
                if bop is not None:
                    if bop == 'mm' and self.ws_engine is None:
                        self.ws_engine = self.alloc(WORKSPACE,
                                                    st.workspace(None))
                    n = size[WEIGHT_INPUT[w]] if w else blk.req
                    new = self.alloc(n, st.engine(node, bop, 'temporary'))
                if w is not None:
                    t = st.reduce() if w == 'norm' else st.accumulate()
                    self.grads[pidx] = self.alloc(size[w], t)
            self.free(blk, st.free_engine(node, 'activation'))
            if new is not None:
                self.free(grad, grad_free)
                grad = new
        self.free(grad, grad_free)

    def leak(self):
        """The planted leak: user code keeps the last tokens' logits of
        every step in a list."""
        py = (LEAK_SITE, ('train_step', TRAIN, L_LEAK)) + MAIN
        self.leaked.append(self.alloc(self.size['V'], self.st.main(
            'index_Tensor', py, 'other')))

    def optimizer_step(self):
        self.mark('Optimizer.step#AdamW.step', 'START')
        adam = OPTIM + 'adam.py'
        outer = (('_use_grad', OPTIM + 'optimizer.py', 79),
                 ('wrapper', OPTIM + 'optimizer.py', 487)) + \
            step_frames(L_STEP)
        if not self.state:
            # _init_group: the state, lazily, a pair per parameter (a loop
            # inside this one step)
            ts = [self.st.main('zeros_like', (('_init_group', adam, line),
                                              ('step', adam, 236)) + outer,
                               'optimizer_state') for line in (170, 173)]
            for p in self.params:
                for t in ts:
                    self.state.append(self.alloc(p.req, t))
        t = self.st.main('_foreach_sqrt', (
            ('_multi_tensor_adam', adam, 565), ('adam', adam, 880),
            ('step', adam, 247)) + outer, 'temporary')
        tmp = [self.alloc(p.req, t) for p in self.params]
        ft = self.st.free_main((('_multi_tensor_adam', adam, 612),
                                ('adam', adam, 880), ('step', adam, 247)) +
                               outer, 'temporary')
        for b in reversed(tmp):         # a list drops its items last first
            self.free(b, ft)
        self.mark('Optimizer.step#AdamW.step', 'END')


LEAK_BUDGET = 8 * GiB      # what the leak may hold at the end of a long run


def leak_every(steps, per_step):
    """Steps between two leaked tensors: 1 unless one per step over
    `steps` steps would hold more than LEAK_BUDGET."""
    return max(1, -(-steps * round_size(per_step) // LEAK_BUDGET))


def scen_training(ctx, info):
    o = ctx.opts
    info['marks'] = []
    tr = Training(ctx, info)
    tr.build()
    info['leak_req'] = tr.size['V']
    info['leak_every'] = 1
    n = 0
    try:
        while True:
            seq = o.seq
            if o.seq_jitter:
                seq -= 8 * ctx.rng.randrange(0, o.seq_jitter + 1)
            if n == o.peak_step:
                seq *= o.peak_factor
            nev = ctx.sim.nev
            tr.step(n, seq)
            n += 1
            if n == 1 and o.leak:
                steps = o.steps or ctx.target // max(ctx.sim.nev - nev, 1) + 1
                info['leak_every'] = leak_every(steps, info['leak_req'])
            if (n >= o.steps) if o.steps else ctx.done():
                break
        if o.oom_factor:
            # a longer batch arrives on a device short of memory (this
            # rank's per-process limit): longer ones until one fails
            seq = o.seq
            for _ in range(64):
                seq *= o.oom_factor
                tr.step(n, seq)
                n += 1
            raise SystemExit('gensnap: no out-of-memory within 64 steps')
    except OutOfMemory:
        info['oom'] = True
    info['steps'] = n
    info['leak_blocks'] = tr.leaked
    info['workspaces'] = [b for b in (tr.ws_main, tr.ws_engine) if b]
