#ifndef SNAPVIEW_UTIL_SPILL_H
#define SNAPVIEW_UTIL_SPILL_H
/*
 * A growable array backed by an unlinked temporary file instead of
 * anonymous memory, of which only a window stays resident: the part
 * below it is given back to the kernel (it stays in the file, and a later
 * read of it faults back from the page cache). For arrays that grow with
 * the input but are read mostly near their end, like a pickle's memo.
 *
 * The array never moves: its address range is reserved at init and the
 * file is mapped into it as it grows. Where a temporary file cannot be
 * made or grown (no TMPDIR, a full disk), the calls say so and the caller
 * keeps its array on the heap.
 */
#include <stddef.h>

struct spill {
	unsigned char *base; /* the reserved range */
	size_t reserve;      /* bytes reserved */
	size_t cap;          /* bytes mapped (the file's size) */
	size_t released;     /* bytes below this were given back */
	int fd;              /* the file, or -1 when not in use */
};

/* An unlinked temporary file in $TMPDIR (else /tmp), read and write,
 * close-on-exec; -1 when none can be made. */
int spill_tmp_fd(void);

/* Reserves room for reserve bytes in an unlinked file in $TMPDIR (else
 * /tmp). Returns 0, or -1 (s unusable: fd -1). */
int spill_init(struct spill *s, size_t reserve);

/* Makes at least need bytes usable (doubling); returns s->base, or NULL
 * when the file cannot grow (s is then still valid at its old size). */
void *spill_grow(struct spill *s, size_t need);

/* Moves an array from the heap into s: inits s with room for reserve
 * bytes, makes need bytes usable, copies the first used bytes of heap
 * to s->base and frees heap. Returns 0, or -1 with heap untouched and s
 * unusable (no temporary file, or a 32-bit size_t). */
int spill_adopt(struct spill *s, size_t reserve, void *heap, size_t used,
    size_t need);

/* The way back: a heap array of n elements of size bytes holding the
 * first used bytes of s, which is then freed. */
void *spill_to_heap(struct spill *s, size_t used, size_t n, size_t size);

/* Gives back the pages below upto - keep (once each), when that is at
 * least step bytes more than were given back: each call is a system
 * call and a TLB flush on every core the process runs on. */
void spill_release(struct spill *s, size_t upto, size_t keep, size_t step);

/* For a writer going forward through s: maps the pages of [upto, upto +
 * ahead), clipped at limit, writable in one call when less than half of
 * that is mapped ahead (*populated: how far the last call went; *unable:
 * set when the kernel lacks MADV_POPULATE_WRITE, before Linux 5.14), so
 * that the writer's stores there take no page fault. Nothing in the file
 * changes. Reads s->base only: it may run on a follower thread
 * (util/follow.h) while the writer grows s, given upto and limit read on
 * the writer's thread (limit <= s->cap then), as long as the writer does
 * not free s before the follower is joined. */
void spill_populate(const struct spill *s, size_t *populated, size_t upto,
    size_t ahead, size_t limit, int *unable);

/* Gives back the resident pages of [from, to) below what was given back
 * by spill_release(): for an array read in order again, the pages behind
 * the reader. Nothing is lost; a later read faults them back in from the
 * page cache. */
void spill_drop(struct spill *s, size_t from, size_t to);

/* Unmaps and closes; a no-op when unused. */
void spill_free(struct spill *s);

#endif
