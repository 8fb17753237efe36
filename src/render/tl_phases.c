/*
 * The phase spans under the timeline's axis (analysis/phases.h): each
 * column shows the innermost phase instance holding its first event (or
 * the first that starts in it), drawn from its start glyph to its end
 * glyph with its name after the start where it fits; the instance
 * v->phase_sel names is highlighted. O(columns x log instances) plus
 * the nesting walked back at each column.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/phases.h"
#include "render/tl_int.h"
#include "util/escape.h"
#include "util/xalloc.h"

/* The first instance starting at or after ev. */
static uint64_t
first_from(const struct an_phases *ph, int64_t ev)
{
	uint64_t lo = 0, hi = ph->n_inst;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ph->inst[mid].first < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The instance shown in the column of events [lo, hi), or -1. */
static int64_t
col_inst(const struct an_phases *ph, int64_t lo, int64_t hi)
{
	int64_t k = an_phase_inst_at(ph, lo);
	uint64_t i;

	if (k >= 0)
		return k;
	i = first_from(ph, lo);
	return i < ph->n_inst && ph->inst[i].first < hi ? (int64_t)i : -1;
}

int
tl_phases_rows(const struct tl_view *v, int h)
{
	return v->phases != NULL && v->phases->n_inst > 0 && h >= 9;
}

/* Is column c the last of instance k's run of columns? */
static int
run_ends(const struct an_phases *ph, const struct tl_cols *cols,
    const int64_t *at, int pw, int c, int64_t k)
{
	return ph->inst[k].last < cols->lo[c + 1] || c + 1 == pw ||
	    at[c + 1] != k;
}

void
tl_phases_draw(const struct tl_view *v, const struct tl_cols *cols,
    struct cellbuf *cb, int px, int y, int pw)
{
	const struct an_phases *ph = v->phases;
	char esc[128];
	const char *name;
	int64_t k, lo, hi, *at;
	int c, e, end = 0, start, stop;
	unsigned col;
	uint32_t g;

	if (ph == NULL || ph->n_inst == 0)
		return;
	at = xcalloc((size_t)pw + 1, sizeof *at);
	for (c = 0; c < pw; c++) {
		lo = cols->lo[c];
		hi = cols->lo[c + 1];
		at[c] = hi > lo ? col_inst(ph, lo, hi) : -1;
	}
	/* the glyphs: a start, the run, an end */
	for (c = 0; c < pw; c++) {
		if ((k = at[c]) < 0)
			continue;
		start = ph->inst[k].first >= cols->lo[c] ||
		    (c > 0 && at[c - 1] != k);
		stop = run_ends(ph, cols, at, pw, c, k);
		if (start && stop)
			g = v->utf8 ? 0x2502 : '|';
		else if (start)
			g = v->utf8 ? 0x251c : '[';
		else if (stop)
			g = v->utf8 ? 0x2524 : ']';
		else
			g = v->utf8 ? 0x2500 : '-';
		col = (uint64_t)k + 1 == v->phase_sel ? UIC_HILITE : UIC_MARK;
		cellbuf_put(cb, px + c, y, g, col, 0);
	}
	/* the names, inside their runs, after the first column of each */
	for (c = 0; c < pw; c++) {
		if ((k = at[c]) < 0 || (c > 0 && at[c - 1] == k) || c < end)
			continue;
		for (e = c; !run_ends(ph, cols, at, pw, e, k); e++)
			;
		if (e - c - 1 < 2)
			continue;
		col = (uint64_t)k + 1 == v->phase_sel ? UIC_HILITE : UIC_MARK;
		name = ph->phases[ph->inst[k].phase].name;
		sv_escape(esc, sizeof esc, name, strlen(name));
		end = c + 1 + cellbuf_puts(cb, px + c + 1, y, esc, e - c - 1,
		    col, 0);
	}
	free(at);
}
