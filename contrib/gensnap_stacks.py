"""gensnap_stacks - call stacks of the generated snapshots.

Stack templates are tuples of (name, filename, line), innermost frame
first, as the frames of a snapshot list them (doc/snapshot-format.md §5,
§9, §16.7): Python-only stacks, or C++ and Python frames interleaved as
`stacks="all"` records them.  Section numbers (§N) refer to
doc/snapshot-format.md.
"""

from gensnap_alloc import U64_MAX

USER = '/home/alice/proj/'
TORCH = '/opt/conda/lib/python3.11/site-packages/torch/'
NN = TORCH + 'nn/modules/'

PY_OPS = {
    'linear': [('forward', NN + 'linear.py', 125)],
    'relu': [('relu', TORCH + 'nn/functional.py', 1704),
             ('forward', NN + 'activation.py', 133)],
    'layernorm': [('layer_norm', TORCH + 'nn/functional.py', 2900),
                  ('forward', NN + 'normalization.py', 217)],
    'attn': [('scaled_dot_product_attention', TORCH + 'nn/functional.py', 5860),
             ('forward', NN + 'activation.py', 1368)],
    'backward': [('_engine_run_backward', TORCH + 'autograd/graph.py', 825),
                 ('backward', TORCH + 'autograd/__init__.py', 347),
                 ('backward', TORCH + '_tensor.py', 581)],
    'adam': [('_multi_tensor_adam', TORCH + 'optim/adam.py', 735),
             ('adam', TORCH + 'optim/adam.py', 922),
             ('step', TORCH + 'optim/adam.py', 247),
             ('wrapper', TORCH + 'optim/optimizer.py', 487)],
    'to': [('pin_and_copy', USER + 'data/loader.py', 88)],
    'empty': [],
    'loss': [('cross_entropy', TORCH + 'nn/functional.py', 3479),
             ('forward', NN + 'loss.py', 1295)],
}
MODULE_CALL = [('_call_impl', NN + 'module.py', 1747),
               ('_wrapped_call_impl', NN + 'module.py', 1736)]

CPP_COMMON = [
    ('torch::unwind::unwind()', '??', 0),
    ('torch::CapturedTraceback::gather(bool, bool, bool)', '??', 0),
    ('c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc('
     'signed char, unsigned long, CUstream_st*)', 'CUDACachingAllocator.cpp', 0),
    ('c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc('
     'void**, signed char, unsigned long, CUstream_st*)', '??', U64_MAX),
    ('c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate('
     'unsigned long)', 'CUDACachingAllocator.cpp', 0),
    ('c10::StorageImpl::StorageImpl(c10::StorageImpl::use_byte_size_t, '
     'c10::SymInt const&, c10::Allocator*, bool)', '??', U64_MAX),
    ('at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, '
     'c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, '
     'std::optional<c10::MemoryFormat>)', 'EmptyTensor.cpp', 0),
    ('at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, '
     'c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)',
     '??', 0),
    ('at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, '
     'std::optional<c10::Device>, std::optional<c10::MemoryFormat>)',
     'EmptyTensor.cpp', 0),
    ('at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>, '
     'std::optional<c10::Layout>, std::optional<c10::Device>, '
     'std::optional<bool>, std::optional<c10::MemoryFormat>)', '??', U64_MAX),
]
CPP_DISPATCH = [
    ('c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::'
     'WrapFunctionIntoFunctor_<c10::CompileTimeFunctionPointer<at::Tensor '
     '(c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>), '
     '&at::(anonymous namespace)::wrapper_CUDA_%s>>>::call' % i,
     '??', 0) for i in ('empty', 'mm', 'relu', 'layer_norm', 'sdpa', 'add')
]
CPP_AUTOGRAD = [
    ('at::_ops::%s::redispatch(c10::DispatchKeySet, c10::ArrayRef<c10::SymInt>)'
     % k, 'Operators_%d.cpp' % (i % 5), 0)
    for i, k in enumerate(('empty_memory_format', 'mm', 'addmm', 'relu',
                           'native_layer_norm', 'add_Tensor'))
] + [
    ('torch::autograd::VariableType::(anonymous namespace)::%s(c10::'
     'DispatchKeySet, at::Tensor const&, at::Tensor const&)' % k,
     'VariableType_%d.cpp' % i, 0)
    for i, k in enumerate(('mm', 'addmm', 'relu', 'layer_norm'))
] + [
    ('c10::impl::BoxedKernelWrapper<at::Tensor (at::Tensor const&), void>::call'
     '(c10::BoxedKernel const&, c10::OperatorHandle const&, '
     'c10::DispatchKeySet)', '??', U64_MAX),
    ('c10::Dispatcher::callBoxed(c10::OperatorHandle const&, '
     'std::vector<c10::IValue>*) const', 'Dispatcher.h', 0),
    ('torch::autograd::autogradNotImplementedFallbackImpl(c10::OperatorHandle '
     'const&, c10::DispatchKeySet, std::vector<c10::IValue>*)',
     'autograd_not_implemented_fallback.cpp', 0),
    ('torch::ADInplaceOrView::(anonymous namespace)::wrapper(c10::'
     'DispatchKeySet, at::Tensor const&)', 'ADInplaceOrViewType_0.cpp', 0),
    ('at::functionalization::impl::functionalize_op_helper', '??', 0),
    ('torch::jit::invokeOperatorFromPython(std::vector<std::shared_ptr<'
     'torch::jit::Operator>> const&, pybind11::args, pybind11::kwargs const&, '
     'std::optional<c10::DispatchKey>)', 'pybind_utils.cpp', 0),
    ('pybind11::cpp_function::dispatcher(_object*, _object*, _object*)', '??',
     U64_MAX),
]
CPP_PYBIND = [
    ('torch::PythonArgParser::raw_parse(_object*, _object*, _object*, '
     '_object**)', 'python_arg_parser.cpp', 0),
    ('torch::handle_torch_function_no_python_arg_parser(c10::ArrayRef<'
     'pybind11::handle>, _object*, _object*, char const*, _object*, char const*, '
     'torch::TorchFunctionName)', 'python_arg_parser.cpp', 0),
    ('THPFunction_apply(_object*, _object*)', 'python_function.cpp', 0),
    ('torch::autograd::Engine::execute(std::vector<torch::autograd::Edge> '
     'const&, std::vector<at::Tensor> const&, bool, bool, bool, '
     'std::vector<torch::autograd::Edge> const&)', 'engine.cpp', 0),
    ('torch::autograd::python::PythonEngine::execute(std::vector<torch::'
     'autograd::Edge> const&, std::vector<at::Tensor> const&, bool, bool, bool, '
     'std::vector<torch::autograd::Edge> const&)', 'python_engine.cpp', 0),
    ('c10::detail::_str_wrapper<char const*>::call(char const*)', '??', 0),
    ('at::native::structured_mm_out_cuda::impl(at::Tensor const&, at::Tensor '
     'const&, at::Tensor const&)', 'Blas.cpp', 0),
    ('at::native::(anonymous namespace)::addmm_out_cuda_impl(at::Tensor&, '
     'at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar '
     'const&, c10::Scalar const&, at::native::Activation)', 'Blas.cpp', 0),
    ('at::cuda::blas::gemm<float>(char, char, long, long, long, float, float '
     'const*, long, float const*, long, float, float*, long)', '??', U64_MAX),
    ('at::(anonymous namespace)::structured_mm_out_cuda_functional::set_output'
     '_raw_strided(long, c10::ArrayRef<long>, c10::ArrayRef<long>, '
     'c10::TensorOptions, c10::ArrayRef<at::Dimname>)', 'RegisterCUDA.cpp', 0),
    ('at::meta::structured_mm::meta(at::Tensor const&, at::Tensor const&)',
     'LinearAlgebra.cpp', 0),
    ('at::TensorIteratorBase::build(at::TensorIteratorConfig&)',
     'TensorIterator.cpp', 0),
]
CPP_TAIL = [
    ('at::_ops::%s::call(c10::ArrayRef<c10::SymInt>, '
     'std::optional<c10::ScalarType>)', 'Operators_2.cpp', 0),
    ('torch::autograd::THPVariable_%s(_object*, _object*, _object*)',
     'python_torch_functions_0.cpp', 0),
    ('cfunction_call', '??', U64_MAX),
    ('_PyObject_MakeTpCall', 'Objects/call.c', 0),
]
CPYTHON = [
    ('_PyEval_EvalFrameDefault', 'Python/ceval.c', 0),
    ('_PyEval_Vector', 'Python/ceval.c', 0),
    ('_PyVectorcall_Call', 'Objects/call.c', 0),
    ('_PyFunction_Vectorcall', '??', U64_MAX),
    ('PyObject_Call', 'Objects/call.c', 0),
    ('method_vectorcall', 'Objects/classobject.c', 0),
    ('slot_tp_call', '??', U64_MAX),
    ('_PyObject_MakeTpCall', 'Objects/call.c', 0),
]
CPP_ROOT = [('Py_RunMain', 'Modules/main.c', 0),
            ('Py_BytesMain', '??', U64_MAX),
            ('__libc_start_main', '??', 0),
            ('_start', '??', 0)]


class StackFactory:
    """Builds stack templates: tuples of (name, filename, line), innermost first."""

    def __init__(self, mode):
        self.mode = mode
        self.cache = {}

    def get(self, op, user):
        key = (op, user)
        t = self.cache.get(key)
        if t is None:
            t = self.cache[key] = self._build(op, user)
        return t

    def _build(self, op, user):
        py = list(PY_OPS[op])
        if py and py[-1][1].startswith(NN):
            py += MODULE_CALL
        for i, fr in enumerate(user):
            py.append(fr)
            if i + 1 < len(user) and fr[1].endswith('model.py'):
                py += MODULE_CALL
        if self.mode != 'cpp':
            return tuple(py)
        idx = sum(map(ord, op)) % len(CPP_DISPATCH)
        frames = list(CPP_COMMON)
        frames += CPP_DISPATCH[idx:] + CPP_DISPATCH[:idx]
        frames += CPP_AUTOGRAD[idx:] + CPP_AUTOGRAD[:idx]
        frames += CPP_PYBIND[idx % 3:]
        frames += [(n % op if '%s' in n else n, f, l) for n, f, l in CPP_TAIL]
        for j, fr in enumerate(py):
            frames += CPYTHON + CPYTHON[2:4 + j % 3]
            frames.append(fr)
        frames += CPP_ROOT
        return tuple(frames)


def first_user_frame(frames):
    """First .py frame outside the framework (§16.7)."""
    for f in frames:
        fn = f['filename'].replace('\\', '/')
        if not fn.endswith('.py'):
            continue
        if 'torch/' in fn or 'site-packages/' in fn:
            continue
        return f
    return None

