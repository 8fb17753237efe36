/*
 * The rank overview (ranks.h): one row per rank and device, figures from
 * each index's summary and a sparkline of its timeline, every rank on one
 * axis, the selected rank's figures below; and the entry points ui.c
 * calls for both rank screens, their help (built from the action table
 * like the viewer's) and status line. Its keys are the actions of
 * KM_RANKS; the comparison is ranks_compare.c's.
 */
#include "config.h"

#include "tui/ranks.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/rankset.h"
#include "analysis/steps.h"
#include "render/fmt.h"
#include "render/rankview.h"
#include "tui/help.h"
#include "tui/keys.h"
#include "tui/ranks_int.h"
#include "util/units.h"
#include "util/xalloc.h"

#define DETAIL_H 5      /* the overview's lines about the selected rank */

/* ---- the overview's rows ------------------------------------------------- */

static const struct rk *sort_rk;

static int
cmp_by_rank(const void *a, const void *b)
{
	const struct rk_row *x = a, *y = b;
	int64_t rx = sort_rk->rs.m[x->member].rank;
	int64_t ry = sort_rk->rs.m[y->member].rank;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->dev->device < y->dev->device ? -1 : 1;
}

static void
build_rows(struct rk *r)
{
	size_t i, n = 0;

	free(r->rows);
	r->rows = xcalloc(r->rp.n_rows + r->rs.n + 1, sizeof *r->rows);
	for (i = 0; i < r->rp.n_rows; i++) {
		r->rows[n].member = r->rp.rows[i].member;
		r->rows[n++].dev = r->rp.rows[i].dev;
	}
	if (r->by_rank) {
		sort_rk = r;
		qsort(r->rows, n, sizeof *r->rows, cmp_by_rank);
	}
	for (i = 0; i < r->rs.n; i++)
		if (r->rs.m[i].state != AN_RS_OK) {
			r->rows[n].member = i;
			r->rows[n++].dev = NULL;
		}
	r->n_rows = n;
	free(r->tr);
	r->tr = xcalloc(n + 1, sizeof *r->tr);
	for (i = 0; i < n && r->rows[i].dev != NULL; i++) {
		r->tr[i].events = r->rows[i].dev->events;
		r->tr[i].steps = r->rows[i].dev->steps;
		r->tr[i].n_steps = r->rows[i].dev->n_kept;
	}
	align_init(&r->al, r->tr, r->rp.n_rows, 1);
	if (r->sel >= n)
		r->sel = n > 0 ? n - 1 : 0;
}

/* ---- drawing the overview ------------------------------------------------ */

static void
draw_row(struct rk *r, struct cellbuf *cb, size_t i, int y, int sx,
    uint64_t scale, int utf8)
{
	const struct rk_row *row = &r->rows[i];
	const struct an_rs_member *m = &r->rs.m[row->member];
	char a[32], b[32], c[32], name[256], line[1024];
	/* the lists' selection style: UIC_SELECT is black on white in
	 * colour and reversed in monochrome by its own attributes;
	 * reversing it again turned it white on black, unseen on a dark
	 * terminal */
	unsigned color = i == r->sel ? UIC_SELECT : UIC_DEFAULT;
	unsigned attr = 0;
	struct rv_cols cols;

	cellbuf_fill(cb, 0, y, cb->w, 1, ' ', UIC_DEFAULT, 0);
	if (row->dev == NULL) {
		char why[300];

		if (m->err.offset != SV_NO_OFFSET)
			snprintf(a, sizeof a, "byte %" PRIu64 ": ",
			    m->err.offset);
		else
			a[0] = '\0';
		/* as snapview ranks and every error say it: "FILE: [byte
		 * N: ]reason", a dash for the device (no "failed:") */
		snprintf(line, sizeof line, "%c%5" PRId64 " %2s  %s: %s%s",
		    r->marked[row->member] ? '*' : ' ', m->rank, "-",
		    ranks_common_shown(name, sizeof name,
		    ranks_common_base_name(m->path)), a,
		    ranks_common_shown(why, sizeof why, m->err.msg));
		/* bold red, never reversed: not taken for the selection
		 * without colours */
		cellbuf_puts(cb, 0, y, line, cb->w,
		    i == r->sel ? color : UIC_ALERT, attr);
		return;
	}
	if (row->dev->leak_site[0] != '\0')
		fmt_size_short(c, sizeof c, row->dev->leak_per_step);
	else
		snprintf(c, sizeof c, "%s", row->dev->flags & AN_SUM_F_JUDGED ?
		    "-" : "?");
	snprintf(line, sizeof line, "%c%5" PRId64 " %2u %7s %7s %3" PRIu64
	    " %6s ", r->marked[row->member] ? '*' : ' ', m->rank,
	    row->dev->device, fmt_size_short(a, sizeof a, row->dev->peak),
	    fmt_size_short(b, sizeof b, row->dev->reserved_max),
	    row->dev->ooms, c);
	cellbuf_fill(cb, 0, y, sx, 1, ' ', color, attr);
	cellbuf_puts(cb, 0, y, line, sx, color, attr);
	rv_cols_init(&cols, cb->w - sx - 1);
	rv_cols_summary(&cols, &r->al, &r->tr[i], row->dev);
	rv_sparkline(cb, sx, y, &cols, scale, utf8);
	rv_cols_free(&cols);
}

static void
draw_detail(struct rk *r, struct cellbuf *cb, int y, int utf8)
{
	const struct rk_row *row;
	const struct an_rs_member *m;
	const struct an_sum_dev *d;
	char a[32], b[32], c[32], e[32], name[256], site[600], line[800];
	char title[400], fit[600];

	cellbuf_fill(cb, 0, y, cb->w, DETAIL_H + 1, ' ', UIC_DEFAULT, 0);
	if (r->n_rows == 0)
		return;
	row = &r->rows[r->sel];
	m = &r->rs.m[row->member];
	d = row->dev;
	snprintf(title, sizeof title, "Rank %" PRId64 " - %s", m->rank,
	    ranks_common_shown(name, sizeof name, m->path));
	ranks_common_title_bar(cb, y, title, utf8);
	if (d == NULL) {
		cellbuf_puts(cb, 1, y + 1, "could not be read:", cb->w - 1,
		    UIC_ALERT, 0);
		if (m->err.offset != SV_NO_OFFSET)
			snprintf(a, sizeof a, "byte %" PRIu64 ": ",
			    m->err.offset);
		else
			a[0] = '\0';
		snprintf(line, sizeof line, "%s%s", a, ranks_common_shown(site,
		    sizeof site, m->err.msg));
		cellbuf_puts(cb, 1, y + 2, line, cb->w - 1, UIC_DEFAULT, 0);
		return;
	}
	if (d->n_steps == 0)
		snprintf(line, sizeof line, " device %u, %s event%s, no "
		    "steps, %" PRIu64 " OOM%s", d->device, sv_fmt_count(c,
		    sizeof c, d->events), d->events == 1 ? "" : "s", d->ooms,
		    d->ooms == 1 ? "" : "s");
	else
		snprintf(line, sizeof line, " device %u, %s event%s, %"
		    PRIu64 " step%s (%s), %" PRIu64 " OOM%s", d->device,
		    sv_fmt_count(c, sizeof c, d->events),
		    d->events == 1 ? "" : "s", d->n_steps,
		    d->n_steps == 1 ? "" : "s",
		    an_steps_source_text((int)d->steps_source), d->ooms,
		    d->ooms == 1 ? "" : "s");
	cellbuf_puts(cb, 0, y + 1, line, cb->w, UIC_DEFAULT, 0);
	fmt_event(e, sizeof e, d->peak_ev);
	snprintf(line, sizeof line, " peak %s at %s", sv_fmt_size(a,
	    sizeof a, d->peak), e);
	if (d->peak_step >= 0)
		snprintf(line + strlen(line), sizeof line - strlen(line),
		    ", step %" PRId64, d->peak_step + 1);
	if (d->flags & AN_SUM_F_TIME)
		snprintf(line + strlen(line), sizeof line - strlen(line),
		    ", +%.3fs", (double)d->peak_time / 1e6);
	snprintf(line + strlen(line), sizeof line - strlen(line),
	    "; %s at the end", sv_fmt_size(b, sizeof b, d->allocated_end));
	cellbuf_puts(cb, 0, y + 2, line, cb->w, UIC_DEFAULT, 0);
	fmt_event(e, sizeof e, d->reserved_max_ev);
	snprintf(line, sizeof line, " reserved at most %s at %s, %s of it "
	    "unused; %s at the end", sv_fmt_size(a, sizeof a,
	    d->reserved_max), e, sv_fmt_size(b, sizeof b, d->waste),
	    sv_fmt_size(c, sizeof c, d->reserved_end));
	cellbuf_puts(cb, 0, y + 3, line, cb->w, UIC_DEFAULT, 0);
	if (d->top_site[0] != '\0') {
		snprintf(line, sizeof line, " top at the peak: %s at ",
		    sv_fmt_size(a, sizeof a, d->top_bytes));
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s",
		    ranks_common_fit_left(fit, sizeof fit,
		    ranks_common_shown(site, sizeof site, d->top_site),
		    cb->w - (int)strlen(line) - 1, utf8));
	} else {
		snprintf(line, sizeof line, " top at the peak: nothing live");
	}
	cellbuf_puts(cb, 0, y + 4, line, cb->w, UIC_DEFAULT, 0);
	if (d->leak_site[0] != '\0') {
		snprintf(line, sizeof line, " leak suspect: +%s a step (%"
		    PRIu64 " step%s) at ", sv_fmt_size(a, sizeof a,
		    d->leak_per_step), d->leak_steps,
		    d->leak_steps == 1 ? "" : "s");
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s",
		    ranks_common_fit_left(fit, sizeof fit,
		    ranks_common_shown(site, sizeof site, d->leak_site),
		    cb->w - (int)strlen(line) - 1, utf8));
	}
	else if (d->flags & AN_SUM_F_JUDGED)
		snprintf(line, sizeof line, " leak suspect: none, no call site "
		    "grows every step");
	else if (d->n_steps == 0)
		snprintf(line, sizeof line, " leak suspect: not judged, the "
		    "file has no steps to compare");
	else
		snprintf(line, sizeof line, " leak suspect: not judged, fewer "
		    "than two complete steps");
	cellbuf_puts(cb, 0, y + 5, line, cb->w,
	    d->leak_site[0] != '\0' ? UIC_LEAK : UIC_DEFAULT, 0);
}

/* What the set knows, up front, as snapview ranks says it: the ranks
 * that hit an OOM and the ranks with a leak suspect (or that none did). */
static void
draw_news(struct rk *r, struct cellbuf *cb, int y)
{
	struct rk_news *it;
	size_t i, judged = 0;

	if (r->rp.n_rows == 0)
		return; /* the skew line says no rank could be read */
	it = xcalloc(r->rp.n_rows, sizeof *it);
	for (i = 0; i < r->rp.n_rows; i++) {
		const struct an_sum_dev *d = r->rp.rows[i].dev;

		judged += (d->flags & AN_SUM_F_JUDGED) != 0;
		it[i].rank = r->rs.m[r->rp.rows[i].member].rank;
		it[i].ooms = d->ooms;
		it[i].leak = d->leak_site[0] != '\0';
		it[i].leak_per_step = d->leak_per_step;
	}
	ranks_common_news(cb, y, it, r->rp.n_rows, judged > 0 ? NULL :
	    "no file has two complete steps");
	free(it);
}

static void
draw_overview(struct rk *r, struct cellbuf *cb, int utf8)
{
	char title[600], name[256], words[512];
	int sx = 37, list_y = 4, i, x;
	uint64_t scale = r->rp.n_rows > 0 ? r->rp.rows[0].dev->peak : 0;
	size_t k;

	snprintf(title, sizeof title, "Ranks - %zu file%s%s%s - %s",
	    r->rs.n, r->rs.n == 1 ? "" : "s", r->rs.dir ? " in " : "",
	    r->rs.dir ? ranks_common_shown(name, sizeof name, r->rs.dir) : "",
	    r->al.by_step ? "aligned by step" : "aligned by position");
	ranks_common_title_bar(cb, 0, title, utf8);
	an_rankset_skew_text(&r->rs, &r->rp, words, sizeof words);
	cellbuf_fill(cb, 0, 1, cb->w, 3, ' ', UIC_DEFAULT, 0);
	/* the margin goes first when the sentence needs the whole line */
	x = (int)strlen(words) < cb->w ? 1 : 0;
	cellbuf_puts(cb, x, 1, words, cb->w - x, UIC_DEFAULT, CB_A_BOLD);
	draw_news(r, cb, 2);
	cellbuf_printf(cb, 0, 3, cb->w, UIC_AXIS, 0, " %5s %2s %7s %7s %3s "
	    "%6s %s", "rank", "dv", "peak", "reservd", "OOM", "leak/s",
	    "timeline (peak marked)");
	r->list_h = cb->h - list_y - DETAIL_H - 2;
	if (r->list_h < 1)
		r->list_h = 1;
	if (r->sel < r->top)
		r->top = r->sel;
	if (r->sel >= r->top + (size_t)r->list_h)
		r->top = r->sel - (size_t)r->list_h + 1;
	for (i = 0; i < r->list_h; i++) {
		k = r->top + (size_t)i;
		if (k >= r->n_rows) {
			cellbuf_fill(cb, 0, list_y + i, cb->w, 1, ' ',
			    UIC_DEFAULT, 0);
			continue;
		}
		draw_row(r, cb, k, list_y + i, sx, scale, utf8);
	}
	draw_detail(r, cb, list_y + r->list_h, utf8);
}

/* ---- the help ------------------------------------------------------------ */

static const struct help_entry overview_keys[] = {
    {{ACT_UP, ACT_DOWN}, "select a rank"},
    {{ACT_PAGE_UP, ACT_PAGE_DOWN}, "a page up / down"},
    {{ACT_FIRST, ACT_LAST}, "first / last rank"},
    {{ACT_ENTER}, "open the rank's full view (Backspace comes back)"},
    {{ACT_RANK_MARK}, "mark or unmark a rank"},
    {{ACT_BACK}, "unmark every rank"},
    {{ACT_RANK_COMPARE},
	"compare the two marked ranks (or the selected one with the peak "
	"rank)"},
    {{ACT_RANK_SORT}, "sort by peak / by rank"},
    {{ACT_QUIT}, "quit"},
};
static const struct help_entry both_keys[] = {
    {{ACT_REDRAW, ACT_HELP}, "redraw; this help"},
};
static const char *const legend[] = {
    "snapview(1) describes both screens (RANK SETS).",
};

#define RANK_HELP_GROUPS 4

/* The rank screens' help page into p, its groups into g (the grid's and
 * the comparison's are in their files: no constant initializer). */
static void
help_page(struct help_page *p, struct help_group g[RANK_HELP_GROUPS])
{
	g[0] = (struct help_group){"Rank overview", overview_keys,
	    sizeof overview_keys / sizeof overview_keys[0]};
	g[1] = ranks_grid_help;
	g[2] = ranks_compare_help;
	g[3] = (struct help_group){"On both", both_keys,
	    sizeof both_keys / sizeof both_keys[0]};
	*p = (struct help_page){g, RANK_HELP_GROUPS, 2,
	    KM_RANKS | KM_COMPARE, legend, sizeof legend / sizeof legend[0]};
}

void
ranks_overview_help_list(FILE *f)
{
	struct help_group g[RANK_HELP_GROUPS];
	struct help_page page;

	help_page(&page, g);
	help_list(f, "ranks", &page);
}

static void
draw_help(struct cellbuf *cb, int utf8)
{
	struct help_group groups[RANK_HELP_GROUPS];
	struct help_page page;
	struct help_lines h = {0};
	size_t i;

	help_page(&page, groups);
	help_build(&h, &page, cb->w);
	cellbuf_fill(cb, 0, 0, cb->w, cb->h, ' ', UIC_DEFAULT, 0);
	ranks_common_title_bar(cb, 0, "Help - ranks", utf8);
	for (i = 0; i < h.n && (int)i + 1 < cb->h - 1; i++)
		help_put_line(cb, 0, (int)i + 1, cb->w, &h.l[i]);
	free(h.l);
}

static void
draw_status(struct rk *r, struct cellbuf *cb)
{
	char left[256], right[64];
	int rw;

	cellbuf_fill(cb, 0, cb->h - 1, cb->w, 1, ' ', UIC_STATUS, 0);
	if (r->cmp != NULL) {
		ranks_compare_status(r->cmp, left, sizeof left, right,
		    sizeof right);
	} else if (r->grid) {
		ranks_grid_status(r, left, sizeof left, right, sizeof right);
	} else {
		keys_hint(left, sizeof left, "%k open  %k mark  %k compare  "
		    "%k sort  %k help  %k quit", ACT_ENTER, ACT_RANK_MARK,
		    ACT_RANK_COMPARE, ACT_RANK_SORT, ACT_HELP, ACT_QUIT);
		snprintf(right, sizeof right, " %zu/%zu ", r->n_rows ?
		    r->sel + 1 : 0, r->n_rows);
	}
	if (r->msg[0] != '\0')
		snprintf(left, sizeof left, "%s", r->msg);
	else if (r->help)
		keys_hint(left, sizeof left, "%k or %k closes the help",
		    ACT_HELP, ACT_BACK);
	rw = (int)strlen(right);
	cellbuf_puts(cb, 0, cb->h - 1, left, cb->w - rw - 1, UIC_STATUS, 0);
	cellbuf_puts(cb, cb->w - rw, cb->h - 1, right, rw, UIC_STATUS,
	    CB_A_BOLD);
}

void
ranks_overview_draw(struct rk *r, struct cellbuf *cb, int utf8)
{
	if (r->help)
		draw_help(cb, utf8);
	else if (r->cmp != NULL)
		ranks_compare_draw(r->cmp, cb, utf8);
	else if (r->grid)
		ranks_grid_draw(r, cb, utf8);
	else
		draw_overview(r, cb, utf8);
	draw_status(r, cb);
}

/* ---- keys ---------------------------------------------------------------- */

/* c: the two marked ranks, or the selected one against the peak rank. */
static void
compare_marked(struct rk *r)
{
	size_t i, n = 0, pick[2] = {0, 0};
	int64_t dev[2] = {-1, -1};
	char mark[16], cmp[16];

	for (i = 0; i < r->n_rows; i++) {
		if (r->rows[i].dev == NULL || !r->marked[r->rows[i].member])
			continue;
		if (n < 2) {
			pick[n] = r->rows[i].member;
			dev[n] = r->rows[i].dev->device;
		}
		n++;
	}
	if (n == 0 && r->rp.n_rows > 1 && r->rows[r->sel].dev != NULL &&
	    r->rows[r->sel].dev != r->rp.rows[0].dev) {
		pick[0] = r->rp.rows[0].member;
		dev[0] = r->rp.rows[0].dev->device;
		pick[1] = r->rows[r->sel].member;
		dev[1] = r->rows[r->sel].dev->device;
		n = 2;
	}
	if (n != 2) {
		ranks_common_msgf(r, "mark two ranks with %s (%zu marked), "
		    "then %s",
		    keys_action_shown(ACT_RANK_MARK, mark, sizeof mark), n,
		    keys_action_shown(ACT_RANK_COMPARE, cmp, sizeof cmp));
		return;
	}
	ranks_compare_open(r, pick[0], dev[0], pick[1], dev[1]);
}

static enum rk_result
overview_key(struct rk *r, enum action act)
{
	size_t page = r->list_h > 1 ? (size_t)r->list_h - 1 : 1;

	switch (act) {
	case ACT_RANK_MARK:
		if (r->n_rows > 0) {
			r->marked[r->rows[r->sel].member] ^= 1;
			if (r->sel + 1 < r->n_rows)
				r->sel++;
		}
		break;
	case ACT_RANK_COMPARE:
		compare_marked(r);
		break;
	case ACT_RANK_GRID:
		if (r->run == NULL) {
			ranks_common_msgf(r, "no run here: the files match "
			    "no layout (verl, torchtitan, --layout)");
			break;
		}
		r->grid = 1;
		break;
	case ACT_RANK_SORT:
		r->by_rank = !r->by_rank;
		build_rows(r);
		ranks_common_msgf(r, "sorted by %s",
		    r->by_rank ? "rank" : "peak");
		break;
	case ACT_UP: if (r->sel > 0) r->sel--; break;
	case ACT_DOWN: if (r->sel + 1 < r->n_rows) r->sel++; break;
	case ACT_PAGE_UP: r->sel = r->sel > page ? r->sel - page : 0; break;
	case ACT_PAGE_DOWN:
		r->sel += page;
		if (r->sel >= r->n_rows)
			r->sel = r->n_rows > 0 ? r->n_rows - 1 : 0;
		break;
	case ACT_FIRST: r->sel = 0; break;
	case ACT_LAST: r->sel = r->n_rows > 0 ? r->n_rows - 1 : 0; break;
	case ACT_ENTER:
		if (r->n_rows == 0 || r->rows[r->sel].dev == NULL) {
			ranks_common_msgf(r, "this file could not be read");
			break;
		}
		r->target = r->sel;
		r->open_cell = 0;
		return RK_OPEN;
	case ACT_QUIT: return RK_QUIT;
	case ACT_BACK: memset(r->marked, 0, r->rs.n); break;
	default: return RK_NONE;
	}
	return RK_REDRAW;
}

enum rk_result
ranks_overview_key(struct rk *r, int key, enum action act)
{
	enum rk_result res;

	r->msg[0] = '\0';
	if (act == ACT_HELP) {
		r->help = !r->help;
		return RK_REDRAW;
	}
	if (r->help) {
		if (act == ACT_BACK || act == ACT_QUIT)
			r->help = 0;
		return RK_REDRAW;
	}
	if (act == ACT_REDRAW)
		return RK_REDRAW;
	if (r->cmp != NULL)
		res = ranks_compare_key(r, r->cmp, act);
	else if (r->grid)
		res = ranks_grid_key(r, act);
	else
		res = overview_key(r, act);
	if (res == RK_NONE && key != 0)
		ranks_common_msgf(r, "key %s does nothing here; ? shows the "
		    "keys", keys_name(key));
	return res == RK_NONE ? RK_REDRAW : res;
}

void
ranks_overview_target(const struct rk *r, const char **path, uint32_t *device)
{
	const struct rk_row *row = &r->rows[r->target];

	if (r->open_cell) {
		*path = r->rs.m[r->open_member].path;
		*device = r->open_dev;
		return;
	}
	*path = r->rs.m[row->member].path;
	*device = row->dev->device;
}

enum action
ranks_overview_action(const struct rk *r, int key)
{
	return keys_action_in(key, r->cmp != NULL ? KM_COMPARE : KM_RANKS);
}

const char *
ranks_overview_hint(void)
{
	static char hint[128];

	keys_hint(hint, sizeof hint, "%k: back to the ranks  %k/%k move  "
	    "%k peak  %k help  %k quit", ACT_RANKS, ACT_LEFT, ACT_RIGHT,
	    ACT_PEAK, ACT_HELP, ACT_QUIT);
	return hint;
}

/* ---- opening ------------------------------------------------------------- */

struct load_ctx {
	rk_progress_fn fn;
	void *ctx;
};

static int
load_progress(void *ctx, const struct an_rankset_progress *p)
{
	struct load_ctx *lc = ctx;
	char line[160];
	int pct = p->bytes_total ? (int)(p->bytes_done * 100 / p->bytes_total)
				 : 0;

	snprintf(line, sizeof line, "Indexing ranks: %zu of %zu done, %zu "
	    "building", p->done, p->total, p->building);
	return lc->fn(lc->ctx, line, pct);
}

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int
ranks_overview_open(struct rk **out, const struct tui_opts *o,
    rk_progress_fn fn, void *ctx, char *msg, size_t ml)
{
	struct rk *r = xcalloc(1, sizeof *r);
	struct an_rankset_opts ro;
	struct idx_opts io;
	struct load_ctx lc = {fn, ctx};
	struct sv_error err;
	char name[256];
	int k = 0;

	*out = NULL;
	r->o = o;
	sv_error_clear(&err);
	r->want_device = o->device;
	/* a directory of a run's dumps opens its grid (analysis/runs.h) */
	if (o->layout != NULL && (o->n_files != 1 || !is_dir(o->files[0]))) {
		snprintf(msg, ml, "--layout takes one directory");
		free(r);
		return 1;
	}
	r->run = xcalloc(1, sizeof *r->run);
	if (o->n_files != 1 || (k = an_run_collect(o->files[0], o->layout,
	    &r->rs, r->run, &err)) == 0) {
		free(r->run);
		r->run = NULL;
	} else if (k < 0) {
		snprintf(msg, ml, "%s: %s",
		    ranks_common_shown(name, sizeof name, o->file), err.msg);
		free(r->run);
		free(r);
		return sv_errcode_status(err.code);
	}
	if (r->run == NULL && an_rankset_collect(o->files, o->n_files, &r->rs,
	    &err) != 0) {
		snprintf(msg, ml, "%s: %s",
		    ranks_common_shown(name, sizeof name, o->file), err.msg);
		free(r);
		return sv_errcode_status(err.code);
	}
	memset(&io, 0, sizeof io);
	io.cache_dir = o->cache_dir;
	io.no_cache = o->no_cache;
	memset(&ro, 0, sizeof ro);
	ro.io = &io;
	ro.progress = load_progress;
	ro.progress_ctx = &lc;
	ro.child_exit = _exit;
	if (r->run != NULL) {
		ro.extra = &an_run_blocks_section;
		ro.n_extra = 1;
	}
	fn(ctx, "Opening ranks", 0);
	if (an_rankset_load(&r->rs, &ro, &err) != 0) {
		snprintf(msg, ml, "%s", err.msg);
		if (r->run != NULL) {
			an_run_free(r->run);
			free(r->run);
		}
		an_rankset_free(&r->rs);
		free(r);
		return sv_errcode_status(err.code);
	}
	if (r->run != NULL) {
		an_run_analyse(r->run, &r->rs, o->device);
		r->grid = 1;
	}
	an_rankset_report(&r->rs, o->device, &r->rp);
	r->marked = xcalloc(r->rs.n + 1, 1);
	build_rows(r);
	r->cmp_only = o->n_files == 2 && !is_dir(o->files[0]) &&
	    !is_dir(o->files[1]) && r->rp.n_failed == 0;
	if (r->cmp_only) {
		/* the files in the order given, A then B */
		size_t a = strcmp(r->rs.m[0].path, o->files[0]) == 0 ? 0 : 1;

		if (ranks_compare_open(r, a, o->device, 1 - a, o->device) != 0)
			r->cmp_only = 0;
	}
	*out = r;
	return 0;
}

void
ranks_overview_free(struct rk *r)
{
	if (r == NULL)
		return;
	ranks_compare_close(r->cmp);
	if (r->run != NULL) {
		an_run_free(r->run);
		free(r->run);
	}
	an_rankset_report_free(&r->rp);
	an_rankset_free(&r->rs);
	free(r->rows);
	free(r->tr);
	free(r->marked);
	free(r);
}
