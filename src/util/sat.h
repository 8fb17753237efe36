#ifndef SNAPVIEW_UTIL_SAT_H
#define SNAPVIEW_UTIL_SAT_H
/*
 * Address arithmetic on values from a file. A snapshot can say a block of
 * 2^64 - 1 bytes starts at 0x7f0000000200: addr + size then wraps, and
 * every comparison, fraction and index computed from it goes wrong. Code
 * that adds file values checks with sv_span_wraps() or saturates.
 */
#include <stdint.h>

/* Does [addr, addr + size) run past the end of the address space? */
static inline int
sv_span_wraps(uint64_t addr, uint64_t size)
{
	return size > UINT64_MAX - addr;
}

/* Does [addr, addr + size) end at or before at? Exact where addr + size
 * would wrap (such a span ends past every address). */
static inline int
sv_span_ends_by(uint64_t addr, uint64_t size, uint64_t at)
{
	return addr <= at && size <= at - addr;
}

/* a + b, or UINT64_MAX when that does not fit. */
static inline uint64_t
sv_sat_add(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

#endif
