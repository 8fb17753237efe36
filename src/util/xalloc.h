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

#define XGROW(arr, cap, need) ((arr) = xgrow((arr), &(cap), (need), sizeof *(arr)))

#endif
