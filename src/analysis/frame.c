/*
 * The frame rules: kind, C++ role, traits and short names. See frame.h.
 */
#include "config.h"

#include "analysis/frame.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"
#include "util/xalloc.h"

/* memory_viz frameFilter (doc/snapshot-format.md §5): substring tests. */
static const char *const filter_names[] = {
    "unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp",
    "_start", "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_",
    NULL};
static const char *const filter_files[] = {
    "core/boxing", "/Register", "/Redispatch", "pythonrun.c",
    "Modules/main.c", "Objects/call.c", "Objects/methodobject.c",
    "pycore_ceval.h", "ceval.c", "cpython/abstract.h", NULL};

/* The caching allocators' own frames (substrings of the name). */
static const char *const allocator_names[] = {"CachingAllocator",
    "c10::Allocator", NULL};

/* Other C++ frames nobody names a site by (substrings of the name). */
static const char *const skip_names[] = {
    "unwind::", "CapturedTraceback",
    "gather_with_cpp", "c10::impl::", "c10::Dispatcher", "c10::Kernel",
    "c10::BoxedKernel", "c10::OperatorHandle", "::redispatch",
    "wrapper_", "VariableType::", "ADInplaceOrView::", "at::detail::",
    "at::empty", "at::native::empty", "create_out", "set_output",
    "TensorIteratorBase::", "TensorIterator::", "at::meta::", "at::impl::",
    "_apply_functional", "torch::autograd::Engine::",
    "torch::autograd::Node::", "PythonEngine", "THPVariable",
    "torch::autograd::utils::wrap", "torch::PythonArgParser", "std::",
    "pthread", "__clone", "start_thread", "__libc", NULL};

static int
contains_any(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strstr(s, *list) != NULL)
			return 1;
	return 0;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Does path p hold the directory component dir (either slash around
 * it)? */
static int
has_dir(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	const char *q = p;

	while ((q = strstr(q, dir)) != NULL) {
		int before = q == p || q[-1] == '/' || q[-1] == '\\';
		int after = q[n] == '/' || q[n] == '\\';

		if (before && after)
			return 1;
		q++;
	}
	return 0;
}

/* Does path p contain pat, where a '/' of pat matches either slash? */
static int
path_has(const char *p, const char *pat)
{
	size_t n = strlen(pat), i;

	for (; *p != '\0'; p++) {
		for (i = 0; i < n; i++) {
			char c = p[i];

			if (c == '\0')
				return 0;
			if (pat[i] == '/' ? (c != '/' && c != '\\')
					  : c != pat[i])
				break;
		}
		if (i == n)
			return 1;
	}
	return 0;
}

static int
is_python(const char *file)
{
	return ends_with(file, ".py");
}

enum an_frame_kind
an_frame_kind(const char *name, const char *filename)
{
	if (contains_any(name, filter_names) ||
	    contains_any(filename, filter_files))
		return AN_FRAME_FILTERED;
	if (!is_python(filename))
		return AN_FRAME_FRAMEWORK;
	if (has_dir(filename, "torch") || has_dir(filename, "site-packages") ||
	    has_dir(filename, "dist-packages"))
		return AN_FRAME_FRAMEWORK;
	return AN_FRAME_USER;
}

/* Case-insensitive substring test for an ASCII needle. */
static int
has_word_ci(const char *s, const char *w)
{
	size_t n = strlen(w), i;

	for (; *s != '\0'; s++) {
		for (i = 0; i < n; i++)
			if (s[i] == '\0' ||
			    tolower((unsigned char)s[i]) != w[i])
				break;
		if (i == n)
			return 1;
	}
	return 0;
}

/* The component just before "::apply" in a torch::autograd name, as
 * [*b, *e); 0 when the name is no node's apply. */
static int
node_span(const char *name, const char **b, const char **e)
{
	const char *p = strstr(name, "::apply");
	const char *q;

	if (strncmp(name, "torch::autograd::", 17) != 0 || p == NULL ||
	    (p[7] != '(' && p[7] != '\0'))
		return 0;
	for (q = p; q > name && !(q[-1] == ':' && q - 1 > name &&
	    q[-2] == ':'); q--)
		;
	if (q == p || (p - q == 4 && strncmp(q, "Node", 4) == 0))
		return 0;
	*b = q;
	*e = p;
	return 1;
}

int
an_cpp_allocator(const char *name)
{
	return contains_any(name, allocator_names);
}

int
an_cpp_role(const char *name)
{
	const char *b, *e;

	if (has_word_ci(name, "workspace"))
		return AN_CPP_WORKSPACE;
	if (strncmp(name, "at::_ops::", 10) == 0 &&
	    (strstr(name, "::call") != NULL ||
	     strstr(name, "::redispatch") != NULL))
		return AN_CPP_OP;
	if (node_span(name, &b, &e))
		return AN_CPP_NODE;
	if (an_cpp_allocator(name) || contains_any(name, skip_names) ||
	    contains_any(name, filter_names))
		return AN_CPP_SKIP;
	/* the interpreter */
	if (strncmp(name, "Py", 2) == 0 || strncmp(name, "_Py", 3) == 0)
		return AN_CPP_SKIP;
	return AN_CPP_NAMED;
}

static int
name_is(const char *name, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(name, *list) == 0)
			return 1;
	return 0;
}

static const char *const module_construct[] = {"_apply", "to", "cuda",
    "npu", "xpu", "to_empty", "half", "float", "bfloat16", "type",
    "load_state_dict", "_load_from_state_dict", NULL};
static const char *const module_call[] = {"_call_impl",
    "_wrapped_call_impl", NULL};

unsigned
an_frame_traits(const char *name, const char *filename)
{
	unsigned tr = 0;

	if (is_python(filename)) {
		tr |= AN_TR_PYTHON;
		if (strcmp(name, "backward") == 0 ||
		    (path_has(filename, "torch/autograd/") &&
		     (strstr(name, "backward") != NULL ||
		      strcmp(name, "grad") == 0)))
			tr |= AN_TR_BACKWARD;
		if (path_has(filename, "torch/optim/"))
			tr |= AN_TR_OPTIM;
		/* an optimizer's own step(), torch's or the user's */
		if (strcmp(name, "step") == 0 && has_word_ci(filename, "optim"))
			tr |= AN_TR_STEP;
		if (strcmp(name, "zero_grad") == 0)
			tr |= AN_TR_ZERO_GRAD;
		if ((path_has(filename, "torch/nn/modules/module.py") &&
		     name_is(name, module_construct)) ||
		    (path_has(filename, "torch_npu/utils/_module.py") &&
		     name_is(name, module_construct)) ||
		    path_has(filename, "torch/nn/init.py") ||
		    path_has(filename, "torch/nn/parameter.py") ||
		    strcmp(name, "reset_parameters") == 0)
			tr |= AN_TR_CONSTRUCT;
		if (strcmp(name, "__init__") == 0 &&
		    an_frame_kind(name, filename) == AN_FRAME_USER)
			tr |= AN_TR_INIT;
		if (strcmp(name, "forward") == 0 ||
		    (path_has(filename, "torch/nn/modules/module.py") &&
		     name_is(name, module_call)))
			tr |= AN_TR_MODULE;
		return tr;
	}
	if (filename[0] != '<' && an_frame_kind(name, filename) !=
	    AN_FRAME_FILTERED)
		tr |= AN_TR_CPP;
	switch (an_cpp_role(name)) {
	case AN_CPP_WORKSPACE:
		tr |= AN_TR_WORKSPACE;
		break;
	case AN_CPP_NODE:
		tr |= AN_TR_BACKWARD;
		break;
	default:
		break;
	}
	/* the engine's own thread; Engine::execute is the caller's side
	 * (the thread that called backward() waits there) */
	if (strstr(name, "torch::autograd::Engine::thread_") != NULL ||
	    strstr(name, "torch::autograd::Engine::evaluate_function") !=
	    NULL ||
	    strstr(name, "torch::autograd::python::PythonEngine::thread_") !=
	    NULL)
		tr |= AN_TR_BACKWARD;
	if (strstr(name, "AccumulateGrad") != NULL)
		tr |= AN_TR_ACCGRAD | AN_TR_BACKWARD;
	if (strstr(name, "_fused_adam") != NULL ||
	    strstr(name, "_fused_sgd") != NULL ||
	    strstr(name, "_fused_adagrad") != NULL)
		tr |= AN_TR_OPTIM;
	if (strstr(name, "zero_grad") != NULL)
		tr |= AN_TR_ZERO_GRAD;
	return tr;
}

/* ---- short names -------------------------------------------------------- */

static char *
copy_span(const char *b, const char *e, char *buf, size_t size)
{
	size_t n = (size_t)(e - b);

	if (size == 0)
		return buf;
	if (n >= size)
		n = sv_utf8_fit(b, size - 1);  /* cut at a character */
	memcpy(buf, b, n);
	buf[n] = '\0';
	return buf;
}

char *
an_cpp_node_name(const char *name, char *buf, size_t size)
{
	const char *b, *e;

	if (!node_span(name, &b, &e))
		return an_cpp_short_name(name, buf, size);
	return copy_span(b, e, buf, size);
}

/* Overload names that end an at::_ops name ("sum_dim_IntList" is sum,
 * overload dim_IntList). Operator names are snake_case, so a part with a
 * capital letter is always an overload; the lower-case ones are the
 * usual overload names. */
static const char *const overloads[] = {"dim", "int", "out", "self",
    "other", "mode", "names", "using_ints", "correction", "vec", "str",
    "memory_format", NULL};

static int
is_overload(const char *b, size_t n)
{
	const char *const *o;
	size_t i;

	for (i = 0; i < n; i++)
		if (isupper((unsigned char)b[i]))
			return 1;
	for (o = overloads; *o != NULL; o++)
		if (strlen(*o) == n && strncmp(b, *o, n) == 0)
			return 1;
	return 0;
}

char *
an_cpp_op_name(const char *name, char *buf, size_t size)
{
	const char *b = name + 10, *e;
	char op[200];
	size_t n;

	if (strncmp(name, "at::_ops::", 10) != 0)
		return an_cpp_short_name(name, buf, size);
	e = strstr(b, "::");
	if (e == NULL)
		e = b + strlen(b);
	copy_span(b, e, op, sizeof op);
	n = strlen(op);
	/* drop overload parts from the end, keeping a name */
	for (;;) {
		char *u = NULL, *p;

		for (p = op + 1; p < op + n; p++)
			if (*p == '_' && p[-1] != '_')
				u = p;
		if (u == NULL || u + 1 >= op + n)
			break;
		if (u[1] == '_')
			u++; /* an in-place op: "add__Tensor" is add_ */
		if (u + 1 >= op + n)
			break;
		if (strcmp(u + 1, "format") == 0 && u - op > 7 &&
		    strncmp(u - 7, "_memory", 7) == 0)
			u -= 7;
		if (!is_overload(u + 1, (size_t)(op + n - u - 1)))
			break;
		*u = '\0';
		n = (size_t)(u - op);
	}
	snprintf(buf, size, "at::%s", op);
	return buf;
}

char *
an_cpp_short_name(const char *name, char *buf, size_t size)
{
	const char *e = name, *b, *p;
	int depth = 0, seps = 0;

	/* the end of the qualified name: the '(' of the arguments, outside
	 * template brackets */
	for (p = name; *p != '\0'; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth > 0)
			depth--;
		else if (*p == '(' && depth == 0 && p > name)
			break;
	}
	e = p;
	/* back over two "::" separators, outside template brackets */
	depth = 0;
	for (b = e; b > name; b--) {
		if (b[-1] == '>')
			depth++;
		else if (b[-1] == '<' && depth > 0)
			depth--;
		else if (depth == 0 && b[-1] == ':' && b - 1 > name &&
		    b[-2] == ':' && ++seps == 2)
			break;
		if (depth == 0 && b[-1] == ' ')
			break; /* return type before the name */
	}
	return copy_span(b, e, buf, size);
}

/* ---- the cache ---------------------------------------------------------- */

#define INFO_DONE 0x80000000u

void
an_frame_cache_init(struct an_frame_cache *c, const struct snapshot *s)
{
	c->s = s;
	c->n = s->n_frames;
	c->info = xcalloc((size_t)c->n + 1, sizeof *c->info);
}

void
an_frame_cache_destroy(struct an_frame_cache *c)
{
	free(c->info);
	memset(c, 0, sizeof *c);
}

static uint32_t
info_of(struct an_frame_cache *c, uint32_t f)
{
	const char *name, *file;
	uint32_t v;

	if (f >= c->n)
		return INFO_DONE | AN_FRAME_FRAMEWORK | (AN_CPP_SKIP << 2);
	if (c->info[f] != 0)
		return c->info[f];
	name = snap_str(c->s, c->s->frames[f].name);
	file = snap_str(c->s, c->s->frames[f].filename);
	v = INFO_DONE | (uint32_t)an_frame_kind(name, file) |
	    ((uint32_t)(is_python(file) ? AN_CPP_NAMED : an_cpp_role(name))
		<< 2) |
	    ((uint32_t)an_frame_traits(name, file) << 8);
	c->info[f] = v;
	return v;
}

enum an_frame_kind
an_frame_cache_kind(struct an_frame_cache *c, uint32_t f)
{
	return (enum an_frame_kind)(info_of(c, f) & 3);
}

int
an_frame_cache_role(struct an_frame_cache *c, uint32_t f)
{
	return (int)((info_of(c, f) >> 2) & 7);
}

unsigned
an_frame_cache_traits(struct an_frame_cache *c, uint32_t f)
{
	return (info_of(c, f) >> 8) & 0xffff;
}
