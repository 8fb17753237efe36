/*
 * One x axis for several traces. See align.h.
 */
#include "config.h"

#include "render/align.h"

#include <string.h>

static int
has_post(const struct align_trace *t)
{
	return t->n_steps > 0 &&
	    (uint64_t)t->steps[t->n_steps - 1].last + 1 < t->events;
}

void
align_init(struct align *a, const struct align_trace *t, size_t n,
    int want_steps)
{
	size_t i;
	uint32_t most = 0;

	memset(a, 0, sizeof *a);
	a->units = 1;
	a->by_step = want_steps && n > 0;
	for (i = 0; i < n; i++)
		if (t[i].n_steps == 0)
			a->by_step = 0;
	if (!a->by_step)
		return;
	for (i = 0; i < n; i++) {
		uint32_t u = t[i].n_steps + (uint32_t)has_post(&t[i]);

		if (t[i].steps[0].first > 0)
			a->pre = 1;
		if (u > most)
			most = u;
	}
	a->units = (uint32_t)a->pre + most;
}

/* The last step that starts at or before e, or -1. */
static int64_t
step_of(const struct align_trace *t, int64_t e)
{
	uint32_t lo = 0, hi = t->n_steps;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->steps[mid].first <= e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo - 1;
}

double
align_pos(const struct align *a, const struct align_trace *t, int64_t e)
{
	int64_t k, first, end;
	double unit, frac;

	if (t->events == 0)
		return 0;
	if (e < 0)
		e = 0;
	if ((uint64_t)e >= t->events)
		e = (int64_t)t->events - 1;
	if (!a->by_step)
		return (double)e / (double)t->events;
	k = step_of(t, e);
	if (k < 0) {
		/* before the first step */
		unit = 0;
		first = 0;
		end = t->steps[0].first;
	} else if (k == (int64_t)t->n_steps - 1 && e > t->steps[k].last) {
		/* after the last one */
		unit = (double)a->pre + (double)t->n_steps;
		first = t->steps[k].last + 1;
		end = (int64_t)t->events;
	} else {
		unit = (double)a->pre + (double)k;
		first = t->steps[k].first;
		end = k + 1 < (int64_t)t->n_steps ? t->steps[k + 1].first
						   : t->steps[k].last + 1;
	}
	frac = end > first ? (double)(e - first) / (double)(end - first) : 0;
	return (unit + frac) / (double)a->units;
}

int
align_col(const struct align *a, const struct align_trace *t, int64_t e,
    int w)
{
	int c = (int)(align_pos(a, t, e) * w);

	if (c >= w)
		c = w - 1;
	return c < 0 ? 0 : c;
}

/* The first event whose column is at least c (t->events when none). */
static int64_t
first_at(const struct align *a, const struct align_trace *t, int c, int w)
{
	int64_t lo = 0, hi = (int64_t)t->events;

	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (align_col(a, t, mid, w) < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
align_col_events(const struct align *a, const struct align_trace *t, int c,
    int w, int64_t *e0, int64_t *e1)
{
	*e0 = first_at(a, t, c, w);
	*e1 = first_at(a, t, c + 1, w) - 1;
}

int
align_unit_col(const struct align *a, uint32_t u, int w)
{
	return (int)((uint64_t)u * (uint64_t)w / a->units);
}
