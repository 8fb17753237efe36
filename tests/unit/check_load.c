/*
 * The snapshot loader on committed fixtures: every format version and
 * protocol gives the model that tests/data/mkfixtures.py says it must
 * (NAME.expect, written from the Python objects); bad inputs are refused
 * with the right code; every prefix and thousands of byte mutations of the
 * fixtures either load or fail cleanly (run under ASan/UBSan in CI).
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pickle/pkl_write.h"
#include "snapshot/snap_load.h"
#include "util/xalloc.h"

#define FIX TOP_SRCDIR "/tests/data/fixtures/"
#define REAL TOP_SRCDIR "/tests/data/real/"
#define GEN TOP_SRCDIR "/tests/data/gen/"

static const char *const good[] = {
    "small_p2", "small_p3", "small_p4", "small_p5", "newest", "notime",
    "legacy_113", "legacy_20", "single_items", "two_traces", "big_ints",
    "empty_dict_snapshot", "long4", "snapshot_only", "annotate",
    "notrace_empty", "notrace_missing", "ring_overflowed", "event_pools",
    "host_memory", "host_only", "xpu", "skip_none", "skip_free_requested",
    "skip_frees"};
static const char *const bad[] = {
    "bad_global", "bad_stack_global", "bad_reduce", "bad_truncated",
    "bad_not_pickle", "bad_empty", "bad_wrong_shape", "bad_int_top",
    "bad_memo", "bad_proto6", "bad_text_proto", "bad_cut_between"};

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void
dump_stack(FILE *f, const struct snapshot *s, uint32_t st)
{
	uint32_t n, i;
	const uint32_t *fr = snap_stack(s, st, &n);

	for (i = 0; i < n; i++) {
		const struct snap_frame *x = &s->frames[fr[i]];

		fprintf(f, "%s%s@%s:%" PRIu64, i ? "|" : "",
		    snap_str(s, x->name), snap_str(s, x->filename), x->line);
	}
}

/* The .expect format of mkfixtures.py. */
static void
dump(FILE *f, const struct snapshot *s)
{
	uint32_t i, j, d;

	fprintf(f, "segments %u\n", s->n_segments);
	for (i = 0; i < s->n_segments; i++) {
		const struct snap_segment *g = &s->segments[i];

		fprintf(f, "segment dev=%u addr=%" PRIu64 " total=%" PRIu64
			   " stream=%" PRIu64 " large=%d expandable=%d "
			   "blocks=%u stack=",
		    g->device, g->addr, g->total_size, g->stream, g->is_large,
		    g->is_expandable, g->n_blocks);
		dump_stack(f, s, g->stack);
		fprintf(f, "\n");
		for (j = 0; j < g->n_blocks; j++) {
			const struct snap_block *b =
			    &s->blocks[g->first_block + j];

			fprintf(f, "block addr=%" PRIu64 " size=%" PRIu64
				   " req=%" PRIu64 " state=%d stack=",
			    b->addr, b->size, b->requested_size, b->state);
			dump_stack(f, s, b->stack);
			fprintf(f, "\n");
		}
	}
	fprintf(f, "traces %u\n", s->n_traces);
	for (d = 0; d < s->n_traces; d++) {
		const struct snap_trace *t = &s->traces[d];
		uint64_t k;

		fprintf(f, "trace %u events=%" PRIu64 "\n", d, t->n);
		for (k = 0; k < t->n; k++) {
			const char *name = snap_action_name(t->action[k]);

			if (name == NULL)
				name = snap_str(s, s->unknown_actions
				    [t->action[k] - SNAP_ACTION_COUNT]);
			fprintf(f, "event %s addr=%" PRIu64 " size=%" PRIu64
				   " stream=%" PRIu64 " time=",
			    name, t->addr[k], t->size[k], t->stream[k]);
			if (t->time_us == NULL || t->time_us[k] == SNAP_NO_TIME)
				fprintf(f, "-");
			else
				fprintf(f, "%" PRId64, t->time_us[k]);
			fprintf(f, " stack=");
			dump_stack(f, s, t->stack[k]);
			fprintf(f, "\n");
		}
	}
}

START_TEST(test_load_fixtures)
{
	char path[512], *want, *got;
	size_t wlen, glen;
	struct snapshot *s;
	struct sv_error err;
	FILE *f;

	snprintf(path, sizeof path, FIX "%s.pickle", good[_i]);
	sv_error_clear(&err);
	ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0, "%s: %s",
	    good[_i], err.msg);
	f = open_memstream(&got, &glen);
	dump(f, s);
	fclose(f);
	snprintf(path, sizeof path, FIX "%s.expect", good[_i]);
	want = slurp(path, &wlen);
	ck_assert_str_eq(got, want);
	free(want);
	free(got);
	snap_free(s);
}
END_TEST

START_TEST(test_load_bad)
{
	char path[512], *want, *frag;
	size_t wlen;
	struct snapshot *s = NULL;
	struct sv_error err;
	int status;

	snprintf(path, sizeof path, FIX "%s.expect", bad[_i]);
	want = slurp(path, &wlen);
	want[strcspn(want, "\n")] = '\0';
	status = atoi(want);
	frag = strchr(want, ' ') + 1;
	snprintf(path, sizeof path, FIX "%s.pickle", bad[_i]);
	sv_error_clear(&err);
	ck_assert_int_eq(snap_load_file(path, NULL, &s, &err), -1);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(sv_errcode_status(err.code), status);
	ck_assert_msg(strstr(err.msg, frag) != NULL, "%s: '%s' lacks '%s'",
	    bad[_i], err.msg, frag);
	ck_assert_msg(err.offset != SV_NO_OFFSET, "no byte offset");
	free(want);
}
END_TEST

START_TEST(test_load_io_errors)
{
	struct snapshot *s = NULL;
	struct sv_error err;

	ck_assert_int_eq(snap_load_file(TOP_SRCDIR "/tests/data", NULL, &s,
			     &err), -1);
	ck_assert_int_eq(err.code, SV_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "directory"));
	ck_assert_int_eq(snap_load_file(FIX "no-such-file", NULL, &s, &err),
	    -1);
	ck_assert_int_eq(err.code, SV_ERR_IO);
}
END_TEST

START_TEST(test_load_real)
{
	/* The real files load; their sizes and shapes are compared with
	 * Python's reading of them in tests/stats/oracle.test. */
	static const char *const real[] = {
	    "npu_leak_expandable", "npu_leak_empty_cache",
	    "synthetic_inconsistent"};
	char path[512];
	struct snapshot *s;
	struct sv_error err;

	snprintf(path, sizeof path, REAL "%s.pickle", real[_i]);
	ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0, "%s",
	    err.msg);
	ck_assert_uint_gt(s->n_segments, 0);
	ck_assert_uint_gt(snap_trace_of(s, snap_default_device(s))->n, 1000);
	snap_free(s);
}
END_TEST

/* Every well-formed file in the tree: each fixture, generated and real
 * snapshot. */
static const char *const all_files[] = {
    FIX "small_p2", FIX "small_p3", FIX "small_p4", FIX "small_p5",
    FIX "newest", FIX "notime", FIX "legacy_113", FIX "legacy_20",
    FIX "single_items", FIX "two_traces", FIX "big_ints",
    FIX "empty_dict_snapshot", FIX "long4", FIX "hostile_strings",
    GEN "expandable", GEN "frag", GEN "graphs", GEN "leak-cpp", GEN "leak",
    GEN "legacy-1.13", GEN "legacy-2.0", GEN "multi", GEN "npu", GEN "oom",
    GEN "tiny-p2", GEN "tiny-p3", GEN "tiny-p4", GEN "tiny-p5",
    GEN "training-leak", GEN "training", GEN "wrapped",
    REAL "cuda_train_one_step", REAL "npu_all_freed",
    REAL "npu_leak_empty_cache", REAL "npu_leak_expandable",
    REAL "synthetic_inconsistent"};

/* dump(), and what it leaves out: each event's compile_context and
 * user_metadata, the counts of strings, frames and stacks, the features
 * and the keys ignored. */
static char *
dump_all(const struct snapshot *s)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	uint32_t d;
	uint64_t k;

	ck_assert_ptr_nonnull(f);
	dump(f, s);
	fprintf(f, "strings %u frames %u stacks %u features %#x unknown %"
	    PRIu64 "\n", s->strs.n, s->n_frames, s->n_stacks, s->features,
	    s->unknown_keys);
	for (d = 0; d < s->n_traces; d++) {
		const struct snap_trace *t = &s->traces[d];

		/* texts, not ids: strings are numbered as they are first
		 * met, and an entry read whole meets its strings before the
		 * frames of the entries after it */
		for (k = 0; k < t->n; k++)
			fprintf(f, "%s|%s\n", t->compile_context ?
			    snap_str(s, t->compile_context[k]) : "-",
			    t->user_metadata ?
			    snap_str(s, t->user_metadata[k]) : "-");
	}
	fclose(f);
	return text;
}

START_TEST(test_load_paths_agree)
{
	/* trace entries read whole when they close give the model the
	 * reader's general path gives */
	struct snap_load_opts general = {0};
	struct snapshot *a, *b;
	struct sv_error err;
	char path[512], *da, *db;

	general.general_path = 1;
	snprintf(path, sizeof path, "%s.pickle", all_files[_i]);
	ck_assert_msg(snap_load_file(path, NULL, &a, &err) == 0, "%s: %s",
	    path, err.msg);
	ck_assert_msg(snap_load_file(path, &general, &b, &err) == 0, "%s: %s",
	    path, err.msg);
	da = dump_all(a);
	db = dump_all(b);
	ck_assert_msg(strcmp(da, db) == 0, "%s: the two paths differ", path);
	free(da);
	free(db);
	snap_free(a);
	snap_free(b);
}
END_TEST

/*
 * Trace entries of many shapes, for the loader's plans (snap_load.c):
 * with share 1 every key is written once and fetched from the memo after,
 * as Python's pickler does, so that entries of one shape are read by a
 * plan; with share 0 each entry writes its keys afresh, at offsets no plan
 * names, so that every entry is read key by key. wrong > 0 makes the size
 * of entry wrong a string.
 */
#define PLAN_EVENTS 400
enum { KA, KADDR, KSIZE, KSTREAM, KTIME, KFRAMES, KCTX, KMETA, KPOOL, KCAT,
	KEXTRA, KN };
static const char *const plan_keys[KN] = {"action", "addr", "size",
    "stream", "time_us", "frames", "compile_context", "user_metadata",
    "pool_id", "category", "extra"};
/* the shapes: keys in the order written; KN ends one, a doubled key is
 * written twice */
static const int plan_shapes[][10] = {
    {KA, KADDR, KSIZE, KSTREAM, KTIME, KFRAMES, KCTX, KMETA, KN},
    {KA, KADDR, KSIZE, KSTREAM, KN},
    /* the keys of the one before with two ints swapped, the two taking
     * turns (i = 120..127): entries of one shape of the pickle reader's
     * tried under a plan made for the other's (pkl_record_shape()) */
    {KA, KADDR, KSTREAM, KSIZE, KN},
    {KSIZE, KMETA, KA, KADDR, KSTREAM, KTIME, KCTX, KN},
    {KA, KEXTRA, KADDR, KCAT, KSIZE, KSTREAM, KPOOL, KN},
    {KA, KADDR, KSIZE, KADDR, KSTREAM, KN},
    {KA, KADDR, KSIZE, KSTREAM, KCTX, KPOOL, KMETA, KTIME, KN}};

static void
plan_key(struct pkl_writer *w, int share, uint32_t *memo, int k)
{
	if (share && memo[k] != UINT32_MAX) {
		pkl_w_get(w, memo[k]);
		return;
	}
	pkl_w_str(w, plan_keys[k], strlen(plan_keys[k]));
	memo[k] = pkl_w_memoize(w);
}

/* Writes the value of key k in entry i; fresh: an action and texts no
 * entry before had, wrong: a string for its size. An action's name is
 * written once and fetched after when share is set (memo[KN + a]). */
static void
plan_value(struct pkl_writer *w, int share, uint32_t *memo, int k,
    unsigned i, int fresh, int wrong)
{
	static const char *const actions[] = {"alloc", "free_requested",
	    "free_completed", "segment_alloc"};
	char text[32];

	switch (k) {
	case KA:
		if (fresh) {
			snprintf(text, sizeof text, "new_action_%u", i);
			pkl_w_str(w, text, strlen(text));
		} else if (share && memo[KN + i % 4] != UINT32_MAX) {
			pkl_w_get(w, memo[KN + i % 4]);
		} else {
			pkl_w_str(w, actions[i % 4], strlen(actions[i % 4]));
			memo[KN + i % 4] = pkl_w_memoize(w);
		}
		break;
	case KSIZE:
		if (wrong)
			pkl_w_str(w, "big", 3);
		else
			pkl_w_u64(w, 512u * (i % 7 + 1));
		break;
	case KFRAMES:
		pkl_w_empty_list(w);
		break;
	case KCTX: case KMETA: case KEXTRA: case KCAT:
		snprintf(text, sizeof text, "%s%u", plan_keys[k],
		    fresh ? 100 + i : i / 3 % 5);
		pkl_w_str(w, text, strlen(text));
		break;
	case KPOOL:
		pkl_w_i64(w, (int64_t)(i % 3));
		pkl_w_i64(w, 7);
		pkl_w_tuple2(w);
		break;
	case KTIME:
		if (i % 11 == 0)
			pkl_w_none(w);
		else
			pkl_w_i64(w, 1000 + i);
		break;
	default: /* addresses and streams */
		pkl_w_u64(w, (uint64_t)k << 32 | (uint64_t)i << 9);
		break;
	}
}

static char *
plan_pickle(int share, unsigned wrong, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct pkl_writer w;
	uint32_t memo[KN + 4];
	unsigned i, j;

	memset(memo, 0xff, sizeof memo);
	pkl_w_init(&w, f);
	pkl_w_proto(&w);
	pkl_w_empty_dict(&w);
	pkl_w_memoize(&w);
	pkl_w_mark(&w);
	pkl_w_str(&w, "segments", 8);
	pkl_w_empty_list(&w);
	pkl_w_str(&w, "device_traces", 13);
	pkl_w_empty_list(&w);
	pkl_w_memoize(&w);
	pkl_w_mark(&w);
	pkl_w_empty_list(&w);
	pkl_w_memoize(&w);
	pkl_w_mark(&w);
	for (i = 0; i < PLAN_EVENTS; i++) {
		/* runs of one shape, and two shapes taking turns */
		unsigned ns = sizeof plan_shapes / sizeof plan_shapes[0];
		unsigned k = (i / 8 + (i / 8 % 4 == 3 && i % 2)) % ns;
		const int *sh = plan_shapes[k];
		/* new strings where the action comes after the metadata */
		int fresh = (k == 3 && i % 4 == 0) || i % 97 == 50;

		pkl_w_empty_dict(&w);
		pkl_w_memoize(&w);
		pkl_w_mark(&w);
		for (j = 0; sh[j] != KN; j++) {
			plan_key(&w, share, memo, sh[j]);
			plan_value(&w, share, memo, sh[j], i, fresh,
			    wrong > 0 && i == wrong);
		}
		pkl_w_setitems(&w);
	}
	pkl_w_appends(&w);
	pkl_w_appends(&w);
	pkl_w_setitems(&w);
	pkl_w_stop(&w);
	ck_assert_int_eq(ferror(f), 0);
	fclose(f);
	return buf;
}

/* dump_all() and every string in the order the loader numbered them. */
static char *
dump_numbered(const struct snapshot *s)
{
	char *text = NULL, *all = dump_all(s);
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	uint32_t i;

	fputs(all, f);
	for (i = 0; i < s->strs.n; i++)
		fprintf(f, "string %u %s\n", i, snap_str(s, i));
	fclose(f);
	free(all);
	return text;
}

/* The line of a where it first differs from b. */
static const char *
first_difference(const char *a, const char *b)
{
	const char *line = a;

	for (; *a != '\0' && *a == *b; a++, b++)
		if (*a == '\n')
			line = a + 1;
	return line;
}

START_TEST(test_load_plans)
{
	/* entries read by a plan give the model of entries read key by
	 * key, strings numbered alike, on both reading paths; an entry
	 * with a bad value under a plan is refused as key by key refuses
	 * it */
	struct snap_load_opts general = {0};
	const struct snap_load_opts *opts = _i ? &general : NULL;
	struct snapshot *s[2];
	struct sv_error err[2];
	char *buf[2], *text[2];
	size_t len[2];
	int share;

	general.general_path = 1;
	for (share = 0; share < 2; share++) {
		buf[share] = plan_pickle(share, 0, &len[share]);
		ck_assert_msg(snap_load_buffer((const uint8_t *)buf[share],
		    len[share], opts, &s[share], &err[share]) == 0, "%s",
		    err[share].msg);
		text[share] = dump_numbered(s[share]);
		free(buf[share]);
	}
	ck_assert_uint_eq(snap_trace_of(s[1], 0)->n, PLAN_EVENTS);
	ck_assert_uint_gt(s[1]->n_unknown_actions, 2);
	ck_assert_uint_gt(s[1]->unknown_keys, 0);
	ck_assert_msg(strcmp(text[1], text[0]) == 0,
	    "read by plans, the model differs from %.60s",
	    first_difference(text[1], text[0]));
	for (share = 0; share < 2; share++) {
		snap_free(s[share]);
		free(text[share]);
	}
	for (share = 0; share < 2; share++) {
		buf[share] = plan_pickle(share, 301, &len[share]);
		ck_assert_int_eq(snap_load_buffer((const uint8_t *)buf[share],
		    len[share], opts, &s[share], &err[share]), -1);
		free(buf[share]);
	}
	ck_assert_str_eq(err[1].msg, err[0].msg);
	ck_assert_ptr_nonnull(strstr(err[1].msg, "'size'"));
}
END_TEST

/* Loading must return 0 or -1; a crash fails the test (fork mode). */
static void
try_load(const uint8_t *buf, size_t len)
{
	struct snapshot *s = NULL;
	struct sv_error err;
	int r;

	sv_error_clear(&err);
	r = snap_load_buffer(buf, len, NULL, &s, &err);
	ck_assert(r == 0 || r == -1);
	ck_assert(r == 0 ? s != NULL : (s == NULL && err.msg[0] != '\0'));
	snap_free(s);
}

START_TEST(test_load_prefixes)
{
	/* every prefix of every small fixture */
	char path[512], *buf;
	size_t len, n;

	snprintf(path, sizeof path, FIX "%s.pickle", good[_i]);
	buf = slurp(path, &len);
	for (n = 0; n < len; n++)
		try_load((const uint8_t *)buf, n);
	free(buf);
}
END_TEST

START_TEST(test_load_prefixes_real)
{
	/* ~1000 sampled prefixes of a real 600 KB file */
	char *buf;
	size_t len, n, step;

	buf = slurp(REAL "npu_leak_empty_cache.pickle", &len);
	step = len / 1000 + 1;
	for (n = 0; n < len; n += step)
		try_load((const uint8_t *)buf, n);
	free(buf);
}
END_TEST

START_TEST(test_load_mutations)
{
	/* fixed-seed byte mutations: 1, 2 or 4 bytes changed per try */
	char path[512], *orig, *buf;
	size_t len, k;
	unsigned seed = 12345u + (unsigned)_i;
	int t;

	snprintf(path, sizeof path, FIX "%s.pickle", good[_i]);
	orig = slurp(path, &len);
	buf = xmalloc(len);
	for (t = 0; t < 1500; t++) {
		int nmut = 1 << (t % 3);

		memcpy(buf, orig, len);
		for (k = 0; k < (size_t)nmut; k++) {
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % len] = (char)(seed >> 20);
		}
		try_load((const uint8_t *)buf, len);
	}
	free(buf);
	free(orig);
}
END_TEST

static Suite *
load_suite(void)
{
	Suite *s = suite_create("load");
	TCase *tc = tcase_create("formats");
	TCase *tr = tcase_create("robustness");
	int ng = (int)(sizeof good / sizeof good[0]);
	int nb = (int)(sizeof bad / sizeof bad[0]);

	tcase_add_loop_test(tc, test_load_fixtures, 0, ng);
	tcase_add_loop_test(tc, test_load_bad, 0, nb);
	tcase_add_test(tc, test_load_io_errors);
	tcase_add_loop_test(tc, test_load_real, 0, 3);
	tcase_add_loop_test(tc, test_load_paths_agree, 0,
	    sizeof all_files / sizeof all_files[0]);
	tcase_add_loop_test(tc, test_load_plans, 0, 2);
	tcase_add_loop_test(tr, test_load_prefixes, 0, ng);
	tcase_add_test(tr, test_load_prefixes_real);
	tcase_add_loop_test(tr, test_load_mutations, 0, ng);
	tcase_set_timeout(tc, 0);
	tcase_set_timeout(tr, 300);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tr);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(load_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
