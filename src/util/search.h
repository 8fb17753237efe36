#ifndef SNAPVIEW_UTIL_SEARCH_H
#define SNAPVIEW_UTIL_SEARCH_H
/*
 * Binary search: the one loop every sorted lookup in snapview goes
 * through (events by number or by time, segments by device or address,
 * elements by address).
 */
#include <stdint.h>

/*
 * The partition point of [lo, hi): the first i for which below(ctx, i) is
 * 0, given that below is 1 on a prefix of the range and 0 on the rest
 * (the range is sorted by what below compares); hi when below is 1 all
 * through. Every lower or upper bound is one: "the first event at or
 * after time t" is below(i) = time(i) < t, "how many entries are <= x"
 * is below(i) = a[i] <= x. Inline, so a constant below is inlined too.
 * On a range that is not sorted (a hostile file) the answer is some
 * index in [lo, hi], never out of it.
 */
static inline uint64_t
sv_partition(uint64_t lo, uint64_t hi,
    int (*below)(const void *ctx, uint64_t i), const void *ctx)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (below(ctx, mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct sv_le_i64 {
	const int64_t *a;
	int64_t x;
};

static inline int
sv_le_i64_below(const void *ctx, uint64_t i)
{
	const struct sv_le_i64 *c = ctx;

	return c->a[i] <= c->x;
}

/* Number of entries of the ascending a[0..n) that are <= x (the index of
 * the first entry > x). */
static inline uint64_t
sv_count_le_i64(const int64_t *a, uint64_t n, int64_t x)
{
	struct sv_le_i64 c = {a, x};

	return sv_partition(0, n, sv_le_i64_below, &c);
}

#endif
