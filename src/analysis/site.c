/*
 * Call-site resolution: framework-frame tests, the per-stack cache and
 * the interning of site paths. See site.h.
 */
#include "config.h"

#include "analysis/site.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int
contains_any(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strstr(s, *list) != NULL)
			return 1;
	return 0;
}

/* Does path p hold the directory component `dir` followed by '/' or
 * '\\' (Windows paths, doc/snapshot-format.md §16.5)? */
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

int
an_frame_filtered(const struct snapshot *s, uint32_t f)
{
	const struct snap_frame *fr;

	if (f >= s->n_frames)
		return 1;
	fr = &s->frames[f];
	return contains_any(snap_str(s, fr->name), filter_names) ||
	    contains_any(snap_str(s, fr->filename), filter_files);
}

int
an_frame_is_framework(const struct snapshot *s, uint32_t f)
{
	const char *file;
	size_t n;

	if (f >= s->n_frames)
		return 1;
	file = snap_str(s, s->frames[f].filename);
	n = strlen(file);
	/* C++ frames: '??', empty, a library or a .cpp source. */
	if (n < 3 || strcmp(file + n - 3, ".py") != 0)
		return 1;
	if (has_dir(file, "torch") || has_dir(file, "site-packages") ||
	    has_dir(file, "dist-packages"))
		return 1;
	return an_frame_filtered(s, f);
}

int
an_sites_init(struct an_sites *t, const struct snapshot *s, uint32_t k,
    const char *regex, struct sv_error *err)
{
	memset(t, 0, sizeof *t);
	t->s = s;
	t->k = k == 0 ? 1 : (k > AN_SITE_MAX_FRAMES ? AN_SITE_MAX_FRAMES : k);
	if (regex != NULL) {
		int rc = regcomp(&t->re, regex, REG_EXTENDED | REG_NOSUB);

		if (rc != 0) {
			char msg[128];

			regerror(rc, &t->re, msg, sizeof msg);
			return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
			    "--site-regex: %s", msg);
		}
		t->has_re = 1;
	}
	t->by_stack = xcalloc(s->n_stacks + 1, sizeof *t->by_stack);
	t->cap = 64;
	t->off = xmalloc((t->cap + 1) * sizeof *t->off);
	t->user = xmalloc(t->cap * sizeof *t->user);
	t->cap_frames = 256;
	t->frames = xmalloc(t->cap_frames * sizeof *t->frames);
	t->off[0] = 0;
	u64map_init(&t->ids);
	return 0;
}

void
an_sites_destroy(struct an_sites *t)
{
	if (t->has_re)
		regfree(&t->re);
	free(t->by_stack);
	free(t->off);
	free(t->frames);
	free(t->user);
	u64map_destroy(&t->ids);
	memset(t, 0, sizeof *t);
}

char *
an_frame_label(const struct snapshot *s, uint32_t f, char *buf, size_t size)
{
	const struct snap_frame *fr;

	if (f >= s->n_frames) {
		snprintf(buf, size, "??");
		return buf;
	}
	fr = &s->frames[f];
	if (fr->line == UINT64_MAX)
		snprintf(buf, size, "%s:? %s", snap_str(s, fr->filename),
		    snap_str(s, fr->name));
	else
		snprintf(buf, size, "%s:%" PRIu64 " %s",
		    snap_str(s, fr->filename), fr->line,
		    snap_str(s, fr->name));
	return buf;
}

static int
frame_matches(struct an_sites *t, uint32_t f)
{
	char buf[4096];

	an_frame_label(t->s, f, buf, sizeof buf);
	return regexec(&t->re, buf, 0, NULL, 0) == 0;
}

/* Path with its user flag. */
static uint32_t
resolve_path(struct an_sites *t, uint32_t stack, uint32_t *out, uint32_t max,
    int *user)
{
	const uint32_t *fr;
	uint32_t n, i, start = UINT32_MAX, m = 0;

	*user = 0;
	if (max == 0 || stack >= t->s->n_stacks)
		return 0;
	fr = snap_stack(t->s, stack, &n);
	if (n == 0)
		return 0;
	if (t->has_re)
		for (i = 0; i < n && start == UINT32_MAX; i++)
			if (frame_matches(t, fr[i]))
				start = i;
	if (start == UINT32_MAX)
		for (i = 0; i < n && start == UINT32_MAX; i++)
			if (!an_frame_is_framework(t->s, fr[i]))
				start = i;
	if (start == UINT32_MAX) {
		/* No user frame: the first frame memory_viz would show. */
		for (i = 0; i < n && start == UINT32_MAX; i++)
			if (!an_frame_filtered(t->s, fr[i]))
				start = i;
		out[0] = fr[start == UINT32_MAX ? 0 : start];
		return 1;
	}
	*user = 1;
	out[m++] = fr[start];
	for (i = start + 1; i < n && m < max; i++)
		if (!an_frame_is_framework(t->s, fr[i]))
			out[m++] = fr[i];
	return m;
}

uint32_t
an_site_path(struct an_sites *t, uint32_t stack, uint32_t *out, uint32_t max)
{
	int user;

	return resolve_path(t, stack, out, max, &user);
}

static uint64_t
path_hash(const uint32_t *p, uint32_t n)
{
	uint64_t h = 1469598103934665603ull ^ n;
	uint32_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	return h;
}

static uint32_t
intern_path(struct an_sites *t, const uint32_t *p, uint32_t n, int user)
{
	uint64_t h = path_hash(p, n), v;
	uint32_t id;

	for (;; h++) {
		uint32_t m;

		if (!u64map_get(&t->ids, h, &v))
			break;
		m = t->off[v + 1] - t->off[v];
		if (m == n && memcmp(t->frames + t->off[v], p,
				  n * sizeof *p) == 0)
			return (uint32_t)v;
	}
	if (t->n == t->cap) {
		t->cap *= 2;
		t->off = xreallocarray(t->off, t->cap + 1, sizeof *t->off);
		t->user = xreallocarray(t->user, t->cap, sizeof *t->user);
	}
	while (t->off[t->n] + n > t->cap_frames) {
		t->cap_frames *= 2;
		t->frames = xreallocarray(t->frames, t->cap_frames,
		    sizeof *t->frames);
	}
	id = t->n++;
	memcpy(t->frames + t->off[id], p, n * sizeof *p);
	t->off[id + 1] = t->off[id] + n;
	t->user[id] = (uint8_t)user;
	u64map_put(&t->ids, h, id);
	return id;
}

uint32_t
an_site_of(struct an_sites *t, uint32_t stack)
{
	uint32_t path[AN_SITE_MAX_FRAMES], n, id;
	int user;

	if (stack >= t->s->n_stacks)
		stack = 0;
	if (t->by_stack[stack] != 0)
		return t->by_stack[stack] - 1;
	n = resolve_path(t, stack, path, t->k, &user);
	id = intern_path(t, path, n, user);
	t->by_stack[stack] = id + 1;
	return id;
}

const uint32_t *
an_site_frames(const struct an_sites *t, uint32_t site, uint32_t *n)
{
	if (site >= t->n) {
		*n = 0;
		return NULL;
	}
	*n = t->off[site + 1] - t->off[site];
	return t->frames + t->off[site];
}

int
an_site_is_user(const struct an_sites *t, uint32_t site)
{
	return site < t->n && t->user[site];
}

char *
an_site_label(const struct an_sites *t, uint32_t site, char *buf,
    size_t size)
{
	uint32_t n;
	const uint32_t *f = an_site_frames(t, site, &n);

	if (n == 0) {
		snprintf(buf, size, "<no stack>");
		return buf;
	}
	return an_frame_label(t->s, f[0], buf, size);
}
