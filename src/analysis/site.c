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

#include "util/escape.h"
#include "util/xalloc.h"

int
an_frame_filtered(const struct snapshot *s, uint32_t f)
{
	const struct snap_frame *fr;

	if (f >= s->n_frames)
		return 1;
	fr = &s->frames[f];
	return an_frame_kind(snap_str(s, fr->name),
	    snap_str(s, fr->filename)) == AN_FRAME_FILTERED;
}

int
an_frame_allocator(const struct snapshot *s, uint32_t f)
{
	const struct snap_frame *fr;

	if (f >= s->n_frames)
		return 0;
	fr = &s->frames[f];
	return an_frame_kind(snap_str(s, fr->name), snap_str(s,
	    fr->filename)) == AN_FRAME_FRAMEWORK &&
	    an_cpp_allocator(snap_str(s, fr->name));
}

int
an_frame_is_framework(const struct snapshot *s, uint32_t f)
{
	const struct snap_frame *fr;

	if (f >= s->n_frames)
		return 1;
	fr = &s->frames[f];
	return an_frame_kind(snap_str(s, fr->name),
	    snap_str(s, fr->filename)) != AN_FRAME_USER;
}

/* ---- the site of one stack ---------------------------------------------- */

struct rules {
	const struct snapshot *s;
	struct an_frame_cache *fc;	/* may be NULL */
};

static enum an_frame_kind
kind_of(const struct rules *r, uint32_t f)
{
	const struct snap_frame *fr;

	if (r->fc != NULL)
		return an_frame_cache_kind(r->fc, f);
	if (f >= r->s->n_frames)
		return AN_FRAME_FRAMEWORK;
	fr = &r->s->frames[f];
	return an_frame_kind(snap_str(r->s, fr->name),
	    snap_str(r->s, fr->filename));
}

static int
role_of(const struct rules *r, uint32_t f)
{
	const struct snap_frame *fr;

	if (r->fc != NULL)
		return an_frame_cache_role(r->fc, f);
	if (f >= r->s->n_frames)
		return AN_CPP_SKIP;
	fr = &r->s->frames[f];
	if (strlen(snap_str(r->s, fr->filename)) >= 3 &&
	    strcmp(snap_str(r->s, fr->filename) +
	    strlen(snap_str(r->s, fr->filename)) - 3, ".py") == 0)
		return AN_CPP_NAMED;
	return an_cpp_role(snap_str(r->s, fr->name));
}

static int
is_python(const struct rules *r, uint32_t f)
{
	const char *file;
	size_t n;

	if (f >= r->s->n_frames)
		return 0;
	file = snap_str(r->s, r->s->frames[f].filename);
	n = strlen(file);
	return n >= 3 && strcmp(file + n - 3, ".py") == 0;
}

/* An ATen or c10 internal: no caller a person would name. */
static int
is_internal(const struct rules *r, uint32_t f)
{
	const char *name;

	if (f >= r->s->n_frames)
		return 1;
	name = snap_str(r->s, r->s->frames[f].name);
	return strncmp(name, "at::", 4) == 0 || strncmp(name, "c10::", 5) == 0;
}

static int
is_allocator(const struct rules *r, uint32_t f)
{
	if (f >= r->s->n_frames)
		return 1;
	return strstr(snap_str(r->s, r->s->frames[f].name), "Allocator") !=
	    NULL;
}

static void
site_set(struct an_stack_site *o, int kind, const uint32_t *fr, uint32_t pos,
    uint32_t aux_pos)
{
	o->kind = kind;
	o->frame = fr[pos];
	o->pos = pos;
	o->aux = aux_pos == UINT32_MAX ? UINT32_MAX : fr[aux_pos];
	o->aux_pos = aux_pos;
}

/* A stack with no user frame (see site.h). */
static void
site_no_user(const struct rules *r, const uint32_t *fr, uint32_t n,
    struct an_stack_site *o)
{
	uint32_t i, node = UINT32_MAX, op = UINT32_MAX, last_op = UINT32_MAX;

	for (i = 0; i < n; i++)
		if (is_python(r, fr[i]) &&
		    kind_of(r, fr[i]) != AN_FRAME_FILTERED) {
			site_set(o, AN_SITE_PYTHON, fr, i, UINT32_MAX);
			return;
		}
	for (i = 0; i < n; i++) {
		int role = role_of(r, fr[i]);

		if (role == AN_CPP_WORKSPACE) {
			site_set(o, AN_SITE_CPP, fr, i, UINT32_MAX);
			return;
		}
		if (role == AN_CPP_NODE && node == UINT32_MAX)
			node = i;
		if (role == AN_CPP_OP) {
			if (node == UINT32_MAX)
				op = i; /* the outermost below the node */
			last_op = i;
		}
	}
	if (node != UINT32_MAX) {
		site_set(o, AN_SITE_CPP, fr, node, op);
		return;
	}
	if (last_op != UINT32_MAX) {
		for (i = last_op + 1; i < n; i++)
			if (role_of(r, fr[i]) == AN_CPP_NAMED &&
			    !is_internal(r, fr[i]))
				break;
		if (i < n)
			site_set(o, AN_SITE_CPP, fr, i, last_op);
		else
			site_set(o, AN_SITE_CPP, fr, last_op, UINT32_MAX);
		return;
	}
	for (i = 0; i < n; i++)
		if (role_of(r, fr[i]) == AN_CPP_NAMED) {
			site_set(o, AN_SITE_CPP, fr, i, UINT32_MAX);
			return;
		}
	for (i = 0; i < n; i++)
		if (kind_of(r, fr[i]) != AN_FRAME_FILTERED &&
		    !is_allocator(r, fr[i]))
			break;
	site_set(o, AN_SITE_FRAME, fr, i < n ? i : 0, UINT32_MAX);
}

static void
stack_site(const struct rules *r, const uint32_t *fr, uint32_t n,
    struct an_stack_site *o)
{
	uint32_t i;

	memset(o, 0, sizeof *o);
	o->frame = o->aux = o->pos = o->aux_pos = UINT32_MAX;
	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		if (kind_of(r, fr[i]) == AN_FRAME_USER) {
			site_set(o, AN_SITE_USER, fr, i, UINT32_MAX);
			return;
		}
	site_no_user(r, fr, n, o);
}

void
an_stack_site(const struct snapshot *s, uint32_t stack,
    struct an_stack_site *out)
{
	struct rules r = {s, NULL};
	const uint32_t *fr;
	uint32_t n = 0;

	fr = stack < s->n_stacks ? snap_stack(s, stack, &n) : NULL;
	stack_site(&r, fr, n, out);
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
	t->aux = xmalloc(t->cap * sizeof *t->aux);
	an_frame_cache_init(&t->fc, s);
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
	free(t->aux);
	an_frame_cache_destroy(&t->fc);
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
	/* cut, if it must be, at a character */
	if (fr->line == UINT64_MAX)
		return sv_utf8_mend(buf, size, snprintf(buf, size, "%s:? %s",
		    snap_str(s, fr->filename), snap_str(s, fr->name)));
	return sv_utf8_mend(buf, size, snprintf(buf, size, "%s:%" PRIu64
	    " %s", snap_str(s, fr->filename), fr->line,
	    snap_str(s, fr->name)));
}

static int
frame_matches(struct an_sites *t, uint32_t f)
{
	char buf[4096];

	an_frame_label(t->s, f, buf, sizeof buf);
	return regexec(&t->re, buf, 0, NULL, 0) == 0;
}

/* The site path of a stack (site frame, then its user callers up to
 * max), with its kind and C++ operator frame. */
static uint32_t
resolve_path(struct an_sites *t, uint32_t stack, uint32_t *out, uint32_t max,
    int *kind, uint32_t *aux)
{
	struct rules r = {t->s, &t->fc};
	struct an_stack_site ss;
	const uint32_t *fr;
	uint32_t n, i, start = UINT32_MAX, m = 0;

	*kind = AN_SITE_NONE;
	*aux = UINT32_MAX;
	if (max == 0 || stack >= t->s->n_stacks)
		return 0;
	fr = snap_stack(t->s, stack, &n);
	if (n == 0)
		return 0;
	if (t->has_re)
		for (i = 0; i < n && start == UINT32_MAX; i++)
			if (frame_matches(t, fr[i]))
				start = i;
	if (start == UINT32_MAX) {
		stack_site(&r, fr, n, &ss);
		*kind = ss.kind;
		*aux = ss.aux;
		out[0] = ss.frame;
		if (ss.kind != AN_SITE_USER)
			return 1;
		start = ss.pos;
	} else {
		*kind = kind_of(&r, fr[start]) == AN_FRAME_USER ? AN_SITE_USER
		    : AN_SITE_FRAME;
	}
	out[m++] = fr[start];
	for (i = start + 1; i < n && m < max; i++)
		if (kind_of(&r, fr[i]) == AN_FRAME_USER)
			out[m++] = fr[i];
	return m;
}

uint32_t
an_site_path(struct an_sites *t, uint32_t stack, uint32_t *out, uint32_t max)
{
	uint32_t aux;
	int kind;

	return resolve_path(t, stack, out, max, &kind, &aux);
}

static uint64_t
path_hash(const uint32_t *p, uint32_t n, int kind, uint32_t aux)
{
	uint64_t h = (1469598103934665603ull ^ n ^ ((uint64_t)kind << 40)) +
	    aux;
	uint32_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	return h;
}

static uint32_t
intern_path(struct an_sites *t, const uint32_t *p, uint32_t n, int kind,
    uint32_t aux)
{
	uint64_t h = path_hash(p, n, kind, aux), v;
	uint32_t id;

	for (;; h++) {
		uint32_t m;

		if (!u64map_get(&t->ids, h, &v))
			break;
		m = t->off[v + 1] - t->off[v];
		if (m == n && t->user[v] == kind && t->aux[v] == aux &&
		    memcmp(t->frames + t->off[v], p, n * sizeof *p) == 0)
			return (uint32_t)v;
	}
	if (t->n == t->cap) {
		t->cap *= 2;
		t->off = xreallocarray(t->off, t->cap + 1, sizeof *t->off);
		t->user = xreallocarray(t->user, t->cap, sizeof *t->user);
		t->aux = xreallocarray(t->aux, t->cap, sizeof *t->aux);
	}
	while (t->off[t->n] + n > t->cap_frames) {
		t->cap_frames *= 2;
		t->frames = xreallocarray(t->frames, t->cap_frames,
		    sizeof *t->frames);
	}
	id = t->n++;
	memcpy(t->frames + t->off[id], p, n * sizeof *p);
	t->off[id + 1] = t->off[id] + n;
	t->user[id] = (uint8_t)kind;
	t->aux[id] = aux;
	u64map_put(&t->ids, h, id);
	return id;
}

uint32_t
an_site_of(struct an_sites *t, uint32_t stack)
{
	uint32_t path[AN_SITE_MAX_FRAMES], n, id, aux;
	int kind;

	if (stack >= t->s->n_stacks)
		stack = 0;
	if (t->by_stack[stack] != 0)
		return t->by_stack[stack] - 1;
	n = resolve_path(t, stack, path, t->k, &kind, &aux);
	id = intern_path(t, path, n, kind, aux);
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
	return site < t->n && t->user[site] == AN_SITE_USER;
}

int
an_site_kind(const struct an_sites *t, uint32_t site)
{
	return site < t->n ? t->user[site] : AN_SITE_NONE;
}

const char *
an_site_kind_name(int kind)
{
	switch (kind) {
	case AN_SITE_USER: return "user";
	case AN_SITE_PYTHON: return "framework";
	case AN_SITE_CPP: return "cpp";
	case AN_SITE_FRAME: return "frame";
	default: return "none";
	}
}

/* "Node -> at::op", "getNewWorkspace", "Class::function -> at::op". */
static char *
cpp_label(const struct snapshot *s, uint32_t f, uint32_t aux, char *buf,
    size_t size)
{
	char a[256], b[256];
	const char *name;

	if (f >= s->n_frames) {
		snprintf(buf, size, "??");
		return buf;
	}
	name = snap_str(s, s->frames[f].name);
	switch (an_cpp_role(name)) {
	case AN_CPP_NODE:
		an_cpp_node_name(name, a, sizeof a);
		break;
	case AN_CPP_OP:
		an_cpp_op_name(name, a, sizeof a);
		break;
	case AN_CPP_WORKSPACE: {
		const char *p;

		an_cpp_short_name(name, b, sizeof b);
		p = strrchr(b, ':');
		snprintf(a, sizeof a, "%s", p != NULL ? p + 1 : b);
		break;
	}
	default:
		an_cpp_short_name(name, a, sizeof a);
	}
	if (aux >= s->n_frames)
		return sv_utf8_mend(buf, size, snprintf(buf, size, "%s", a));
	an_cpp_op_name(snap_str(s, s->frames[aux].name), b, sizeof b);
	return sv_utf8_mend(buf, size, snprintf(buf, size, "%s -> %s", a, b));
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
	if (t->user[site] == AN_SITE_CPP)
		return cpp_label(t->s, f[0], t->aux[site], buf, size);
	return an_frame_label(t->s, f[0], buf, size);
}
