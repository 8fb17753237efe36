#ifndef SNAPVIEW_UTIL_SEARCH_H
#define SNAPVIEW_UTIL_SEARCH_H
/*
 * Binary search over sorted event-number arrays.
 */
#include <stdint.h>

/* Number of entries of the ascending a[0..n) that are <= x (the index of
 * the first entry > x). */
static inline uint64_t
sv_count_le_i64(const int64_t *a, uint64_t n, int64_t x)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (a[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
