/*
 * Unit tests of the snapshot index: round trips (builder-made snapshots
 * and the committed fixtures against the direct loader), the LOD pyramid
 * against brute force, every invalidation case, interrupted and
 * concurrent builds, locations (beside, cache, memory) and never
 * replacing a foreign file.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "index/idx.h"
#include "index/idx_format.h"
#include "snapshot/snap_stripe.h"
#include "snapshot/snap_load.h"
#include "util/xalloc.h"

/* ---- fixtures ------------------------------------------------------------ */

static char tmpdir[256];

static void
rm_rf(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'",
	    path, path);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", path);
}

static void
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

static void
teardown(void)
{
	rm_rf(tmpdir);
}

static char *
tpath(const char *name)
{
	char *p;

	xasprintf(&p, "%s/%s", tmpdir, name);
	return p;
}

static void
write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

static uint8_t *
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

static void
copy_file(const char *from, const char *to)
{
	size_t n;
	uint8_t *b = read_file(from, &n);

	write_file(to, b, n);
	free(b);
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Counts files in dir whose name contains part. */
static int
count_files(const char *dir, const char *part)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, part) != NULL)
			n++;
	closedir(d);
	return n;
}

/* A builder-made snapshot: two devices, address reuse, a free without
 * alloc, segments, ghosts, times, compile context, annotations. */
static struct snapshot *
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

static uint64_t model_events = 3000;
static int n_loads;

/* Events of device 0 in make_snap(model_events). */
static uint64_t
model_n(void)
{
	struct snapshot *s = make_snap(model_events);
	uint64_t n = s->traces[0].n;

	snap_free(s);
	return n;
}

static int
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

/* Collected warnings. */
struct warns {
	int n;
	char last[512];
	char all[4096];
};

static void
collect_warn(void *ctx, const char *msg)
{
	struct warns *w = ctx;
	size_t l = strlen(w->all);

	w->n++;
	snprintf(w->last, sizeof w->last, "%s", msg);
	snprintf(w->all + l, sizeof w->all - l, "%s\n", msg);
}

static void
opts_init(struct idx_opts *o, struct warns *w, int model)
{
	memset(o, 0, sizeof *o);
	memset(w, 0, sizeof *w);
	o->warn = collect_warn;
	o->warn_ctx = w;
	if (model)
		o->load = model_load;
}

static struct sv_index *
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

/* ---- comparisons --------------------------------------------------------- */

static void
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
assert_same_timelines(const struct sv_index *ix, const struct snapshot *ref)
{
	uint32_t d, n = snap_device_count(ref);

	ck_assert_ptr_null(idx_timeline(ix, n));
	for (d = 0; d < n; d++) {
		const struct idx_timeline *a = idx_timeline(ix, d);
		struct idx_timeline b;
		struct sv_error err;
		uint64_t k;

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
		for (k = 0; k < b.n_elems; k++) {
			struct idx_elem ea = idx_tl_elem(a, k);
			struct idx_elem eb = idx_tl_elem(&b, k);

			if (memcmp(&ea, &eb, sizeof ea) != 0)
				ck_abort_msg("device %u element %llu differs",
				    d, (unsigned long long)k);
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

/* ---- round trips --------------------------------------------------------- */

START_TEST(test_roundtrip_model)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_info info;
	struct snapshot *ref = make_snap(model_events);

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 1);
	ck_assert_int_eq(info.in_memory, 0);
	ck_assert_str_eq(info.path, ipath);
	ck_assert_int_eq(w.n, 0);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);

	/* reopen: mapped, no load */
	n_loads = 0;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	ck_assert_int_eq(n_loads, 0);
	ck_assert_uint_gt(info.size, 0);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);
	/* quick verification opens the same thing */
	o.verify = IDX_VERIFY_QUICK;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	snap_free(ref);
	free(src);
	free(ipath);
}
END_TEST

static const char *const fixtures[] = {
    "real/npu_leak_expandable.pickle", "real/npu_leak_empty_cache.pickle",
    "real/synthetic_inconsistent.pickle", "fixtures/newest.pickle",
    "fixtures/legacy_113.pickle", "fixtures/legacy_20.pickle",
    "fixtures/two_traces.pickle", "fixtures/empty_dict_snapshot.pickle",
    "fixtures/notime.pickle", "fixtures/small_p2.pickle",
    "fixtures/big_ints.pickle"};

START_TEST(test_roundtrip_fixture)
{
	char *from, *src = tpath("f.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct snapshot *ref;
	struct sv_error err;
	int pass;

	xasprintf(&from, "%s/tests/data/%s", TOP_SRCDIR, fixtures[_i]);
	copy_file(from, src);
	ck_assert_int_eq(snap_load_file(src, NULL, &ref, &err), 0);
	opts_init(&o, &w, 0);
	for (pass = 0; pass < 2; pass++) {
		struct idx_info info;

		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.built, pass == 0);
		assert_same_snapshot(idx_snapshot(ix), ref);
		assert_same_timelines(ix, ref);
		idx_close(ix);
	}
	/* --no-cache gives the same and writes nothing new */
	o.no_cache = 1;
	ix = open_ok(src, &o);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	snap_free(ref);
	free(from);
	free(src);
}
END_TEST

/* ---- LOD ----------------------------------------------------------------- */

static void
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

START_TEST(test_lod_ranges)
{
	char *src = tpath("l.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	const struct idx_timeline *tl;
	const struct idx_lod *lod;
	uint64_t rng = 99, k, n;
	struct idx_lod_bucket a, b, cols[97];
	uint32_t c;

	model_events = 20000;
	write_file(src, "lod", 3);
	opts_init(&o, &w, 1);
	ix = open_ok(src, &o);
	tl = idx_timeline(ix, 0);
	lod = idx_lod(ix, 0);
	n = tl->n_events;
	ck_assert_uint_gt(lod->n_levels, 5);
	ck_assert_uint_eq(lod->level_n[lod->n_levels - 1], 1);
	/* the top bucket covers every event */
	brute(tl, 0, n, &b);
	idx_lod_get(lod, lod->level_off[lod->n_levels - 1], &a);
	ck_assert_mem_eq(&a, &b, sizeof b);
	for (k = 0; k < 3000; k++) {
		uint64_t lo, hi;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		lo = (rng >> 20) % n;
		hi = lo + 1 + (rng >> 44) % (n - lo);
		idx_lod_range(lod, tl, lo, hi, &a);
		brute(tl, lo, hi, &b);
		ck_assert_mem_eq(&a, &b, sizeof a);
	}
	idx_lod_columns(lod, tl, 17, n, 97, cols);
	for (c = 0; c < 97; c++) {
		uint64_t span = n - 17;
		uint64_t lo = 17 + span * c / 97, hi = 17 + span * (c + 1) / 97;

		brute(tl, lo, hi, &b);
		ck_assert_mem_eq(&cols[c], &b, sizeof b);
	}
	/* more columns than events: every column still has a value */
	idx_lod_columns(lod, tl, 10, 20, 97, cols);
	for (c = 0; c < 97; c++)
		ck_assert_uint_eq(cols[c].max_reserved,
		    idx_tl_reserved(tl, 10 + 10 * c / 97));
	idx_close(ix);
	model_events = 3000;
	free(src);
}
END_TEST

/* ---- invalidation -------------------------------------------------------- */

/* Builds the index of a fresh copy of a fixture; returns its path. */
static char *
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

/* A pid that no process has (a reaped child's). */
static pid_t
dead_pid(void)
{
	pid_t p = fork();

	ck_assert_int_ge(p, 0);
	if (p == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(p, NULL, 0), p);
	return p;
}

/* Writes TARGET.tmp.PID.SEQ.abc (a build's temp name); magic: it starts
 * with the index magic; old: its mtime is an hour back. */
static char *
fake_temp(const char *target, long pid, int seq, int magic, int old)
{
	char *p, body[64];
	struct timespec ts[2];

	xasprintf(&p, "%s%s%ld.%d.abc", target, IDX_TMP_INFIX, pid, seq);
	memset(body, 0, sizeof body);
	memcpy(body, magic ? IDX_MAGIC : "NOTOURS!", IDX_MAGIC_LEN);
	write_file(p, body, sizeof body);
	if (old) {
		ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &ts[0]), 0);
		ts[0].tv_sec -= 3600;
		ts[1] = ts[0];
		ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
	}
	return p;
}

START_TEST(test_stale_temps_cleaned)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("st.pickle", &o, &w), *ipath;
	char *gone, *foreign, *fresh, *live;
	long dead = (long)dead_pid();

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	gone = fake_temp(ipath, dead, 0, 1, 1);    /* killed build: removed */
	foreign = fake_temp(ipath, dead, 1, 0, 1); /* not ours: kept */
	fresh = fake_temp(ipath, dead, 2, 1, 0);   /* too recent: kept */
	live = fake_temp(ipath, (long)getpid(), 3, 1, 1); /* builder alive */
	o.force_rebuild = 1;
	idx_close(open_ok(src, &o));
	ck_assert(!exists(gone));
	ck_assert(exists(foreign));
	ck_assert(exists(fresh));
	ck_assert(exists(live));
	unlink(foreign);
	unlink(fresh);
	unlink(live);
	free(gone);
	free(foreign);
	free(fresh);
	free(live);
	free(ipath);
	free(src);
}
END_TEST

/* Opens src expecting a warning containing what and a rebuild at the
 * beside path. */
static void
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

START_TEST(test_stale_size)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w);
	FILE *f = fopen(src, "ab");

	fputc('.', f); /* a trailing byte: the pickle still loads (STOP) */
	fclose(f);
	expect_rebuild(src, &o, &w, "another file");
	free(src);
}
END_TEST

START_TEST(test_stale_mtime)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w);
	struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000, 0}};

	ck_assert_int_eq(utimensat(AT_FDCWD, src, ts, 0), 0);
	expect_rebuild(src, &o, &w, "modified");
	free(src);
}
END_TEST

START_TEST(test_stale_content)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w);
	struct stat st;
	struct timespec ts[2];
	size_t n;
	uint8_t *b;

	/* Same size and mtime, other bytes: only the content hash sees it.
	 * Swap two bytes of a string in the middle of the file. */
	ck_assert_int_eq(stat(src, &st), 0);
	b = read_file(src, &n);
	{
		uint8_t *p = memmem(b, n, "segment_map", 11);

		ck_assert_ptr_nonnull(p);
		p[8] = 'x'; /* "segment_xap": still loads, an unknown action */
	}
	write_file(src, b, n);
	free(b);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	ck_assert_int_eq(utimensat(AT_FDCWD, src, ts, 0), 0);
	expect_rebuild(src, &o, &w, "another file");
	free(src);
}
END_TEST

START_TEST(test_truncated)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	struct stat st;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	ck_assert_int_eq(stat(ipath, &st), 0);
	ck_assert_int_eq(truncate(ipath, st.st_size / 2), 0);
	expect_rebuild(src, &o, &w, "truncated");
	ck_assert_int_eq(truncate(ipath, 40), 0);
	expect_rebuild(src, &o, &w, "truncated");
	ck_assert_int_eq(truncate(ipath, 0), 0);
	/* an empty file has no magic: it is not ours, left alone */
	memset(&w, 0, sizeof w);
	{
		struct sv_index *ix = open_ok(src, &o);
		struct idx_info info;

		idx_get_info(ix, &info);
		ck_assert(strstr(info.path, "/cache/snapview/") != NULL);
		idx_close(ix);
	}
	ck_assert_int_eq(stat(ipath, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	free(ipath);
	free(src);
}
END_TEST

/* Reads the TOC of an index file with msgpack (independently of src/index). */
struct tsec {
	char name[64];
	uint64_t off, len;
};

static int
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

static void
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

START_TEST(test_flipped_bit_each_section)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	struct tsec sec[64];
	int n, i, tested = 0;
	uint64_t hoff = 0;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	n = read_toc(ipath, sec, 64);
	ck_assert_int_ge(n, 15);
	for (i = 0; i < n; i++) {
		char what[96];

		/* the column data is checked stripe by stripe when read (see
		 * test_flipped_byte_each_stripe) */
		if (sec[i].len == 0 ||
		    strcmp(sec[i].name, IDX_SEC_COLDATA) == 0)
			continue;
		flip_bit(ipath, sec[i].off + sec[i].len / 2, i % 8);
		snprintf(what, sizeof what, "section %.60s", sec[i].name);
		expect_rebuild(src, &o, &w, what);
		tested++;
		/* the rebuilt file has the same layout */
		ck_assert_int_eq(read_toc(ipath, sec, 64), n);
	}
	ck_assert_int_ge(tested, 10);
	/* the prelude, then the header */
	flip_bit(ipath, IDX_OFF_HEADER_LEN, 0);
	expect_rebuild(src, &o, &w, "damaged");
	{
		size_t len;
		uint8_t *b = read_file(ipath, &len);
		int k;

		for (k = 0; k < 8; k++)
			hoff |= (uint64_t)b[IDX_OFF_HEADER_OFF + k] << (8 * k);
		free(b);
		flip_bit(ipath, hoff + (len - hoff) / 2, 3);
	}
	expect_rebuild(src, &o, &w, "header");
	free(ipath);
	free(src);
}
END_TEST

/* Reads every value of every device of ix through the accessors (which
 * decodes every chunk of every stripe). */
static void
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
static void
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

/* Where each stored chunk of the index's stripes lies (file offsets),
 * from its directories. */
static int
chunk_offsets(const char *ipath, uint64_t *where, int max)
{
	static const char *const dirs[2] = {IDX_SEC_EVDIR, IDX_SEC_ELDIR};
	uint64_t cd_off, cd_len;
	size_t flen;
	uint8_t *f = read_file(ipath, &flen);
	int n = 0, k;

	find_section(ipath, IDX_SEC_COLDATA, &cd_off, &cd_len);
	for (k = 0; k < 2; k++) {
		uint64_t off, len, b;

		find_section(ipath, dirs[k], &off, &len);
		ck_assert_uint_eq(len % sizeof(struct snap_stripedir), 0);
		for (b = 0; b < len / sizeof(struct snap_stripedir); b++) {
			struct snap_stripedir d;
			uint64_t at;
			unsigned c;

			unsigned present = 0, pick;

			memcpy(&d, f + off + b * sizeof d, sizeof d);
			for (c = 0; c < SNAP_STRIPE_NCHUNK; c++)
				present += d.clen[c] > 0;
			/* every chunk of a device's first stripes, one chunk
			 * (a different kind each time) of the others */
			pick = (unsigned)(b % present);
			at = cd_off + d.off;
			for (c = 0; c < SNAP_STRIPE_NCHUNK; c++) {
				if (d.clen[c] > 0 && n < max &&
				    (b == 0 || pick == 0))
					where[n++] = at + d.clen[c] / 2;
				if (d.clen[c] > 0)
					pick--;
				at += d.clen[c];
			}
		}
	}
	free(f);
	return n;
}

START_TEST(test_flipped_byte_each_stripe)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_info info;
	uint64_t where[512];
	int n, k, n_ev_stripes;

	/* several stripes of events and of elements */
	model_events = 7 * SNAP_STRIPE_MAX;
	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	idx_close(open_ok(src, &o));
	{
		uint64_t off, len;

		find_section(ipath, IDX_SEC_EVDIR, &off, &len);
		n_ev_stripes = (int)(len / sizeof(struct snap_stripedir));
		ck_assert_int_ge(n_ev_stripes, 6);
		find_section(ipath, IDX_SEC_ELDIR, &off, &len);
		ck_assert_uint_ge(len / sizeof(struct snap_stripedir), 3);
	}
	n = chunk_offsets(ipath, where, 512);
	ck_assert_int_gt(n, 20);
	for (k = 0; k < n; k++) {
		/* a quick open does not read the stripe; reading it finds
		 * the damage, and closing removes the file */
		flip_bit(ipath, where[k], k % 8);
		memset(&w, 0, sizeof w);
		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.built, 0);
		ck_assert_int_eq(idx_damaged(ix), 0);
		walk_all(ix);
		ck_assert_msg(idx_damaged(ix), "chunk %d: damage not seen", k);
		idx_close(ix);
		ck_assert_msg(!exists(ipath), "damaged index kept");
		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.built, 1);
		walk_all(ix);
		ck_assert_int_eq(idx_damaged(ix), 0);
		idx_close(ix);
		ck_assert_int_eq(w.n, 0);
		/* a full check (snapview index) finds it at open */
		flip_bit(ipath, where[k], (k + 3) % 8);
		o.verify = IDX_VERIFY_FULL;
		memset(&w, 0, sizeof w);
		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.built, 1);
		ck_assert_msg(strstr(w.last, "coldata") != NULL, "warning: %s",
		    w.all);
		idx_close(ix);
		o.verify = IDX_VERIFY_QUICK;
	}
	model_events = 3000;
	free(src);
	free(ipath);
}
END_TEST

/* Opens src's index (at ipath, its first chunk damaged), reads it whole
 * so that the damage is seen, and hands it back open. */
static struct sv_index *
open_damaged(const char *src, const char *ipath, const struct idx_opts *o)
{
	struct sv_index *ix;
	struct idx_info info;
	uint64_t where[512];

	ck_assert_int_gt(chunk_offsets(ipath, where, 512), 0);
	flip_bit(ipath, where[0], 1);
	ix = open_ok(src, o);
	idx_get_info(ix, &info);
	ck_assert_str_eq(info.path, ipath);
	ck_assert_int_eq(info.built, 0);
	walk_all(ix);
	ck_assert_int_eq(idx_damaged(ix), 1);
	return ix;
}

/* A damaged index is removed on close only when the file at its path is
 * still the one it was mapped from, and the invoking user's (issue 34):
 * never a file put there meanwhile, nor another user's index (which the
 * trust rule uses when its owner owns the snapshot). */
START_TEST(test_damaged_removed_only_ours)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	char *other = tpath("other.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct stat st;

	model_events = 2 * SNAP_STRIPE_MAX;
	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	idx_close(open_ok(src, &o));
	/* ours and the same file: removed */
	ix = open_damaged(src, ipath, &o);
	idx_close(ix);
	ck_assert_msg(!exists(ipath), "our damaged index kept");
	/* another file of ours at the path, with our magic: kept */
	idx_close(open_ok(src, &o));
	ix = open_damaged(src, ipath, &o);
	copy_file(ipath, other);
	ck_assert_int_eq(rename(other, ipath), 0);
	idx_close(ix);
	ck_assert_msg(exists(ipath), "a file that replaced the index removed");
	ck_assert_int_eq(unlink(ipath), 0);
	/* another user's index, trusted as the snapshot's owner's: kept
	 * (only root can give files away) */
	if (geteuid() == 0) {
		idx_close(open_ok(src, &o));
		ck_assert_int_eq(chown(ipath, 65534, 65534), 0);
		ck_assert_int_eq(chown(src, 65534, 65534), 0);
		ix = open_damaged(src, ipath, &o);
		idx_close(ix);
		ck_assert_msg(exists(ipath), "another user's index removed");
		ck_assert_int_eq(lstat(ipath, &st), 0);
		ck_assert_uint_eq(st.st_uid, 65534);
	}
	model_events = 3000;
	free(other);
	free(src);
	free(ipath);
}
END_TEST

/* idx_lod_columns() of [from, to) against the accessors, column by
 * column (columns as idx_lod_columns cuts them). */
static void
check_columns(const struct idx_lod *lod, const struct idx_timeline *tl,
    uint64_t from, uint64_t to, uint32_t ncols, int cold)
{
	struct idx_lod_bucket *cols = xcalloc(ncols, sizeof *cols), b;
	uint64_t span = to - from;
	uint32_t c;

	if (cold)
		snap_stripe_cache_clear();
	idx_lod_columns(lod, tl, from, to, ncols, cols);
	for (c = 0; c < ncols; c++) {
		uint64_t lo = from + span * c / ncols;
		uint64_t hi = from + span * (c + 1) / ncols;

		/* fewer events than columns: each shows one at least */
		if (hi <= lo)
			hi = lo + 1;
		brute(tl, lo, hi, &b);
		ck_assert_msg(memcmp(&cols[c], &b, sizeof b) == 0,
		    "[%llu, %llu) in %u columns, column %u [%llu, %llu)%s",
		    (unsigned long long)from, (unsigned long long)to, ncols,
		    c, (unsigned long long)lo, (unsigned long long)hi,
		    cold ? ", cold" : "");
	}
	free(cols);
}

/* The pyramid's ragged ends are read straight from the event stripes
 * (idx_tl_extremes), several per stripe pass: the same values as the
 * accessors, from a cold cache or a hot one, for columns of any width,
 * runs across stripe boundaries, and a damaged stripe (read as zeros and
 * marked, as through the accessors). */
START_TEST(test_lod_columns_stripes)
{
	char *src = tpath("c.pickle"), *ipath = tpath("c.pickle.snapidx");
	static const uint32_t widths[] = {1, 7, 80, 200, 997, 5000};
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	const struct idx_timeline *tl;
	const struct idx_lod *lod;
	struct idx_tl_run runs[6];
	struct idx_lod_bucket b;
	uint64_t n, rng = 7, off, len, cd_off, cd_len, k;
	struct snap_stripedir d;
	size_t flen;
	uint8_t *f;
	unsigned c, i;

	model_events = 8 * SNAP_STRIPE_MAX + 1234;
	write_file(src, "cols", 4);
	opts_init(&o, &w, 1);
	ix = open_ok(src, &o);
	tl = idx_timeline(ix, 0);
	lod = idx_lod(ix, 0);
	n = tl->n_events;
	ck_assert_uint_ge(tl->ev_stripes->n_stripe, 6);
	for (i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		check_columns(lod, tl, 0, n, widths[i], 1);
		check_columns(lod, tl, 0, n, widths[i], 0);
		check_columns(lod, tl, 300, n - 77, widths[i], 1);
	}
	for (k = 0; k < 40; k++) {
		uint64_t lo, hi;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		lo = (rng >> 20) % n;
		hi = lo + 1 + (rng >> 44) % (n - lo);
		check_columns(lod, tl, lo, hi, 1 + (uint32_t)(rng % 300),
		    (int)(k % 2));
	}
	/* runs across stripe boundaries, next to each other, and empty */
	runs[0].from = 5;
	runs[0].to = SNAP_STRIPE_MAX + 9;
	runs[1].from = SNAP_STRIPE_MAX + 9;
	runs[1].to = SNAP_STRIPE_MAX + 10;
	runs[2].from = 2 * SNAP_STRIPE_MAX - 1;
	runs[2].to = 4 * SNAP_STRIPE_MAX + 1;
	runs[3].from = 4 * SNAP_STRIPE_MAX + 1;
	runs[3].to = 4 * SNAP_STRIPE_MAX + 1;
	runs[4].from = 5 * SNAP_STRIPE_MAX;
	runs[4].to = n;
	runs[5].from = n;
	runs[5].to = n + 10;
	snap_stripe_cache_clear();
	idx_tl_extremes(tl, runs, 6);
	for (i = 0; i < 6; i++) {
		if (runs[i].from >= runs[i].to) {
			ck_assert_uint_eq(runs[i].min_total, 0);
			ck_assert_uint_eq(runs[i].max_total, 0);
			ck_assert_uint_eq(runs[i].max_reserved, 0);
			continue;
		}
		brute(tl, runs[i].from, runs[i].to, &b);
		ck_assert_uint_eq(runs[i].min_total, b.min_total);
		ck_assert_uint_eq(runs[i].max_total, b.max_total);
		ck_assert_uint_eq(runs[i].max_reserved, b.max_reserved);
	}
	ck_assert_int_eq(idx_damaged(ix), 0);
	idx_close(ix);

	/* the size chunk of event stripe 2 damaged: its events read as
	 * zeros, through the columns as through the accessors */
	find_section(ipath, IDX_SEC_COLDATA, &cd_off, &cd_len);
	find_section(ipath, IDX_SEC_EVDIR, &off, &len);
	f = read_file(ipath, &flen);
	memcpy(&d, f + off + 2 * sizeof d, sizeof d);
	free(f);
	off = cd_off + d.off;
	for (c = 0; c < SNAP_EVC_SIZE; c++)
		off += d.clen[c];
	ck_assert_uint_gt(d.clen[SNAP_EVC_SIZE], 0);
	flip_bit(ipath, off + d.clen[SNAP_EVC_SIZE] / 2, 5);
	ix = open_ok(src, &o);
	tl = idx_timeline(ix, 0);
	lod = idx_lod(ix, 0);
	ck_assert_int_eq(idx_damaged(ix), 0);
	check_columns(lod, tl, 0, n, 997, 1);
	ck_assert_int_eq(idx_damaged(ix), 1);
	ck_assert_uint_eq(idx_tl_total(tl, (int64_t)d.first + 100), 0);
	idx_close(ix);
	model_events = 3000;
	free(src);
	free(ipath);
}
END_TEST

START_TEST(test_other_version)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	size_t n;
	uint8_t *b;
	uint64_t h;
	int i;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	b = read_file(ipath, &n);
	b[IDX_OFF_VERSION] = (uint8_t)(IDX_VERSION + 1);
	h = XXH3_64bits(b, IDX_OFF_PRELUDE_HASH);
	for (i = 0; i < 8; i++)
		b[IDX_OFF_PRELUDE_HASH + i] = (uint8_t)(h >> (8 * i));
	write_file(ipath, b, n);
	free(b);
	expect_rebuild(src, &o, &w, "version");
	free(ipath);
	free(src);
}
END_TEST

START_TEST(test_index_of_other_file)
{
	struct idx_opts o;
	struct warns w;
	char *a = built_fixture("a.pickle", &o, &w), *ia, *b, *ib, *from;

	b = tpath("b.pickle");
	xasprintf(&from, "%s/tests/data/real/npu_leak_empty_cache.pickle",
	    TOP_SRCDIR);
	copy_file(from, b);
	xasprintf(&ia, "%s%s", a, IDX_SUFFIX);
	xasprintf(&ib, "%s%s", b, IDX_SUFFIX);
	copy_file(ia, ib);
	expect_rebuild(b, &o, &w, "another file");
	free(from);
	free(a);
	free(b);
	free(ia);
	free(ib);
}
END_TEST

START_TEST(test_foreign_file_kept)
{
	struct idx_opts o;
	struct warns w;
	char *src = tpath("a.pickle"), *ipath, *from;
	static const char text[] = "my notes, not an index\n";
	struct sv_index *ix;
	struct idx_info info;
	size_t n;
	uint8_t *b;
	int pass;

	xasprintf(&from, "%s/tests/data/real/npu_leak_expandable.pickle",
	    TOP_SRCDIR);
	copy_file(from, src);
	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	write_file(ipath, text, sizeof text - 1);
	opts_init(&o, &w, 0);
	for (pass = 0; pass < 3; pass++) {
		o.force_rebuild = pass == 2;
		memset(&w, 0, sizeof w);
		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.in_memory, 0);
		ck_assert(strstr(info.path, "/cache/snapview/") != NULL);
		ck_assert_int_eq(info.built, pass != 1);
		ck_assert_msg(strstr(w.all, "left alone") != NULL, "%s",
		    w.all);
		idx_close(ix);
		b = read_file(ipath, &n);
		ck_assert_uint_eq(n, sizeof text - 1);
		ck_assert_mem_eq(b, text, n);
		free(b);
	}
	/* a symlink at the index path is not ours either */
	unlink(ipath);
	ck_assert_int_eq(symlink("/etc/passwd", ipath), 0);
	o.force_rebuild = 1;
	ix = open_ok(src, &o);
	idx_close(ix);
	{
		char lnk[64];
		ssize_t l = readlink(ipath, lnk, sizeof lnk - 1);

		ck_assert_int_gt(l, 0);
		lnk[l] = '\0';
		ck_assert_str_eq(lnk, "/etc/passwd");
	}
	free(from);
	free(ipath);
	free(src);
}
END_TEST

/* ---- build robustness ---------------------------------------------------- */

static int kill_after;

static int
killing_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	/* past the parse (the first 90%): we are writing */
	if (done > total - total / 10 && --kill_after <= 0)
		raise(SIGKILL);
	return 0;
}

START_TEST(test_interrupted_build)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_info info;
	int k, status;
	static char big[100000];

	/* big enough that the write phase reports progress */
	memset(big, 'm', sizeof big);
	write_file(src, big, sizeof big);
	for (k = 1; k <= 12; k += 5) {
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			opts_init(&o, &w, 1);
			o.progress = killing_progress;
			o.force_rebuild = 1;
			kill_after = k;
			ix = NULL;
			{
				struct sv_error err;

				idx_open(src, &o, &ix, &err);
			}
			_exit(0);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		/* nothing at the index path; a temp file left over */
		if (k == 1)
			ck_assert(!exists(ipath));
		ck_assert_int_ge(count_files(tmpdir, IDX_TMP_INFIX), 1);
		opts_init(&o, &w, 1);
		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.built, k == 1);
		ck_assert_int_eq(w.n, 0);
		idx_close(ix);
	}
	{
		struct snapshot *ref = make_snap(model_events);

		ix = open_ok(src, &o);
		assert_same_snapshot(idx_snapshot(ix), ref);
		idx_close(ix);
		snap_free(ref);
	}
	free(src);
	free(ipath);
}
END_TEST

START_TEST(test_concurrent_builders)
{
	char *src = tpath("m.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct snapshot *ref;
	pid_t pids[4];
	int i, status;

	write_file(src, "model", 5);
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			int k, bad = 0;

			ref = make_snap(model_events);
			for (k = 0; k < 6; k++) {
				struct sv_error err;

				opts_init(&o, &w, 1);
				o.force_rebuild = (k + i) % 2;
				if (idx_open(src, &o, &ix, &err) != 0) {
					bad = 1;
					continue;
				}
				/* a concurrent rebuild is fine; corrupt
				 * or foreign is not */
				if (strstr(w.all, "left alone") != NULL ||
				    strstr(w.all, "memory") != NULL)
					bad = 1;
				if (idx_snapshot(ix)->traces[0].n !=
				    ref->traces[0].n)
					bad = 1;
				idx_close(ix);
			}
			snap_free(ref);
			_exit(bad);
		}
	}
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), 0);
	}
	opts_init(&o, &w, 1);
	ix = open_ok(src, &o);
	ck_assert_int_eq(w.n, 0);
	ref = make_snap(model_events);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	snap_free(ref);
	idx_close(ix);
	ck_assert_int_eq(count_files(tmpdir, IDX_TMP_INFIX), 0);
	free(src);
}
END_TEST

/* ---- locations ----------------------------------------------------------- */

/* Runs fn in a child that is not root (directory permissions would not
 * stop root); returns its exit status. */
static int
as_user(int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (geteuid() == 0 &&
		    (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(99);
		_exit(fn());
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static char *ro_src;

static int
open_ro_child(void)
{
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_info info;
	struct sv_error err;
	int r = 0;

	opts_init(&o, &w, 1);
	if (idx_open(ro_src, &o, &ix, &err) != 0)
		return 10;
	idx_get_info(ix, &info);
	if (getenv("EXPECT_MEMORY") != NULL) {
		if (!info.in_memory || w.n == 0 ||
		    strstr(w.last, "memory") == NULL)
			r = 11;
	} else if (info.in_memory || info.path == NULL ||
	    strstr(info.path, "/xdg/snapview/") == NULL || w.n != 0) {
		r = 12;
	}
	if (r != 0)
		fprintf(stderr, "open_ro_child: %s (warnings: %s)\n",
		    info.path != NULL ? info.path : "(memory)", w.all);
	if (idx_snapshot(ix)->traces[0].n != model_n())
		r = 13;
	idx_close(ix);
	return r;
}

START_TEST(test_readonly_dir_uses_cache)
{
	char *dir = tpath("ro"), *xdg = tpath("xdg");

	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(mkdir(xdg, 0777), 0);
	ck_assert_int_eq(chmod(xdg, 0777), 0);
	ro_src = tpath("ro/m.pickle");
	write_file(ro_src, "model", 5);
	ck_assert_int_eq(chmod(dir, 0555), 0);
	setenv("XDG_CACHE_HOME", xdg, 1);
	ck_assert_int_eq(as_user(open_ro_child), 0);
	/* the second open finds it in the cache */
	ck_assert_int_eq(as_user(open_ro_child), 0);
	ck_assert_int_eq(count_files(dir, IDX_SUFFIX), 0);
	free(dir);
	free(xdg);
	free(ro_src);
}
END_TEST

START_TEST(test_unwritable_everything_memory)
{
	char *dir = tpath("ro"), *xdg = tpath("xdg");

	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(mkdir(xdg, 0555), 0);
	ro_src = tpath("ro/m.pickle");
	write_file(ro_src, "model", 5);
	ck_assert_int_eq(chmod(dir, 0555), 0);
	setenv("XDG_CACHE_HOME", xdg, 1);
	setenv("EXPECT_MEMORY", "1", 1);
	ck_assert_int_eq(as_user(open_ro_child), 0);
	unsetenv("EXPECT_MEMORY");
	free(dir);
	free(xdg);
	free(ro_src);
}
END_TEST

START_TEST(test_no_cache_and_cache_dir)
{
	char *src = tpath("m.pickle"), *cd = tpath("mycache");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_info info;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	o.no_cache = 1;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.in_memory, 1);
	ck_assert_ptr_null(info.path);
	ck_assert_uint_eq(idx_timeline(ix, 0)->n_events, model_n());
	ck_assert_uint_gt(idx_lod(ix, 0)->n_levels, 0);
	idx_close(ix);
	ck_assert_int_eq(count_files(tmpdir, IDX_SUFFIX), 0);
	ck_assert(!exists(getenv("XDG_CACHE_HOME")));

	o.no_cache = 0;
	o.cache_dir = cd;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 1);
	ck_assert(strncmp(info.path, cd, strlen(cd)) == 0);
	idx_close(ix);
	ck_assert_int_eq(count_files(cd, IDX_SUFFIX), 1);
	ck_assert_int_eq(count_files(tmpdir, IDX_SUFFIX), 0);
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	free(src);
	free(cd);
}
END_TEST

/* ---- extension sections -------------------------------------------------- */

static int n_ext_builds;

static int
ext_build(const struct snapshot *s, void *arg, uint8_t **data, size_t *len,
    struct sv_error *err)
{
	uint64_t i, n = s->traces[0].n;
	uint64_t *d = xmalloc(n * 8 + 8);

	(void)err;
	n_ext_builds++;
	/* something derived from the events and the argument */
	for (i = 0; i < n; i++)
		d[i] = snap_ev_addr(&s->traces[0], i) ^
		    (uint64_t)(uintptr_t)arg;
	*data = (uint8_t *)d;
	*len = n * 8;
	return 0;
}

START_TEST(test_extension_sections)
{
	char *src = tpath("m.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_section_builder secs[2] = {
	    {.name = "replay.ckpt", .build = ext_build,
		.arg = (void *)(uintptr_t)5},
	    {.name = "other", .build = ext_build,
		.arg = (void *)(uintptr_t)9}};
	const uint8_t *d;
	size_t len;
	struct snapshot *ref = make_snap(model_events);
	uint64_t i;
	struct idx_info info;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	o.sections = secs;
	o.n_sections = 1;
	n_ext_builds = 0;
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 1);
	ck_assert_int_eq(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_uint_eq(len, ref->traces[0].n * 8);
	ck_assert_int_ne(idx_section(ix, "other", &d, &len), 0);
	idx_close(ix);

	/* reopen: stored, not rebuilt */
	n_ext_builds = 0;
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 0);
	ck_assert_int_eq(idx_section(ix, "replay.ckpt", &d, &len), 0);
	for (i = 0; i < ref->traces[0].n; i++)
		ck_assert_uint_eq(((const uint64_t *)d)[i],
		    snap_ev_addr(&ref->traces[0], i) ^ 5);
	idx_close(ix);

	/* a new section: built from the mapped index, file rewritten */
	o.n_sections = 2;
	n_loads = 0;
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 1);
	ck_assert_int_eq(n_loads, 0);
	ck_assert_int_eq(idx_section(ix, "other", &d, &len), 0);
	ck_assert_uint_eq(((const uint64_t *)d)[3],
	    snap_ev_addr(&ref->traces[0], 3) ^ 9);
	idx_close(ix);
	n_ext_builds = 0;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	ck_assert_int_eq(n_ext_builds, 0);
	ck_assert_int_eq(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_int_eq(idx_section(ix, "other", &d, &len), 0);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	snap_free(ref);
	free(src);
}
END_TEST

/* Makes an index whose section bytes were changed in place valid again
 * (as a hostile writer would): every TOC hash recomputed, the header
 * repacked (in place when it fits, else appended) and the prelude fixed. */
static void
rehash_index(const char *ipath)
{
	size_t n, moff = 0, out_n;
	uint8_t *b = read_file(ipath, &n), *out;
	uint64_t hoff = 0, hlen = 0, h;
	msgpack_unpacked res;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_object *toc = NULL;
	uint32_t i;
	int k;

	for (k = 0; k < 8; k++) {
		hoff |= (uint64_t)b[IDX_OFF_HEADER_OFF + k] << (8 * k);
		hlen |= (uint64_t)b[IDX_OFF_HEADER_LEN + k] << (8 * k);
	}
	msgpack_unpacked_init(&res);
	ck_assert_int_eq(msgpack_unpack_next(&res, (char *)b + hoff, hlen,
			     &moff),
	    MSGPACK_UNPACK_SUCCESS);
	for (i = 0; i < res.data.via.map.size; i++) {
		msgpack_object_kv *kv = &res.data.via.map.ptr[i];

		if (kv->key.via.str.size == 3 &&
		    memcmp(kv->key.via.str.ptr, "toc", 3) == 0)
			toc = &kv->val;
	}
	ck_assert_ptr_nonnull(toc);
	for (i = 0; i < toc->via.array.size; i++) {
		msgpack_object *e = toc->via.array.ptr[i].via.array.ptr;

		e[5].via.u64 = XXH3_64bits(b + e[1].via.u64, e[2].via.u64);
	}
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_object(&pk, res.data);
	out_n = sb.size <= hlen ? n : (size_t)hoff + sb.size;
	out = xcalloc(1, out_n);
	memcpy(out, b, n < out_n ? n : out_n);
	memcpy(out + hoff, sb.data, sb.size);
	h = XXH3_64bits(sb.data, sb.size);
	for (k = 0; k < 8; k++) {
		out[IDX_OFF_HEADER_LEN + k] = (uint8_t)(sb.size >> (8 * k));
		out[IDX_OFF_HEADER_HASH + k] = (uint8_t)(h >> (8 * k));
	}
	h = XXH3_64bits(out, IDX_OFF_PRELUDE_HASH);
	for (k = 0; k < 8; k++)
		out[IDX_OFF_PRELUDE_HASH + k] = (uint8_t)(h >> (8 * k));
	write_file(ipath, out, out_n);
	msgpack_sbuffer_destroy(&sb);
	msgpack_unpacked_destroy(&res);
	free(out);
	free(b);
}

/* A device number in an index is range-checked like the loader's: a
 * hostile index naming device 0xfffffffe is rebuilt, not believed (it
 * made `stats` allocate 4.2 GB). */
/* A device without the WRAP flag is read with int64 sums, exact only
 * while every sum stays below 2^62 in magnitude (what the builder flags
 * WRAP past): a stripe whose stored base breaks that rule (a hostile
 * writer's, hashes made right) is damage, found when its totals or
 * reserved bytes are read, not sums read modulo 2^64. */
START_TEST(test_int64_rule)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	const struct idx_timeline *tl;
	struct sv_index *ix;
	uint64_t off, len, big = (uint64_t)1 << 62;
	uint64_t neg = 0 - big;
	int fd;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	/* the good index reads without damage */
	ix = open_ok(src, &o);
	walk_all(ix);
	ck_assert_int_eq(idx_damaged(ix), 0);
	idx_close(ix);
	/* base[0] (totals), then base[1] (reserved, below -2^62) */
	find_section(ipath, IDX_SEC_EVDIR, &off, &len);
	ck_assert_uint_ge(len, sizeof(struct snap_stripedir));
	fd = open(ipath, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &big, 8, (off_t)(off +
	    offsetof(struct snap_stripedir, base))), 8);
	close(fd);
	rehash_index(ipath);
	ix = open_ok(src, &o);
	ck_assert_int_eq(idx_damaged(ix), 0);
	tl = idx_timeline(ix, 0);
	ck_assert_ptr_nonnull(tl);
	ck_assert_uint_gt(tl->n_events, 0);
	(void)idx_tl_total(tl, 0);
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_close(ix);
	ck_assert(!exists(ipath));
	idx_close(open_ok(src, &o)); /* rebuilt */
	find_section(ipath, IDX_SEC_EVDIR, &off, &len);
	fd = open(ipath, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &neg, 8, (off_t)(off +
	    offsetof(struct snap_stripedir, base) + 8)), 8);
	close(fd);
	rehash_index(ipath);
	ix = open_ok(src, &o);
	tl = idx_timeline(ix, 0);
	(void)idx_tl_reserved(tl, 0);
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_close(ix);
	free(ipath);
	free(src);
}
END_TEST

START_TEST(test_device_out_of_range)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	uint64_t off, len;
	uint32_t dev = 0xfffffffeu;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	find_section(ipath, IDX_SEC_SEGMENTS, &off, &len);
	ck_assert_uint_ge(len, sizeof(struct snap_segment));
	{
		int fd = open(ipath, O_RDWR);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pwrite(fd, &dev, 4, (off_t)(off +
		    offsetof(struct snap_segment, device))), 4);
		close(fd);
	}
	rehash_index(ipath);
	expect_rebuild(src, &o, &w, "inconsistent");
	free(ipath);
	free(src);
}
END_TEST

static uint32_t many_segments;

/* make_snap() with many more segments (device 0, empty). */
static int
segs_load(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err)
{
	struct snapshot *s;
	uint32_t i;

	(void)path;
	(void)lo;
	(void)err;
	s = make_snap(300);
	for (i = 0; i < many_segments; i++) {
		struct snap_segment *g = snap_push_segment(s);

		g->addr = 0x40000000ull + (uint64_t)i * 0x200000;
		g->total_size = 0x200000;
		g->first_block = s->n_blocks;
	}
	snap_finish(s);
	*out = s;
	return 0;
}

/* The quick open hashes every section but the column data, whatever its
 * size: one byte changed in a 1.6 MB segments section is seen (it was
 * accepted when sections over 1 MiB were left to a full check). */
START_TEST(test_big_section_hashed)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	uint64_t off, len;

	many_segments = 20000;
	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	o.load = segs_load;
	idx_close(open_ok(src, &o));
	find_section(ipath, IDX_SEC_SEGMENTS, &off, &len);
	ck_assert_uint_gt(len, 1u << 20);
	flip_bit(ipath, off + len / 2, 5);
	memset(&w, 0, sizeof w);
	idx_close(open_ok(src, &o));
	ck_assert_int_eq(w.n, 1);
	ck_assert_msg(strstr(w.last, "section segments") != NULL, "%s", w.all);
	free(src);
	free(ipath);
}
END_TEST

static uint64_t
small_bound(const struct snapshot *s, void *arg)
{
	(void)s;
	(void)arg;
	return 16;
}

/* idx_peek_section(): one section of an index idx_open() would use,
 * the same bytes, without opening it; nothing when there is no index, no
 * such section, a damaged one, a stale index or one it does not trust. */
START_TEST(test_peek_section)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_section_builder sec = {.name = "peek.me",
	    .build = ext_build, .arg = (void *)(uintptr_t)7};
	struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000, 0}};
	struct sv_error err;
	const uint8_t *d;
	uint8_t *p;
	size_t len, plen;
	uint64_t off, slen;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	o.sections = &sec;
	o.n_sections = 1;
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 1);
	ix = open_ok(src, &o);
	ck_assert_int_eq(idx_section(ix, "peek.me", &d, &len), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 0);
	ck_assert_uint_eq(plen, len);
	ck_assert_int_eq(memcmp(p, d, len), 0);
	free(p);
	idx_close(ix);
	/* too long, another name */
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", len - 1, &p,
	    &plen, &err), 1);
	ck_assert_int_eq(idx_peek_section(src, &o, "other", 1 << 20, &p,
	    &plen, &err), 1);
	ck_assert_ptr_null(p);
	/* not trusted: writable by the group */
	ck_assert_int_eq(chmod(ipath, 0620), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 1);
	ck_assert_int_eq(chmod(ipath, 0600), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 0);
	free(p);
	/* damaged */
	find_section(ipath, "x.peek.me", &off, &slen);
	flip_bit(ipath, off + slen / 2, 3);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 1);
	flip_bit(ipath, off + slen / 2, 3);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 0);
	free(p);
	/* stale: the snapshot changed */
	ck_assert_int_eq(utimensat(AT_FDCWD, src, ts, 0), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 1);
	/* no snapshot at all */
	ck_assert_int_eq(unlink(src), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), -1);
	ck_assert_int_eq(w.n, 0);
	free(src);
	free(ipath);
}
END_TEST

/* Extension sections: only the names the opener registers are read, each
 * checked and decompressed when first asked for, and one longer than its
 * builder's bound is not read (it is built again). */
START_TEST(test_extension_sections_lazy)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_section_builder sec = {.name = "replay.ckpt",
	    .build = ext_build, .arg = (void *)(uintptr_t)5};
	const uint8_t *d;
	size_t len;
	uint64_t off, slen;
	struct idx_info info;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	o.sections = &sec;
	o.n_sections = 1;
	idx_close(open_ok(src, &o));
	find_section(ipath, "x.replay.ckpt", &off, &slen);
	flip_bit(ipath, off + slen / 2, 1);

	/* an opener that does not know the name never reads it */
	o.n_sections = 0;
	ix = open_ok(src, &o);
	ck_assert_int_ne(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_int_eq(idx_damaged(ix), 0);
	idx_close(ix);
	ck_assert(exists(ipath));
	ck_assert_int_eq(w.n, 0);

	/* one that does: the open does not read it, the first use does and
	 * finds the damage (the index is then removed) */
	o.n_sections = 1;
	n_ext_builds = 0;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	ck_assert_int_eq(idx_damaged(ix), 0);
	ck_assert_int_ne(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_close(ix);
	ck_assert(!exists(ipath));
	ck_assert_int_eq(w.n, 0);
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 1);
	ck_assert_int_eq(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_uint_eq(((const uint64_t *)d)[2],
	    snap_ev_addr(&idx_snapshot(ix)->traces[0], 2) ^ 5);
	idx_close(ix);

	/* over its bound: not read, built again */
	sec.max_len = small_bound;
	n_ext_builds = 0;
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 1);
	idx_close(ix);
	free(src);
	free(ipath);
}
END_TEST

/* Sizes a hostile file gives (2^63 and more): totals beyond 2^62 set
 * the device's WRAP flag, and the index then reads its totals by the
 * same saturating rule as the timeline builder (idx_timeline.c): a sum
 * of changes saturated to int64_t, bases saturated, totals clamped to
 * [0, 2^64 - 1]; reserved bytes exact in 128 bits, clamped. */
static int wrap_case;

static int
wrap_load(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	const uint64_t A = 0x7f0000000000ull, H = 1ull << 63;
	struct snap_segment *sg;
	struct snap_block *b;
	uint64_t i;

	(void)path;
	(void)lo;
	(void)err;
	switch (wrap_case) {
	case 0: /* a request of 2^64 - 1 bytes after one of 100 */
		snap_trace_push(s, t, SNAP_ALLOC, A, 100, 0, 0);
		snap_trace_push(s, t, SNAP_ALLOC, A + 512, UINT64_MAX, 0, 0);
		break;
	case 1: /* three of 2^62 */
		for (i = 0; i < 3; i++)
			snap_trace_push(s, t, SNAP_ALLOC, A + i * 512,
			    1ull << 62, 0, 0);
		snap_trace_push(s, t, SNAP_FREE_COMPLETED, A, 1ull << 62, 0,
		    0);
		break;
	case 2: /* a segment of 2^63 made and freed */
		snap_trace_push(s, t, SNAP_SEGMENT_ALLOC, A, H, 0, 0);
		snap_trace_push(s, t, SNAP_ALLOC, A, 512, 0, 0);
		snap_trace_push(s, t, SNAP_SEGMENT_FREE, A, H, 0, 0);
		break;
	case 3: /* a final segment of 2^64 - 1 bytes */
		sg = snap_push_segment(s);
		sg->addr = 0;
		sg->total_size = UINT64_MAX;
		sg->first_block = s->n_blocks;
		sg->n_blocks = 1;
		b = snap_push_block(s);
		b->addr = 0;
		b->size = UINT64_MAX;
		b->state = SNAP_BLOCK_INACTIVE;
		t = snap_trace_get(s, 0);
		snap_trace_push(s, t, SNAP_ALLOC, 4096, 100, 0, 0);
		break;
	case 4: /* (allocator) blocks of 2^63 + 5 freed before any alloc */
		snap_trace_push(s, t, SNAP_FREE_COMPLETED, A, H + 5, 0, 0);
		snap_trace_push(s, t, SNAP_FREE_COMPLETED, A + 512, H + 5, 0,
		    0);
		snap_trace_push(s, t, SNAP_ALLOC, A, 10, 0, 0);
		break;
	default: /* across stripes: 2^63 allocated in one, freed (saying
		  * another size) in another */
		for (i = 0; i < 3 * SNAP_STRIPE_MAX; i++) {
			uint64_t a = A + 4096 + (i / 2 % 64) * 512;

			if (i == SNAP_STRIPE_MAX + 7)
				snap_trace_push(s, t, SNAP_ALLOC, A, H, 0, 0);
			else if (i == 2 * SNAP_STRIPE_MAX + 9)
				snap_trace_push(s, t, SNAP_FREE_COMPLETED, A,
				    7, 0, 0);
			else
				snap_trace_push(s, t, i % 2 ?
				    SNAP_FREE_COMPLETED : SNAP_ALLOC, a,
				    64 + i % 100, 0, 0);
		}
		break;
	}
	snap_finish(s);
	*out = s;
	return 0;
}

START_TEST(test_wrap_totals)
{
	char *src = tpath("w.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct snapshot *ref;
	struct sv_error err;
	int pass;

	write_file(src, "wrap", 4);
	wrap_case = _i;
	wrap_load(NULL, NULL, &ref, &err);
	for (pass = 0; pass < 2; pass++) {
		opts_init(&o, &w, 1);
		o.load = wrap_load;
		ix = open_ok(src, &o);
		assert_same_timelines(ix, ref);
		ck_assert_int_eq(idx_damaged(ix), 0);
		idx_close(ix);
	}
	snap_free(ref);
	free(src);
}
END_TEST

/* Only frees of blocks allocated before the trace: the highest total is
 * the state before the first event (issue 12), peak_ev -1. With
 * model_events 2, a free and an alloc of the same size: the total comes
 * back to where it started, and the state before the first event is
 * still the first to reach the peak (issue 30: not event #1). */
static int
pre_load(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);

	(void)path;
	(void)lo;
	(void)err;
	snap_trace_push(s, t, SNAP_FREE_COMPLETED, 0x1000, 1000, 0, 0);
	if (model_events == 2) {
		snap_trace_push(s, t, SNAP_ALLOC, 0x4000, 1000, 0, 0);
		snap_finish(s);
		*out = s;
		return 0;
	}
	snap_trace_push(s, t, SNAP_FREE_REQUESTED, 0x2000, 500, 0, 0);
	snap_trace_push(s, t, SNAP_FREE_COMPLETED, 0x2000, 500, 0, 0);
	if (model_events > 3) {
		/* and later an alloc above the start */
		snap_trace_push(s, t, SNAP_ALLOC, 0x3000, 4000, 0, 0);
	}
	snap_finish(s);
	*out = s;
	return 0;
}

START_TEST(test_peak_before_first_event)
{
	char *src = tpath("p.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	const struct idx_timeline *tl;
	struct idx_timeline ht;
	struct snapshot *ref;
	struct sv_error err;
	int pass;

	write_file(src, "peak", 4);
	for (pass = 0; pass < 3; pass++) {
		model_events = pass == 0 ? 3 : pass == 1 ? 4 : 2;
		opts_init(&o, &w, 1);
		o.load = pre_load;
		o.force_rebuild = 1;
		ix = open_ok(src, &o);
		tl = idx_timeline(ix, 0);
		ck_assert_ptr_nonnull(tl);
		if (pass == 2) {
			ck_assert_uint_eq(tl->base_total, 1000);
			ck_assert_uint_eq(idx_tl_total(tl, 0), 0);
			ck_assert_uint_eq(idx_tl_total(tl, 1), 1000);
			ck_assert_uint_eq(tl->peak, 1000);
			ck_assert_int_eq(tl->peak_ev, IDX_NO_EVENT);
		} else {
			ck_assert_uint_eq(tl->base_total, 1500);
			ck_assert_uint_eq(idx_tl_total(tl, 0), 500);
		}
		if (pass == 2) {
			/* checked above */
		} else if (pass == 0) {
			ck_assert_uint_eq(tl->peak, 1500);
			ck_assert_int_eq(tl->peak_ev, IDX_NO_EVENT);
		} else {
			ck_assert_uint_eq(tl->peak, 4000);
			ck_assert_int_eq(tl->peak_ev, 3);
		}
		/* the heap builder agrees */
		pre_load(NULL, NULL, &ref, &err);
		ck_assert_int_eq(idx_timeline_build(ref, 0, &ht, &err), 0);
		ck_assert_uint_eq(ht.peak, tl->peak);
		ck_assert_int_eq(ht.peak_ev, tl->peak_ev);
		idx_timeline_destroy(&ht);
		snap_free(ref);
		idx_close(ix);
	}
	model_events = 3000;
	free(src);
}
END_TEST

/* Readers on several threads at once: each has its own cache entries
 * (snapshot/snap_stripe.c), so they read the same values as one alone. */
struct walker {
	const struct sv_index *ix;
	uint64_t sum;
	pthread_t th;
};

static uint64_t
sum_all(const struct sv_index *ix)
{
	const struct snapshot *s = idx_snapshot(ix);
	uint32_t d, n = snap_device_count(s);
	uint64_t acc = 0, k;

	for (d = 0; d < n; d++) {
		const struct idx_timeline *tl = idx_timeline(ix, d);
		const struct snap_trace *t = snap_trace_of(s, d);

		for (k = 0; t != NULL && k < t->n; k++)
			acc = acc * 31 + snap_ev_addr(t, k) +
			    snap_ev_size(t, k) + (uint64_t)snap_ev_time(t, k) +
			    snap_ev_stack(t, k);
		for (k = 0; tl != NULL && k < tl->n_events; k++)
			acc = acc * 31 + idx_tl_total(tl, (int64_t)k) +
			    idx_tl_ev_elem(tl, k);
		/* and out of order, across stripes */
		for (k = 0; tl != NULL && k < tl->n_elems; k += 7)
			acc = acc * 31 + idx_tl_elem(tl, (k * 7919) %
			    tl->n_elems).addr;
	}
	return acc;
}

static void *
walker_run(void *arg)
{
	struct walker *w = arg;

	w->sum = sum_all(w->ix);
	return NULL;
}

START_TEST(test_threads_read)
{
	char *src = tpath("m.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct walker wk[4];
	uint64_t want;
	int i;

	model_events = 3 * SNAP_STRIPE_MAX;
	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	ix = open_ok(src, &o);
	want = sum_all(ix);
	for (i = 0; i < 4; i++) {
		wk[i].ix = ix;
		ck_assert_int_eq(pthread_create(&wk[i].th, NULL, walker_run,
		    &wk[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(wk[i].th, NULL), 0);
		ck_assert_uint_eq(wk[i].sum, want);
	}
	ck_assert_int_eq(idx_damaged(ix), 0);
	idx_close(ix);
	model_events = 3000;
	free(src);
}
END_TEST

/* The extension sections of a build read the stripes just written
 * through the file's mapping, whose pages are given back every
 * SNAP_STRIPE_DROP_EVERY bytes of chunks read (snapshot/snap_stripe.c): a
 * builder that reads every stripe again and again, well past that, on two
 * threads at once, reads what a reopened index reads, whether the index
 * is built into a file or into memory (where nothing may be given back). */
#define DROP_PASSES 40

static int
reread_build(const struct sv_index *ix, void *arg, uint8_t **data,
    size_t *len, struct sv_error *err)
{
	uint64_t *sum = xcalloc(1, sizeof *sum);
	int k;

	(void)arg;
	(void)err;
	for (k = 0; k < DROP_PASSES; k++) {
		snap_stripe_cache_clear();
		*sum = *sum * 31 + sum_all(ix);
	}
	*data = (uint8_t *)sum;
	*len = sizeof *sum;
	return 0;
}

static uint64_t
reread_want(const struct sv_index *ix)
{
	uint64_t want = 0;
	int k;

	for (k = 0; k < DROP_PASSES; k++)
		want = want * 31 + sum_all(ix);
	return want;
}

START_TEST(test_extension_reads_dropped_pages)
{
	char *src = tpath("m.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_section_builder secs[2] = {
	    {.name = "reread.a", .build_index = reread_build},
	    {.name = "reread.b", .build_index = reread_build}};
	const uint8_t *d;
	size_t len;
	uint64_t got;
	int mem;

	model_events = 3 * SNAP_STRIPE_MAX;
	write_file(src, "model", 5);
	for (mem = 0; mem < 2; mem++) {
		opts_init(&o, &w, 1);
		o.sections = secs;
		o.n_sections = 2;
		o.no_cache = mem;
		ix = open_ok(src, &o);
		ck_assert_int_eq(idx_section(ix, "reread.a", &d, &len), 0);
		ck_assert_uint_eq(len, sizeof got);
		memcpy(&got, d, sizeof got);
		ck_assert_uint_eq(got, reread_want(ix));
		ck_assert_int_eq(idx_section(ix, "reread.b", &d, &len), 0);
		memcpy(&got, d, sizeof got);
		ck_assert_uint_eq(got, reread_want(ix));
		ck_assert_int_eq(idx_damaged(ix), 0);
		idx_close(ix);
	}
	model_events = 3000;
	free(src);
}
END_TEST

/* A section over IDX_LZ4_PIECE is stored as LZ4 pieces, one piece's
 * buffer at a time: it reads back whole. */
static int
big_build(const struct snapshot *s, void *arg, uint8_t **data, size_t *len,
    struct sv_error *err)
{
	size_t n = (size_t)(uintptr_t)arg, i;
	uint8_t *d = xmalloc(n);

	(void)s;
	(void)err;
	for (i = 0; i < n; i++)
		d[i] = (uint8_t)(i * 2654435761u >> 13);
	*data = d;
	*len = n;
	return 0;
}

START_TEST(test_extension_chunked)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	size_t n = 2 * IDX_LZ4_PIECE + 7, len, i;
	struct idx_section_builder sec = {.name = "big", .build = big_build,
	    .arg = (void *)(uintptr_t)n};
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	const uint8_t *d;
	uint64_t off, slen;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	o.sections = &sec;
	o.n_sections = 1;
	idx_close(open_ok(src, &o));
	ix = open_ok(src, &o);
	ck_assert_int_eq(idx_section(ix, "big", &d, &len), 0);
	ck_assert_uint_eq(len, n);
	for (i = 0; i < n; i++)
		if (d[i] != (uint8_t)(i * 2654435761u >> 13))
			ck_abort_msg("byte %zu differs", i);
	idx_close(ix);
	/* a changed byte in the last chunk is found when read */
	find_section(ipath, "x.big", &off, &slen);
	flip_bit(ipath, off + slen - 3, 2);
	ix = open_ok(src, &o);
	ck_assert_int_ne(idx_section(ix, "big", &d, &len), 0);
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	/* crafted chunk lengths with the hashes made right: refused, no
	 * read past the section nor the buffer */
	{
		static const uint32_t bad[][2] = {{0xffffffffu, 16},
		    {16, 0xffffffffu}, {16, 0}, {0, 16}};
		int k;

		for (k = 0; k < 4; k++) {
			int fd;

			idx_close(open_ok(src, &o)); /* a good one again */
			find_section(ipath, "x.big", &off, &slen);
			fd = open(ipath, O_RDWR);
			ck_assert_int_ge(fd, 0);
			ck_assert_int_eq(pwrite(fd, bad[k], 8, (off_t)off), 8);
			close(fd);
			rehash_index(ipath);
			ix = open_ok(src, &o);
			ck_assert_int_ne(idx_section(ix, "big", &d, &len), 0);
			idx_close(ix);
		}
	}
	free(src);
	free(ipath);
}
END_TEST

/* ---- a pickle written here: interleaved devices, late frees ----------- */

static void
pk_bytes(FILE *f, const void *p, size_t n)
{
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
}

static void
pk_ustr(FILE *f, const char *s)
{
	uint32_t n = (uint32_t)strlen(s);
	uint8_t h[5] = {'X', (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16),
	    (uint8_t)(n >> 24)};

	pk_bytes(f, h, 5);
	pk_bytes(f, s, n);
}

static void
pk_int(FILE *f, uint64_t v)
{
	uint8_t b[10];
	int k;

	b[0] = 0x8a; /* LONG1: 8 bytes, little-endian, two's complement */
	b[1] = 9;
	for (k = 0; k < 8; k++)
		b[2 + k] = (uint8_t)(v >> (8 * k));
	pk_bytes(f, b, 10);
	pk_bytes(f, "", 1); /* a 9th byte: 0, so the value stays positive */
}

static void
pk_event(FILE *f, const char *action, uint64_t addr, uint64_t size,
    uint64_t time)
{
	pk_bytes(f, "}(", 2);
	pk_ustr(f, "action");
	pk_ustr(f, action);
	pk_ustr(f, "addr");
	pk_int(f, addr);
	pk_ustr(f, "size");
	pk_int(f, size);
	pk_ustr(f, "stream");
	pk_int(f, 0);
	pk_ustr(f, "time_us");
	pk_int(f, time);
	pk_bytes(f, "u", 1);
}

/* device_traces given twice (a later key wins in Python; the loader takes
 * both): device 0's events come in two runs, device 1's between them.
 * Device 0 allocates n blocks, then frees them all in the second run,
 * long after their element stripes were written (late frees). */
static void
write_interleaved(const char *path, uint64_t n)
{
	FILE *f = fopen(path, "wb");
	uint64_t i, tm = 1000;

	ck_assert_ptr_nonnull(f);
	pk_bytes(f, "\x80\x02}(", 4);
	/* lists as CPython writes them: EMPTY_LIST, MARK, items, APPENDS */
	pk_ustr(f, "device_traces");
	pk_bytes(f, "](](", 4);
	for (i = 0; i < n; i++)
		pk_event(f, "alloc", 0x100000 + i * 512, 100 + i % 300, tm++);
	pk_bytes(f, "e](", 3);
	for (i = 0; i < 100; i++)
		pk_event(f, i % 2 ? "free_completed" : "alloc",
		    0x900000 + i / 2 * 512, 64, tm++);
	pk_bytes(f, "ee", 2);
	pk_ustr(f, "device_traces");
	pk_bytes(f, "](](", 4);
	for (i = n; i-- > 0;) {
		/* every 5th free names a size other than its alloc's */
		pk_event(f, "free_completed", 0x100000 + i * 512,
		    i % 5 ? 100 + i % 300 : 7, tm++);
	}
	pk_event(f, "free_completed", 0x42, 77, tm++); /* never allocated */
	pk_bytes(f, "ee", 2);
	pk_bytes(f, "u.", 2);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_interleaved_late_frees)
{
	char *src = tpath("i.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct snapshot *ref;
	struct sv_error err;
	const struct idx_timeline *tl;
	int pass;

	write_interleaved(src, 5 * SNAP_STRIPE_MAX + 100);
	ck_assert_int_eq(snap_load_file(src, NULL, &ref, &err), 0);
	ck_assert_uint_eq(ref->traces[0].n,
	    2 * (5 * SNAP_STRIPE_MAX + 100) + 1);
	opts_init(&o, &w, 0);
	for (pass = 0; pass < 2; pass++) {
		ix = open_ok(src, &o);
		assert_same_snapshot(idx_snapshot(ix), ref);
		assert_same_timelines(ix, ref);
		tl = idx_timeline(ix, 0);
		ck_assert_int_eq(idx_tl_elem(tl, 0).free_ev,
		    (int64_t)(2 * (5 * SNAP_STRIPE_MAX + 100) - 1));
		idx_close(ix);
	}
	ck_assert_int_eq(w.n, 0);
	snap_free(ref);
	free(src);
}
END_TEST

static Suite *
index_suite(void)
{
	Suite *s = suite_create("index");
	TCase *tc = tcase_create("index");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_roundtrip_model);
	tcase_add_loop_test(tc, test_roundtrip_fixture, 0,
	    (int)(sizeof fixtures / sizeof fixtures[0]));
	tcase_add_test(tc, test_lod_ranges);
	tcase_add_test(tc, test_lod_columns_stripes);
	tcase_add_test(tc, test_stale_size);
	tcase_add_test(tc, test_stale_mtime);
	tcase_add_test(tc, test_stale_content);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_flipped_bit_each_section);
	tcase_add_test(tc, test_flipped_byte_each_stripe);
	tcase_add_test(tc, test_damaged_removed_only_ours);
	tcase_add_test(tc, test_other_version);
	tcase_add_test(tc, test_index_of_other_file);
	tcase_add_test(tc, test_foreign_file_kept);
	tcase_add_test(tc, test_interrupted_build);
	tcase_add_test(tc, test_concurrent_builders);
	tcase_add_test(tc, test_readonly_dir_uses_cache);
	tcase_add_test(tc, test_unwritable_everything_memory);
	tcase_add_test(tc, test_no_cache_and_cache_dir);
	tcase_add_test(tc, test_extension_sections);
	tcase_add_test(tc, test_extension_sections_lazy);
	tcase_add_test(tc, test_peek_section);
	tcase_add_test(tc, test_device_out_of_range);
	tcase_add_test(tc, test_int64_rule);
	tcase_add_test(tc, test_big_section_hashed);
	tcase_add_test(tc, test_peak_before_first_event);
	tcase_add_loop_test(tc, test_wrap_totals, 0, 6);
	tcase_add_test(tc, test_threads_read);
	tcase_add_test(tc, test_extension_chunked);
	tcase_add_test(tc, test_extension_reads_dropped_pages);
	tcase_add_test(tc, test_interleaved_late_frees);
	tcase_add_test(tc, test_stale_temps_cleaned);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(index_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
