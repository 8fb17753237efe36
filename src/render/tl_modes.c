/*
 * The timeline's stacking modes: the table of tl_modes.h with the
 * builders of the grouped modes (the group of an element by call site,
 * category or stream/pool, and its label), and building each mode's
 * data the first time it is shown (tl_model_prepare), or on another
 * thread (struct tl_prep). See timeline.h.
 */
#include "config.h"

#include "render/tl_modes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/fmt.h"
#include "render/timeline.h"
#include "render/tl_int.h"
#include "render/tl_sample.h"
#include "util/sat.h"
#include "util/stop.h"
#include "util/xalloc.h"

#define TL_MAX_STREAM_GROUPS 4096

/* ---- the groupers -------------------------------------------------------- */

/*
 * A grouped mode's builder (its row in TL_STACK_INFO names it): setup
 * readies the model it is given (the viewer's, or a struct tl_prep's
 * copy on another thread) for group_of and says how many group ids
 * there are, or why the mode has no data; group_of gives an element's
 * group (its ctx is that model); text writes a group's label (brief:
 * the short form for a narrow legend), or returns -1 for a group it
 * does not know; prefix says what comes before the label and is kept
 * whole when the label is cut ("freed at "); adopt (NULL: nothing)
 * moves what setup made from a struct tl_prep's copy into the model
 * that adopts the mode. pass: the
 * mode is built in one pass over the trace with the other modes that
 * set it (tl_stack_pass_mates). derive (NULL: none) makes the mode's
 * groups from those of mode from, built before in the same model, in
 * no pass over the trace (after setup); it returns -1 when it cannot,
 * and the mode then has a pass of its own.
 */
struct tl_grouper {
	int (*setup)(struct tl_model *m, uint32_t *max_groups, char *why,
	    size_t size);
	tl_group_fn group_of;
	int (*text)(const struct tl_model *m, uint32_t g, int brief,
	    char *buf, size_t size);
	/* what goes before the label of group g ("freed at "), kept when
	 * the label is cut; NULL: nothing */
	const char *(*prefix)(const struct tl_model *m, uint32_t g);
	void (*adopt)(struct tl_model *m, struct tl_model *w);
	int pass;
	int (*derive)(struct tl_model *m);
	int from;
};

/* -- by call site -- */

/*
 * Group ids of the call-site mode, with n sites (every stack resolved at
 * set-up, so n does not change):
 *   [0, n)        the site of the allocation;
 *   [n, 2n)       blocks allocated before the trace and freed in it,
 *                 whose only stack is their free's: "freed at" the site;
 *   2n + j        (j < TL_PRE_SPLIT) the j-th largest block alive since
 *                 before the trace with no stack, when such blocks hold
 *                 at least half of the peak (weights loaded before
 *                 recording: one "<no stack>" band would cover most of
 *                 the plot);
 *   2n + TL_PRE_SPLIT + j (j < TL_PRE_SIZES) the others of one size,
 *                 the sizes that hold the most bytes (a model's layers
 *                 have weights of a few shapes: "72 blocks of 16.0M"),
 *                 and 2n + TL_PRE_SPLIT + TL_PRE_SIZES the rest.
 */
static int
pre_nostack(struct tl_model *m, const struct idx_elem *e)
{
	return e->alloc_ev < 0 && an_site_kind(&m->sites,
	    an_site_of(&m->sites, e->stack)) == AN_SITE_NONE;
}

static int
cmp_u64(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	return *a < *b ? -1 : *a > *b;
}

static int
split_block(const struct tl_model *m, uint64_t k)
{
	uint32_t j;

	for (j = 0; j < m->n_pre_split; j++)
		if (m->pre_split[j] == k)
			return 1;
	return 0;
}

/* The sizes the other blocks alive since before the trace with no stack
 * share that hold the most bytes (TL_PRE_SIZES at most, two blocks each
 * at least), largest bytes first. */
static void
size_classes(struct tl_model *m)
{
	const struct idx_timeline *tl = m->tl;
	uint64_t k, *sz, n = 0, i, run, bytes[TL_PRE_SIZES];
	struct idx_elem e;
	uint32_t j, c = 0;

	m->n_pre_size = 0;
	sz = xcalloc(tl->n_ghost + 1, sizeof *sz);
	for (k = tl->n_elems - (tl->n_ghost < tl->n_elems ? tl->n_ghost :
	    tl->n_elems); k < tl->n_elems; k++) {
		e = idx_tl_elem(tl, k);
		if (pre_nostack(m, &e) && !split_block(m, k))
			sz[n++] = e.size;
	}
	qsort(sz, n, sizeof *sz, cmp_u64);
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && sz[i + run] == sz[i]; run++)
			;
		if (run < 2)
			continue;
		/* kept by bytes, largest first */
		for (j = c; j > 0 && bytes[j - 1] < run * sz[i]; j--)
			if (j < TL_PRE_SIZES) {
				bytes[j] = bytes[j - 1];
				m->pre_size[j] = m->pre_size[j - 1];
				m->pre_size_n[j] = m->pre_size_n[j - 1];
			}
		if (j < TL_PRE_SIZES) {
			bytes[j] = run * sz[i];
			m->pre_size[j] = sz[i];
			m->pre_size_n[j] = run;
			if (c < TL_PRE_SIZES)
				c++;
		}
	}
	m->n_pre_size = c;
	free(sz);
}

/* The largest blocks alive since before the trace with no stack (the
 * final segments' blocks never seen in the trace, at the end of the
 * element order), when they hold half of the peak or more. */
static void
split_pre(struct tl_model *m)
{
	const struct idx_timeline *tl = m->tl;
	struct idx_elem e;
	uint64_t k, sum = 0, sz[TL_PRE_SPLIT];
	uint32_t n = 0, j;

	m->n_pre_split = 0;
	for (k = tl->n_elems - (tl->n_ghost < tl->n_elems ? tl->n_ghost :
	    tl->n_elems); k < tl->n_elems; k++) {
		e = idx_tl_elem(tl, k);
		if (!pre_nostack(m, &e))
			continue;
		sum += e.size;
		/* kept largest first (ties: the first element) */
		for (j = n; j > 0 && sz[j - 1] < e.size; j--)
			if (j < TL_PRE_SPLIT) {
				sz[j] = sz[j - 1];
				m->pre_split[j] = m->pre_split[j - 1];
			}
		if (j < TL_PRE_SPLIT) {
			sz[j] = e.size;
			m->pre_split[j] = k;
			if (n < TL_PRE_SPLIT)
				n++;
		}
	}
	if (n > 0 && sum >= tl->peak - tl->peak / 2) {
		m->n_pre_split = n;
		size_classes(m);
	}
}

static int
site_setup(struct tl_model *m, uint32_t *max_groups, char *why, size_t size)
{
	uint32_t i;

	if (tl_model_sites(m) == NULL) {
		snprintf(why, size, "call sites unavailable");
		return -1;
	}
	/* resolve every stack first: site ids are then all known */
	for (i = 0; i < m->snap->n_stacks; i++)
		an_site_of(&m->sites, i);
	split_pre(m);
	*max_groups = 2 * m->sites.n + TL_PRE_SPLIT + TL_PRE_SIZES + 1;
	return 0;
}

static uint32_t
site_group(void *ctx, const struct idx_elem *e, uint64_t k)
{
	struct tl_model *m = ctx;
	uint32_t site = an_site_of(&m->sites, e->stack), n = m->sites.n, j;

	if (e->alloc_ev >= 0)
		return site;
	if (an_site_kind(&m->sites, site) != AN_SITE_NONE)
		return e->flags & IDX_ELEM_PRE ? n + site : site;
	if (m->n_pre_split == 0)
		return site;
	for (j = 0; j < m->n_pre_split; j++)
		if (m->pre_split[j] == k)
			return 2 * n + j;
	for (j = 0; j < m->n_pre_size; j++)
		if (m->pre_size[j] == e->size)
			return 2 * n + TL_PRE_SPLIT + j;
	return 2 * n + TL_PRE_SPLIT + TL_PRE_SIZES;
}

/* "file.py:73 step" for a site: the file's last component, the line
 * when there is one, the function without namespaces or arguments. */
static void
short_site(const struct an_sites *t, uint32_t site, char *buf, size_t size)
{
	const struct snap_frame *f;
	const uint32_t *fr;
	const char *file, *name, *p, *paren, *end;
	uint32_t n;
	int nl;

	fr = an_site_frames(t, site, &n);
	if (n == 0 || fr[0] >= t->s->n_frames || an_site_kind(t, site) ==
	    AN_SITE_CPP) {
		/* "<no stack>", or a C++ site named by its role */
		an_site_label(t, site, buf, size);
		return;
	}
	f = &t->s->frames[fr[0]];
	file = snap_str(t->s, f->filename);
	name = snap_str(t->s, f->name);
	if ((p = strrchr(file, '/')) != NULL || (p = strrchr(file, '\\')))
		file = p + 1;
	paren = strchr(name, '(');
	end = paren != NULL ? paren : name + strlen(name);
	for (p = name; p + 1 < end; p++)
		if (p[0] == ':' && p[1] == ':')
			name = p + 2;
	nl = (int)(end - name);
	if (f->line > 0 && f->line != UINT64_MAX)
		snprintf(buf, size, "%s:%" PRIu64 " %.*s", file, f->line, nl,
		    name);
	else
		snprintf(buf, size, "%s %.*s", file, nl, name);
}

static int
site_text(const struct tl_model *m, uint32_t g, int brief, char *buf,
    size_t size)
{
	struct idx_elem e;
	char sz[FMT_BUF], ad[FMT_BUF];
	uint32_t n = m->sites.n;

	if (m->sites_ok <= 0)
		return -1;
	if (g >= n && g < 2 * n)
		g -= n; /* "freed at": tl_group_prefix */
	else if (g >= 2 * n && g < 2 * n + m->n_pre_split) {
		e = idx_tl_elem(m->tl, m->pre_split[g - 2 * n]);
		fmt_addr(ad, sizeof ad, e.addr);
		if (brief)
			snprintf(buf, size, "block %s", ad);
		else
			snprintf(buf, size, "%s block %s, before the trace",
			    fmt_size_short(sz, sizeof sz, e.size), ad);
		return 0;
	} else if (g >= 2 * n + TL_PRE_SPLIT && g < 2 * n + TL_PRE_SPLIT +
	    m->n_pre_size) {
		g -= 2 * n + TL_PRE_SPLIT;
		fmt_size_short(sz, sizeof sz, m->pre_size[g]);
		snprintf(buf, size, brief ? "%" PRIu64 " x %s before trace" :
		    "%" PRIu64 " blocks of %s, before the trace",
		    m->pre_size_n[g], sz);
		return 0;
	} else if (g == 2 * n + TL_PRE_SPLIT + TL_PRE_SIZES) {
		snprintf(buf, size, "%s", brief ? "before the trace" :
		    "other blocks from before the trace (no stack)");
		return 0;
	} else if (g >= n)
		return -1;
	if (brief)
		short_site(&m->sites, g, buf, size);
	else
		an_site_label(&m->sites, g, buf, size);
	return 0;
}

static const char *
site_prefix(const struct tl_model *m, uint32_t g)
{
	return m->sites_ok > 0 && g >= m->sites.n && g < 2 * m->sites.n ?
	    "freed at " : "";
}

/* The site ids of the bands are the building model's table's, and so
 * are the blocks split off before the trace. */
static void
site_adopt(struct tl_model *m, struct tl_model *w)
{
	if (m->sites_ok > 0)
		an_sites_destroy(&m->sites);
	m->sites = w->sites;
	m->sites_ok = w->sites_ok;
	w->sites_ok = 0;
	memcpy(m->pre_split, w->pre_split, sizeof m->pre_split);
	m->n_pre_split = w->n_pre_split;
	memcpy(m->pre_size, w->pre_size, sizeof m->pre_size);
	memcpy(m->pre_size_n, w->pre_size_n, sizeof m->pre_size_n);
	m->n_pre_size = w->n_pre_size;
}

static const struct tl_grouper group_by_site = {site_setup, site_group,
    site_text, site_prefix, site_adopt, 1, NULL, 0};

/* -- by category -- */

static int
category_setup(struct tl_model *m, uint32_t *max_groups, char *why,
    size_t size)
{
	if (m->cats == NULL) {
		snprintf(why, size, "no categories");
		return -1;
	}
	*max_groups = AN_CAT_COUNT;
	return 0;
}

static uint32_t
category_group(void *ctx, const struct idx_elem *e, uint64_t k)
{
	const struct tl_model *m = ctx;

	/* the pass over the elements goes in their order, as the table's
	 * own would */
	if (m->cats_fill != NULL)
		return an_category_classify(m->cats_fill, k, e);
	return an_category_of(m->cats, k);
}

static int
category_text(const struct tl_model *m, uint32_t g, int brief, char *buf,
    size_t size)
{
	(void)m;
	(void)brief;
	if (g >= AN_CAT_COUNT)
		return -1;
	snprintf(buf, size, "%s", an_category_label(g));
	return 0;
}

/* sampled (tl_sample.h) while the table is built: by its probe */
static int
category_sample_setup(struct tl_model *m, uint32_t *max_groups, char *why,
    size_t size)
{
	if (m->cat_probe == NULL) {
		snprintf(why, size, "no categories yet");
		return -1;
	}
	*max_groups = AN_CAT_COUNT;
	return 0;
}

static uint32_t
category_sample_group(void *ctx, const struct idx_elem *e, uint64_t k)
{
	struct tl_model *m = ctx;

	(void)k;
	return an_cat_probe_classify(m->cat_probe, e);
}

/* the categories are an analysis of their own: built after it, alone */
static const struct tl_grouper group_by_category = {category_setup,
    category_group, category_text, NULL, NULL, 0, NULL, 0};

/* -- by stream and pool -- */

/* The device's final segments by address, for the pool of an element
 * (memory_viz resolves pools the same way; an element whose segment was
 * freed during the trace gets the default pool (0, 0)). Sorted as pairs,
 * with no state outside: models are prepared on more than one thread. */
struct seg_key {
	uint64_t addr;
	uint32_t g;
};

static int
cmp_seg(const void *a, const void *b)
{
	const struct seg_key *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->g < y->g ? -1 : x->g > y->g;
}

static void
build_seg_table(struct tl_model *m)
{
	struct seg_key *k;
	uint32_t g, gend, n = 0, i;

	snap_device_segments(m->snap, m->tl->device, &g, &gend);
	k = xcalloc((size_t)(gend > g ? gend - g : 0) + 1, sizeof *k);
	for (; g < gend && g < m->snap->n_segments; g++)
		if (m->snap->segments[g].device == m->tl->device) {
			k[n].addr = m->snap->segments[g].addr;
			k[n++].g = g;
		}
	qsort(k, n, sizeof *k, cmp_seg);
	free(m->seg_by_addr);
	m->seg_by_addr = xcalloc((size_t)n + 1, sizeof *m->seg_by_addr);
	for (i = 0; i < n; i++) {
		const struct snap_segment *sg = &m->snap->segments[k[i].g];
		struct tl_seg_span *t = &m->seg_by_addr[i];

		t->addr = sg->addr;
		t->size = sg->total_size;
		t->pool[0] = sg->pool_id[0];
		t->pool[1] = sg->pool_id[1];
	}
	m->n_seg_by_addr = n;
	free(k);
}

/* The pool of the final segment holding addr, (0, 0) when none does. */
static void
pool_of(const struct tl_model *m, uint64_t addr, int64_t pool[2])
{
	const struct tl_seg_span *sg;
	uint32_t lo = 0, hi = m->n_seg_by_addr;

	pool[0] = pool[1] = 0;
	/* the last segment starting at or below addr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->seg_by_addr[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return;
	sg = &m->seg_by_addr[lo - 1];
	if (addr - sg->addr < sg->size) {
		pool[0] = sg->pool[0];
		pool[1] = sg->pool[1];
	}
}

/* A pool found for an address, kept in a table of TL_SEG_MEMO of them
 * by a hash of the address. */
#define TL_SEG_MEMO_BITS 12
#define TL_SEG_MEMO (1u << TL_SEG_MEMO_BITS)
struct tl_seg_memo {
	uint64_t addr;
	int64_t pool[2];
	uint64_t used;
};

/* pool_of() through a table of its last answers by address (the model's
 * own: a building model's, or the loop's): a trace allocates at the
 * same addresses over and over, a few thousand of them live at a time,
 * so a pass over its elements finds most answers there instead of
 * searching the segments again. */
static void
pool_of_memo(struct tl_model *m, uint64_t addr, int64_t pool[2])
{
	struct tl_seg_memo *e;

	if (m->seg_memo == NULL)
		m->seg_memo = xcalloc(TL_SEG_MEMO, sizeof *m->seg_memo);
	/* blocks start on 512-byte boundaries: the bits above them */
	e = &m->seg_memo[(addr >> 9) * 0x9e3779b97f4a7c15ull >>
	    (64 - TL_SEG_MEMO_BITS)];
	if (e->used && e->addr == addr) {
		pool[0] = e->pool[0];
		pool[1] = e->pool[1];
		return;
	}
	pool_of(m, addr, pool);
	e->used = 1;
	e->addr = addr;
	e->pool[0] = pool[0];
	e->pool[1] = pool[1];
}

/* The index of key (stream, pool) among the n keys k, or TL_NO_GROUP:
 * the stream/pool mode's keys and the pool mode's. */
static uint32_t
key_find(const struct tl_stream_key *k, uint32_t n, uint64_t stream,
    const int64_t pool[2])
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (k[i].stream == stream && k[i].pool[0] == pool[0] &&
		    k[i].pool[1] == pool[1])
			return i;
	return TL_NO_GROUP;
}

/* Group of (stream, pool); past TL_MAX_STREAM_GROUPS distinct keys the
 * rest share the last group. */
static uint32_t
stream_key_group(struct tl_model *m, uint64_t stream, const int64_t pool[2])
{
	uint32_t i = key_find(m->skeys, m->n_skeys, stream, pool);

	if (i != TL_NO_GROUP)
		return i;
	if (m->n_skeys == TL_MAX_STREAM_GROUPS)
		return TL_MAX_STREAM_GROUPS - 1;
	m->skeys = xreallocarray(m->skeys, (size_t)m->n_skeys + 1,
	    sizeof *m->skeys);
	m->skeys[m->n_skeys].stream = stream;
	m->skeys[m->n_skeys].pool[0] = pool[0];
	m->skeys[m->n_skeys].pool[1] = pool[1];
	return m->n_skeys++;
}

static int
stream_setup(struct tl_model *m, uint32_t *max_groups, char *why,
    size_t size)
{
	if (m->snap == NULL) {
		snprintf(why, size, "no segments");
		return -1;
	}
	build_seg_table(m);
	*max_groups = TL_MAX_STREAM_GROUPS;
	return 0;
}

/* The pool of element e: the one its event names (2.14), else the final
 * segment's at its address. */
static void
elem_pool(struct tl_model *m, const struct idx_elem *e, int64_t pool[2])
{
	int64_t ev = e->alloc_ev >= 0 ? e->alloc_ev : e->free_ev;

	if (m->trace == NULL || ev < 0 || (uint64_t)ev >= m->trace->n ||
	    !snap_ev_pool(m->snap, m->trace, (uint64_t)ev, pool))
		pool_of_memo(m, e->addr, pool);
}

static uint32_t
stream_group(void *ctx, const struct idx_elem *e, uint64_t k)
{
	struct tl_model *m = ctx;
	int64_t pool[2];

	(void)k;
	elem_pool(m, e, pool);
	return stream_key_group(m, e->stream, pool);
}

static int
stream_text(const struct tl_model *m, uint32_t g, int brief, char *buf,
    size_t size)
{
	const struct tl_stream_key *k;

	(void)brief;
	if (g >= m->n_skeys)
		return -1;
	k = &m->skeys[g];
	if (k->pool[0] != 0 || k->pool[1] != 0)
		snprintf(buf, size, "stream %" PRIu64 " pool (%" PRId64 ",%"
		    PRId64 ")", k->stream, k->pool[0], k->pool[1]);
	else
		snprintf(buf, size, "stream %" PRIu64, k->stream);
	return 0;
}

/* The segments by address are the same whichever model built them: the
 * pool mode's adoption may have taken w's already. */
static void
adopt_segs(struct tl_model *m, struct tl_model *w)
{
	if (w->seg_by_addr == NULL)
		return;
	free(m->seg_by_addr);
	m->seg_by_addr = w->seg_by_addr;
	m->n_seg_by_addr = w->n_seg_by_addr;
	w->seg_by_addr = NULL;
}

/* The group keys and the segments by address are the building model's. */
static void
stream_adopt(struct tl_model *m, struct tl_model *w)
{
	free(m->skeys);
	m->skeys = w->skeys;
	m->n_skeys = w->n_skeys;
	w->skeys = NULL;
	adopt_segs(m, w);
}

static const struct tl_grouper group_by_stream = {stream_setup,
    stream_group, stream_text, NULL, stream_adopt, 1, NULL, 0};

/* -- by pool: (pool, stream) envelopes of reserved memory -- */

/* The pool mode's group of (stream, pool), its keys its own (the final
 * segments' first: pool_setup); past TL_MAX_STREAM_GROUPS keys the
 * rest share the last group. */
static uint32_t
pool_key_group(struct tl_model *m, uint64_t stream, const int64_t pool[2])
{
	uint32_t i = key_find(m->pkeys, m->n_pkeys, stream, pool);

	if (i != TL_NO_GROUP)
		return i;
	if (m->n_pkeys == TL_MAX_STREAM_GROUPS)
		return TL_MAX_STREAM_GROUPS - 1;
	m->pkeys = xreallocarray(m->pkeys, (size_t)m->n_pkeys + 1,
	    sizeof *m->pkeys);
	m->penv = xreallocarray(m->penv, (size_t)m->n_pkeys + 1,
	    sizeof *m->penv);
	memset(&m->penv[m->n_pkeys], 0, sizeof m->penv[0]);
	m->pkeys[m->n_pkeys].stream = stream;
	m->pkeys[m->n_pkeys].pool[0] = pool[0];
	m->pkeys[m->n_pkeys].pool[1] = pool[1];
	return m->n_pkeys++;
}

/* Frees the pool mode's keys and envelopes (tl_model_destroy does the
 * same). */
static void
tl_pool_envs_free(struct tl_model *m)
{
	uint32_t i;

	for (i = 0; i < m->n_pkeys && m->penv != NULL; i++) {
		free(m->penv[i].ev);
		free(m->penv[i].res);
	}
	free(m->penv);
	free(m->pkeys);
	m->penv = NULL;
	m->pkeys = NULL;
	m->n_pkeys = 0;
}

static void
env_push(struct tl_pool_env *e, int64_t ev, uint64_t res)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 8;
		e->ev = xreallocarray(e->ev, e->cap, sizeof *e->ev);
		e->res = xreallocarray(e->res, e->cap, sizeof *e->res);
	}
	e->ev[e->n] = ev;
	e->res[e->n++] = res;
}

/* A segment event of the trace: its group and its signed change. */
struct seg_ev {
	int64_t ev;
	uint32_t g;
	int grows;
	uint64_t size;
};

/* Reserved bytes per group: from the final segments back over the
 * trace's segment events to the base, then forward again as changes.
 * A group whose events would take it below 0 (a pool the events do not
 * name, guessed wrong) starts at 0. The segment events are the model's
 * list (tl_model.seg_evs), a few thousand where the trace has millions
 * of events; a pass over them, which gives up when asked
 * (util/stop.h). */
static int
pool_setup(struct tl_model *m, uint32_t *max_groups, char *why, size_t size)
{
	const struct snap_trace *t = m->trace;
	struct seg_ev *sev;
	size_t nsev = 0, j;
	uint32_t g, gend, k;
	uint64_t i, *now, *down, *up;
	int64_t pool[2];

	if (m->snap == NULL) {
		snprintf(why, size, "no segments");
		return -1;
	}
	build_seg_table(m);
	tl_pool_envs_free(m);
	snap_device_segments(m->snap, m->tl->device, &g, &gend);
	for (; g < gend && g < m->snap->n_segments; g++)
		if (m->snap->segments[g].device == m->tl->device)
			pool_key_group(m, m->snap->segments[g].stream,
			    m->snap->segments[g].pool_id);
	/* the segment events the model's pass over the events found (it
	 * lists nothing else) */
	sev = xcalloc((size_t)m->n_seg_evs + 1, sizeof *sev);
	for (j = 0; t != NULL && j < m->n_seg_evs; j++) {
		unsigned a;

		if (sv_stop_poll(j)) {
			free(sev);
			snprintf(why, size, "stopped");
			return -1;
		}
		if ((i = (uint64_t)m->seg_evs[j]) >= t->n)
			continue;
		a = snap_ev_action(t, i);
		if (!snap_ev_pool(m->snap, t, i, pool))
			pool_of(m, snap_ev_addr(t, i), pool);
		sev[nsev].ev = (int64_t)i;
		sev[nsev].g = pool_key_group(m, snap_ev_stream(t, i), pool);
		sev[nsev].grows = a == SNAP_SEGMENT_ALLOC ||
		    a == SNAP_SEGMENT_MAP;
		sev[nsev++].size = snap_ev_size(t, i);
	}
	now = xcalloc((size_t)m->n_pkeys + 1, sizeof *now);
	down = xcalloc((size_t)m->n_pkeys + 1, sizeof *down);
	up = xcalloc((size_t)m->n_pkeys + 1, sizeof *up);
	snap_device_segments(m->snap, m->tl->device, &g, &gend);
	for (; g < gend && g < m->snap->n_segments; g++)
		if (m->snap->segments[g].device == m->tl->device) {
			k = pool_key_group(m, m->snap->segments[g].stream,
			    m->snap->segments[g].pool_id);
			now[k] = sv_sat_add(now[k],
			    m->snap->segments[g].total_size);
		}
	/* the trace's net change per group: base = now - up + down */
	for (j = 0; j < nsev; j++) {
		uint64_t *x = sev[j].grows ? up : down;

		x[sev[j].g] = sv_sat_add(x[sev[j].g], sev[j].size);
	}
	for (k = 0; k < m->n_pkeys; k++) {
		uint64_t b = sv_sat_add(now[k], down[k]);

		m->penv[k].base = b > up[k] ? b - up[k] : 0;
		now[k] = m->penv[k].base;
	}
	for (j = 0; j < nsev; j++) {
		k = sev[j].g;
		if (sev[j].grows)
			now[k] = sv_sat_add(now[k], sev[j].size);
		else
			now[k] = now[k] > sev[j].size ? now[k] - sev[j].size :
			    0;
		env_push(&m->penv[k], sev[j].ev, now[k]);
	}
	free(sev);
	free(now);
	free(down);
	free(up);
	*max_groups = TL_MAX_STREAM_GROUPS;
	return 0;
}

static uint32_t
pool_group(void *ctx, const struct idx_elem *e, uint64_t k)
{
	struct tl_model *m = ctx;
	int64_t pool[2];

	(void)k;
	elem_pool(m, e, pool);
	return pool_key_group(m, e->stream, pool);
}

uint64_t
tl_pool_reserved(const struct tl_model *m, uint32_t g, int64_t ev)
{
	const struct tl_pool_env *e;
	uint64_t lo = 0, hi;

	if (g >= m->n_pkeys || m->penv == NULL)
		return 0;
	e = &m->penv[g];
	/* the last change at or before ev */
	hi = e->n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (e->ev[mid] <= ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? e->base : e->res[lo - 1];
}

static int
pool_text(const struct tl_model *m, uint32_t g, int brief, char *buf,
    size_t size)
{
	const struct tl_stream_key *k;

	if (g >= m->n_pkeys)
		return -1;
	k = &m->pkeys[g];
	if (k->pool[0] == 0 && k->pool[1] == 0)
		snprintf(buf, size, brief ? "default s%" PRIu64 :
		    "default pool, stream %" PRIu64, k->stream);
	else
		snprintf(buf, size, brief ? "(%" PRId64 ",%" PRId64 ") s%"
		    PRIu64 : "pool (%" PRId64 ",%" PRId64 "), stream %"
		    PRIu64, k->pool[0], k->pool[1], k->stream);
	return 0;
}

/* The keys, the envelopes and the segments by address are the building
 * model's. */
static void
pool_adopt(struct tl_model *m, struct tl_model *w)
{
	tl_pool_envs_free(m);
	m->pkeys = w->pkeys;
	m->penv = w->penv;
	m->n_pkeys = w->n_pkeys;
	w->pkeys = NULL;
	w->penv = NULL;
	w->n_pkeys = 0;
	adopt_segs(m, w);
}

/* The pool mode's bytes per group are the stream/pool mode's, under
 * the pool mode's ids: both group the elements by (stream, pool), each
 * element's key found the same way (elem_pool), and the pool mode's
 * keys are those of the final segments (pool_setup), then the others
 * in the order the elements name them, the order the stream/pool
 * mode's keys have. So its curves are the stream/pool mode's, borrowed
 * (tl_groups_remap), not a second pass over the trace. Not when either
 * mode ran out of ids (a group would hold several keys). tl_pool_derive
 * = 0 turns it off, for the tests, which compare the two. */
int tl_pool_derive = 1;

static int
pool_derive(struct tl_model *m)
{
	const struct tl_groups *s = &m->groups[TL_STACK_STREAM];
	uint32_t *map, i, n0 = m->n_pkeys;
	int r = -1;

	if (!tl_pool_derive || s->n != m->n_skeys ||
	    m->n_skeys >= TL_MAX_STREAM_GROUPS)
		return -1;
	map = xcalloc((size_t)m->n_skeys + 1, sizeof *map);
	for (i = 0; i < m->n_skeys; i++) {
		const struct tl_stream_key *k = &m->skeys[i];

		/* a new key with no id left would share the last group */
		if (m->n_pkeys == TL_MAX_STREAM_GROUPS &&
		    key_find(m->pkeys, m->n_pkeys, k->stream, k->pool) ==
		    TL_NO_GROUP)
			break;
		map[i] = pool_key_group(m, k->stream, k->pool);
	}
	if (i == m->n_skeys)
		r = tl_groups_remap(&m->groups[TL_STACK_POOL], s, map,
		    TL_MAX_STREAM_GROUPS);
	if (r != 0)
		m->n_pkeys = n0; /* the keys a pass of its own makes */
	free(map);
	return r;
}

/* its reserved bytes from the segment events, its bytes of blocks the
 * stream/pool mode's */
static const struct tl_grouper group_by_pool = {pool_setup, pool_group,
    pool_text, NULL, pool_adopt, 1, pool_derive, TL_STACK_STREAM};

/* ---- the table ----------------------------------------------------------- */

const struct tl_mode tl_modes[TL_STACK_COUNT] = {
#define TL_STACK_ROW(id, name, title, noun, nouns, grouper)                   \
	[id] = {name, title, noun, nouns, grouper},
	TL_STACK_INFO(TL_STACK_ROW)
#undef TL_STACK_ROW
};

const char *
tl_stack_name(int st)
{
	return st >= 0 && st < TL_STACK_COUNT ? tl_modes[st].name : "?";
}

int
tl_stack_grouped(int st)
{
	return st >= 0 && st < TL_STACK_COUNT && tl_modes[st].grouper != NULL;
}

unsigned
tl_stack_pass_mates(int st)
{
	unsigned mask = 0, n;
	int k;

	if (!tl_stack_grouped(st) || !tl_modes[st].grouper->pass)
		return 0;
	/* one pass builds at most TL_GROUPS_MAX_N groupings; a mode
	 * derived from one of them takes none */
	n = tl_modes[st].grouper->derive == NULL;
	for (k = 0; k < TL_STACK_COUNT && n < TL_GROUPS_MAX_N; k++)
		if (k != st && tl_stack_grouped(k) &&
		    tl_modes[k].grouper->pass &&
		    tl_modes[k].grouper->derive == NULL) {
			mask |= 1u << k;
			n++;
		}
	for (k = 0; k < TL_STACK_COUNT; k++)
		if (k != st && tl_stack_grouped(k) &&
		    tl_modes[k].grouper->pass &&
		    tl_modes[k].grouper->derive != NULL &&
		    ((mask | 1u << st) & 1u << tl_modes[k].grouper->from))
			mask |= 1u << k;
	return mask;
}

char *
tl_group_text(const struct tl_model *m, int st, uint32_t g, int brief,
    char *buf, size_t size)
{
	if (!tl_stack_grouped(st) ||
	    tl_modes[st].grouper->text(m, g, brief, buf, size) != 0)
		snprintf(buf, size, "group %u", g);
	return buf;
}

const char *
tl_group_prefix(const struct tl_model *m, int st, uint32_t g)
{
	if (!tl_stack_grouped(st) || tl_modes[st].grouper->prefix == NULL)
		return "";
	return tl_modes[st].grouper->prefix(m, g);
}

uint32_t
tl_model_site_group(struct tl_model *m, const struct idx_elem *e)
{
	uint32_t site;

	if (tl_model_sites(m) == NULL)
		return TL_NO_GROUP;
	site = an_site_of(&m->sites, e->stack);
	return e->alloc_ev < 0 && e->flags & IDX_ELEM_PRE &&
	    an_site_kind(&m->sites, site) != AN_SITE_NONE ? m->sites.n + site :
	    site;
}

/* ---- building ------------------------------------------------------------ */

/* Adds mode st's grouping to gs[*n], or says why it has none. */
static int
add_grouping(struct tl_model *m, int st, struct tl_grouping *gs,
    unsigned *n, char *why, size_t size)
{
	const struct tl_grouper *gr = tl_modes[st].grouper;
	struct tl_grouping *gj = &gs[*n];

	if (gr->setup(m, &gj->max_groups, why, size) != 0)
		return -1;
	gj->g = &m->groups[st];
	gj->group_of = gr->group_of;
	gj->ctx = m;
	(*n)++;
	return 0;
}

/* Mode k's groups from its source's (grouper->derive), which this
 * model holds, else by a pass of its own. Returns 0 or -1 with why. */
static int
derive_groups(struct tl_model *m, int k, char *why, size_t size)
{
	const struct tl_grouper *gr = tl_modes[k].grouper;
	uint32_t max_groups;

	if (gr->setup(m, &max_groups, why, size) != 0)
		return -1;
	/* a struct tl_prep's model says which modes the viewer's holds,
	 * not their groups: c is NULL there */
	if (m->groups_ok[gr->from] > 0 && m->groups[gr->from].c != NULL &&
	    gr->derive(m) == 0)
		return 0;
	if (tl_groups_build(&m->groups[k], m->tl, max_groups, gr->group_of,
	    m) != 0) {
		snprintf(why, size, "too many events for grouped bands");
		return -1;
	}
	return 0;
}

/* Builds mode st's curves and, in the same pass, those of its pass mates
 * not built yet: one decode of the trace for all of them (the category
 * mode waits for its analysis, which only its first use runs); then
 * the modes derived from them. */
static int
prepare_groups(struct tl_model *m, int st, char *why, size_t size)
{
	struct tl_grouping gs[TL_GROUPS_MAX_N];
	char other_why[128];
	unsigned n = 0, mates = tl_stack_pass_mates(st), built = 0;
	unsigned later = 0;
	int k, i, r = 0, rk;

	for (i = -1; i < TL_STACK_COUNT; i++) {
		k = i < 0 ? st : i;
		if (i >= 0 && (k == st || !(mates & 1u << k) ||
		    m->groups_ok[k] != 0))
			continue;
		if (tl_modes[k].grouper->derive != NULL)
			later |= 1u << k;
		else if (add_grouping(m, k, gs, &n, k == st ? why :
		    other_why, k == st ? size : sizeof other_why) == 0)
			built |= 1u << k;
		else if (k == st)
			return -1;
	}
	if (n > 0 && (r = tl_groups_build_n(gs, n, m->tl)) != 0)
		snprintf(why, size, "too many events for grouped bands");
	for (k = 0; k < TL_STACK_COUNT; k++)
		if (built & 1u << k)
			m->groups_ok[k] = r == 0 ? 1 : -1;
	for (k = 0; k < TL_STACK_COUNT; k++) {
		if (!(later & 1u << k))
			continue;
		rk = derive_groups(m, k, k == st ? why : other_why,
		    k == st ? size : sizeof other_why);
		if (k == st)
			r = rk;
		else
			m->groups_ok[k] = rk == 0 ? 1 : -1;
	}
	return r;
}

struct an_sites *
tl_model_sites(struct tl_model *m)
{
	if (m->sites_ok == 0) {
		m->sites_ok = -1;
		if (m->snap != NULL &&
		    an_sites_init(&m->sites, m->snap, 1, NULL, NULL) == 0)
			m->sites_ok = 1;
	}
	return m->sites_ok > 0 ? &m->sites : NULL;
}

void
tl_model_set_categories(struct tl_model *m, const struct an_categories *c)
{
	if (c != NULL && c->n_elems != m->tl->n_elems)
		c = NULL;
	if (c == m->cats)
		return;
	/* category bands built from another table are stale (those drawn
	 * from samples of the table being built go when its bands come) */
	if (!m->groups_sampled[TL_STACK_CATEGORY])
		tl_groups_destroy(&m->groups[TL_STACK_CATEGORY]);
	m->groups_ok[TL_STACK_CATEGORY] = 0;
	m->cats = c;
}

/* The segment mode's elements (its layer is drawn from them). */
static int
build_segments(struct tl_model *m, char *why, size_t size)
{
	if (m->snap == NULL) {
		snprintf(why, size, "no segments");
		return -1;
	}
	tl_segs_build(&m->segs, m->snap, m->tl->device, m->trace, m->seg_evs,
	    m->n_seg_evs);
	return 0;
}

/* Drops what was sampled of mode st, and what sampled it; the replay's
 * states with the last mode left to build. */
static void
drop_samples(struct tl_model *m, int st)
{
	int k;

	tl_sample_drop(m, st);
	if (st == TL_STACK_CATEGORY)
		tl_model_set_cat_probe(m, NULL);
	for (k = 0; k < TL_STACK_COUNT; k++)
		if (k != st && tl_stack_grouped(k) && m->groups_ok[k] == 0)
			return;
	tl_sample_live_drop(m);
}

int
tl_model_prepare(struct tl_model *m, int st, char *why, size_t size)
{
	int k;

	why[0] = '\0';
	if (st < 0 || st >= TL_STACK_COUNT)
		return -1;
	if (m->groups_ok[st] != 0) {
		if (m->groups_ok[st] < 0)
			snprintf(why, size, "%s bands unavailable",
			    tl_stack_name(st));
		return m->groups_ok[st] > 0 ? 0 : -1;
	}
	if (!tl_stack_grouped(st)) {
		/* the allocations' layer is built with the model */
		if (build_segments(m, why, size) != 0) {
			m->groups_ok[st] = -1;
			return -1;
		}
		tl_build_layer(m, TL_LAYER_SEG);
		m->groups_ok[st] = 1;
		return 0;
	}
	/* built here, the modes of its pass drop what was sampled of them
	 * (a viewer whose worker ended without building them) */
	for (k = 0; k < TL_STACK_COUNT; k++)
		if (k == st || (tl_stack_pass_mates(st) & 1u << k))
			drop_samples(m, k);
	if (prepare_groups(m, st, why, size) != 0) {
		m->groups_ok[st] = -1;
		return -1;
	}
	m->groups_ok[st] = 1;
	return 0;
}

uint32_t
tl_group_of_elem(struct tl_model *m, int st, uint64_t k,
    const struct idx_elem *e)
{
	if (k >= m->tl->n_elems || m->groups_ok[st] <= 0 ||
	    !tl_stack_grouped(st))
		return TL_NO_GROUP;
	return tl_modes[st].grouper->group_of(m, e, k);
}

uint32_t
tl_model_group_of(struct tl_model *m, int st, uint64_t k)
{
	struct idx_elem e;

	if (k >= m->tl->n_elems || m->groups_ok[st] <= 0)
		return TL_NO_GROUP;
	e = idx_tl_elem(m->tl, k);
	return tl_group_of_elem(m, st, k, &e);
}


/* ---- sampled bands (tl_sample.h) ----------------------------------------- */

void
tl_model_set_cat_probe(struct tl_model *m, struct an_cat_probe *p)
{
	if (p == m->cat_probe)
		return;
	/* what the last one sampled goes with it */
	tl_sample_drop(m, TL_STACK_CATEGORY);
	an_cat_probe_free(m->cat_probe);
	m->cat_probe = p;
}

int
tl_model_sample_able(const struct tl_model *m, int st)
{
	/* the category mode's groups need the whole trace's phases: its
	 * probe has them */
	return st >= 0 && st < TL_STACK_COUNT && tl_stack_grouped(st) &&
	    (st != TL_STACK_CATEGORY || m->cat_probe != NULL) &&
	    tl_sample_able(m, st);
}

int
tl_model_sample(struct tl_model *m, int st, struct replay *r,
    const int64_t *ev, size_t n, long long budget_us, int *moved, char *why,
    size_t size)
{
	struct tl_sampler how;

	*moved = 0;
	if (st < 0 || st >= TL_STACK_COUNT || !tl_stack_grouped(st)) {
		snprintf(why, size, "%s bands not sampled", tl_stack_name(st));
		return -1;
	}
	how.setup = tl_modes[st].grouper->setup;
	how.group_of = tl_modes[st].grouper->group_of;
	how.find_elem = tl_model_find_elem;
	if (st == TL_STACK_CATEGORY) {
		how.setup = category_sample_setup;
		how.group_of = category_sample_group;
	}
	return tl_sample_cover(m, st, &how, r, ev, n, budget_us, moved, why,
	    size);
}

int
tl_model_sample_states(struct tl_model *m, struct replay *r,
    const int64_t *ev, size_t n, long long budget_us, int *moved, char *why,
    size_t size)
{
	struct tl_sampler how;

	memset(&how, 0, sizeof how);
	how.find_elem = tl_model_find_elem;
	return tl_sample_states(m, &how, r, ev, n, budget_us, moved, why,
	    size);
}

/* ---- building a mode away from the model --------------------------------- */

void
tl_prep_begin(struct tl_prep *p, const struct tl_model *m, int st,
    const struct an_categories *cats)
{
	int k;

	memset(p, 0, sizeof *p);
	p->st = st;
	p->w.snap = m->snap;
	p->w.tl = m->tl;
	p->w.trace = m->trace;
	p->w.max_drawn = m->max_drawn;
	/* borrowed: m outlives the prep's build */
	p->w.seg_evs = m->seg_evs;
	p->w.n_seg_evs = m->n_seg_evs;
	p->w.cats = cats != NULL && cats->n_elems == m->tl->n_elems ? cats :
	    NULL;
	for (k = 0; k < TL_STACK_COUNT; k++)
		p->had[k] = p->w.groups_ok[k] = m->groups_ok[k];
}

void
tl_prep_fill_categories(struct tl_prep *p, struct an_categories *c)
{
	p->w.cats = c;
	p->w.cats_fill = c;
}

int
tl_prep_build(struct tl_prep *p)
{
	struct tl_model *w = &p->w;
	int st = p->st;

	if (st < 0 || st >= TL_STACK_COUNT || w->groups_ok[st] != 0)
		return 0;
	if (!tl_stack_grouped(st))
		/* the segments' layer: tl_model_adopt builds it on m */
		w->groups_ok[st] = build_segments(w, p->why,
		    sizeof p->why) == 0 ? 1 : -1;
	else
		w->groups_ok[st] = prepare_groups(w, st, p->why,
		    sizeof p->why) == 0 ? 1 : -1;
	w->cats_fill = NULL;
	/* asked to stop: what was built may be cut short */
	return sv_stop_requested() ? -1 : 0;
}

uint64_t
tl_prep_work(const struct tl_prep *p, int categories)
{
	uint64_t e = p->w.tl->n_events, n;
	unsigned todo = tl_stack_pass_mates(p->st) | 1u << p->st;

	/* the segment mode: the segment events (tl_model.seg_evs) */
	if (!tl_stack_grouped(p->st))
		return p->w.n_seg_evs;
	/* the curves: a pass over the elements, then one over the events */
	n = p->w.tl->n_elems + e;
	if (categories)
		n += e; /* the phases the categories are inferred from */
	if ((todo & 1u << TL_STACK_POOL) && p->had[TL_STACK_POOL] == 0)
		n += p->w.n_seg_evs; /* the pool mode's reserved memory */
	return n;
}

unsigned
tl_prep_modes(const struct tl_prep *p)
{
	unsigned mask = 0;
	int k;

	for (k = 0; k < TL_STACK_COUNT; k++)
		if (p->had[k] == 0 && p->w.groups_ok[k] != 0)
			mask |= 1u << k;
	return mask;
}

/* Moves mode k's data from w into m (m has none). */
static void
adopt_one(struct tl_model *m, struct tl_model *w, int k)
{
	const struct tl_grouper *gr = tl_modes[k].grouper;

	/* the sampled curves give way to the built ones */
	drop_samples(m, k);
	m->groups[k] = w->groups[k];
	memset(&w->groups[k], 0, sizeof w->groups[k]);
	if (gr != NULL && gr->adopt != NULL && w->groups_ok[k] > 0)
		gr->adopt(m, w);
	else if (gr == NULL && w->groups_ok[k] > 0) {
		tl_segs_destroy(&m->segs);
		m->segs = w->segs;
		memset(&w->segs, 0, sizeof w->segs);
		tl_build_layer(m, TL_LAYER_SEG);
	}
	m->groups_ok[k] = w->groups_ok[k];
}

int
tl_model_adopt(struct tl_model *m, struct tl_prep *p, char *why,
    size_t size)
{
	unsigned mask = tl_prep_modes(p), adopted = 0;
	int k, st = p->st;

	why[0] = '\0';
	if (p->w.tl != m->tl)
		return -1; /* another device's */
	for (k = 0; k < TL_STACK_COUNT; k++) {
		const struct tl_grouper *gr = tl_modes[k].grouper;

		if (!(mask & 1u << k) || m->groups_ok[k] != 0)
			continue;
		/* category bands go with the table they were built from */
		if (k == TL_STACK_CATEGORY && (m->cats == NULL ||
		    p->w.cats == NULL ||
		    m->cats->n_elems != p->w.cats->n_elems))
			continue;
		/* borrowed curves go with the groups they are borrowed
		 * from (derive: the source's index is below k's) */
		if (p->w.groups[k].borrowed && gr != NULL &&
		    !(adopted & 1u << gr->from))
			continue;
		adopt_one(m, &p->w, k);
		adopted |= 1u << k;
	}
	if (st < 0 || st >= TL_STACK_COUNT)
		return -1;
	if (m->groups_ok[st] < 0)
		snprintf(why, size, "%s", p->why[0] != '\0' ? p->why :
		    "unavailable");
	return m->groups_ok[st] > 0 ? 0 : -1;
}

void
tl_prep_destroy(struct tl_prep *p)
{
	int k;

	for (k = 0; k < TL_STACK_COUNT; k++)
		tl_groups_destroy(&p->w.groups[k]);
	tl_segs_destroy(&p->w.segs);
	if (p->w.sites_ok > 0)
		an_sites_destroy(&p->w.sites);
	free(p->w.skeys);
	free(p->w.seg_by_addr);
	free(p->w.seg_memo);
	tl_pool_envs_free(&p->w);
	memset(p, 0, sizeof *p);
}
