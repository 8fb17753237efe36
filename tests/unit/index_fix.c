/*
 * Fixtures of the index's unit tests (index_fix.h).
 */
#include "config.h"

#include "index_fix.h"

char tmpdir[256];

void
rm_rf(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'",
	    path, path);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", path);
}

void
setup(void)
{
	char cache[300];

	snprintf(tmpdir, sizeof tmpdir, "%s/sv-index.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	chmod(tmpdir, 0755);
	snprintf(cache, sizeof cache, "%s/cache", tmpdir);
	setenv("XDG_CACHE_HOME", cache, 1);
}

void
teardown(void)
{
	rm_rf(tmpdir);
}

char *
tpath(const char *name)
{
	char *p;

	xasprintf(&p, "%s/%s", tmpdir, name);
	return p;
}

void
write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

uint8_t *
read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc((size_t)len + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return buf;
}

void
copy_file(const char *from, const char *to)
{
	size_t n;
	uint8_t *b = read_file(from, &n);

	write_file(to, b, n);
	free(b);
}

int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* A builder-made snapshot: two devices, address reuse, a free without
 * alloc, segments, ghosts, times, compile context, annotations. */
struct snapshot *
make_snap(uint64_t n_events)
{
	struct snapshot *s = snap_new();
	uint32_t fr[4], st[3], i;
	uint64_t rng = 12345, k;
	struct snap_trace *t0, *t1;
	struct snap_segment *g;
	struct snap_block *b;
	struct snap_annotation an;
	uint64_t live[64];
	int nlive = 0;

	s->features = SNAP_F_DICT | SNAP_F_DEVICE_TRACES | SNAP_F_TIME_US;
	s->protocol = 4;
	for (i = 0; i < 4; i++) {
		char name[32];
		int n = snprintf(name, sizeof name, "fn_%u", i);

		fr[i] = snap_intern_frame(s,
		    snap_intern_str(s, name, (size_t)n),
		    snap_intern_str(s, "train.py", 8), i == 3 ? UINT64_MAX : i);
	}
	st[0] = snap_intern_stack(s, fr, 2);
	st[1] = snap_intern_stack(s, fr + 1, 3);
	st[2] = snap_intern_stack(s, fr, 4);
	t0 = snap_trace_get(s, 0);
	/* a free of a block allocated before the trace */
	snap_trace_push(s, t0, SNAP_FREE_REQUESTED, 0x9000, 512, 7, st[0]);
	snap_trace_push(s, t0, SNAP_FREE_COMPLETED, 0x9000, 512, 7, st[0]);
	snap_trace_push(s, t0, SNAP_SEGMENT_ALLOC, 0x100000, 1 << 20, 7, 0);
	for (k = 3; k < n_events; k++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		if (nlive < 64 && (nlive == 0 || (rng >> 33) % 3 != 0)) {
			/* reuse a small set of addresses */
			uint64_t a = 0x100000 + ((rng >> 40) % 128) * 0x200;
			int j, dup = 0;

			for (j = 0; j < nlive; j++)
				dup |= live[j] == a;
			if (dup)
				continue;
			live[nlive++] = a;
			snap_trace_push(s, t0, SNAP_ALLOC, a,
			    512 + (rng >> 50) % 4096, 7, st[(rng >> 20) % 3]);
		} else {
			int j = (int)((rng >> 37) % (uint64_t)nlive);

			snap_trace_push(s, t0, SNAP_FREE_COMPLETED, live[j],
			    0, 7, st[1]);
			/* size of a free is the block size in real files */
			t0->size[t0->n - 1] = 512;
			live[j] = live[--nlive];
		}
		snap_trace_set_time(t0, t0->n - 1, (int64_t)(1000 + k));
	}
	snap_trace_set_ctx(t0, 5, snap_intern_str(s, "ctx", 3), 0);
	t1 = snap_trace_get(s, 1);
	snap_trace_push(s, t1, SNAP_SEGMENT_ALLOC, 0x800000, 2 << 20, 0, st[2]);
	snap_trace_push(s, t1, SNAP_ALLOC, 0x800000, 4096, 0, st[2]);
	snap_trace_push(s, t1, SNAP_OOM, 0, 1 << 30, 0, 0);
	snap_trace_push(s, t1, snap_action_lookup(s, "mystery", 7), 1, 2, 0,
	    0);

	g = snap_push_segment(s);
	g->addr = 0x100000;
	g->total_size = 1 << 20;
	g->stream = 7;
	g->device = 0;
	g->first_block = 0;
	g->n_blocks = 2;
	g->pool_id[0] = 1;
	b = snap_push_block(s);
	b->addr = 0x100000;
	b->size = 0x800;
	b->requested_size = 0x7f0;
	b->state = SNAP_BLOCK_ACTIVE_ALLOCATED;
	b->stack = st[1];
	b = snap_push_block(s);
	b->addr = 0x100800;
	b->size = (1 << 20) - 0x800;
	b->state = SNAP_BLOCK_INACTIVE;
	g = snap_push_segment(s);
	g->addr = 0x800000;
	g->total_size = 2 << 20;
	g->device = 1;
	g->first_block = 2;
	g->n_blocks = 1;
	g->is_large = 1;
	b = snap_push_block(s);
	b->addr = 0x800000;
	b->size = 2 << 20;
	b->requested_size = 4096;
	b->state = SNAP_BLOCK_ACTIVE_ALLOCATED;
	memset(&an, 0, sizeof an);
	an.name = snap_intern_str(s, "step", 4);
	an.time_us = 1005;
	an.stage = SNAP_STAGE_START;
	snap_push_annotation(s, &an);
	snap_push_setting(s, snap_intern_str(s, "max_split_size", 14),
	    snap_intern_str(s, "-1", 2));
	s->unknown_keys = 3;
	snap_finish(s);
	return s;
}

uint64_t model_events = 3000;
int n_loads;

int
model_load(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err)
{
	(void)path;
	(void)err;
	n_loads++;
	*out = make_snap(model_events);
	if (lo != NULL && lo->progress != NULL)
		lo->progress(lo->progress_ctx, 100, 100);
	return 0;
}

void
collect_warn(void *ctx, const char *msg)
{
	struct warns *w = ctx;
	size_t l = strlen(w->all);

	w->n++;
	snprintf(w->last, sizeof w->last, "%s", msg);
	snprintf(w->all + l, sizeof w->all - l, "%s\n", msg);
}

void
opts_init(struct idx_opts *o, struct warns *w, int model)
{
	memset(o, 0, sizeof *o);
	memset(w, 0, sizeof *w);
	o->warn = collect_warn;
	o->warn_ctx = w;
	if (model)
		o->load = model_load;
}

struct sv_index *
open_ok(const char *src, const struct idx_opts *o)
{
	struct sv_index *ix = NULL;
	struct sv_error err;

	sv_error_clear(&err);
	if (idx_open(src, o, &ix, &err) != 0)
		ck_abort_msg("idx_open(%s): %s", src, err.msg);
	ck_assert_ptr_nonnull(ix);
	return ix;
}

void
assert_same_snapshot(const struct snapshot *a, const struct snapshot *b)
{
	uint32_t i;

	ck_assert_uint_eq(a->features, b->features);
	ck_assert_int_eq(a->protocol, b->protocol);
	ck_assert_uint_eq(a->source_size, b->source_size);
	ck_assert_uint_eq(a->unknown_keys, b->unknown_keys);
	ck_assert_uint_eq(a->n_unknown_actions, b->n_unknown_actions);
	for (i = 0; i < a->n_unknown_actions; i++)
		ck_assert_str_eq(snap_str(a, a->unknown_actions[i]),
		    snap_str(b, b->unknown_actions[i]));
	ck_assert_uint_eq(a->strs.n, b->strs.n);
	for (i = 0; i < a->strs.n; i++)
		ck_assert_str_eq(snap_str(a, i), snap_str(b, i));
	ck_assert_uint_eq(a->n_frames, b->n_frames);
	if (a->n_frames)
		ck_assert_mem_eq(a->frames, b->frames,
		    a->n_frames * sizeof *a->frames);
	ck_assert_uint_eq(a->n_stacks, b->n_stacks);
	for (i = 0; i < a->n_stacks; i++) {
		uint32_t na, nb;
		const uint32_t *fa = snap_stack(a, i, &na);
		const uint32_t *fb = snap_stack(b, i, &nb);

		ck_assert_uint_eq(na, nb);
		if (na)
			ck_assert_mem_eq(fa, fb, na * sizeof *fa);
	}
	ck_assert_uint_eq(a->n_segments, b->n_segments);
	if (a->n_segments)
		ck_assert_mem_eq(a->segments, b->segments,
		    a->n_segments * sizeof *a->segments);
	ck_assert_uint_eq(a->n_blocks, b->n_blocks);
	if (a->n_blocks)
		ck_assert_mem_eq(a->blocks, b->blocks,
		    a->n_blocks * sizeof *a->blocks);
	ck_assert_uint_eq(a->n_annotations, b->n_annotations);
	for (i = 0; i < a->n_annotations; i++) {
		ck_assert_str_eq(snap_str(a, a->annotations[i].name),
		    snap_str(b, b->annotations[i].name));
		ck_assert_int_eq(a->annotations[i].time_us,
		    b->annotations[i].time_us);
		ck_assert_uint_eq(a->annotations[i].stage,
		    b->annotations[i].stage);
		ck_assert_uint_eq(a->annotations[i].device,
		    b->annotations[i].device);
	}
	ck_assert_uint_eq(a->n_settings, b->n_settings);
	if (a->n_settings)
		ck_assert_mem_eq(a->settings, b->settings,
		    a->n_settings * sizeof *a->settings);
	ck_assert_uint_eq(a->n_traces, b->n_traces);
	for (i = 0; i < a->n_traces; i++) {
		const struct snap_trace *ta = &a->traces[i];
		const struct snap_trace *tb = &b->traces[i];
		uint64_t n = ta->n;

		uint64_t k;

		ck_assert_uint_eq(ta->device, tb->device);
		ck_assert_uint_eq(ta->n, tb->n);
		ck_assert_uint_eq(snap_trace_cols(ta), snap_trace_cols(tb));
		for (k = 0; k < n; k++) {
			struct snap_event ea, eb;

			/* (the struct has padding) */
			memset(&ea, 0, sizeof ea);
			memset(&eb, 0, sizeof eb);
			snap_ev_get(ta, k, &ea);
			snap_ev_get(tb, k, &eb);
			if (memcmp(&ea, &eb, sizeof ea) != 0)
				ck_abort_msg("trace %u event %llu differs", i,
				    (unsigned long long)k);
		}
	}
	ck_assert_uint_eq(snap_device_count(a), snap_device_count(b));
	ck_assert_uint_eq(snap_default_device(a), snap_default_device(b));
}

static void
life_is(uint64_t k, int64_t a, int64_t f, struct idx_elem e)
{
	if (a != e.alloc_ev || f != e.free_ev)
		ck_abort_msg("element %llu: life %lld..%lld, not %lld..%lld",
		    (unsigned long long)k, (long long)a, (long long)f,
		    (long long)e.alloc_ev, (long long)e.free_ev);
}

/* Whether idx_tl_elem_life_read() is checked at element k: a read costs
 * k's place in its stripe (the chunks are hashed whole, the values read
 * up to k), so every element would be quadratic in the stripe. The
 * first and last 32 of each stripe, every 127th, and each element of
 * another kind (flags) than the one before. */
static int
read_sampled(const struct idx_timeline *tl, uint64_t k, uint8_t flags,
    uint8_t prev)
{
	const struct snap_stripedir *d;

	if (tl->el_stripes == NULL)
		return 0;
	d = &tl->el_stripes->dir[snap_stripe_find(tl->el_stripes, k)];
	return k - d->first < 32 || d->first + d->n - k <= 32 || k % 127 == 0
	    || flags != prev;
}

/* idx_tl_elem_life() gives element k's events as e has them, and so does
 * idx_tl_elem_life_read() when read is set. */
static void
assert_same_life(const struct idx_timeline *tl, uint64_t k,
    struct idx_elem e, int read)
{
	int64_t a, f;

	idx_tl_elem_life(tl, k, &a, &f);
	life_is(k, a, f, e);
	if (!read)
		return;
	ck_assert_int_eq(idx_tl_elem_life_read(tl, k, &a, &f), 0);
	life_is(k, a, f, e);
}

void
assert_same_timelines(const struct sv_index *ix, const struct snapshot *ref)
{
	uint32_t d, n = snap_device_count(ref);

	ck_assert_ptr_null(idx_timeline(ix, n));
	for (d = 0; d < n; d++) {
		const struct idx_timeline *a = idx_timeline(ix, d);
		struct idx_timeline b;
		struct sv_error err;
		uint64_t k;
		uint8_t prev;

		/* the index has a timeline for every device with data */
		ck_assert_int_eq(a != NULL, snap_device_has_data(ref, d));
		ck_assert_int_eq(idx_timeline_build(ref, d, &b, &err), 0);
		if (a == NULL) {
			ck_assert_uint_eq(b.n_events, 0);
			ck_assert_uint_eq(b.n_elems, 0);
			idx_timeline_destroy(&b);
			continue;
		}
		ck_assert_uint_eq(a->device, d);
		ck_assert_uint_eq(a->n_events, b.n_events);
		ck_assert_uint_eq(a->n_elems, b.n_elems);
		/* an element's lifetime alone: read from its stripe's
		 * chunks, remembered, from the stripe decoded (the second
		 * element asked of a stripe), from the cache */
		snap_stripe_cache_clear();
		for (k = 0, prev = 0; k < b.n_elems; k++) {
			struct idx_elem eb = idx_tl_elem(&b, k);

			assert_same_life(a, k, eb, read_sampled(a, k, eb.flags,
			    k > 0 ? prev : eb.flags));
			assert_same_life(a, k, eb, 0);
			prev = eb.flags;
		}
		for (k = 0; k < b.n_elems; k++) {
			struct idx_elem ea = idx_tl_elem(a, k);
			struct idx_elem eb = idx_tl_elem(&b, k);

			if (memcmp(&ea, &eb, sizeof ea) != 0)
				ck_abort_msg("device %u element %llu differs",
				    d, (unsigned long long)k);
			assert_same_life(a, k, eb, 0);
		}
		for (k = 0; k < b.n_events; k++) {
			int64_t i = (int64_t)k;

			ck_assert_uint_eq(idx_tl_ev_elem(a, k),
			    idx_tl_ev_elem(&b, k));
			ck_assert_uint_eq(idx_tl_total(a, i),
			    idx_tl_total(&b, i));
			ck_assert_uint_eq(idx_tl_reserved(a, i),
			    idx_tl_reserved(&b, i));
		}
		ck_assert_uint_eq(a->base_total, b.base_total);
		ck_assert_uint_eq(a->base_reserved, b.base_reserved);
		ck_assert_uint_eq(a->peak, b.peak);
		ck_assert_int_eq(a->peak_ev, b.peak_ev);
		ck_assert_uint_eq(a->n_pre, b.n_pre);
		ck_assert_uint_eq(a->n_ghost, b.n_ghost);
		ck_assert_uint_eq(idx_lod(ix, d)->n_events, b.n_events);
		idx_timeline_destroy(&b);
	}
}

void
brute(const struct idx_timeline *tl, uint64_t from, uint64_t to,
    struct idx_lod_bucket *b)
{
	uint64_t i;

	if (to > tl->n_events)
		to = tl->n_events;
	b->min_total = UINT64_MAX;
	b->max_total = 0;
	b->max_reserved = 0;
	for (i = from; i < to; i++) {
		uint64_t tot = idx_tl_total(tl, (int64_t)i);
		uint64_t res = idx_tl_reserved(tl, (int64_t)i);

		if (tot < b->min_total)
			b->min_total = tot;
		if (tot > b->max_total)
			b->max_total = tot;
		if (res > b->max_reserved)
			b->max_reserved = res;
	}
}

/* Builds the index of a fresh copy of a fixture; returns its path. */
char *
built_fixture(const char *name, struct idx_opts *o, struct warns *w)
{
	char *from, *src = tpath(name), *ipath;
	struct sv_index *ix;

	xasprintf(&from, "%s/tests/data/real/npu_leak_expandable.pickle",
	    TOP_SRCDIR);
	copy_file(from, src);
	free(from);
	opts_init(o, w, 0);
	ix = open_ok(src, o);
	idx_close(ix);
	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	ck_assert(exists(ipath));
	free(ipath);
	return src;
}

/* Opens src expecting a warning containing what and a rebuild at the
 * beside path. */
void
expect_rebuild(const char *src, struct idx_opts *o, struct warns *w,
    const char *what)
{
	struct sv_index *ix;
	struct idx_info info;
	struct snapshot *ref;
	struct sv_error err;
	char *ipath;

	memset(w, 0, sizeof *w);
	ix = open_ok(src, o);
	idx_get_info(ix, &info);
	ck_assert_msg(w->n == 1, "warnings: %s", w->all);
	ck_assert_msg(strstr(w->last, what) != NULL, "warning '%s' lacks '%s'",
	    w->last, what);
	ck_assert_int_eq(info.built, 1);
	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	ck_assert_str_eq(info.path, ipath);
	ck_assert_int_eq(snap_load_file(src, NULL, &ref, &err), 0);
	assert_same_snapshot(idx_snapshot(ix), ref);
	snap_free(ref);
	idx_close(ix);
	/* and the rebuilt one is used as is */
	memset(w, 0, sizeof *w);
	ix = open_ok(src, o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	ck_assert_int_eq(w->n, 0);
	idx_close(ix);
	free(ipath);
}

int
read_toc(const char *ipath, struct tsec *out, int max)
{
	size_t n, moff = 0;
	uint8_t *b = read_file(ipath, &n);
	uint64_t hoff = 0, hlen = 0;
	msgpack_unpacked res;
	const msgpack_object *toc = NULL;
	uint32_t i;
	int k = 0;

	for (i = 0; i < 8; i++) {
		hoff |= (uint64_t)b[IDX_OFF_HEADER_OFF + i] << (8 * i);
		hlen |= (uint64_t)b[IDX_OFF_HEADER_LEN + i] << (8 * i);
	}
	msgpack_unpacked_init(&res);
	ck_assert_int_eq(msgpack_unpack_next(&res, (char *)b + hoff, hlen,
			     &moff),
	    MSGPACK_UNPACK_SUCCESS);
	for (i = 0; i < res.data.via.map.size; i++) {
		const msgpack_object_kv *kv = &res.data.via.map.ptr[i];

		if (kv->key.via.str.size == 3 &&
		    memcmp(kv->key.via.str.ptr, "toc", 3) == 0)
			toc = &kv->val;
	}
	ck_assert_ptr_nonnull(toc);
	for (i = 0; i < toc->via.array.size && k < max; i++) {
		const msgpack_object *e = toc->via.array.ptr[i].via.array.ptr;

		snprintf(out[k].name, sizeof out[k].name, "%.*s",
		    (int)e[0].via.str.size, e[0].via.str.ptr);
		out[k].off = e[1].via.u64;
		out[k].len = e[2].via.u64;
		k++;
	}
	msgpack_unpacked_destroy(&res);
	free(b);
	return k;
}

void
flip_bit(const char *path, uint64_t off, int bit)
{
	int fd = open(path, O_RDWR);
	uint8_t c;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &c, 1, (off_t)off), 1);
	c ^= (uint8_t)(1u << bit);
	ck_assert_int_eq(pwrite(fd, &c, 1, (off_t)off), 1);
	close(fd);
}

/* Reads every value of every device of ix through the accessors (which
 * decodes every chunk of every stripe). */
void
walk_all(const struct sv_index *ix)
{
	const struct snapshot *s = idx_snapshot(ix);
	uint32_t d, n = snap_device_count(s);
	volatile uint64_t acc = 0;

	for (d = 0; d < n; d++) {
		const struct idx_timeline *tl = idx_timeline(ix, d);
		const struct snap_trace *t = snap_trace_of(s, d);
		uint64_t k;

		for (k = 0; t != NULL && k < t->n; k++) {
			struct snap_event e;

			snap_ev_get(t, k, &e);
			acc += e.addr + e.size + e.stream +
			    (uint64_t)e.time_us + e.stack +
			    e.compile_context + e.user_metadata + e.action;
		}
		for (k = 0; tl != NULL && k < tl->n_events; k++)
			acc += idx_tl_ev_elem(tl, k) +
			    idx_tl_total(tl, (int64_t)k) +
			    idx_tl_reserved(tl, (int64_t)k);
		for (k = 0; tl != NULL && k < tl->n_elems; k++)
			acc += idx_tl_elem(tl, k).addr;
	}
	(void)acc;
}

/* Sections name (offset, length) of the index at ipath. */
void
find_section(const char *ipath, const char *name, uint64_t *off,
    uint64_t *len)
{
	struct tsec sec[64];
	int n = read_toc(ipath, sec, 64), i;

	for (i = 0; i < n; i++)
		if (strcmp(sec[i].name, name) == 0) {
			*off = sec[i].off;
			*len = sec[i].len;
			return;
		}
	ck_abort_msg("no section %s", name);
}
