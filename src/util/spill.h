#ifndef SNAPVIEW_UTIL_SPILL_H
#define SNAPVIEW_UTIL_SPILL_H
/*
 * A growable array backed by an unlinked temporary file, of which only a
 * window stays resident: the part below it is given back to the kernel
 * (written to the file, and a later read of it faults back from the page
 * cache). For arrays that grow with the input but are read mostly near
 * their end, like a pickle's memo.
 *
 * The array never moves: its address range is reserved at init, grows
 * in anonymous memory, and what is given back is mapped from the file in
 * place. Where a temporary file cannot be made (no TMPDIR), the calls say
 * so and the caller keeps its array on the heap; where the file cannot
 * grow (a full disk), what would have been given back stays resident.
 */
#include <stddef.h>

struct spill {
	unsigned char *base; /* the reserved range */
	size_t reserve;      /* bytes reserved */
	size_t cap;          /* bytes usable */
	size_t released;     /* bytes below this are in the file (given
			      * back); the rest is anonymous memory */
	int fd;              /* the file, or -1 when not in use */
};

/* Reserves room for reserve bytes in an unlinked file in $TMPDIR (else
 * /tmp). Returns 0, or -1 (s unusable: fd -1). */
int spill_init(struct spill *s, size_t reserve);

/* Makes at least need bytes usable (doubling); returns s->base, or NULL
 * past the reservation or without memory (s is then still valid at its
 * old size). */
void *spill_grow(struct spill *s, size_t need);

/* Gives back the pages below upto - keep (once each): written to the
 * file and mapped from there. On a write error they stay resident. */
void spill_release(struct spill *s, size_t upto, size_t keep);

/* Unmaps and closes; a no-op when unused. */
void spill_free(struct spill *s);

#endif
