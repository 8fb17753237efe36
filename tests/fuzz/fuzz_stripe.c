/*
 * Fuzz target: the stripe decoders of index format 2
 * (snapshot/snap_stripe.c and index/idx_dec.c), behind the per-chunk
 * hashes.
 *
 * The input is one device: two stripe directory entries (an event stripe
 * and an element stripe, struct snap_stripedir as stored), 32 bytes of device
 * record fields (flags, counts, bases) and the column data. The harness
 * makes the directory entries fit the data (value counts at most 4096,
 * chunk lengths cut to the data, their lengths summed, the chunk hashes
 * recomputed), so every input reaches the varint, dictionary, LZ4 and
 * derived-column decoders; then it binds the device the way an index open
 * does (which may refuse it) and reads every value through the accessors
 * and the pyramid. Any crash, sanitizer report or leak is a finding; a
 * damaged stripe must read as zeros.
 *
 * SNAPVIEW_FUZZ_STRIPE_SEEDS=DIR: write seeds made from the first stripes
 * of the indexes of three fixtures (how tests/fuzz/corpus/stripe/ was
 * seeded).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "index/idx_int.h"
#include "snapshot/snap_stripe.h"
#include "snapshot/snap_model.h"

#define MAX_VALUES 4096
#define HDR (2 * sizeof(struct snap_stripedir) + 32)

static volatile uint64_t sink;

static uint64_t
rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Makes d a directory entry of at most MAX_VALUES values whose chunks
 * lie inside [0, len) of data, with their hashes right. */
static void
fit(struct snap_stripedir *d, unsigned nchunk, const uint8_t *data, size_t len)
{
	uint64_t at;
	unsigned c;

	d->first = 0;
	d->n = d->n % MAX_VALUES + 1;
	d->off = len > 0 ? d->off % len : 0;
	d->len = 0;
	at = d->off;
	for (c = 0; c < SNAP_STRIPE_NCHUNK; c++) {
		if (c >= nchunk) {
			d->clen[c] = d->rlen[c] = d->chash[c] = 0;
			continue;
		}
		if (d->clen[c] > len - at)
			d->clen[c] = (uint32_t)(len - at);
		if (d->rlen[c] > SNAP_CHUNK_MAX(d->n))
			d->rlen[c] = (uint32_t)SNAP_CHUNK_MAX(d->n);
		if (d->rlen[c] < d->clen[c])
			d->rlen[c] = d->clen[c];
		d->chash[c] = snap_chunk_hash(data + at, d->clen[c]);
		d->len += d->clen[c];
		at += d->clen[c];
	}
}

/* A small snapshot for the limits: strings, frames, stacks. */
static struct snapshot *
small_snap(void)
{
	struct snapshot *s = snap_new();
	uint32_t f[2], i;
	char name[16];

	f[0] = snap_intern_frame(s, snap_intern_str(s, "a", 1),
	    snap_intern_str(s, "b.py", 4), 1);
	f[1] = snap_intern_frame(s, snap_intern_str(s, "c", 1),
	    snap_intern_str(s, "d.py", 4), 2);
	snap_intern_stack(s, f, 2);
	snap_intern_stack(s, f + 1, 1);
	/* string ids a fixture's stripes use (compile contexts) */
	for (i = 0; i < 300; i++)
		snap_intern_str(s, name, (size_t)snprintf(name, sizeof name,
		    "s%u", i));
	snap_action_lookup(s, "mystery", 7);
	snap_trace_get(s, 0);
	snap_finish(s);
	return s;
}

/* The elements idx_tl_alive_each() gives, from the chunks it reads, are
 * those idx_tl_elem() says are alive, in order, with its fields, unless
 * a stripe does not decode whole (idx_tl_elem() then has zeros). */
struct agree {
	const struct idx_timeline *tl;
	const int *damaged;
	int64_t at;
	uint64_t next;
};

static int
alive_at(const struct idx_elem *e, int64_t at)
{
	return e->alloc_ev <= at && (e->free_ev < 0 || e->free_ev > at);
}

/* 1 when a stripe turned out damaged (nothing more to compare) */
static int
agree_upto(struct agree *g, uint64_t k, const struct idx_elem *e)
{
	struct idx_elem w;
	uint64_t j;

	for (j = g->next; j < k || (e != NULL && j == k); j++) {
		w = idx_tl_elem(g->tl, j);
		if (g->damaged != NULL && *g->damaged)
			return 1;
		if (j < k && alive_at(&w, g->at))
			abort();
		if (j == k && (!alive_at(&w, g->at) ||
		    w.alloc_ev != e->alloc_ev || w.free_ev != e->free_ev ||
		    w.size != e->size || w.stack != e->stack ||
		    w.flags != e->flags))
			abort();
	}
	g->next = j;
	return 0;
}

static int
agree_one(void *arg, uint64_t k, const struct idx_elem *e)
{
	return agree_upto(arg, k, e);
}

static void
alive_agrees(const struct idx_timeline *tl, int64_t at)
{
	struct agree g = {tl, NULL, at, 0};

	g.damaged = tl->el_stripes != NULL ? tl->el_stripes->damaged : NULL;
	if (idx_tl_alive_each(tl, at, 0, tl->n_elems, 0, agree_one, &g) == 0)
		(void)agree_upto(&g, tl->n_elems, NULL);
}

static void
walk(const struct sv_index *ix)
{
	const struct idx_timeline *tl = idx_timeline(ix, 0);
	const struct idx_lod *lod = idx_lod(ix, 0);
	const struct snap_trace *t = snap_trace_of(idx_snapshot(ix), 0);
	struct idx_lod_bucket b, cols[97];
	uint64_t i, acc = 0;
	int k;

	/* first, while no column of the stripe is in the cache: the
	 * columns' ragged ends read straight from its chunks (idx_span.c) */
	if (lod != NULL && tl != NULL && tl->n_events > 2) {
		idx_lod_columns(lod, tl, 1, tl->n_events - 1, 97, cols);
		for (k = 0; k < 97; k++)
			acc += cols[k].min_total + cols[k].max_total +
			    cols[k].max_reserved;
	}
	for (i = 0; t != NULL && i < t->n; i++) {
		struct snap_event e;

		snap_ev_get(t, i, &e);
		acc += e.addr ^ e.size ^ e.stream ^ (uint64_t)e.time_us ^
		    e.stack ^ e.compile_context ^ e.user_metadata ^ e.action;
	}
	if (tl == NULL)
		return;
	for (i = 0; i < tl->n_events; i++)
		acc += idx_tl_ev_elem(tl, i) + idx_tl_total(tl, (int64_t)i) +
		    idx_tl_reserved(tl, (int64_t)i);
	alive_agrees(tl, INT64_MAX);
	alive_agrees(tl, (int64_t)tl->n_events / 2);
	for (i = 0; i < tl->n_elems; i++) {
		struct idx_elem e = idx_tl_elem(tl, i);

		acc += e.addr + e.size + (uint64_t)e.alloc_ev +
		    (uint64_t)e.free_ev + e.stack;
	}
	if (lod != NULL && tl->n_events > 0) {
		idx_lod_range(lod, tl, 0, tl->n_events, &b);
		acc += b.max_total + b.max_reserved;
	}
	sink += acc;
}

static void
one(const uint8_t *in, size_t size)
{
	struct snap_stripedir ev, el;
	struct idx_devrec rec;
	struct idx_devsrc src;
	struct idx_lod_cum *lod = NULL;
	const uint8_t *data = in + HDR, *p = in + 2 * sizeof ev;
	size_t len = size - HDR;
	struct sv_index *ix;
	char why[128];

	memcpy(&ev, in, sizeof ev);
	memcpy(&el, in + sizeof ev, sizeof el);
	fit(&ev, SNAP_EVC_N, data, len);
	fit(&el, SNAP_ELC_N, data, len);
	memset(&rec, 0, sizeof rec);
	rec.flags = (uint32_t)rd64(p) & IDX_DEV_FLAGS;
	rec.n_events = ev.n;
	rec.n_elems = el.n;
	rec.n_ghost = rd64(p + 8) % (el.n + 1);
	rec.n_pre = 0;
	rec.base_total = rd64(p + 16);
	rec.base_reserved = (int64_t)rd64(p + 24);
	rec.peak = rec.base_total;
	rec.peak_ev = IDX_NO_EVENT;
	rec.n_ev_stripe = 1;
	rec.n_el_stripe = 1;
	if (!(rec.flags & IDX_DEV_WRAP)) {
		rec.n_lod = idx_lod_count(rec.n_events, NULL);
		lod = calloc(rec.n_lod, sizeof *lod);
		if (lod == NULL)
			abort();
	}
	memset(&src, 0, sizeof src);
	src.recs = &rec;
	src.n_recs = 1;
	src.evdir = &ev;
	src.n_evdir = 1;
	src.eldir = &el;
	src.n_eldir = 1;
	src.lod = lod;
	src.n_lod = rec.n_lod;
	src.data = data;
	src.data_len = len;
	ix = idx_index_new();
	ix->snap = small_snap();
	if (idx_bind_devices(ix, &src, why, sizeof why) == 0)
		walk(ix);
	idx_index_free(ix);
	free(lod);
}

/* Seeds: the first event and element stripes of each fixture's index,
 * with the column data they point into. */
static void
write_seeds(const char *out)
{
	static const char *const fix[3] = {"newest.pickle",
	    "two_traces.pickle", "legacy_20.pickle"};
	int i;

	for (i = 0; i < 3; i++) {
		char path[1024];
		struct idx_opts o;
		struct sv_index *ix;
		struct sv_error err;
		const struct idx_dev *v;
		uint8_t *seed;
		size_t n;
		FILE *f;

		snprintf(path, sizeof path, "%s/tests/data/fixtures/%s",
		    TOP_SRCDIR, fix[i]);
		memset(&o, 0, sizeof o);
		o.no_cache = 1;
		if (idx_open(path, &o, &ix, &err) != 0 || ix->n_devs == 0)
			abort();
		v = &ix->devs[0];
		n = HDR + v->ev.data_len;
		seed = calloc(1, n);
		if (seed == NULL)
			abort();
		memcpy(seed, &v->ev.dir[0], sizeof *v->ev.dir);
		if (v->el.n_stripe > 0)
			memcpy(seed + sizeof *v->ev.dir, &v->el.dir[0],
			    sizeof *v->el.dir);
		memcpy(seed + 2 * sizeof *v->ev.dir, &v->rec.flags, 4);
		memcpy(seed + 2 * sizeof *v->ev.dir + 8, &v->rec.n_ghost, 8);
		memcpy(seed + 2 * sizeof *v->ev.dir + 16, &v->rec.base_total,
		    8);
		memcpy(seed + 2 * sizeof *v->ev.dir + 24,
		    &v->rec.base_reserved, 8);
		memcpy(seed + HDR, v->ev.data, v->ev.data_len);
		/* fit() counts from n % MAX_VALUES + 1 */
		((struct snap_stripedir *)seed)->n -= 1;
		if (v->el.n_stripe > 0)
			((struct snap_stripedir *)(seed +
			    sizeof *v->ev.dir))->n -= 1;
		snprintf(path, sizeof path, "%s/seed-%d", out, i);
		f = fopen(path, "wb");
		if (f == NULL || fwrite(seed, 1, n, f) != n || fclose(f) != 0)
			abort();
		free(seed);
		idx_close(ix);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;

	if (!ready) {
		const char *seeds = getenv("SNAPVIEW_FUZZ_STRIPE_SEEDS");

		ready = 1;
		if (seeds != NULL)
			write_seeds(seeds);
	}
	if (size < HDR)
		return 0;
	one(data, size);
	return 0;
}
