/*
 * File-backed growable arrays (spill.h). The range is reserved with
 * PROT_NONE; each growth allocates the file's new blocks first
 * (posix_fallocate, so a full disk is an error here and never a SIGBUS on
 * a later write) and maps them over the reservation with MAP_FIXED.
 * Giving back is MADV_DONTNEED on a shared file mapping: the pages leave
 * the process, their contents stay in the file.
 */
#include "config.h"

#include "util/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/mapfile.h"
#include "util/xalloc.h"

int
spill_tmp_fd(void)
{
	const char *d = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (d == NULL || d[0] != '/')
		d = "/tmp";
#ifdef O_TMPFILE
	fd = open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
#endif
	if ((size_t)snprintf(path, sizeof path, "%s/snapview-spill.XXXXXX", d)
	    >= sizeof path)
		return -1;
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	/* ours, just made: unlinked at once, so nothing is left behind */
	unlink(path);
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

int
spill_init(struct spill *s, size_t reserve)
{
	long pg = sysconf(_SC_PAGESIZE);

	memset(s, 0, sizeof *s);
	s->fd = -1;
	if (pg <= 0)
		return -1;
	reserve = (reserve + (size_t)pg - 1) & ~((size_t)pg - 1);
	s->base = mmap(NULL, reserve, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		return -1;
	}
	s->fd = spill_tmp_fd();
	if (s->fd < 0) {
		munmap(s->base, reserve);
		s->base = NULL;
		return -1;
	}
	s->reserve = reserve;
	return 0;
}

void *
spill_grow(struct spill *s, size_t need)
{
	size_t ncap = s->cap ? s->cap : 1u << 20;
	void *p;

	if (s->fd < 0 || need > s->reserve)
		return NULL;
	if (need <= s->cap)
		return s->base;
	while (ncap < need)
		ncap *= 2;
	if (ncap > s->reserve)
		ncap = s->reserve;
	if (posix_fallocate(s->fd, (off_t)s->cap, (off_t)(ncap - s->cap)) != 0)
		return NULL;
	p = mmap(s->base + s->cap, ncap - s->cap, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED, s->fd, (off_t)s->cap);
	if (p == MAP_FAILED)
		return NULL;
	s->cap = ncap;
	return s->base;
}

int
spill_adopt(struct spill *s, size_t reserve, void *heap, size_t used,
    size_t need)
{
	if (sizeof(size_t) < 8 || spill_init(s, reserve) != 0 ||
	    spill_grow(s, need) == NULL) {
		spill_free(s);
		return -1;
	}
	if (used > 0)
		memcpy(s->base, heap, used);
	free(heap);
	return 0;
}

void *
spill_to_heap(struct spill *s, size_t used, size_t n, size_t size)
{
	void *a = xreallocarray(NULL, n ? n : 1, size);

	if (used > 0)
		memcpy(a, s->base, used);
	spill_free(s);
	return a;
}

void
spill_release(struct spill *s, size_t upto, size_t keep, size_t step)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t end;

	if (s->fd < 0 || pg <= 0 || upto <= keep)
		return;
	end = (upto - keep) & ~((size_t)pg - 1);
	if (end > s->cap)
		end = s->cap & ~((size_t)pg - 1);
	map_release_below(s->base, &s->released, end, step);
}

void
spill_populate(const struct spill *s, size_t *populated, size_t upto,
    size_t ahead, size_t limit, int *unable)
{
#ifdef MADV_POPULATE_WRITE
	map_populate_ahead(s->base, populated, upto, ahead, limit,
	    MADV_POPULATE_WRITE, unable);
#else
	(void)s;
	(void)populated;
	(void)upto;
	(void)ahead;
	(void)limit;
	*unable = 1;
#endif
}

void
spill_drop(struct spill *s, size_t from, size_t to)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (s->fd < 0 || pg <= 0)
		return;
	if (to > s->released)
		to = s->released;
	to &= ~((size_t)pg - 1);
	if (from >= to)
		return;
	from = (from + (size_t)pg - 1) & ~((size_t)pg - 1);
	if (to > from)
		(void)madvise(s->base + from, to - from, MADV_DONTNEED);
}

void
spill_free(struct spill *s)
{
	if (s->base != NULL)
		munmap(s->base, s->reserve);
	if (s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof *s);
	s->fd = -1;
}
