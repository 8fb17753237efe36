#ifndef SNAPVIEW_UTIL_XALLOC_H
#define SNAPVIEW_UTIL_XALLOC_H
/*
 * Allocation that cannot fail: on out-of-memory these call the fatal hook
 * (which the TUI sets to restore the terminal), print one line and abort.
 * This is the one place where failure is not returned. Sizes are checked
 * for multiplication overflow.
 */
#include <stddef.h>

void *xmalloc(size_t n) __attribute__((malloc));
void *xcalloc(size_t nmemb, size_t size) __attribute__((malloc));
/* Zeroed, at a multiple of align (a power of two, a multiple of the
 * size of a pointer); free() gives it back. */
void *xaligned_calloc(size_t align, size_t nmemb, size_t size)
    __attribute__((malloc));
void *xreallocarray(void *p, size_t nmemb, size_t size);
char *xstrdup(const char *s) __attribute__((malloc));
char *xstrndup(const char *s, size_t n) __attribute__((malloc));
int xasprintf(char **ret, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Called once before abort() on out-of-memory; NULL by default. */
void xalloc_set_fatal_hook(void (*hook)(void));

/*
 * Grows *p (an array of *cap elements of size elem) so that it holds at
 * least need elements; capacity doubles. Returns the (maybe moved) array.
 */
void *xgrow(void *p, size_t *cap, size_t need, size_t elem);

/*
 * Hint that a large array (bytes long at p) will be filled front to back:
 * on Linux it asks for transparent huge pages, so filling it costs one
 * page fault per 2 MiB instead of per 4 KiB. Small arrays are left alone;
 * a no-op where unsupported. Call again after the array grows or moves.
 */
void xalloc_hint_huge(void *p, size_t bytes);

/*
 * Process-wide malloc tuning for big, growing arrays, called once from
 * main(): a fixed mmap threshold, so arrays of a few hundred KiB and up
 * are mappings of their own and growing them (realloc) moves page tables
 * (mremap) instead of copying and faulting in every page again. glibc
 * otherwise raises the threshold to 32 MiB after the first big free.
 */
void xalloc_tune(void);

/*
 * Gives the pages of memory freed so far back to the system. glibc keeps
 * a heap per thread that allocates: what one thread built and another
 * freed stays in the first one's heap, out of the second's reach, so a
 * structure handed between threads and freed would count twice towards
 * the peak (malloc_trim(); nothing elsewhere).
 */
void xalloc_release(void);

/* xgrow() on arr, called only when it must grow: the check is inline,
 * for the hot paths that call it once per item (the pickle reader's free
 * lists). cap and need are evaluated twice: no side effects. */
#define XGROW(arr, cap, need) \
	((arr) = (size_t)(need) <= (cap) ? (arr) : \
	    xgrow((arr), &(cap), (need), sizeof *(arr)))

#endif
