#ifndef SNAPVIEW_UTIL_MAPFILE_H
#define SNAPVIEW_UTIL_MAPFILE_H
/*
 * Read-only memory mapping of a whole file, with a way to give back the
 * pages already read so a sequential pass over a file larger than memory
 * keeps a small resident set (the pages come back from the page cache if
 * touched again).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

struct mapfile {
	const uint8_t *data; /* NULL for an empty file */
	size_t len;
	uint64_t mtime_ns;
	uint64_t dev, ino;
	size_t released;     /* bytes [0, released) were given back */
	struct mapfile_ahead *ahead; /* mapfile_ahead_start(), or NULL */
};

/* A thread reading the mapping a little ahead of a sequential reader, so
 * that the reader finds its pages mapped and its bytes in the shared
 * cache instead of taking the faults and the misses itself. */
struct mapfile_ahead {
	const uint8_t *data;
	size_t len;
	_Atomic size_t at;   /* where the reader is */
	_Atomic size_t done; /* read up to here */
	atomic_int stop;
	pthread_t th;
	volatile uint8_t sum; /* what it read, so that it is read */
};

/* Maps path read-only. Directories, unreadable or unmappable files give
 * -1 with err set (SV_ERR_IO). */
int mapfile_open(struct mapfile *m, const char *path, struct sv_error *err);

/* Hints the kernel that [0, upto - keep) will not be needed soon. */
void mapfile_release(struct mapfile *m, size_t upto, size_t keep);

/* Starts the thread (none for a short file, or when no thread can be
 * had: nothing changes then). Stopped by mapfile_close(). */
void mapfile_ahead_start(struct mapfile *m);

#define MAPFILE_AHEAD (16u << 20)   /* bytes read ahead of the reader */
#define MAPFILE_AHEAD_MIN (64u << 20) /* shorter files: no thread */

/* The reader is at byte pos: the thread keeps MAPFILE_AHEAD bytes ahead
 * of it and never reads behind it (the pages behind may be given back). */
static inline void
mapfile_ahead_at(struct mapfile *m, size_t pos)
{
	if (m->ahead != NULL)
		atomic_store_explicit(&m->ahead->at, pos,
		    memory_order_relaxed);
}

void mapfile_close(struct mapfile *m);

#endif
