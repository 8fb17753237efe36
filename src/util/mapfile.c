/*
 * Whole-file read-only mappings.
 */
#include "config.h"

#include "util/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fatal.h"

int
mapfile_open_regular(const char *path, struct stat *st, struct sv_error *err)
{
	int fd, fl;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	if (fstat(fd, st) != 0) {
		sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    S_ISDIR(st->st_mode) ? "is a directory" :
		    "not a regular file");
	}
	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
		sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int
mapfile_open(struct mapfile *m, const char *path, struct sv_error *err)
{
	struct stat st;
	int fd;
	void *p;

	memset(m, 0, sizeof *m);
	atomic_init(&m->given_back, 0);
	if ((fd = mapfile_open_regular(path, &st, err)) < 0)
		return -1;
	m->len = (size_t)st.st_size;
	m->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
		      (uint64_t)st.st_mtim.tv_nsec;
	m->dev = (uint64_t)st.st_dev;
	m->ino = (uint64_t)st.st_ino;
	if (m->len > 0) {
		p = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "mmap: %s",
			    strerror(errno));
			close(fd);
			return -1;
		}
		madvise(p, m->len, MADV_SEQUENTIAL);
		m->data = p;
		/* a file shrunk underneath is an error line, not a crash */
		sv_fatal_guard(p, m->len, path);
	}
	close(fd);
	return 0;
}

void
map_release_below(const uint8_t *base, size_t *released, size_t end,
    size_t step)
{
	if (end <= *released || end - *released < step)
		return;
	(void)madvise((void *)(uintptr_t)(base + *released), end - *released,
	    MADV_DONTNEED);
	*released = end;
}

void
mapfile_release(struct mapfile *m, size_t upto, size_t keep, size_t step)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (m->data == NULL || upto <= keep)
		return;
	map_release_below(m->data, &m->released,
	    (upto - keep) & ~((size_t)pg - 1), step);
	atomic_store_explicit(&m->given_back, m->released,
	    memory_order_relaxed);
}

void
map_populate_ahead(const uint8_t *base, size_t *populated, size_t upto,
    size_t ahead, size_t limit, int advice, int *unable)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t from, to;

	if (base == NULL || pg <= 0 || upto >= limit)
		return;
	to = ahead < limit - upto ? upto + ahead : limit;
	if (*populated >= upto + ahead / 2 || *populated >= to)
		return;
	from = *populated > upto ? *populated : upto;
	from &= ~((size_t)pg - 1);
	*populated = to;
	if (!*unable && madvise((void *)(uintptr_t)(base + from), to - from,
	    advice) != 0 && errno == EINVAL)
		*unable = 1;
}

void
mapfile_populate(struct mapfile *m, size_t upto, size_t ahead)
{
#ifdef MADV_POPULATE_READ
	map_populate_ahead(m->data, &m->populated, upto, ahead, m->len,
	    MADV_POPULATE_READ, &m->no_populate);
#else
	(void)m;
	(void)upto;
	(void)ahead;
#endif
}

/* ---- a follower: the same calls on a thread of their own ---------------- */

static void
follow_calls(void *arg, size_t pos, size_t unused)
{
	struct mapfile *m = arg;

	(void)unused;
	mapfile_release(m, pos, m->follow_keep, m->follow_step);
	mapfile_populate(m, pos, m->follow_ahead);
}

void
mapfile_follow_start(struct mapfile *m, size_t keep, size_t step,
    size_t ahead)
{
	if (m->follow != NULL || m->data == NULL)
		return;
	m->follow_keep = keep;
	m->follow_step = step;
	m->follow_ahead = ahead;
	atomic_store_explicit(&m->given_back, m->released,
	    memory_order_relaxed);
	m->reader_back = m->released;
	m->follow = follow_start(follow_calls, m, ahead / 4);
	follow_tell(m->follow, 0, 0); /* the first pages, as the reader goes */
}

void
mapfile_follow(struct mapfile *m, size_t pos)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t done;

	if (m->follow == NULL)
		return;
	follow_tell(m->follow, pos, 0);
	/* the follower late: the reader gives the pages back (mapfile.h) */
	done = atomic_load_explicit(&m->given_back, memory_order_relaxed);
	if (done < m->reader_back)
		done = m->reader_back;
	if (pg > 0 && pos > done && pos - done > m->follow_keep +
	    m->follow_step + m->follow_step / 2) {
		map_release_below(m->data, &done,
		    (pos - m->follow_keep) & ~((size_t)pg - 1), 0);
		m->reader_back = done;
	}
}

void
mapfile_follow_stop(struct mapfile *m)
{
	follow_stop(m->follow);
	m->follow = NULL;
}

void
mapfile_close(struct mapfile *m)
{
	mapfile_follow_stop(m);
	if (m->data != NULL) {
		sv_fatal_unguard(m->data);
		munmap((void *)m->data, m->len);
	}
	memset(m, 0, sizeof *m);
}
