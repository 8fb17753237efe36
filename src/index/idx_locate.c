/*
 * Where indexes live and which one is used: the index path beside the
 * snapshot or in the cache, the source key an index is checked against,
 * whose index is trusted (ours, the snapshot owner's or root's, and
 * writable by no one else), which existing file may be replaced (only our
 * own), temp files (created with O_EXCL, stale ones of killed builds
 * removed), publishing a built temp file by rename, sections added to
 * an index in place (its prelude written last) or by a rewrite, the
 * cache's directory mode, use time and size limit (idx_cache.c), and
 * idx_open()'s choice between opening, building and working in memory.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "index/idx_cache.h"
#include "index/idx_int.h"
#include "util/clock.h"
#include "util/fdio.h"
#include "util/mapfile.h"
#include "util/stop.h"
#include "util/xalloc.h"

/* What the locating code needs of the snapshot besides its key. */
struct src_info {
	uid_t uid;   /* its owner, whose index is trusted */
	mode_t mode; /* its read bits are those of the index beside it */
};

/* Source key of an open snapshot: size, mtime, XXH3 of its two ends. */
static int
source_key(const char *path, struct src_key *k, struct src_info *si,
    struct sv_error *err)
{
	struct stat st;
	XXH3_state_t *h;
	uint8_t *buf;
	uint64_t head, tail_off;
	/* not blocking on a FIFO, nor taking one */
	int fd = mapfile_open_regular(path, &st, err);

	if (fd < 0)
		return -1;
	si->uid = st.st_uid;
	si->mode = st.st_mode;
	k->size = (uint64_t)st.st_size;
	k->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
	    (uint64_t)st.st_mtim.tv_nsec;
	buf = xmalloc(IDX_KEY_SPAN);
	h = XXH3_createState();
	XXH3_64bits_reset(h);
	head = k->size < IDX_KEY_SPAN ? k->size : IDX_KEY_SPAN;
	if (sv_pread_all(fd, buf, head, 0) != 0)
		goto fail;
	XXH3_64bits_update(h, buf, head);
	tail_off = k->size > 2 * (uint64_t)IDX_KEY_SPAN
	    ? k->size - IDX_KEY_SPAN : head;
	if (tail_off < k->size) {
		if (sv_pread_all(fd, buf, k->size - tail_off, tail_off) != 0)
			goto fail;
		XXH3_64bits_update(h, buf, k->size - tail_off);
	}
	k->hash = XXH3_64bits_digest(h);
	XXH3_freeState(h);
	free(buf);
	close(fd);
	return 0;
fail:
	XXH3_freeState(h);
	free(buf);
	close(fd);
	return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
	    "cannot read the file");
}

int
idx_path_beside(const char *path, char **out, struct sv_error *err)
{
	(void)err;
	xasprintf(out, "%s%s", path, IDX_SUFFIX);
	return 0;
}

int
idx_path_cache(const char *path, const char *cache_dir, char **out,
    struct sv_error *err)
{
	char *abs = realpath(path, NULL), *dir;
	const char *base;

	if (abs == NULL)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	base = strrchr(abs, '/');
	base = base != NULL ? base + 1 : abs;
	dir = cache_dir != NULL ? xstrdup(cache_dir) : idx_cache_default_dir();
	if (dir == NULL) {
		free(abs);
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "no cache directory (neither XDG_CACHE_HOME nor HOME)");
	}
	xasprintf(out, "%s/%016llx-%.64s%s", dir,
	    (unsigned long long)XXH3_64bits(abs, strlen(abs)), base,
	    IDX_SUFFIX);
	free(dir);
	free(abs);
	return 0;
}

/* mkdir -p of the directory part of file (mode 0700 for new ones). */
static int
mkdir_parents(const char *file)
{
	char *p = xstrdup(file), *s;
	int r = 0;

	s = strrchr(p, '/');
	if (s == NULL || s == p) {
		free(p);
		return 0;
	}
	*s = '\0';
	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			r = -1;
		*s = '/';
	}
	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		r = -1;
	free(p);
	return r;
}

static int
dir_writable(const char *file)
{
	char *p = xstrdup(file), *s = strrchr(p, '/');
	int ok;

	if (s == NULL)
		ok = access(".", W_OK) == 0;
	else if (s == p)
		ok = access("/", W_OK) == 0;
	else {
		*s = '\0';
		ok = access(p, W_OK) == 0;
	}
	free(p);
	return ok;
}

/* 1 when path is absent, or a regular file of this user's starting with
 * our magic (so this program wrote it for this user, and may replace it).
 * Another user's index is never replaced, even where the directory would
 * allow it: the name is theirs, and they would not trust our file. */
static int
may_replace(const char *path)
{
	struct stat st;
	uint8_t m[IDX_MAGIC_LEN];
	int fd, ok;

	if (lstat(path, &st) != 0)
		return errno == ENOENT;
	if (!S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)	/* removed since the lstat (another process's
			   eviction): absent now */
		return errno == ENOENT;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_uid == geteuid() &&
	    sv_pread_all(fd, m, sizeof m, 0) == 0 &&
	    memcmp(m, IDX_MAGIC, IDX_MAGIC_LEN) == 0;
	close(fd);
	return ok;
}

/* The trust rule (doc/SECURITY.md): an index is used only when it belongs
 * to the invoking user, to the snapshot's owner (who can write anything
 * the snapshot says anyway) or to root, and when no one else may write
 * it (group and other write bits clear; an ACL that grants write shows
 * in the group bits). Checked on the descriptor that is then mapped, so
 * the file cannot be swapped in between. Returns 1, or 0 with why set. */
static int
trusted(int fd, const struct src_info *si, char *why, size_t wl)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		snprintf(why, wl, "%s", strerror(errno));
		return 0;
	}
	if ((st.st_uid == geteuid() || st.st_uid == si->uid ||
	    st.st_uid == 0) && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return 1;
	snprintf(why, wl, "not trusted (owner uid %lu, mode %04o)",
	    (unsigned long)st.st_uid, (unsigned)(st.st_mode & 07777));
	return 0;
}

/* Creates target.tmp.PID.N exclusively with the given mode (the umask
 * may take more away); returns the fd, or -1 with errno. */
static int
create_temp(const char *target, mode_t mode, char **tmp)
{
	static unsigned counter;
	struct timespec ts;
	int i, fd;

	for (i = 0; i < 100; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		xasprintf(tmp, "%s%s%ld.%u.%lx", target, IDX_TMP_INFIX,
		    (long)getpid(), counter++,
		    (unsigned long)(ts.tv_nsec ^ (long)ts.tv_sec));
		fd = open(*tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd >= 0)
			return fd;
		free(*tmp);
		*tmp = NULL;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/* Removes TARGET.tmp.PID.N.RAND files (create_temp's names) whose
 * builder PID is no longer running, that are older than IDX_TMP_STALE_S
 * and that start with our magic: never a file this program did not
 * create, nor one a live build is writing. */
static void
clean_stale_temps(const char *target)
{
	char *dir = xstrdup(target), *slash = strrchr(dir, '/');
	const char *base = slash != NULL ? slash + 1 : target;
	size_t bl;
	DIR *dp;
	struct dirent *de;
	time_t now = time(NULL);

	if (slash != NULL)
		*slash = '\0';
	dp = opendir(slash == NULL ? "." : slash == dir ? "/" : dir);
	bl = strlen(base);
	while (dp != NULL && (de = readdir(dp)) != NULL) {
		const char *p = de->d_name;
		char *path;
		struct stat st;

		if (strncmp(p, base, bl) != 0 ||
		    strncmp(p + bl, IDX_TMP_INFIX, strlen(IDX_TMP_INFIX)) != 0)
			continue;
		p += bl + strlen(IDX_TMP_INFIX);
		xasprintf(&path, "%s/%s", slash == NULL ? "." : slash == dir
		    ? "" : dir, de->d_name);
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    idx_temp_abandoned(p, st.st_mtime, now) &&
		    may_replace(path))
			unlink(path);
		free(path);
	}
	if (dp != NULL)
		closedir(dp);
	free(dir);
}

/* Keeps which file ix was mapped from (fd's), for idx_close(). */
static void
note_file(struct sv_index *ix, int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0) {
		ix->file_dev = st.st_dev;
		ix->file_ino = st.st_ino;
		ix->file_known = 1;
	}
}

/* Finishes a written temp file: maps it, checks it, renames it to target
 * (when target is absent or ours). On success *out is the mapped index. */
static int
publish(int fd, const char *tmp, const char *target,
    const struct src_key *key, const struct idx_opts *o,
    struct sv_index **out, struct sv_error *err)
{
	char why[256];

	if (idx_map_index(fd, target, NULL, 0, key, 1, o, out, why,
	    sizeof why) != IDX_OK) {
		unlink(tmp);
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "index just written does not read back: %s", why);
	}
	if (!may_replace(target)) {
		/* Someone put a file there meanwhile: leave it alone and
		 * keep using our (now unlinked) mapping. */
		idx_warnf(o, "%s: not an index, left alone; index kept in "
		    "memory", target);
		unlink(tmp);
		(*out)->in_memory = 1;
		return 0;
	}
	if (rename(tmp, target) != 0) {
		int e = errno;

		unlink(tmp);
		idx_close(*out);
		*out = NULL;
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "cannot rename %s: %s", tmp, strerror(e));
	}
	(*out)->path = xstrdup(target);
	note_file(*out, fd);
	return 0;
}

/* Mode of a new index: the cache's are the user's alone; one beside the
 * snapshot may be read by whoever may read the snapshot. Nobody but the
 * owner may write either (the trust rule would refuse it). */
static mode_t
index_mode(const struct src_info *si, int in_cache)
{
	return in_cache ? 0600 : 0600 | (si->mode & 0044);
}

/* A test hook (tests/index/concurrent.test, tests/harden/cache_faults.test):
 * with SNAPVIEW_TEST_BUILD_PAUSE=FILE, a build waits here, its temp file
 * written whole but not yet renamed, until FILE exists (a minute at
 * most), so that a test can kill or interrupt it mid-build without
 * racing it. It first creates FILE.held.PID, so that the test knows it
 * is held here (and not still writing). */
static void
test_build_pause(void)
{
	const char *f = getenv("SNAPVIEW_TEST_BUILD_PAUSE");
	char held[4096];
	int fd;

	if (f == NULL || *f == '\0')
		return;
	if ((size_t)snprintf(held, sizeof held, "%s.held.%ld", f,
	    (long)getpid()) < sizeof held &&
	    (fd = open(held, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) >= 0)
		close(fd);
	sv_stop_wait_file(f);
}

/* Builds the index into target through a temp file of the given mode.
 * Returns 0 with *out set; -1 with err set. */
static int
build_file(const char *path, const char *target, mode_t mode,
    const struct src_key *key, const struct idx_opts *o,
    struct sv_index **out, struct sv_error *err)
{
	char *tmp = NULL;
	struct writer w;
	int fd, r;

	clean_stale_temps(target);
	fd = create_temp(target, mode, &tmp);
	if (fd < 0)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	{
		/* the magic from the start, so a build killed while parsing
		 * leaves a file that a later one knows as ours */
		uint8_t pre[IDX_PRELUDE_LEN];

		memset(pre, 0, sizeof pre);
		memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
		if (pwrite(fd, pre, sizeof pre, 0) != (ssize_t)sizeof pre) {
			int e = errno;

			unlink(tmp);
			close(fd);
			free(tmp);
			return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
			    strerror(e ? e : EIO));
		}
	}
	memset(&w, 0, sizeof w);
	w.fd = fd;
	w.o = o;
	w.src_size = key->size;
	r = idx_build_into(&w, path, key, o, err);
	free(w.toc);
	if (r == 0) {
		test_build_pause();
		/* a cancel that came after the last of the writing's
		 * progress calls (or during the pause) still leaves no
		 * index behind */
		if (sv_stop_requested() || (o->progress != NULL &&
		    o->progress(o->progress_ctx, key->size, key->size) != 0))
			r = sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET,
			    "cancelled");
	}
	if (r == 0) {
		r = publish(fd, tmp, target, key, o, out, err);
		if (r == 0) {
			(*out)->built = 1;
			(*out)->parse_s = w.parse_s;
			(*out)->sections_s = w.sections_s;
		}
	} else {
		unlink(tmp);
	}
	close(fd);
	free(tmp);
	return r;
}

/*
 * Appends the extension sections ix lacks (built into ix->ext) to the
 * file it was mapped from, target, instead of rewriting it: at 10 GB of
 * snapshot the rewrite copied 500 MB of column data to add a few
 * sections, a second of the viewer's first open. The sections, then a
 * header listing them beside the sections already there (the old header
 * left as padding), go after the file's end, and the prelude, written
 * last, points at the new header: until then the file is the index it
 * was, so that a reader opening it meanwhile or a process killed on the
 * way leaves a whole index (a reader that meets a half-written prelude
 * finds its hash wrong and rebuilds elsewhere, by rename). Readers that
 * have it mapped read nothing of the prelude again (doc/SECURITY.md).
 * Only on a file of this user's (as may_replace(): another user's is
 * never changed, even by root), while holding its lock (flock; a second
 * process extending it rewrites it instead), and only when it is still
 * the file mapped (not renamed over), of the size mapped (not extended
 * since). 0 with *ixp the file mapped again; -1 when it cannot (the
 * file is then as it was, cut back to its size) or when a section would
 * be dropped (a rewrite leaves no dead bytes), and the caller rewrites
 * it.
 */
static int
extend_in_place(struct sv_index **ixp, const char *target, const char *path,
    const struct src_key *key, const struct idx_opts *o)
{
	struct sv_index *ix = *ixp, *nix = NULL;
	struct writer w;
	struct stat st;
	char *abs, why[256];
	int fd, r = -1;

	if (!ix->file_known || ix->map == NULL || !idx_extend_keeps_all(ix))
		return -1;
	fd = open(target, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &st) != 0 ||
	    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_dev != ix->file_dev ||
	    st.st_ino != ix->file_ino || (uint64_t)st.st_size != ix->map_len ||
	    lseek(fd, st.st_size, SEEK_SET) != st.st_size) {
		close(fd);
		return -1;
	}
	memset(&w, 0, sizeof w);
	w.fd = fd;
	w.off = (uint64_t)st.st_size;
	abs = realpath(path, NULL);
	if (idx_extend_index(&w, ix) == 0) {
		test_build_pause();
		r = idx_w_finish(&w, key, abs != NULL ? abs : path, ix->snap);
	}
	free(abs);
	free(w.toc);
	if (r == 0 && idx_map_index(fd, target, NULL, 0, key, 1, o, &nix,
	    why, sizeof why) == IDX_OK) {
		nix->path = xstrdup(target);
		note_file(nix, fd);
		close(fd);
		idx_close(ix);
		*ixp = nix;
		return 0;
	}
	if (r != 0) /* the prelude is the old one: the old index stands */
		(void)ftruncate(fd, st.st_size);
	close(fd);
	return -1;
}

/* Adds missing extension sections to a mapped index: in place, else by
 * rewriting it. */
static int
extend_file(struct sv_index **ixp, const char *target, mode_t mode,
    const char *path, const struct src_key *key, const struct idx_opts *o,
    struct sv_error *err)
{
	struct sv_index *ix = *ixp, *nix = NULL;
	struct writer w;
	char *tmp = NULL, *abs;
	int fd, r;
	long long t0 = sv_mono_us();
	double sections_s;
	struct idx_span span = {0, 0, 0};

	/* the sections are all there is to do, but the writing */
	span.total = ix->source_size;
	span.to = idx_progress_at(span.total, IDX_PROGRESS_SECTIONS);
	/* with what the streams of the open that parsed it gathered, when
	 * it is the same file */
	idx_streamed_lend(ix, o, key);
	r = idx_build_extensions(ix, ix->snap, o, &span, err);
	idx_streamed_unlend(ix);
	if (r != 0)
		return -1;
	sections_s = (double)(sv_mono_us() - t0) / 1e6;
	if (extend_in_place(ixp, target, path, key, o) == 0) {
		(*ixp)->built = 1;
		(*ixp)->sections_s = sections_s;
		return 0;
	}
	fd = create_temp(target, mode, &tmp);
	if (fd < 0) {
		idx_warnf(o, "%s: cannot add sections (%s); kept in memory",
		    target, strerror(errno));
		return 0;
	}
	memset(&w, 0, sizeof w);
	w.fd = fd;
	abs = realpath(path, NULL);
	r = idx_rewrite_index(&w, ix, key, abs != NULL ? abs : path, err);
	free(abs);
	free(w.toc);
	if (r == 0)
		r = publish(fd, tmp, target, key, o, &nix, err);
	else
		unlink(tmp);
	close(fd);
	free(tmp);
	if (r != 0) {
		idx_warnf(o, "%s: cannot add sections (%s); kept in memory",
		    target, err->msg);
		sv_error_clear(err);
		return 0;
	}
	nix->built = 1;
	nix->sections_s = sections_s;
	idx_close(ix);
	*ixp = nix;
	return 0;
}

/* A place the index may be: beside the snapshot or in the cache. */
struct cand {
	char *path;
	int cache;  /* in the cache directory */
	int usable; /* may be built into */
};

/* Tries the index at c->path. 0: *out opened; 1: absent or unusable
 * (why/kind set); 2: there but not trusted (why set). */
static int
try_open(const struct cand *c, const struct src_key *key,
    const struct src_info *si, int quick, const struct idx_opts *o,
    struct sv_index **out, enum idx_why *kind, char *why, size_t wl)
{
	int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	*kind = IDX_OK;
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(why, wl, "%s", strerror(errno));
		*kind = errno == ELOOP ? IDX_FOREIGN : IDX_CORRUPT;
		return 1;
	}
	if (!trusted(fd, si, why, wl)) {
		close(fd);
		return 2;
	}
	*kind = idx_map_index(fd, c->path, NULL, 0, key, quick, o, out, why,
	    wl);
	if (*kind == IDX_OK)
		note_file(*out, fd);
	if (*kind == IDX_OK && c->cache) {
		/* last use, for the cache's eviction (fails harmlessly on
		 * a file that is not ours) */
		struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};

		futimens(fd, ts);
	}
	close(fd);
	return *kind == IDX_OK ? 0 : 1;
}

/* The directory of a file path (heap). */
static char *
dir_of(const char *file)
{
	const char *s = strrchr(file, '/');

	if (s == NULL)
		return xstrdup(".");
	if (s == file)
		return xstrdup("/");
	return xstrndup(file, (size_t)(s - file));
}

/* The default cache directory holds the indexes, hence the frame names
 * and sizes, of every snapshot the user opened where nothing could be
 * written beside it: a directory of ours that others may enter is
 * narrowed to 0700, once, saying so. A directory named by --cache-dir, or
 * not ours, or a symlink, is left as it is (the files in it are 0600). */
static void
narrow_cache_dir(const char *file, const struct idx_opts *o)
{
	char *dir = dir_of(file);
	struct stat st;
	int fd;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	    (st.st_mode & 077) != 0 && fchmod(fd, 0700) == 0)
		idx_warnf(o, "%s: was mode %04o, now 0700: the cache holds "
		    "what your snapshots contain", dir,
		    (unsigned)(st.st_mode & 07777));
	if (fd >= 0)
		close(fd);
	free(dir);
}

/* After an index was written into the cache: evict the least recently
 * used others until the cache is within its limit. */
static void
trim_cache(const char *kept, const struct idx_opts *o)
{
	char *dir = dir_of(kept);
	struct sv_error e;
	uint64_t max;

	sv_error_clear(&e);
	if (idx_cache_limit(&max, &e) != 0)
		idx_warnf(o, "%s", e.msg);
	sv_error_clear(&e);
	if (idx_cache_trim(dir, max, kept, NULL, NULL, &e) != 0)
		idx_warnf(o, "%s: cannot trim the cache: %s", dir, e.msg);
	free(dir);
}

/* One line for an index that is not trusted, saying where the index comes
 * from instead. Returns 1 when that line already said "working in
 * memory". */
static int
warn_untrusted(const struct idx_opts *o, const struct cand *c, int n,
    int i, const char *why)
{
	int j, other = 0;

	for (j = 0; j < n; j++) {
		if (j == i || !c[j].usable)
			continue;
		if (c[j].cache) {
			idx_warnf(o, "%s: %s: using the cache instead",
			    c[i].path, why);
			return 0;
		}
		other = 1;
	}
	if (other) {
		idx_warnf(o, "%s: %s, left alone", c[i].path, why);
		return 0;
	}
	idx_warnf(o, "%s: %s, left alone; working in memory", c[i].path, why);
	return 1;
}

/* The candidate places of path's index, the one to prefer first: what
 * idx_open() tries in turn. Returns how many, or -1 with err set. */
static int
candidates(const char *path, const struct idx_opts *o, struct cand *c,
    struct sv_error *err)
{
	int n = 0;
	struct sv_error e2;

	memset(c, 0, 2 * sizeof *c);
	if (o->cache_dir != NULL) {
		if (idx_path_cache(path, o->cache_dir, &c[n].path, err) != 0)
			return -1;
		c[n++].cache = 1;
	} else {
		char *beside = NULL, *cache = NULL;

		idx_path_beside(path, &beside, err);
		sv_error_clear(&e2);
		idx_path_cache(path, NULL, &cache, &e2);
		if (dir_writable(beside) || cache == NULL) {
			c[n++].path = beside;
			if (cache != NULL) {
				c[n].cache = 1;
				c[n++].path = cache;
			}
		} else {
			c[n].cache = 1;
			c[n++].path = cache;
			c[n++].path = beside;
		}
	}
	return n;
}

int
idx_peek_section(const char *path, const struct idx_opts *opts,
    const char *name, uint64_t max_len, uint8_t **data, size_t *len,
    struct sv_error *err)
{
	struct idx_opts dflt;
	const struct idx_opts *o = opts;
	struct src_key key;
	struct src_info si;
	struct cand c[2];
	char why[256], sec[IDX_MAX_SECTION_NAME + 8];
	int n, i, r = 1;

	*data = NULL;
	*len = 0;
	if (o == NULL) {
		memset(&dflt, 0, sizeof dflt);
		o = &dflt;
	}
	if (o->no_cache || o->force_rebuild)
		return 1;
	memset(&si, 0, sizeof si);
	if (source_key(path, &key, &si, err) != 0)
		return -1;
	if ((n = candidates(path, o, c, err)) < 0)
		return -1;
	snprintf(sec, sizeof sec, "%s%s", IDX_SEC_EXT_PREFIX, name);
	/* the places in idx_open()'s order, the first usable index */
	for (i = 0; i < n && r == 1; i++) {
		int fd = open(c[i].path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		    O_NONBLOCK);

		if (fd < 0)
			continue;
		if (trusted(fd, &si, why, sizeof why) &&
		    idx_peek_fd(fd, c[i].path, &key, sec, max_len, data, len,
			why, sizeof why) == IDX_OK) {
			r = 0;
			if (c[i].cache) {
				/* last use, for the cache's eviction */
				struct timespec ts[2] = {{0, UTIME_OMIT},
				    {0, UTIME_NOW}};

				futimens(fd, ts);
			}
		}
		close(fd);
	}
	free(c[0].path);
	free(c[1].path);
	return r;
}

int
idx_open(const char *path, const struct idx_opts *opts,
    struct sv_index **out, struct sv_error *err)
{
	struct idx_opts dflt;
	const struct idx_opts *o = opts;
	struct src_key key;
	struct src_info si;
	struct cand c[2];
	char why[256];
	int n = 0, i, r, failed, told_memory = 0;
	struct sv_error e2;

	*out = NULL;
	memset(&si, 0, sizeof si);
	if (o == NULL) {
		memset(&dflt, 0, sizeof dflt);
		o = &dflt;
	}
	if (o->no_cache)
		return idx_build_memory(path, o, out, err);
	if (source_key(path, &key, &si, err) != 0)
		return -1;

	/* Candidate locations, the preferred one first. */
	if ((n = candidates(path, o, c, err)) < 0)
		return -1;
	for (i = 0; i < n; i++)
		c[i].usable = 1;

	for (i = 0; i < n && !o->force_rebuild; i++) {
		enum idx_why kind;

		r = try_open(&c[i], &key, &si, o->verify == IDX_VERIFY_QUICK,
		    o, out, &kind, why, sizeof why);
		if (r == 0) {
			(*out)->path = xstrdup(c[i].path);
			if (!o->sections_later &&
			    idx_missing_extensions(*out, o)) {
				r = extend_file(out, c[i].path,
				    index_mode(&si, c[i].cache), path, &key, o,
				    err);
				if (r == 0 && c[i].cache && (*out)->built)
					trim_cache(c[i].path, o);
			}
			goto done;
		}
		if (r == 2) {
			/* never used, never replaced */
			c[i].usable = 0;
			told_memory = warn_untrusted(o, c, n, i, why);
		} else if (kind == IDX_FOREIGN) {
			idx_warnf(o, "%s: %s, left alone", c[i].path,
			    why);
			c[i].usable = 0;
		} else if (kind != IDX_OK) {
			idx_warnf(o, "%s: %s; rebuilding", c[i].path, why);
		}
	}
	for (i = 0; i < n && o->force_rebuild; i++)
		if (!may_replace(c[i].path)) {
			idx_warnf(o, "%s: not an index of yours, left alone",
			    c[i].path);
			c[i].usable = 0;
		}

	/* Build into the first location that takes a file. A location that
	 * fails is told about once: on its own line when a later one takes
	 * the index, else in the one "working in memory" line. */
	failed = -1;
	for (i = 0; i < n; i++) {
		if (!c[i].usable)
			continue;
		mkdir_parents(c[i].path);
		if (c[i].cache && o->cache_dir == NULL)
			narrow_cache_dir(c[i].path, o);
		sv_error_clear(&e2);
		r = build_file(path, c[i].path, index_mode(&si, c[i].cache),
		    &key, o, out, &e2);
		if (r == 0) {
			if (failed >= 0)
				idx_warnf(o, "%s: cannot write the index (%s)",
				    c[failed].path, why);
			if (c[i].cache && !(*out)->in_memory)
				trim_cache(c[i].path, o);
			goto done;
		}
		if (e2.code != SV_ERR_IO) {
			/* bad input or cancelled: no point elsewhere */
			*err = e2;
			goto done;
		}
		snprintf(why, sizeof why, "%s", e2.msg);
		failed = i;
	}
	if (failed >= 0)
		idx_warnf(o, "%s: cannot write the index (%s); working in "
		    "memory", c[failed].path, why);
	else if (!told_memory)
		idx_warnf(o, "%s: no index written; working in memory", path);
	r = idx_build_memory(path, o, out, err);
done:
	free(c[0].path);
	free(c[1].path);
	return r;
}
