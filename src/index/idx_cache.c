/*
 * The index cache directory: its limit, least-recently-used eviction,
 * listing and clearing (idx_cache.h says what counts as an entry and why
 * eviction is safe beside other processes).
 */
#include "config.h"

#include "index/idx_cache.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "index/idx_int.h"
#include "util/fdio.h"
#include "util/xalloc.h"

/* The hex digits idx_path_cache() puts before the '-'. */
#define NAME_HASH_LEN 16

char *
idx_cache_default_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *d;

	if (x != NULL && x[0] == '/')
		xasprintf(&d, "%s/%s", x, IDX_CACHE_SUBDIR);
	else if (home != NULL && home[0] != '\0')
		xasprintf(&d, "%s/.cache/%s", home, IDX_CACHE_SUBDIR);
	else
		return NULL;
	return d;
}

int
idx_cache_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	switch (*p) {
	case 'k': case 'K': mul = 1ull << 10; p++; break;
	case 'm': case 'M': mul = 1ull << 20; p++; break;
	case 'g': case 'G': mul = 1ull << 30; p++; break;
	case 't': case 'T': mul = 1ull << 40; p++; break;
	}
	if (mul > 1 && *p == 'i')
		p++;
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p != '\0' || (v != 0 && v > UINT64_MAX / mul))
		return -1;
	*out = v * mul;
	return 0;
}

int
idx_cache_limit(uint64_t *max, struct sv_error *err)
{
	const char *s = getenv(IDX_CACHE_MAX_ENV);

	*max = IDX_CACHE_MAX_DEFAULT;
	if (s == NULL || s[0] == '\0')
		return 0;
	if (idx_cache_parse_size(s, max) != 0) {
		*max = IDX_CACHE_MAX_DEFAULT;
		return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
		    "%s: not a size: '%.64s' (the default, 10G, applies)",
		    IDX_CACHE_MAX_ENV, s);
	}
	return 0;
}

/* The cache's name pattern: 16 hex digits, '-', at least one character,
 * the index suffix. */
static int
entry_name(const char *name)
{
	size_t n = strlen(name), sl = strlen(IDX_SUFFIX), i;

	if (n < NAME_HASH_LEN + 2 + sl || name[NAME_HASH_LEN] != '-' ||
	    strcmp(name + n - sl, IDX_SUFFIX) != 0)
		return 0;
	for (i = 0; i < NAME_HASH_LEN; i++)
		if (!isxdigit((unsigned char)name[i]))
			return 0;
	return 1;
}

/* A temp file of a cache entry: ENTRY + ".tmp." + "PID.N.RAND". Returns
 * the PID part, or NULL. */
static const char *
temp_name(const char *name)
{
	const char *p = name, *last = NULL, *tail;
	size_t sl = strlen(IDX_SUFFIX);
	char *entry;
	int ok;

	while ((p = strstr(p, IDX_SUFFIX IDX_TMP_INFIX)) != NULL)
		last = p++;
	if (last == NULL)
		return NULL;
	tail = last + sl + strlen(IDX_TMP_INFIX);
	entry = xstrndup(name, (size_t)(last - name) + sl);
	ok = entry_name(entry);
	free(entry);
	return ok ? tail : NULL;
}

int
idx_temp_abandoned(const char *pid_part, time_t mtime, time_t now)
{
	char *end;
	long pid;

	errno = 0;
	pid = strtol(pid_part, &end, 10);
	if (end == pid_part || *end != '.' || pid <= 0 || errno != 0)
		return 0;
	if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
	    errno != ESRCH)
		return 0; /* its builder may still be at work */
	return now - mtime > IDX_TMP_STALE_S;
}

/* 1 when name in dirfd is a regular file of ours that starts with the
 * index magic; *st is then its stat. Checked on an open descriptor, not
 * followed through a symlink. */
static int
ours(int dirfd, const char *name, struct stat *st)
{
	uint8_t m[IDX_MAGIC_LEN];
	int fd, ok;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK);
	if (fd < 0)
		return 0;
	ok = fstat(fd, st) == 0 && S_ISREG(st->st_mode) &&
	    st->st_uid == geteuid() &&
	    sv_pread_all(fd, m, sizeof m, 0) == 0 &&
	    memcmp(m, IDX_MAGIC, IDX_MAGIC_LEN) == 0;
	close(fd);
	return ok;
}

/* Unlinks name if it is still the file that was checked (st). */
static int
unlink_checked(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;

	if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
	    now.st_dev != st->st_dev || now.st_ino != st->st_ino)
		return -1;
	return unlinkat(dirfd, name, 0);
}

/* One scanned file: an entry, or an abandoned temp file. */
struct scan {
	char *name;
	struct stat st;
	int temp;
};

/* Reads dir into *out. A missing directory gives nothing and 0. */
static int
scan_dir(const char *dir, int *dirfd, struct scan **out, size_t *n,
    struct sv_error *err)
{
	DIR *dp;
	struct dirent *de;
	struct scan *v = NULL;
	size_t cap = 0;
	time_t now = time(NULL);
	const char *pid = NULL;
	struct stat st;

	*out = NULL;
	*n = 0;
	*dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0) {
		if (errno == ENOENT)
			return 0;
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	}
	dp = fdopendir(dup(*dirfd));
	if (dp == NULL) {
		close(*dirfd);
		*dirfd = -1;
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	}
	while ((de = readdir(dp)) != NULL) {
		int temp = 0;

		if (!entry_name(de->d_name)) {
			if ((pid = temp_name(de->d_name)) == NULL)
				continue;
			temp = 1;
		}
		if (!ours(*dirfd, de->d_name, &st))
			continue;
		if (temp && !idx_temp_abandoned(pid, st.st_mtime, now))
			continue;
		XGROW(v, cap, *n + 1);
		v[*n].name = xstrdup(de->d_name);
		v[*n].st = st;
		v[*n].temp = temp;
		(*n)++;
	}
	closedir(dp);
	*out = v;
	return 0;
}

static void
scan_free(struct scan *v, size_t n, int dirfd)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	if (dirfd >= 0)
		close(dirfd);
}

static int64_t
mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Least recently used first; names break ties so the order is fixed. */
static int
cmp_lru(const void *a, const void *b)
{
	const struct scan *x = a, *y = b;
	int64_t p = mtime_ns(&x->st), q = mtime_ns(&y->st);

	if (p != q)
		return p < q ? -1 : 1;
	return strcmp(x->name, y->name);
}

int
idx_cache_list(const char *dir, struct idx_cache_entry **out, size_t *n,
    struct sv_error *err)
{
	struct scan *v;
	size_t nv, i;
	int dirfd;

	*out = NULL;
	*n = 0;
	if (scan_dir(dir, &dirfd, &v, &nv, err) != 0)
		return -1;
	if (nv > 1)
		qsort(v, nv, sizeof *v, cmp_lru);
	*out = xcalloc(nv + 1, sizeof **out);
	for (i = nv; i-- > 0;) {
		if (v[i].temp)
			continue;
		(*out)[*n].name = xstrdup(v[i].name);
		(*out)[*n].size = (uint64_t)v[i].st.st_size;
		(*out)[*n].used = (int64_t)v[i].st.st_mtime;
		(*n)++;
	}
	scan_free(v, nv, dirfd);
	return 0;
}

void
idx_cache_list_free(struct idx_cache_entry *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

/* The base name of keep when keep is in dir (same directory file), else
 * NULL: compared by device and inode, so any spelling of the path works. */
static const char *
kept_name(const char *keep, const struct scan *v, size_t n)
{
	struct stat st;
	size_t i;

	if (keep == NULL || stat(keep, &st) != 0)
		return NULL;
	for (i = 0; i < n; i++)
		if (v[i].st.st_dev == st.st_dev && v[i].st.st_ino == st.st_ino)
			return v[i].name;
	return NULL;
}

static void
count(uint64_t *n_removed, uint64_t *bytes, uint64_t size)
{
	if (n_removed != NULL)
		(*n_removed)++;
	if (bytes != NULL)
		*bytes += size;
}

int
idx_cache_trim(const char *dir, uint64_t max, const char *keep,
    uint64_t *n_removed, uint64_t *bytes, struct sv_error *err)
{
	struct scan *v;
	size_t nv, i;
	uint64_t total = 0, sz;
	const char *kn;
	int dirfd;

	if (scan_dir(dir, &dirfd, &v, &nv, err) != 0)
		return -1;
	for (i = 0; i < nv; i++)
		if (!v[i].temp)
			total += (uint64_t)v[i].st.st_size;
	kn = kept_name(keep, v, nv);
	if (nv > 1)
		qsort(v, nv, sizeof *v, cmp_lru);
	for (i = 0; i < nv && total > max; i++) {
		if (v[i].temp || (kn != NULL && v[i].name == kn))
			continue;
		sz = (uint64_t)v[i].st.st_size;
		if (unlink_checked(dirfd, v[i].name, &v[i].st) == 0)
			count(n_removed, bytes, sz);
		/* gone either way: removed here or by someone else */
		total -= sz;
	}
	scan_free(v, nv, dirfd);
	return 0;
}

int
idx_cache_clear(const char *dir, uint64_t *n_removed, uint64_t *bytes,
    struct sv_error *err)
{
	struct scan *v;
	size_t nv, i;
	int dirfd;

	if (scan_dir(dir, &dirfd, &v, &nv, err) != 0)
		return -1;
	for (i = 0; i < nv; i++)
		if (unlink_checked(dirfd, v[i].name, &v[i].st) == 0 &&
		    !v[i].temp)
			count(n_removed, bytes, (uint64_t)v[i].st.st_size);
	scan_free(v, nv, dirfd);
	return 0;
}
