/*
 * Allocation wrappers that abort on out-of-memory (tmux xmalloc, htop fail).
 */
#include "config.h"

#include "util/xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif

static void (*fatal_hook)(void);

void
xalloc_set_fatal_hook(void (*hook)(void))
{
	fatal_hook = hook;
}

static void __attribute__((noreturn))
oom(size_t n)
{
	if (fatal_hook != NULL)
		fatal_hook();
	fprintf(stderr, "snapview: out of memory (%zu bytes)\n", n);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom(n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		oom(nmemb * size);
	return p;
}

void *
xaligned_calloc(size_t align, size_t nmemb, size_t size)
{
	void *p = NULL;
	size_t n;

	if (__builtin_mul_overflow(nmemb, size, &n))
		oom(SIZE_MAX);
	if (posix_memalign(&p, align, n ? n : 1) != 0)
		oom(n);
	memset(p, 0, n);
	return p;
}

void *
xreallocarray(void *p, size_t nmemb, size_t size)
{
	size_t n;

	if (size != 0 && nmemb > SIZE_MAX / size)
		oom(SIZE_MAX);
	n = nmemb * size;
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		oom(n);
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom(0);
	return n;
}

void *
xgrow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;

	if (need <= *cap)
		return p;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			oom(SIZE_MAX);
		ncap *= 2;
	}
	p = xreallocarray(p, ncap, elem);
	*cap = ncap;
	return p;
}

void
xalloc_hint_huge(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	uintptr_t pg = 4096, a, b;

	if (p == NULL || bytes < (4u << 20))
		return;
	/* the whole pages it touches: a big block is a mapping of its own
	 * (xalloc_tune), and advising part of it would split the mapping
	 * in two, which makes realloc's mremap fail and copy instead */
	a = (uintptr_t)p & ~(pg - 1);
	b = ((uintptr_t)p + bytes + pg - 1) & ~(pg - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
	(void)p;
	(void)bytes;
#endif
}

void
xalloc_release(void)
{
#if defined(__GLIBC__)
	(void)malloc_trim(0);
#endif
}

void
xalloc_tune(void)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
	(void)mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}
