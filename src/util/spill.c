/*
 * File-backed growable arrays (spill.h). The range is reserved with
 * PROT_NONE. Growth maps anonymous memory over the reservation (the
 * window being written); giving back writes a finished part to the file
 * with pwrite() and then maps the file over it in place of the anonymous
 * pages, which the kernel frees. Writing with pwrite() and mapping after
 * matters: pages first touched through a shared mapping of a fresh file
 * are read in (zero-filled) by the filesystem before they are written,
 * and on ext4 that cost more than the parse of the memo itself. Space is
 * allocated (posix_fallocate) before the write, so a later store through
 * the mapping never meets a full disk as a SIGBUS; where the file cannot
 * take a part, that part stays in memory.
 */
#include "config.h"

#include "util/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* the range, its growth and what is given back are in units of a huge
 * page (2 MiB on x86-64), so the window can be backed by huge pages */
#define SPILL_UNIT ((size_t)2 << 20)
#define SPILL_BATCH (4 * SPILL_UNIT)

static int
tmp_fd(void)
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
	unsigned char *p, *a;

	memset(s, 0, sizeof *s);
	s->fd = -1;
	if (reserve > SIZE_MAX - 2 * SPILL_UNIT)
		return -1;
	reserve = (reserve + SPILL_UNIT - 1) & ~(SPILL_UNIT - 1);
	/* one unit more, to start the range on a unit */
	p = mmap(NULL, reserve + SPILL_UNIT, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	a = (unsigned char *)(((uintptr_t)p + SPILL_UNIT - 1) &
	    ~(uintptr_t)(SPILL_UNIT - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + reserve, SPILL_UNIT - (size_t)(a - p));
	s->fd = tmp_fd();
	if (s->fd < 0) {
		munmap(a, reserve);
		return -1;
	}
	s->base = a;
	s->reserve = reserve;
	return 0;
}

void *
spill_grow(struct spill *s, size_t need)
{
	size_t ncap = s->cap ? s->cap : SPILL_UNIT;
	void *p;

	if (s->fd < 0 || need > s->reserve)
		return NULL;
	if (need <= s->cap)
		return s->base;
	while (ncap < need)
		ncap *= 2;
	if (ncap > s->reserve)
		ncap = s->reserve;
	p = mmap(s->base + s->cap, ncap - s->cap, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	/* a fault per huge page rather than per page */
	(void)madvise(p, ncap - s->cap, MADV_HUGEPAGE);
#endif
	s->cap = ncap;
	return s->base;
}

/* Writes [off, off + len) of the range to the file. */
static int
write_out(struct spill *s, size_t off, size_t len)
{
	while (len > 0) {
		ssize_t n = pwrite(s->fd, s->base + off, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
		len -= (size_t)n;
	}
	return 0;
}

void
spill_release(struct spill *s, size_t upto, size_t keep)
{
	size_t end, len;
	void *p, *q;

	if (s->fd < 0 || upto <= keep)
		return;
	/* whole units, so no huge page is split */
	end = (upto - keep) & ~(SPILL_UNIT - 1);
	if (end > s->cap)
		end = s->cap;
	/* a few units at a time: each call leaves a mapping or two behind */
	if (end < s->released + SPILL_BATCH)
		return;
	len = end - s->released;
	if (posix_fallocate(s->fd, (off_t)s->released, (off_t)len) != 0 ||
	    write_out(s, s->released, len) != 0)
		return;
	/* mapped aside and then moved over the window, so a failure leaves
	 * the window as it was */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
	    (off_t)s->released);
	if (p == MAP_FAILED)
		return;
	q = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
	    s->base + s->released);
	if (q == MAP_FAILED) {
		munmap(p, len);
		return;
	}
	s->released = end;
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
