/*
 * Whole-file read-only mappings.
 */
#include "config.h"

#include "util/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fatal.h"
#include "util/thread.h"
#include "util/xalloc.h"

#define AHEAD_STEP (256u << 10) /* read between looks at the reader */

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
mapfile_release(struct mapfile *m, size_t upto, size_t keep)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t end;

	if (m->data == NULL || upto <= keep)
		return;
	end = (upto - keep) & ~((size_t)pg - 1);
	if (end <= m->released)
		return;
	madvise((void *)(m->data + m->released), end - m->released,
	    MADV_DONTNEED);
	m->released = end;
}

static void *
ahead_main(void *arg)
{
	struct mapfile_ahead *a = arg;
	size_t done = 0, i;
	uint8_t sum = 0;

	while (!atomic_load_explicit(&a->stop, memory_order_relaxed) &&
	    done < a->len) {
		size_t at = atomic_load_explicit(&a->at, memory_order_relaxed);
		size_t lim = at + MAPFILE_AHEAD < a->len ? at + MAPFILE_AHEAD
							  : a->len;

		if (done < at)
			done = at;
		if (done >= lim) {
			struct timespec ts = {0, 100000};

			nanosleep(&ts, NULL);
			continue;
		}
		if (lim > done + AHEAD_STEP)
			lim = done + AHEAD_STEP;
		/* one byte per cache line: the line comes into the shared
		 * cache, and the page into the page tables */
		for (i = done; i < lim; i += 64)
			sum += a->data[i];
		done = lim;
		atomic_store_explicit(&a->done, done, memory_order_relaxed);
	}
	a->sum = sum;
	return NULL;
}

void
mapfile_ahead_start(struct mapfile *m)
{
	struct mapfile_ahead *a;

	if (m->data == NULL || m->len < MAPFILE_AHEAD_MIN || m->ahead != NULL)
		return;
	a = xcalloc(1, sizeof *a);
	a->data = m->data;
	a->len = m->len;
	atomic_init(&a->at, 0);
	atomic_init(&a->done, 0);
	atomic_init(&a->stop, 0);
	/* a file cut short under it still faults in this thread */
	if (sv_thread_start(&a->th, ahead_main, a) != 0) {
		free(a);
		return;
	}
	m->ahead = a;
}

static void
ahead_stop(struct mapfile *m)
{
	if (m->ahead == NULL)
		return;
	atomic_store(&m->ahead->stop, 1);
	pthread_join(m->ahead->th, NULL);
	free(m->ahead);
	m->ahead = NULL;
}

void
mapfile_close(struct mapfile *m)
{
	ahead_stop(m);
	if (m->data != NULL) {
		sv_fatal_unguard(m->data);
		munmap((void *)m->data, m->len);
	}
	memset(m, 0, sizeof *m);
}
