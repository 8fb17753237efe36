/*
 * The grid of a run directory (ranks_int.h): ranks as rows, steps as
 * columns, each dump's peak printed in its cell and shaded by where it
 * lies between the run's lowest and highest peak; below, the selected
 * cell's figures, the call sites growing on its rank from dump to dump
 * and what makes it heavier than the median rank of its step
 * (analysis/runs.h). Enter opens a cell's full view, Space marks cells,
 * c compares two (the comparison of ranks_compare.c).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/runs.h"
#include "render/fmt.h"
#include "tui/keys.h"
#include "tui/ranks_int.h"
#include "util/units.h"
#include "util/xalloc.h"

#define CELL_W 9        /* shade, value (6), OOM flag, mark */
#define RANK_W 6        /* " rank " */
#define DETAIL_H 6      /* title and five lines about the cell */

static const struct an_run_cell *
sel_cell(const struct rk *r)
{
	return an_run_cell(r->run, r->g_row, r->g_col);
}

/* The run's lowest and highest peak. */
static void
peak_range(const struct an_run *run, uint64_t *lo, uint64_t *hi)
{
	size_t k;

	*lo = UINT64_MAX;
	*hi = 0;
	for (k = 0; k < run->n_ranks * run->n_steps; k++) {
		const struct an_sum_dev *d = run->cells[k].dev;

		if (d == NULL)
			continue;
		if (d->peak < *lo)
			*lo = d->peak;
		if (d->peak > *hi)
			*hi = d->peak;
	}
	if (*lo > *hi)
		*lo = *hi;
}

/* Shade 1 (lowest) to 4 (highest) of a peak. */
static int
shade_of(uint64_t v, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return 1;
	return 1 + (int)((double)(v - lo) * 3.0 / (double)(hi - lo) + 0.5);
}

static void
draw_cell(struct rk *r, struct cellbuf *cb, size_t row, size_t col, int x,
    int y, uint64_t lo, uint64_t hi, int utf8)
{
	static const uint32_t shades_u[] = {' ', 0x2591, 0x2592, 0x2593,
	    0x2588};
	static const uint32_t shades_a[] = {' ', '.', ':', '+', '#'};
	static const unsigned colors[] = {UIC_DEFAULT, UIC_SUMMARY,
	    UIC_DEFAULT, UIC_CURSOR, UIC_RESERVED};
	const struct an_run_cell *c = an_run_cell(r->run, row, col);
	int sel = row == r->g_row && col == r->g_col;
	unsigned color = sel ? UIC_SELECT : UIC_DEFAULT;
	unsigned attr = 0; /* UIC_SELECT shows alone (ranks_overview.c) */
	char v[32];
	int s = 0;

	if (c->dev != NULL) {
		s = shade_of(c->dev->peak, lo, hi);
		fmt_size_short(v, sizeof v, c->dev->peak);
	} else if (c->state == AN_RUN_MISSING) {
		snprintf(v, sizeof v, "-");
	} else {
		snprintf(v, sizeof v, "%s", an_run_state_name(c->state));
	}
	cellbuf_fill(cb, x, y, CELL_W, 1, ' ', color, attr);
	cellbuf_put(cb, x, y, utf8 ? shades_u[s] : shades_a[s],
	    sel ? color : colors[s], attr);
	cellbuf_printf(cb, x + 1, y, 6, c->state == AN_RUN_EMPTY ||
	    c->state == AN_RUN_FAILED ? (sel ? color : UIC_ERROR) : color,
	    attr, "%6s", v);
	if (c->state == AN_RUN_OOM)
		cellbuf_put(cb, x + 7, y, '!', sel ? color : UIC_ERROR,
		    attr | CB_A_BOLD);
	if (c->member < r->rs.n && r->marked[c->member])
		cellbuf_put(cb, x + 8, y, '*', sel ? color : UIC_MARK, attr);
}

/* The first of a rank's growing sites, or NULL. */
static const struct an_run_growth *
row_growth(const struct an_run *run, size_t row, size_t *n)
{
	const struct an_run_growth *g = NULL;
	size_t i;

	*n = 0;
	for (i = 0; i < run->n_growth; i++)
		if (run->growth[i].row == row && (*n)++ == 0)
			g = &run->growth[i];
	return g;
}

/* The skew of a cell: its step's entry and the rank in it, or NULL. */
static const struct an_run_skew *
cell_skew(const struct an_run *run, size_t row, size_t col,
    const struct an_run_heavy **h)
{
	size_t i, k;

	*h = NULL;
	for (i = 0; i < run->n_skew; i++) {
		if (run->skew[i].col != col)
			continue;
		for (k = 0; k < run->skew[i].n_heavy; k++)
			if (run->skew[i].heavy[k].row == row)
				*h = &run->skew[i].heavy[k];
		return &run->skew[i];
	}
	return NULL;
}

static void
put_site(struct rk *r, struct cellbuf *cb, int y, const char *head,
    uint32_t site, unsigned color, int utf8)
{
	char lab[1100], fit[1100], line[1300];

	snprintf(line, sizeof line, "%s%s", head, ranks_common_fit_left(fit,
	    sizeof fit, ranks_common_shown(lab, sizeof lab,
	    r->run->sites[site]), cb->w -
	    (int)strlen(head) - 1, utf8));
	cellbuf_puts(cb, 0, y, line, cb->w, color, 0);
}

static void
draw_detail(struct rk *r, struct cellbuf *cb, int y, int utf8)
{
	const struct an_run *run = r->run;
	const struct an_run_cell *c = sel_cell(r);
	const struct an_run_growth *g;
	const struct an_run_skew *sk;
	const struct an_run_heavy *h;
	const struct an_rs_member *m;
	char a[32], b[32], d[32], e[32], name[512], line[800], title[700];
	size_t n;

	cellbuf_fill(cb, 0, y, cb->w, DETAIL_H, ' ', UIC_DEFAULT, 0);
	snprintf(title, sizeof title, "Rank %" PRId64 ", step %" PRId64 "%s%s",
	    run->ranks[r->g_row], run->steps[r->g_col], c->path ? " - " : "",
	    c->path ? ranks_common_shown(name, sizeof name, c->path) : "");
	ranks_common_title_bar(cb, y, title, utf8);
	if (c->dev == NULL) {
		m = c->member < r->rs.n ? &r->rs.m[c->member] : NULL;
		if (c->state == AN_RUN_MISSING)
			snprintf(line, sizeof line, " no dump of this rank at "
			    "this step");
		else if (c->state == AN_RUN_EMPTY)
			snprintf(line, sizeof line, " %s", AN_RUN_EMPTY_TEXT);
		else if (m != NULL && m->state != AN_RS_OK)
			snprintf(line, sizeof line, " could not be read: %s",
			    ranks_common_shown(name, sizeof name, m->err.msg));
		else
			snprintf(line, sizeof line, " no data for the device "
			    "asked for");
		cellbuf_puts(cb, 0, y + 1, line, cb->w, c->state ==
		    AN_RUN_MISSING ? UIC_DEFAULT : UIC_ERROR, 0);
	} else {
		fmt_event(e, sizeof e, c->dev->peak_ev);
		snprintf(line, sizeof line, " peak %s at %s", sv_fmt_size(a,
		    sizeof a, c->dev->peak), e);
		if (c->dev->flags & AN_SUM_F_TIME)
			snprintf(line + strlen(line), sizeof line -
			    strlen(line), ", +%.3fs", (double)
			    c->dev->peak_time / 1e6);
		snprintf(line + strlen(line), sizeof line - strlen(line),
		    " (device %u, %s event%s)", c->dev->device,
		    sv_fmt_count(b, sizeof b, c->dev->events),
		    c->dev->events == 1 ? "" : "s");
		cellbuf_puts(cb, 0, y + 1, line, cb->w, UIC_DEFAULT, 0);
		snprintf(line, sizeof line, " at the dump: %s reserved, %s "
		    "allocated in %s block%s", sv_fmt_size(a, sizeof a,
		    c->reserved), sv_fmt_size(b, sizeof b, c->allocated),
		    sv_fmt_count(d, sizeof d, c->n_blocks),
		    c->n_blocks == 1 ? "" : "s");
		cellbuf_puts(cb, 0, y + 2, line, cb->w, UIC_DEFAULT, 0);
	}
	g = row_growth(run, r->g_row, &n);
	if (g != NULL) {
		snprintf(b, sizeof b, " (%zu sites)", n);
		snprintf(line, sizeof line, " growing%s: +%s a step, steps %"
		    PRId64 "-%" PRId64 ": ", n > 1 ? b : "", sv_fmt_size(a,
		    sizeof a, (uint64_t)g->per_step), g->pts[0].step,
		    g->pts[g->n_pts - 1].step);
		put_site(r, cb, y + 3, line, g->site, UIC_LEAK, utf8);
	} else {
		cellbuf_puts(cb, 0, y + 3, run->n_judged == 0 ? " growth: not "
		    "judged, no rank has three dumps at the end of a step" :
		    " growth: no call site of this rank grows from dump to "
		    "dump", cb->w, UIC_DEFAULT, 0);
	}
	sk = cell_skew(run, r->g_row, r->g_col, &h);
	if (c->state == AN_RUN_OOM) {
		snprintf(line, sizeof line, " an OOM dump: %" PRIu64 " oom "
		    "event%s, taken inside its step (no growth, no skew)",
		    c->dev->ooms, c->dev->ooms == 1 ? "" : "s");
		cellbuf_puts(cb, 0, y + 4, line, cb->w, UIC_ERROR, 0);
	} else if (h != NULL) {
		snprintf(line, sizeof line, " %s (+%.1f%%) above the median "
		    "rank of step %" PRId64 " (%s)", sv_fmt_size(a, sizeof a,
		    h->excess), sk->median ? 100.0 * (double)h->excess /
		    (double)sk->median : 0.0, run->steps[r->g_col],
		    sv_fmt_size(b, sizeof b, sk->median));
		cellbuf_puts(cb, 0, y + 4, line, cb->w, UIC_DEFAULT, CB_A_BOLD);
		if (h->n_top > 0) {
			snprintf(line, sizeof line, " +%s at ", sv_fmt_size(a,
			    sizeof a, h->top[0].bytes));
			put_site(r, cb, y + 5, line, h->top[0].site,
			    UIC_DEFAULT, utf8);
		}
	} else if (sk != NULL && c->state == AN_RUN_DUMP) {
		snprintf(line, sizeof line, " within 5%% of the median rank of "
		    "step %" PRId64 " (%s at the dump)", run->steps[r->g_col],
		    sv_fmt_size(a, sizeof a, sk->median));
		cellbuf_puts(cb, 0, y + 4, line, cb->w, UIC_DEFAULT, 0);
	}
}

/* The first line under the title: what the run holds, in a sentence. */
static void
draw_summary(struct rk *r, struct cellbuf *cb, int y)
{
	const struct an_run *run = r->run;
	char line[400];
	size_t i, heavy = 0;

	for (i = 0; i < run->n_skew; i++)
		heavy += run->skew[i].n_heavy;
	snprintf(line, sizeof line, " %zu dumps, %zu OOM, %zu empty, %zu "
	    "unreadable; %zu site%s growing; %zu cell%s over 5%% heavy",
	    run->n_dumps, run->n_oom, run->n_empty, run->n_failed,
	    run->n_growth, run->n_growth == 1 ? "" : "s", heavy,
	    heavy == 1 ? "" : "s");
	cellbuf_fill(cb, 0, y, cb->w, 1, ' ', UIC_DEFAULT, 0);
	cellbuf_puts(cb, 0, y, line, cb->w, UIC_DEFAULT, CB_A_BOLD);
}

/* The second line: the ranks with an OOM dump and the ranks whose call
 * sites grow from dump to dump, in words (as the overview names them). */
static void
draw_news(struct rk *r, struct cellbuf *cb, int y)
{
	const struct an_run *run = r->run;
	const struct an_run_growth *g;
	const struct an_run_cell *c;
	struct rk_news *it;
	size_t row, col, n;

	it = xcalloc(run->n_ranks + 1, sizeof *it);
	for (row = 0; row < run->n_ranks; row++) {
		it[row].rank = run->ranks[row];
		for (col = 0; col < run->n_steps; col++) {
			c = an_run_cell(run, row, col);
			if (c->state == AN_RUN_OOM)
				it[row].ooms += c->dev != NULL &&
				    c->dev->ooms > 0 ? c->dev->ooms : 1;
		}
		g = row_growth(run, row, &n);
		if (g != NULL && g->per_step > 0) {
			it[row].leak = 1;
			it[row].leak_per_step = (uint64_t)g->per_step;
		}
	}
	ranks_common_news(cb, y, it, run->n_ranks, run->n_judged > 0 ? NULL :
	    "no rank has three dumps at the end of a step");
	free(it);
}

void
ranks_grid_draw(struct rk *r, struct cellbuf *cb, int utf8)
{
	const struct an_run *run = r->run;
	char title[700], name[512], dir[256], head[32];
	uint64_t lo, hi;
	int y, x, i, list_y = 4;
	size_t row, col;

	snprintf(title, sizeof title, "Run - %s - %zu rank%s x %zu step%s in "
	    "%s", ranks_common_shown(name, sizeof name, run->layout),
	    run->n_ranks,
	    run->n_ranks == 1 ? "" : "s", run->n_steps,
	    run->n_steps == 1 ? "" : "s", ranks_common_shown(dir, sizeof dir,
	    run->dir));
	ranks_common_title_bar(cb, 0, title, utf8);
	draw_summary(r, cb, 1);
	draw_news(r, cb, 2);
	r->g_h = cb->h - list_y - DETAIL_H - 1;
	if (r->g_h < 1)
		r->g_h = 1;
	r->g_w = (cb->w - RANK_W) / CELL_W;
	if (r->g_w < 1)
		r->g_w = 1;
	if (r->g_row < r->g_top)
		r->g_top = r->g_row;
	if (r->g_row >= r->g_top + (size_t)r->g_h)
		r->g_top = r->g_row - (size_t)r->g_h + 1;
	if (r->g_col < r->g_left)
		r->g_left = r->g_col;
	if (r->g_col >= r->g_left + (size_t)r->g_w)
		r->g_left = r->g_col - (size_t)r->g_w + 1;
	cellbuf_fill(cb, 0, 3, cb->w, 1, ' ', UIC_DEFAULT, 0);
	cellbuf_printf(cb, 0, 3, RANK_W, UIC_AXIS, 0, " %4s", "rank");
	for (i = 0; i < r->g_w; i++) {
		col = r->g_left + (size_t)i;
		if (col >= run->n_steps)
			break;
		snprintf(head, sizeof head, "step %" PRId64, run->steps[col]);
		cellbuf_printf(cb, RANK_W + i * CELL_W, 3, CELL_W, UIC_AXIS,
		    col == r->g_col ? CB_A_BOLD : 0, "%7s", head);
	}
	peak_range(run, &lo, &hi);
	for (y = 0; y < r->g_h; y++) {
		row = r->g_top + (size_t)y;
		cellbuf_fill(cb, 0, list_y + y, cb->w, 1, ' ', UIC_DEFAULT, 0);
		if (row >= run->n_ranks)
			continue;
		cellbuf_printf(cb, 0, list_y + y, RANK_W, UIC_DEFAULT,
		    row == r->g_row ? CB_A_BOLD : 0, " %4" PRId64,
		    run->ranks[row]);
		for (x = 0; x < r->g_w; x++) {
			col = r->g_left + (size_t)x;
			if (col >= run->n_steps)
				break;
			draw_cell(r, cb, row, col, RANK_W + x * CELL_W,
			    list_y + y, lo, hi, utf8);
		}
	}
	draw_detail(r, cb, list_y + r->g_h, utf8);
}

void
ranks_grid_status(const struct rk *r, char *left, size_t ll, char *right,
    size_t rl)
{
	keys_hint(left, ll, "%k open  %k mark  %k compare  %k list  %k help  "
	    "%k quit", ACT_ENTER, ACT_RANK_MARK, ACT_RANK_COMPARE,
	    ACT_RANK_GRID, ACT_HELP, ACT_QUIT);
	snprintf(right, rl, " rank %" PRId64 " step %" PRId64 " ",
	    r->run->ranks[r->g_row], r->run->steps[r->g_col]);
}

/* ---- keys ---------------------------------------------------------------- */

/* The cell of a member, or NULL. */
static const struct an_run_cell *
cell_of(const struct rk *r, size_t member, size_t *row)
{
	size_t k;

	for (k = 0; k < r->run->n_ranks * r->run->n_steps; k++)
		if (r->run->cells[k].member == member &&
		    r->run->cells[k].dev != NULL) {
			*row = k / r->run->n_steps;
			return &r->run->cells[k];
		}
	return NULL;
}

/* c: the two marked cells, or the selected one against the dump of its
 * rank before it. */
static void
compare_cells(struct rk *r)
{
	const struct an_run_cell *c[2] = {NULL, NULL}, *cell;
	size_t m, n = 0, row, k;
	char mark[16], cmp[16];

	for (m = 0; m < r->run->n_members; m++) {
		if (!r->marked[m] || (cell = cell_of(r, m, &row)) == NULL)
			continue;
		if (n < 2)
			c[n] = cell;
		n++;
	}
	if (n == 0 && sel_cell(r)->dev != NULL) {
		for (k = r->g_col; k-- > 0;) {
			cell = an_run_cell(r->run, r->g_row, k);
			if (cell->dev != NULL) {
				c[0] = cell;
				c[1] = sel_cell(r);
				n = 2;
				break;
			}
		}
	}
	if (n != 2) {
		ranks_common_msgf(r, "mark two cells with %s (%zu marked), "
		    "then %s",
		    keys_action_shown(ACT_RANK_MARK, mark, sizeof mark), n,
		    keys_action_shown(ACT_RANK_COMPARE, cmp, sizeof cmp));
		return;
	}
	/* two dumps compare as they were written: each after its last
	 * event */
	if (ranks_compare_open(r, c[0]->member, c[0]->dev->device, c[1]->member,
	    c[1]->dev->device) == 0)
		ranks_compare_at_end(r->cmp);
}

enum rk_result
ranks_grid_key(struct rk *r, enum action act)
{
	const struct an_run *run = r->run;
	const struct an_run_cell *c = sel_cell(r);
	size_t page = r->g_h > 1 ? (size_t)r->g_h - 1 : 1;

	switch (act) {
	case ACT_UP: if (r->g_row > 0) r->g_row--; break;
	case ACT_DOWN: if (r->g_row + 1 < run->n_ranks) r->g_row++; break;
	case ACT_LEFT: if (r->g_col > 0) r->g_col--; break;
	case ACT_RIGHT: if (r->g_col + 1 < run->n_steps) r->g_col++; break;
	case ACT_PAGE_UP:
		r->g_row = r->g_row > page ? r->g_row - page : 0;
		break;
	case ACT_PAGE_DOWN:
		r->g_row += page;
		if (r->g_row >= run->n_ranks)
			r->g_row = run->n_ranks - 1;
		break;
	case ACT_FIRST: r->g_row = 0; r->g_col = 0; break;
	case ACT_LAST:
		r->g_row = run->n_ranks - 1;
		r->g_col = run->n_steps - 1;
		break;
	case ACT_RANK_MARK:
		if (c->dev == NULL) {
			ranks_common_msgf(r, "no dump to mark here");
			break;
		}
		r->marked[c->member] ^= 1;
		break;
	case ACT_RANK_COMPARE:
		compare_cells(r);
		break;
	case ACT_RANK_GRID:
		r->grid = 0;
		break;
	case ACT_ENTER:
		if (c->dev == NULL) {
			ranks_common_msgf(r, "%s", c->state == AN_RUN_MISSING ?
			    "no dump here" : "this file could not be read");
			break;
		}
		r->open_cell = 1;
		r->open_member = c->member;
		r->open_dev = c->dev->device;
		return RK_OPEN;
	case ACT_QUIT: return RK_QUIT;
	case ACT_BACK: memset(r->marked, 0, r->rs.n); break;
	default: return RK_NONE;
	}
	return RK_REDRAW;
}

static const struct help_entry keys[] = {
    {{ACT_LEFT, ACT_RIGHT}, "a step left / right (k j: a rank)"},
    {{ACT_RANK_COMPARE}, "two marked cells (none: the dump before)"},
    {{ACT_RANK_GRID}, "the grid / the list of its files"},
};

const struct help_group ranks_grid_help = {
	"Run grid", keys, sizeof keys / sizeof keys[0]
};
