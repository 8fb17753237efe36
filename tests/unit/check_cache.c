/*
 * Unit tests of whose index is trusted, the bounded index cache and the
 * fatal-signal handling: the size syntax of SNAPVIEW_CACHE_MAX; what
 * counts as a cache entry (name pattern, owner, magic) and that nothing
 * else is listed, evicted or cleared; least-recently-used eviction and the
 * index in use kept; a mapping that outlives the eviction of its file;
 * through idx_open(): modes 0600/0700, use time, eviction after a build,
 * the trust rule on the beside and the cache location, narrowing a loose
 * default cache directory; and, in child processes, a SIGBUS on a guarded
 * mapping (one line, exit 3), on an unguarded one (death by SIGBUS), and
 * the restore hook before a death by SIGSEGV or SIGABRT.
 *
 * Two tests need another user's files, which only root can make: they
 * form the test case "root", which runs only as "check_cache root"
 * (tests/unit/cache_root.test), and exits 77 (skipped) when not root.
 * Without an argument the rest runs, whoever runs it.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "index/idx.h"
#include "index/idx_cache.h"
#include "index/idx_format.h"
#include "util/fatal.h"
#include "util/xalloc.h"

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

	snprintf(tmpdir, sizeof tmpdir, "%s/sv-cache.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	chmod(tmpdir, 0755);
	snprintf(cache, sizeof cache, "%s/xdg", tmpdir);
	setenv("XDG_CACHE_HOME", cache, 1);
	unsetenv(IDX_CACHE_MAX_ENV);
	umask(022);
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

/* A file of n bytes that starts with the index magic. */
static void
fake_index(const char *path, size_t n)
{
	uint8_t *b = xcalloc(n, 1);

	memcpy(b, IDX_MAGIC, n < IDX_MAGIC_LEN ? n : IDX_MAGIC_LEN);
	write_file(path, b, n);
	free(b);
}

static void
set_mtime(const char *path, time_t t)
{
	struct timespec ts[2] = {{t, 0}, {t, 0}};

	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static char *
copy_snapshot(const char *name)
{
	char *src, *dst, cmd[1200];

	xasprintf(&src, "%s/tests/data/real/npu_leak_expandable.pickle",
	    TOP_SRCDIR);
	dst = tpath(name);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 644 '%s'", src, dst,
	    dst);
	ck_assert_int_eq(system(cmd), 0);
	free(src);
	return dst;
}

/* Warnings collected from idx_open(). */
struct warns {
	char all[4096];
	int n;
};

static void
on_warn(void *ctx, const char *msg)
{
	struct warns *w = ctx;
	size_t l = strlen(w->all);

	snprintf(w->all + l, sizeof w->all - l, "%s\n", msg);
	w->n++;
}

static void
opts_init(struct idx_opts *o, struct warns *w, const char *cache_dir)
{
	memset(o, 0, sizeof *o);
	memset(w, 0, sizeof *w);
	o->cache_dir = cache_dir;
	o->warn = on_warn;
	o->warn_ctx = w;
}

/* ---- SNAPVIEW_CACHE_MAX -------------------------------------------------- */

START_TEST(test_parse_size)
{
	static const struct {
		const char *s;
		int ok;
		uint64_t v;
	} c[] = {
	    {"0", 1, 0}, {"1", 1, 1}, {"1048576", 1, 1048576},
	    {"10K", 1, 10240}, {"1k", 1, 1024}, {"512M", 1, 512ull << 20},
	    {"512MB", 1, 512ull << 20}, {"10G", 1, 10ull << 30},
	    {"10GiB", 1, 10ull << 30}, {"2T", 1, 2ull << 40},
	    {"100B", 1, 100}, {"16777215T", 1, 16777215ull << 40},
	    {"", 0, 0}, {"x", 0, 0}, {"10X", 0, 0}, {"-1", 0, 0},
	    {" 1", 0, 0}, {"1 G", 0, 0}, {"1GG", 0, 0}, {"G", 0, 0},
	    {"16777216T", 0, 0}, {"18446744073709551616", 0, 0},
	    {"18446744073709551615", 1, UINT64_MAX},
	};
	size_t i;
	uint64_t v;

	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		v = 12345;
		ck_assert_msg((idx_cache_parse_size(c[i].s, &v) == 0) ==
		    c[i].ok, "'%s'", c[i].s);
		if (c[i].ok)
			ck_assert_msg(v == c[i].v, "'%s': %llu", c[i].s,
			    (unsigned long long)v);
	}
}
END_TEST

START_TEST(test_limit_env)
{
	struct sv_error err;
	uint64_t max = 0;

	sv_error_clear(&err);
	ck_assert_int_eq(idx_cache_limit(&max, &err), 0);
	ck_assert(max == IDX_CACHE_MAX_DEFAULT);
	setenv(IDX_CACHE_MAX_ENV, "3M", 1);
	ck_assert_int_eq(idx_cache_limit(&max, &err), 0);
	ck_assert(max == 3ull << 20);
	setenv(IDX_CACHE_MAX_ENV, "lots", 1);
	ck_assert_int_eq(idx_cache_limit(&max, &err), -1);
	ck_assert(max == IDX_CACHE_MAX_DEFAULT);
	ck_assert_ptr_nonnull(strstr(err.msg, IDX_CACHE_MAX_ENV));
}
END_TEST

/* ---- entries, eviction, clearing ----------------------------------------- */

#define E1 "0123456789abcdef-a.pickle.snapidx"
#define E2 "fedcba9876543210-b.pickle.snapidx"
#define E3 "00000000000000aa-c.pickle.snapidx"

/* A cache directory with three entries (1000, 2000, 3000 bytes, used in
 * that order) and things that are not entries: the pattern without the
 * magic, the magic without the pattern, a symlink and a directory with
 * the pattern, an entry name with 15 hex digits. */
static char *
make_cache(void)
{
	char *d = tpath("c"), *p;
	time_t now = time(NULL);

	ck_assert_int_eq(mkdir(d, 0700), 0);
	xasprintf(&p, "%s/%s", d, E1);
	fake_index(p, 1000);
	set_mtime(p, now - 300);
	free(p);
	xasprintf(&p, "%s/%s", d, E2);
	fake_index(p, 2000);
	set_mtime(p, now - 200);
	free(p);
	xasprintf(&p, "%s/%s", d, E3);
	fake_index(p, 3000);
	set_mtime(p, now - 100);
	free(p);
	xasprintf(&p, "%s/1111111111111111-notes.snapidx", d);
	write_file(p, "my notes, not an index\n", 23);
	set_mtime(p, now - 1000);
	free(p);
	xasprintf(&p, "%s/report.snapidx", d);
	fake_index(p, 500);
	set_mtime(p, now - 1000);
	free(p);
	xasprintf(&p, "%s/2222222222222222-link.snapidx", d);
	ck_assert_int_eq(symlink(E1, p), 0);
	free(p);
	xasprintf(&p, "%s/3333333333333333-dir.snapidx", d);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	free(p);
	xasprintf(&p, "%s/012345678abcdef-short.snapidx", d);
	fake_index(p, 500);
	set_mtime(p, now - 1000);
	free(p);
	return d;
}

/* The non-entries make_cache() put there are all still there. */
static void
others_intact(const char *d)
{
	static const char *const names[] = {"1111111111111111-notes.snapidx",
	    "report.snapidx", "2222222222222222-link.snapidx",
	    "3333333333333333-dir.snapidx", "012345678abcdef-short.snapidx"};
	size_t i;
	char *p;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		xasprintf(&p, "%s/%s", d, names[i]);
		ck_assert_msg(exists(p), "%s was removed", names[i]);
		free(p);
	}
}

START_TEST(test_list_entries_only)
{
	char *d = make_cache();
	struct idx_cache_entry *e;
	struct sv_error err;
	size_t n;

	ck_assert_int_eq(idx_cache_list(d, &e, &n, &err), 0);
	ck_assert_uint_eq(n, 3);
	/* most recently used first */
	ck_assert_str_eq(e[0].name, E3);
	ck_assert_str_eq(e[1].name, E2);
	ck_assert_str_eq(e[2].name, E1);
	ck_assert_uint_eq(e[0].size, 3000);
	ck_assert_uint_eq(e[2].size, 1000);
	ck_assert(e[1].used > e[2].used && e[0].used > e[1].used);
	idx_cache_list_free(e, n);
	/* a missing directory is an empty cache */
	ck_assert_int_eq(idx_cache_list("/nonexistent/sv-cache", &e, &n, &err),
	    0);
	ck_assert_uint_eq(n, 0);
	idx_cache_list_free(e, n);
	free(d);
}
END_TEST

START_TEST(test_trim_lru)
{
	char *d = make_cache(), *p1, *p2, *p3;
	struct sv_error err;
	uint64_t n = 0, bytes = 0;

	xasprintf(&p1, "%s/%s", d, E1);
	xasprintf(&p2, "%s/%s", d, E2);
	xasprintf(&p3, "%s/%s", d, E3);
	/* within the limit: nothing goes */
	ck_assert_int_eq(idx_cache_trim(d, 6000, NULL, &n, &bytes, &err), 0);
	ck_assert(n == 0 && bytes == 0);
	ck_assert(exists(p1) && exists(p2) && exists(p3));
	/* 1 byte over: the least recently used goes, only it */
	ck_assert_int_eq(idx_cache_trim(d, 5999, NULL, &n, &bytes, &err), 0);
	ck_assert(n == 1 && bytes == 1000);
	ck_assert(!exists(p1) && exists(p2) && exists(p3));
	others_intact(d);
	/* the kept one survives even as the oldest; the next one goes */
	fake_index(p1, 1000);
	set_mtime(p1, time(NULL) - 1000);
	n = bytes = 0;
	ck_assert_int_eq(idx_cache_trim(d, 4500, p1, &n, &bytes, &err), 0);
	ck_assert(n == 1 && bytes == 2000);
	ck_assert(exists(p1) && !exists(p2) && exists(p3));
	/* limit 0: only the kept one stays, even though it alone is over */
	n = bytes = 0;
	ck_assert_int_eq(idx_cache_trim(d, 0, p1, &n, &bytes, &err), 0);
	ck_assert(n == 1 && bytes == 3000);
	ck_assert(exists(p1) && !exists(p3));
	others_intact(d);
	free(p1);
	free(p2);
	free(p3);
	free(d);
}
END_TEST

/* An index another process has mapped stays readable after eviction. */
START_TEST(test_evicted_while_mapped)
{
	char *d = make_cache(), *p1;
	struct sv_error err;
	const uint8_t *m;
	int fd;

	xasprintf(&p1, "%s/%s", d, E1);
	fd = open(p1, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	m = mmap(NULL, 1000, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert(m != MAP_FAILED);
	close(fd);
	ck_assert_int_eq(idx_cache_trim(d, 0, NULL, NULL, NULL, &err), 0);
	ck_assert(!exists(p1));
	ck_assert_int_eq(memcmp(m, IDX_MAGIC, IDX_MAGIC_LEN), 0);
	ck_assert_int_eq(m[999], 0);
	munmap((void *)m, 1000);
	free(p1);
	free(d);
}
END_TEST

START_TEST(test_clear)
{
	char *d = make_cache(), *p, *dead, *live, *young;
	struct sv_error err;
	uint64_t n = 0, bytes = 0;
	pid_t pid;
	int st;

	/* a temp file whose builder is gone (a child that exited), an
	 * old one whose builder lives (this process), a young orphan */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	xasprintf(&dead, "%s/%s.tmp.%ld.0.1", d, E1, (long)pid);
	xasprintf(&live, "%s/%s.tmp.%ld.0.1", d, E2, (long)getpid());
	xasprintf(&young, "%s/%s.tmp.%ld.1.1", d, E3, (long)pid);
	fake_index(dead, 100);
	fake_index(live, 100);
	fake_index(young, 100);
	set_mtime(dead, time(NULL) - 3600);
	set_mtime(live, time(NULL) - 3600);
	ck_assert_int_eq(idx_cache_clear(d, &n, &bytes, &err), 0);
	ck_assert(n == 3 && bytes == 6000);
	xasprintf(&p, "%s/%s", d, E2);
	ck_assert(!exists(p));
	free(p);
	ck_assert(!exists(dead));
	ck_assert(exists(live) && exists(young));
	others_intact(d);
	free(dead);
	free(live);
	free(young);
	free(d);
}
END_TEST

/* An entry of another user's is never touched (needs root to make one). */
START_TEST(test_foreign_owner_kept)
{
	char *d, *p;
	struct sv_error err;
	struct idx_cache_entry *e;
	size_t ne;

	ck_assert_msg(geteuid() == 0, "only root can give a file away");
	d = make_cache();
	xasprintf(&p, "%s/%s", d, E1);
	ck_assert_int_eq(chown(p, 65534, 65534), 0);
	ck_assert_int_eq(idx_cache_list(d, &e, &ne, &err), 0);
	ck_assert_uint_eq(ne, 2);
	idx_cache_list_free(e, ne);
	ck_assert_int_eq(idx_cache_clear(d, NULL, NULL, &err), 0);
	ck_assert(exists(p));
	free(p);
	free(d);
}
END_TEST

/* ---- through idx_open ---------------------------------------------------- */

static mode_t
mode_of(const char *p)
{
	struct stat st;

	ck_assert_int_eq(stat(p, &st), 0);
	return st.st_mode & 07777;
}

START_TEST(test_open_modes_and_use_time)
{
	char *snap = copy_snapshot("s.pickle"), *cd = tpath("cd");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;
	struct idx_info info;
	char *ipath;
	struct stat st;
	time_t old = time(NULL) - 86400;

	umask(022);
	opts_init(&o, &w, cd);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert(info.built && !info.in_memory);
	ipath = xstrdup(info.path);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	ck_assert_uint_eq(mode_of(cd), 0700);
	ck_assert_uint_eq(mode_of(ipath), 0600);
	/* opening it again marks it used */
	set_mtime(ipath, old);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert(!info.built);
	idx_close(ix);
	ck_assert_int_eq(stat(ipath, &st), 0);
	ck_assert(st.st_mtime > old + 3600);
	free(ipath);
	free(cd);
	free(snap);
}
END_TEST

/* Beside the snapshot: its read bits, never group or other write, even
 * with a permissive umask. */
START_TEST(test_open_beside_mode)
{
	char *snap = copy_snapshot("s.pickle"), *ipath;
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;

	umask(0);
	ck_assert_int_eq(chmod(snap, 0640), 0);
	opts_init(&o, &w, NULL);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_close(ix);
	umask(022);
	xasprintf(&ipath, "%s%s", snap, IDX_SUFFIX);
	ck_assert_uint_eq(mode_of(ipath), 0640);
	/* and it is trusted on the next open: no warning, not rebuilt */
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	ck_assert_int_eq(w.n, 0);
	idx_close(ix);
	free(ipath);
	free(snap);
}
END_TEST

START_TEST(test_open_trim_after_build)
{
	char *a = copy_snapshot("a.pickle"), *b = copy_snapshot("b.pickle");
	char *cd = tpath("cd"), *ia, *ib;
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;
	struct idx_info info;

	opts_init(&o, &w, cd);
	ck_assert_int_eq(idx_open(a, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ia = xstrdup(info.path);
	idx_close(ix);
	/* a limit smaller than one index: the new one is kept, the old
	 * one goes */
	setenv(IDX_CACHE_MAX_ENV, "1", 1);
	ck_assert_int_eq(idx_open(b, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ib = xstrdup(info.path);
	ck_assert(info.built);
	ck_assert(!exists(ia));
	ck_assert(exists(ib));
	/* reused (not built) under the same limit: nothing is evicted */
	idx_close(ix);
	ck_assert_int_eq(idx_open(b, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert(!info.built);
	idx_close(ix);
	ck_assert(exists(ib));
	ck_assert_int_eq(w.n, 0);
	/* a bad value: one warning, the default applies */
	setenv(IDX_CACHE_MAX_ENV, "small", 1);
	ck_assert_int_eq(idx_open(a, &o, &ix, &err), 0);
	idx_close(ix);
	ck_assert_int_eq(w.n, 1);
	ck_assert_ptr_nonnull(strstr(w.all, IDX_CACHE_MAX_ENV));
	ck_assert(exists(ia) && exists(ib));
	free(ia);
	free(ib);
	free(cd);
	free(a);
	free(b);
}
END_TEST

/* The user's own index beside the snapshot, but group-writable: not
 * used, not replaced; the index comes from the cache, one line says so. */
START_TEST(test_trust_group_writable_beside)
{
	char *snap = copy_snapshot("s.pickle"), *ipath, expect[128];
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;
	struct idx_info info;
	struct stat st0, st1;

	opts_init(&o, &w, NULL);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_close(ix);
	xasprintf(&ipath, "%s%s", snap, IDX_SUFFIX);
	ck_assert_int_eq(chmod(ipath, 0664), 0);
	ck_assert_int_eq(stat(ipath, &st0), 0);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert_ptr_nonnull(info.path);
	ck_assert_ptr_null(strstr(info.path, ipath));
	ck_assert_ptr_nonnull(strstr(info.path, "/xdg/snapview/"));
	idx_close(ix);
	ck_assert_int_eq(w.n, 1);
	snprintf(expect, sizeof expect, "not trusted (owner uid %lu, mode "
	    "0664): using the cache instead", (unsigned long)geteuid());
	ck_assert_msg(strstr(w.all, expect) != NULL, "%s", w.all);
	/* left as it was */
	ck_assert_int_eq(stat(ipath, &st1), 0);
	ck_assert(st0.st_ino == st1.st_ino && st0.st_mtime == st1.st_mtime &&
	    (st1.st_mode & 0777) == 0664);
	/* once it is not group-writable it is used again */
	ck_assert_int_eq(chmod(ipath, 0644), 0);
	memset(&w, 0, sizeof w);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert_str_eq(info.path, ipath);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	free(ipath);
	free(snap);
}
END_TEST

/* Only the cache location, and its entry is world-writable: one line,
 * working in memory, the file untouched. */
START_TEST(test_trust_cache_only_memory)
{
	char *snap = copy_snapshot("s.pickle"), *cd = tpath("cd"), *ipath;
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;
	struct idx_info info;

	opts_init(&o, &w, cd);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ipath = xstrdup(info.path);
	idx_close(ix);
	ck_assert_int_eq(chmod(ipath, 0602), 0);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert(info.in_memory);
	idx_close(ix);
	ck_assert_int_eq(w.n, 1);
	ck_assert_msg(strstr(w.all, "mode 0602), left alone; working in "
	    "memory") != NULL, "%s", w.all);
	ck_assert_uint_eq(mode_of(ipath), 0602);
	free(ipath);
	free(cd);
	free(snap);
}
END_TEST

/* Another user's index beside the snapshot (needs root to make one):
 * neither used nor replaced, even on a forced rebuild. */
START_TEST(test_trust_other_user)
{
	char *snap, *ipath;
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;
	struct idx_info info;

	ck_assert_msg(geteuid() == 0, "only root can give a file away");
	snap = copy_snapshot("s.pickle");
	opts_init(&o, &w, NULL);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_close(ix);
	xasprintf(&ipath, "%s%s", snap, IDX_SUFFIX);
	/* the snapshot stays root's: uid 65534 is neither the user nor
	 * the snapshot's owner */
	ck_assert_int_eq(chown(ipath, 65534, 65534), 0);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert_ptr_nonnull(strstr(info.path, "/xdg/snapview/"));
	idx_close(ix);
	ck_assert_msg(w.n == 1 && strstr(w.all, "not trusted (owner uid "
	    "65534, mode 0644)") != NULL, "%s", w.all);
	/* the same index is trusted when its owner owns the snapshot */
	ck_assert_int_eq(chown(snap, 65534, 65534), 0);
	memset(&w, 0, sizeof w);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert_str_eq(info.path, ipath);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	/* a forced rebuild does not replace it */
	o.force_rebuild = 1;
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert_ptr_nonnull(strstr(info.path, "/xdg/snapview/"));
	idx_close(ix);
	{
		struct stat st;

		ck_assert_int_eq(stat(ipath, &st), 0);
		ck_assert_uint_eq(st.st_uid, 65534);
	}
	free(ipath);
	free(snap);
}
END_TEST

/* The default cache directory, ours but open to others, is narrowed to
 * 0700 with one line. */
START_TEST(test_narrow_default_cache_dir)
{
	char *snap = copy_snapshot("s.pickle"), *x = tpath("xdg"), *d, *b;
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;
	struct idx_info info;

	xasprintf(&d, "%s/snapview", x);
	ck_assert_int_eq(mkdir(x, 0755), 0);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	ck_assert_int_eq(chmod(d, 0755), 0);
	/* a file of the user's at the beside path sends the index to the
	 * cache whoever runs this (root writes any directory) */
	xasprintf(&b, "%s%s", snap, IDX_SUFFIX);
	write_file(b, "mine\n", 5);
	opts_init(&o, &w, NULL);
	ck_assert_int_eq(idx_open(snap, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert_ptr_nonnull(strstr(info.path, "/xdg/snapview/"));
	idx_close(ix);
	ck_assert_uint_eq(mode_of(d), 0700);
	ck_assert_msg(strstr(w.all, "was mode 0755, now 0700") != NULL, "%s",
	    w.all);
	ck_assert_int_eq(w.n, 2); /* that, and the foreign file left alone */
	free(b);
	free(d);
	free(x);
	free(snap);
}
END_TEST

/* ---- fatal signals ------------------------------------------------------- */

START_TEST(test_guard_registry)
{
	static char area[4096];

	ck_assert_ptr_null(sv_fatal_guarded(area));
	ck_assert_int_eq(sv_fatal_guard(area + 100, 1000, "a\x1b[2Jb"), 0);
	ck_assert_ptr_null(sv_fatal_guarded(area + 99));
	ck_assert_ptr_nonnull(sv_fatal_guarded(area + 100));
	ck_assert_ptr_nonnull(sv_fatal_guarded(area + 1099));
	ck_assert_ptr_null(sv_fatal_guarded(area + 1100));
	/* the name is kept escaped: no raw ESC can reach a terminal */
	ck_assert_ptr_null(strchr(sv_fatal_guarded(area + 500), '\x1b'));
	sv_fatal_unguard(area + 100);
	ck_assert_ptr_null(sv_fatal_guarded(area + 500));
}
END_TEST

/* Under ASan the action before ours is ASan's, which reports a SIGSEGV or
 * SIGBUS and exits 1 instead of dying of it. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* Died of sig, or (under ASan) reported by ASan. */
static int
died_of(int st, int sig)
{
	if (WIFSIGNALED(st))
		return WTERMSIG(st) == sig;
	return UNDER_ASAN && WIFEXITED(st) && WEXITSTATUS(st) != 0;
}

static int restore_fd = -1;

static void
test_restore_hook(void)
{
	if (write(restore_fd, "R", 1) < 0)
		return;
}

/* Runs fn in a child with the handlers installed; returns its wait
 * status, its stderr in err and whether the restore hook ran. */
static int
in_child(void (*fn)(void), char *err, size_t el, int *restored)
{
	int ep[2], rp[2], st;
	size_t off;
	ssize_t n;
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(ep), 0);
	ck_assert_int_eq(pipe(rp), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl = {0, 0};

		setrlimit(RLIMIT_CORE, &rl);
		dup2(ep[1], STDERR_FILENO);
		restore_fd = rp[1];
		sv_fatal_install();
		sv_fatal_set_restore(test_restore_hook);
		fn();
		_exit(0);
	}
	close(ep[1]);
	close(rp[1]);
	/* the handler writes its line in pieces: read to the end */
	off = 0;
	while (off + 1 < el && (n = read(ep[0], err + off, el - 1 - off)) > 0)
		off += (size_t)n;
	err[off] = '\0';
	*restored = read(rp[0], &c, 1) == 1;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	close(ep[0]);
	close(rp[0]);
	return st;
}

/* Maps a 2-page file, truncates it, reads the second page. */
static void
touch_shrunk(int guard)
{
	char *p = tpath("shrink.bin");
	long pg = sysconf(_SC_PAGESIZE);
	volatile const char *m;
	int fd;

	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 2 * pg) != 0)
		_exit(90);
	m = mmap(NULL, (size_t)(2 * pg), PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		_exit(91);
	if (guard)
		sv_fatal_guard((const void *)m, (size_t)(2 * pg), "idx\nfile");
	if (ftruncate(fd, 0) != 0)
		_exit(92);
	(void)m[pg];
	_exit(93);
}

static void
shrunk_guarded(void)
{
	touch_shrunk(1);
}

static void
shrunk_unguarded(void)
{
	touch_shrunk(0);
}

/* A read of a page with no access: a genuine SIGSEGV (a NULL one would
 * be caught by UBSan before it faults). */
static void
bad_read(void)
{
	volatile const int *p = mmap(NULL, 4096, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if ((const void *)p == MAP_FAILED)
		_exit(94);
	(void)*p;
}

START_TEST(test_sigbus_guarded)
{
	char err[512];
	int st, restored;

	st = in_child(shrunk_guarded, err, sizeof err, &restored);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d", st);
	ck_assert_str_eq(err, "snapview: idx\\x0afile: the file shrank while "
	    "in use (truncated by another process)\n");
	ck_assert(restored);
}
END_TEST

START_TEST(test_sigbus_unguarded)
{
	char err[512];
	int st, restored;

	st = in_child(shrunk_unguarded, err, sizeof err, &restored);
	ck_assert_msg(died_of(st, SIGBUS), "status %d", st);
	ck_assert_ptr_null(strstr(err, "shrank"));
	ck_assert(restored);
}
END_TEST

START_TEST(test_sigsegv_dies)
{
	char err[512];
	int st, restored;

	st = in_child(bad_read, err, sizeof err, &restored);
	ck_assert_msg(died_of(st, SIGSEGV), "status %d", st);
	ck_assert(restored);
	st = in_child(abort, err, sizeof err, &restored);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %d",
	    st);
	ck_assert(restored);
}
END_TEST

static Suite *
cache_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("cache");
	TCase *root = tcase_create("root");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_parse_size);
	tcase_add_test(tc, test_limit_env);
	tcase_add_test(tc, test_list_entries_only);
	tcase_add_test(tc, test_trim_lru);
	tcase_add_test(tc, test_evicted_while_mapped);
	tcase_add_test(tc, test_clear);
	tcase_add_test(tc, test_open_modes_and_use_time);
	tcase_add_test(tc, test_open_beside_mode);
	tcase_add_test(tc, test_open_trim_after_build);
	tcase_add_test(tc, test_trust_group_writable_beside);
	tcase_add_test(tc, test_trust_cache_only_memory);
	tcase_add_test(tc, test_narrow_default_cache_dir);
	tcase_add_test(tc, test_guard_registry);
	tcase_add_test(tc, test_sigbus_guarded);
	tcase_add_test(tc, test_sigbus_unguarded);
	tcase_add_test(tc, test_sigsegv_dies);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(root, setup, teardown);
	tcase_set_timeout(root, 0);
	tcase_add_test(root, test_foreign_owner_kept);
	tcase_add_test(root, test_trust_other_user);
	suite_add_tcase(s, root);
	return s;
}

int
main(int argc, char **argv)
{
	const char *tc = "cache";
	SRunner *sr;
	int failed;

	if (argc > 1 && strcmp(argv[1], "root") == 0) {
		if (geteuid() != 0) {
			printf("not root (only root can give a file to "
			    "another user): skipping\n");
			return 77;
		}
		tc = "root";
	} else if (argc > 1) {
		fprintf(stderr, "usage: %s [root]\n", argv[0]);
		return 99;
	}
	sr = srunner_create(cache_suite());
	srunner_run(sr, NULL, tc, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
