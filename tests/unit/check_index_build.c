/*
 * Index unit tests: interrupted and concurrent builds, and where the
 * index lives (beside the snapshot, in the cache, in memory). Run by
 * check_index.c.
 */
#include "config.h"

#include "index_fix.h"

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

void
index_build_tests(TCase *tc)
{
	tcase_add_test(tc, test_interrupted_build);
	tcase_add_test(tc, test_concurrent_builders);
	tcase_add_test(tc, test_readonly_dir_uses_cache);
	tcase_add_test(tc, test_unwritable_everything_memory);
	tcase_add_test(tc, test_no_cache_and_cache_dir);
}
