#ifndef SNAPVIEW_UTIL_MAPFILE_H
#define SNAPVIEW_UTIL_MAPFILE_H
/*
 * Read-only memory mapping of a whole file, with a way to give back the
 * pages already read so a sequential pass over a file larger than memory
 * keeps a small resident set (the pages come back from the page cache if
 * touched again).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"
#include "util/follow.h"

struct mapfile {
	const uint8_t *data; /* NULL for an empty file */
	size_t len;
	uint64_t mtime_ns;
	uint64_t dev, ino;
	size_t released;     /* bytes [0, released) were given back */
	atomic_size_t given_back; /* released, for the reader to read */
	size_t reader_back;  /* what the reader gave back itself */
	size_t populated;    /* mapfile_populate() went up to here */
	int no_populate;     /* the kernel cannot map ahead */
	struct follower *follow; /* mapfile_follow_start()'s, and its */
	size_t follow_keep, follow_step, follow_ahead; /* arguments */
};

/* Maps path read-only. Directories, FIFOs and other files that are not
 * regular files, unreadable or unmappable files give -1 with err set
 * (SV_ERR_IO). */
int mapfile_open(struct mapfile *m, const char *path, struct sv_error *err);

struct stat;
/* Opens path, a file named by the user, for reading: without blocking (a
 * FIFO would wait for a writer), then refuses what is not a regular file
 * ("is a directory", "not a regular file"). Returns the descriptor, in
 * blocking mode again, with its fstat() in *st; or -1 with err set
 * (SV_ERR_IO). */
int mapfile_open_regular(const char *path, struct stat *st,
    struct sv_error *err);

/* Hints the kernel that [0, upto - keep) will not be needed soon, when
 * that is at least step bytes more than before (each call is a system
 * call and a TLB flush on every core the process runs on). */
void mapfile_release(struct mapfile *m, size_t upto, size_t keep,
    size_t step);

/* The rule of mapfile_release() and spill_release(): gives back the
 * pages of [*released, end) of the mapping at base (end page-aligned)
 * when that is at least step bytes, and then moves *released to end. */
void map_release_below(const uint8_t *base, size_t *released, size_t end,
    size_t step);

/* The rule of mapfile_populate() and spill_populate(): maps the pages of
 * [upto, upto + ahead), clipped at limit, of the mapping at base with
 * advice (MADV_POPULATE_READ or _WRITE) in one call when less than half
 * of ahead past upto is mapped already (*populated: how far the last call
 * went), then moves *populated. Sets *unable when the kernel lacks the
 * call (EINVAL), and then only keeps the count. */
void map_populate_ahead(const uint8_t *base, size_t *populated,
    size_t upto, size_t ahead, size_t limit, int advice, int *unable);

/* Maps the pages of [upto, upto + ahead) in one system call when less
 * than half of that is mapped ahead already, for a reader going forward
 * from upto: one call instead of a page fault every 64 KiB (on a VM, a
 * fault costs microseconds). Nothing is read that the reader would not
 * read; where the kernel lacks MADV_POPULATE_READ (before Linux 5.14),
 * the pages fault in as before. */
void mapfile_populate(struct mapfile *m, size_t upto, size_t ahead);

/*
 * A reader going forward through m: mapfile_follow(m, pos) as it goes
 * makes the calls mapfile_release(m, pos, keep, step) and
 * mapfile_populate(m, pos, ahead), on a follower thread (util/follow.h)
 * that mapfile_follow_start() starts and mapfile_follow_stop() joins.
 * The reader then pays for neither system call nor for the page faults
 * they stand for: a mutex and a wakeup every ahead / 4 bytes. A follower
 * that falls behind costs the reader only the faults it would take
 * without one, and the pages read are the file's either way; one that
 * falls behind by half a step more than its own steps allow (its core
 * taken by the process's other threads), and so lets the pages mapped
 * grow past the window, leaves the pages below pos - keep to the reader,
 * who gives them back itself (m->reader_back).
 * m->released and m->populated are the follower's until it is joined;
 * mapfile_follow_stop() makes the last position's calls first.
 */
void mapfile_follow_start(struct mapfile *m, size_t keep, size_t step,
    size_t ahead);
void mapfile_follow(struct mapfile *m, size_t pos);
void mapfile_follow_stop(struct mapfile *m);

/* Unmaps m (joining its follower, if one is still running). */
void mapfile_close(struct mapfile *m);

#endif
