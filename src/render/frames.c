/*
 * Framework-frame folding and call sites for displayed stacks.
 */
#include "config.h"

#include "render/frames.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/escape.h"

/* memory_viz frameFilter (doc/snapshot-format.md §5). */
static const char *const filter_names[] = {"unwind::unwind",
    "CapturedTraceback::gather", "gather_with_cpp", "_start",
    "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_"};
static const char *const filter_files[] = {"core/boxing", "/Register",
    "/Redispatch", "pythonrun.c", "Modules/main.c", "Objects/call.c",
    "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
    "cpython/abstract.h"};

/* True if path has a component equal to dir (followed by / or \). */
static int
has_component(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	const char *p = path;

	while ((p = strstr(p, dir)) != NULL) {
		if ((p == path || p[-1] == '/' || p[-1] == '\\') &&
		    (p[n] == '/' || p[n] == '\\'))
			return 1;
		p++;
	}
	return 0;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

enum frame_kind
frames_classify(const char *name, const char *filename)
{
	size_t i;

	for (i = 0; i < sizeof filter_names / sizeof filter_names[0]; i++)
		if (strstr(name, filter_names[i]) != NULL)
			return FRAME_FILTERED;
	for (i = 0; i < sizeof filter_files / sizeof filter_files[0]; i++)
		if (strstr(filename, filter_files[i]) != NULL)
			return FRAME_FILTERED;
	if (filename[0] == '\0' || strcmp(filename, "??") == 0 ||
	    !ends_with(filename, ".py"))
		return FRAME_FRAMEWORK;
	if (has_component(filename, "torch") ||
	    has_component(filename, "site-packages"))
		return FRAME_FRAMEWORK;
	return FRAME_USER;
}

static enum frame_kind
kind_of(const struct snapshot *s, uint32_t f)
{
	const struct snap_frame *fr = &s->frames[f];

	return frames_classify(snap_str(s, fr->name), snap_str(s, fr->filename));
}

size_t
frames_layout(const struct snapshot *s, uint32_t stack, int unfold,
    struct frame_line *out, size_t max)
{
	const uint32_t *fs;
	uint32_t n, i;
	size_t k = 0;
	int in_run = 0;

	fs = snap_stack(s, stack, &n);
	for (i = 0; i < n; i++) {
		enum frame_kind kind = fs[i] < s->n_frames ? kind_of(s, fs[i])
		    : FRAME_FRAMEWORK;
		int fold = !unfold && kind != FRAME_USER;

		if (fold && in_run) {
			if (k - 1 < max)
				out[k - 1].nfold++;
			continue;
		}
		in_run = fold;
		if (k < max) {
			out[k].pos = i;
			out[k].frame = fs[i];
			out[k].nfold = fold ? 1 : 0;
			out[k].kind = (uint8_t)kind;
		}
		k++;
	}
	return k;
}

uint32_t
frames_call_site(const struct snapshot *s, uint32_t stack)
{
	const uint32_t *fs;
	uint32_t n, i;

	fs = snap_stack(s, stack, &n);
	if (n == 0)
		return UINT32_MAX;
	for (i = 0; i < n; i++)
		if (fs[i] < s->n_frames && kind_of(s, fs[i]) == FRAME_USER)
			return fs[i];
	return fs[0];
}

char *
frames_format(const struct snapshot *s, uint32_t f, char *buf, size_t size)
{
	char file[256], name[256];
	const struct snap_frame *fr;
	const char *fn, *nm;

	if (f >= s->n_frames) {
		snprintf(buf, size, "?");
		return buf;
	}
	fr = &s->frames[f];
	fn = snap_str(s, fr->filename);
	nm = snap_str(s, fr->name);
	sv_escape(file, sizeof file, fn, strlen(fn));
	sv_escape(name, sizeof name, nm, strlen(nm));
	if (fr->line == UINT64_MAX || fr->line == 0)
		snprintf(buf, size, "%s %s", file, name);
	else
		snprintf(buf, size, "%s:%" PRIu64 " %s", file, fr->line, name);
	return buf;
}
