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
mapfile_open(struct mapfile *m, const char *path, struct sv_error *err)
{
	struct stat st;
	int fd;
	void *p;

	memset(m, 0, sizeof *m);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	if (fstat(fd, &st) != 0) {
		sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
		close(fd);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "is a directory");
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "not a regular file");
	}
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
}

void
mapfile_populate(struct mapfile *m, size_t upto, size_t ahead)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t from, to;

	if (m->data == NULL || pg <= 0 || upto >= m->len)
		return;
	to = ahead < m->len - upto ? upto + ahead : m->len;
	if (m->populated >= upto + ahead / 2 || m->populated >= to)
		return;
	from = m->populated > upto ? m->populated : upto;
	from &= ~((size_t)pg - 1);
	m->populated = to;
#ifdef MADV_POPULATE_READ
	if (!m->no_populate && madvise((void *)(uintptr_t)(m->data + from),
	    to - from, MADV_POPULATE_READ) != 0 && errno == EINVAL)
		m->no_populate = 1;
#else
	(void)from;
#endif
}

void
mapfile_close(struct mapfile *m)
{
	if (m->data != NULL) {
		sv_fatal_unguard(m->data);
		munmap((void *)m->data, m->len);
	}
	memset(m, 0, sizeof *m);
}
