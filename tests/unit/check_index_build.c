/*
 * Index unit tests: interrupted and concurrent builds, and where the
 * index lives (beside the snapshot, in the cache, in memory). Run by
 * check_index.c.
 */
#include "config.h"

#include "index_fix.h"

#include <stdatomic.h>

#include "index/idx.h"
#include "util/stop.h"
#include "util/thread.h"

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

/* Events of device 0 in make_snap(model_events). */
static uint64_t
model_n(void)
{
	struct snapshot *s = make_snap(model_events);
	uint64_t n = s->traces[0].n;

	snap_free(s);
	return n;
}

/* ---- build robustness ---------------------------------------------------- */

static int kill_after;

static int
killing_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	/* past the parse: we are writing (its end, then past the
	 * sections) */
	if (done >= idx_progress_at(total, IDX_PROGRESS_PARSE) &&
	    --kill_after <= 0)
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


/* ---- the sections: progress and cancel ----------------------------------- */

/* A builder that meters half of what it says its progress counts
 * (two passes over the events) and then waits, up to
 * a minute, for the bar to have shown it (seen_half) or for a stop; and
 * the progress callback that watches. */
static uint64_t sec_events, sec_from, sec_to;

/* Events of every device in make_snap(model_events). */
static uint64_t
all_events(void)
{
	struct snapshot *s = make_snap(model_events);
	uint64_t n = 0;
	uint32_t d;

	for (d = 0; d < s->n_traces; d++)
		n += s->traces[d].n;
	snap_free(s);
	return n;
}
static int seen_half, saw_stop, cancel_in_sections, sec_calls;

static int
metering_build(const struct snapshot *s, void *arg, uint8_t **data,
    size_t *len, struct sv_error *err)
{
	struct timespec ms = {0, 1000 * 1000};
	int k;

	(void)s;
	(void)arg;
	(void)err;
	ck_assert_ptr_nonnull(sv_stop_meter);
	atomic_fetch_add(sv_stop_meter, sec_events);
	/* polled as a loop of the work would: on the calling thread
	 * (--threads 1) the polls are what reports and stops it */
	for (k = 0; k < 60000 && !__atomic_load_n(&seen_half,
	    __ATOMIC_SEQ_CST) && !sv_stop_poll(0); k++)
		nanosleep(&ms, NULL);
	saw_stop = sv_stop_requested();
	*data = xmalloc(1);
	**data = 7;
	*len = 1;
	return 0;
}

/* A section whose meter says nothing of its progress (progress_passes
 * 0), far past any other's. */
static int
noisy_build(const struct snapshot *s, void *arg, uint8_t **data,
    size_t *len, struct sv_error *err)
{
	(void)s;
	(void)arg;
	(void)err;
	ck_assert_ptr_nonnull(sv_stop_meter);
	atomic_fetch_add(sv_stop_meter, 100 * sec_events);
	*data = xmalloc(1);
	**data = 8;
	*len = 1;
	return 0;
}

static int
sections_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	sec_from = idx_progress_at(total, IDX_PROGRESS_PARSE);
	sec_to = idx_progress_at(total, IDX_PROGRESS_SECTIONS);
	ck_assert_uint_le(done, total);
	if (done <= sec_from || done >= sec_to)
		return 0; /* the parse, or the writing */
	sec_calls++;
	/* half of the sections' span: the metering builder's half, not
	 * the noisy one's meter */
	ck_assert_uint_ge(done, sec_from + (sec_to - sec_from) / 2 - 1);
	ck_assert_uint_le(done, sec_from + (sec_to - sec_from) / 2 + 1);
	__atomic_store_n(&seen_half, 1, __ATOMIC_SEQ_CST);
	return cancel_in_sections;
}

START_TEST(test_sections_progress_cancel)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_section_builder sec[2] = {
	    {.name = "noisy", .build = noisy_build},
	    {.name = "metered", .build = metering_build,
		.progress_passes = 2}};
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix = NULL;
	struct sv_error err;
	static char big[100000];

	/* big enough for the bar to tell half of the sections apart */
	memset(big, 'm', sizeof big);
	write_file(src, big, sizeof big);
	opts_init(&o, &w, 1);
	o.sections = sec;
	o.n_sections = 2;
	o.progress = sections_progress;
	sec_events = all_events();
	seen_half = saw_stop = sec_calls = 0;
	/* 0, 1: on threads of their own; 2, 3: on the calling thread */
	cancel_in_sections = _i % 2;
	sv_thread_set_max(_i < 2 ? 0 : 1);
	sv_error_clear(&err);
	if (cancel_in_sections == 0) {
		/* the bar moves with the meter; the build ends */
		ix = open_ok(src, &o);
		ck_assert_int_eq(seen_half, 1);
		ck_assert_int_eq(saw_stop, 0);
		ck_assert_int_ge(sec_calls, 1);
		idx_close(ix);
	} else {
		/* cancelled while the sections are built: they are asked
		 * to stop, and nothing is left behind */
		ck_assert_int_ne(idx_open(src, &o, &ix, &err), 0);
		ck_assert_int_eq(err.code, SV_ERR_CANCELLED);
		ck_assert_int_eq(saw_stop, 1);
		ck_assert(!exists(ipath));
		ck_assert_int_eq(count_files(tmpdir, IDX_TMP_INFIX), 0);
	}
	sv_thread_set_max(0);
	free(src);
	free(ipath);
}
END_TEST

void
index_build_tests(TCase *tc)
{
	tcase_add_test(tc, test_interrupted_build);
	tcase_add_test(tc, test_concurrent_builders);
	tcase_add_test(tc, test_readonly_dir_uses_cache);
	tcase_add_test(tc, test_unwritable_everything_memory);
	tcase_add_test(tc, test_no_cache_and_cache_dir);
	tcase_add_loop_test(tc, test_sections_progress_cancel, 0, 4);
}
