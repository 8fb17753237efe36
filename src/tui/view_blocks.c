/*
 * The block table (B): every live block at the cursor (allocated or
 * pending free) from the replayed state, in the segment map's place:
 * address, size, requested size, age (events since its alloc), stream,
 * category and call site (a block allocated before the trace and freed
 * in it has only its free's stack: "freed at SITE"). '.' sorts by the
 * next column, R reverses;
 * Enter closes the table and selects the block in the segment map, its
 * stack in the detail pane. Rebuilt when the cursor moves
 * (O(live blocks log live blocks)); the selection stays on its address.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/anlist.h"
#include "render/fmt.h"
#include "tui/view.h"
#include "util/xalloc.h"

enum { COL_ADDR, COL_SIZE, COL_REQ, COL_AGE, COL_STREAM, COL_CAT, COL_SITE,
    N_COLS };

static const char *const col_names[N_COLS] = {"address", "size",
    "requested", "age", "stream", "category", "call site"};

struct blk_row {
	uint32_t b, seg;
	uint32_t site;
	int cat;                /* -1: no categories */
	int freed;              /* allocated before the trace, freed in it:
				   its stack is its free's */
};

struct blocks_view {
	int ok;
	int64_t at;
	struct blk_row *rows;
	size_t n, cap;
	int col, rev;           /* sort */
	uint64_t sel, first;
	int rescroll;           /* sorted: place the selection anew */
	int cats;               /* the category column is filled */
	uint64_t sel_addr;      /* address of the selected block */
	char **labels;          /* site labels (raw), by site id, lazily */
	uint32_t n_labels;
};

static const char *
site_label(struct app *a, struct blocks_view *v, uint32_t site)
{
	char buf[1024];
	uint32_t n;

	if (site >= v->n_labels) {
		n = site + 64;
		v->labels = xreallocarray(v->labels, n, sizeof *v->labels);
		memset(v->labels + v->n_labels, 0, (n - v->n_labels) *
		    sizeof *v->labels);
		v->n_labels = n;
	}
	if (v->labels[site] == NULL)
		v->labels[site] = xstrdup(an_site_label(tables_sites(a), site,
		    buf, sizeof buf));
	return v->labels[site];
}

/* ---- sorting ------------------------------------------------------------ */

static struct app *sort_app;
static struct blocks_view *sort_view;

static int
cmp_u64(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

static int
cmp_rows(const void *pa, const void *pb)
{
	const struct blk_row *x = pa, *y = pb;
	const struct replay_state *st = sort_app->st;
	const struct replay_block *bx = &st->blocks[x->b],
	    *by = &st->blocks[y->b];
	int c = 0;

	switch (sort_view->col) {
	case COL_ADDR: c = cmp_u64(bx->addr, by->addr); break;
	case COL_SIZE: c = -cmp_u64(bx->size, by->size); break;
	case COL_REQ:
		c = -cmp_u64(bx->requested_size, by->requested_size);
		break;
	case COL_AGE:
		/* oldest first: allocated before the trace (-1) first */
		c = bx->alloc_ev < by->alloc_ev ? -1 :
		    bx->alloc_ev > by->alloc_ev;
		break;
	case COL_STREAM:
		c = cmp_u64(st->segments[x->seg].stream,
		    st->segments[y->seg].stream);
		break;
	case COL_CAT: c = x->cat < y->cat ? -1 : x->cat > y->cat; break;
	case COL_SITE:
		c = strcmp(site_label(sort_app, sort_view, x->site),
		    site_label(sort_app, sort_view, y->site));
		break;
	}
	if (c == 0)
		c = cmp_u64(bx->addr, by->addr);
	return sort_view->rev ? -c : c;
}

/* Sorts, the selection on the block at addr (else the first row). */
static void
sort_rows(struct app *a, struct blocks_view *v, uint64_t addr)
{
	size_t i;

	sort_app = a;
	sort_view = v;
	qsort(v->rows, v->n, sizeof *v->rows, cmp_rows);
	/* the rows above the selection are others now: the old scroll
	 * position means nothing */
	v->rescroll = 1;
	for (i = 0; addr != UINT64_MAX && i < v->n; i++)
		if (a->st->blocks[v->rows[i].b].addr == addr) {
			v->sel = i;
			return;
		}
	v->sel = 0;
}

/* Was block b allocated before the trace and freed in it (its only
 * stack is its free's, IDX_ELEM_PRE)? */
static int
freed_in_trace(struct app *a, const struct replay_block *b)
{
	uint64_t e;

	if (b->alloc_ev >= 0)
		return 0;
	e = cursor_block_elem(a, b->addr, b->alloc_ev);
	return e != TL_NO_ELEM &&
	    (idx_tl_elem(&a->tl, e).flags & IDX_ELEM_PRE) != 0;
}

/* The live blocks of the state at the cursor. */
static void
refresh(struct app *a, struct blocks_view *v)
{
	const struct replay_state *st = a->st;
	uint32_t s, b;
	struct blk_row *r;

	if (v->ok && v->at == a->view.cursor)
		return;
	v->n = 0;
	for (s = 0; st != NULL && s < st->n_segments; s++)
		for (b = st->segments[s].first_block; b < st->segments[s]
		    .first_block + st->segments[s].n_blocks &&
		    b < st->n_blocks; b++) {
			if (st->blocks[b].state !=
			    SNAP_BLOCK_ACTIVE_ALLOCATED &&
			    st->blocks[b].state !=
			    SNAP_BLOCK_ACTIVE_PENDING_FREE)
				continue;
			XGROW(v->rows, v->cap, v->n + 1);
			r = &v->rows[v->n++];
			r->b = b;
			r->seg = s;
			r->site = an_site_of(tables_sites(a),
			    st->blocks[b].stack);
			r->cat = v->cats ? tables_block_category(a,
			    st->blocks[b].addr, st->blocks[b].alloc_ev) : -1;
			r->freed = freed_in_trace(a, &st->blocks[b]);
		}
	v->at = a->view.cursor;
	v->ok = 1;
	sort_rows(a, v, v->sel_addr);
}

static int
bl_open(struct app *a, void *priv)
{
	struct blocks_view *v = priv;

	if (tables_sites(a) == NULL)
		return -1;
	if (!v->ok && v->col == 0 && !v->rev && v->sel_addr == 0) {
		v->col = COL_SIZE;
		v->sel_addr = UINT64_MAX;
	}
	v->cats = tables_categories_able(a);
	a->msg[0] = '\0';       /* no categories: the column stays empty */
	v->ok = 0;
	refresh(a, v);
	a->detail = DETAIL_SITE;
	return 0;
}

static void
bl_reset(struct app *a, void *priv)
{
	struct blocks_view *v = priv;
	uint32_t i;

	(void)a;
	free(v->rows);
	for (i = 0; i < v->n_labels; i++)
		free(v->labels[i]);
	free(v->labels);
}

static void
bl_sync(struct app *a, void *priv)
{
	struct blocks_view *v = priv;
	struct app_vdetail *d = &a->vdetail;
	const struct replay_block *b;
	char ad[FMT_BUF], sz[FMT_BUF], rq[FMT_BUF], ev[FMT_BUF];

	refresh(a, v);
	memset(d, 0, sizeof *d);
	if (v->sel >= v->n) {
		snprintf(d->title, sizeof d->title, "No live block");
		return;
	}
	b = &a->st->blocks[v->rows[v->sel].b];
	v->sel_addr = b->addr;
	snprintf(d->title, sizeof d->title, "Block %s %s%s - %s",
	    fmt_addr(ad, sizeof ad, b->addr), fmt_size(sz, sizeof sz, b->size),
	    b->state == SNAP_BLOCK_ACTIVE_PENDING_FREE ? " pending free" : "",
	    b->alloc_ev < 0 ? "allocated before the trace" : "alloc ");
	if (b->alloc_ev >= 0)
		snprintf(d->title + strlen(d->title), sizeof d->title -
		    strlen(d->title), "%s", fmt_event(ev, sizeof ev,
		    b->alloc_ev));
	if (v->rows[v->sel].freed)
		snprintf(d->info, sizeof d->info, "requested %s - the stack of "
		    "its free (allocated before the trace):",
		    fmt_size(rq, sizeof rq, b->requested_size));
	else
		snprintf(d->info, sizeof d->info, "requested %s - Enter: "
		    "select it in the segment map", fmt_size(rq, sizeof rq,
		    b->requested_size));
	d->stack = b->stack;
}

/* Row k's columns before the call site. */
static int
row_text(struct app *a, struct blocks_view *v, size_t k, char *buf,
    size_t size)
{
	const struct blk_row *r = &v->rows[k];
	const struct replay_block *b = &a->st->blocks[r->b];
	char ad[FMT_BUF], sz[FMT_BUF], rq[FMT_BUF], age[FMT_BUF], st[FMT_BUF];
	const char *cat = anlist_category(r->cat);

	if (b->alloc_ev < 0)
		snprintf(age, sizeof age, "pre");
	else
		fmt_count(age, sizeof age, (uint64_t)(v->at - b->alloc_ev));
	snprintf(st, sizeof st, "%" PRIu64, a->st->segments[r->seg].stream);
	/* blocks allocated before the trace are named where they are freed */
	return snprintf(buf, size, "%-15s%c%6s %6s %8s %5s %-*s  %s",
	    fmt_addr(ad, sizeof ad, b->addr),
	    b->state == SNAP_BLOCK_ACTIVE_PENDING_FREE ? '~' : ' ',
	    fmt_size_short(sz, sizeof sz, b->size),
	    fmt_size_short(rq, sizeof rq, b->requested_size), age,
	    strlen(st) <= 5 ? st : st + strlen(st) - 5, ANLIST_CAT_W, cat,
	    r->freed ? "freed at " : "");
}

static void
header(struct blocks_view *v, char *buf, size_t size, int utf8)
{
	const char *up = utf8 ? "\xe2\x96\xb4" : "^",
	    *down = utf8 ? "\xe2\x96\xbe" : "v";
	const char *m[N_COLS];
	int i;

	/* the sort column is marked after its name */
	for (i = 0; i < N_COLS; i++)
		m[i] = i != v->col ? " " : v->rev ? up : down;
	snprintf(buf, size, "%-15s%s%5s%s %5s%s %7s%s %4s%s %-9s%s  %s%s",
	    "address", m[0], "size", m[1], "req", m[2], "age", m[3], "strm",
	    m[4], "category", m[5], "call site", m[6]);
}

static void
bl_title(struct app *a, struct blocks_view *v, char *t, size_t size)
{
	char e[FMT_BUF], c[FMT_BUF];

	snprintf(t, size, "Blocks @ %s - %s live, by %s%s", fmt_event(e,
	    sizeof e, v->at), fmt_count(c, sizeof c, v->n), col_names[v->col],
	    v->rev ? " (reversed)" : "");
	(void)a;
}

static void
bl_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct blocks_view *v = priv;
	char title[256], text[256], hd[256];
	int rows = r->h - 2, k;
	size_t i;

	refresh(a, v);
	bl_title(a, v, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	header(v, hd, sizeof hd, a->utf8);
	cellbuf_puts(cb, r->x + 1, r->y + 1, hd, r->w - 1, UIC_AXIS, CB_A_BOLD);
	if (v->n == 0) {
		cellbuf_puts(cb, r->x + 1, r->y + 2, "(no live block at the "
		    "cursor)", r->w - 1, UIC_AXIS, 0);
		return;
	}
	if (rows < 1)
		return;
	if (v->rescroll) {
		/* the selection in the middle, or the first rows */
		v->first = v->sel > (uint64_t)rows / 2 ? v->sel -
		    (uint64_t)rows / 2 : 0;
		if (v->n > (uint64_t)rows && v->first > v->n - (uint64_t)rows)
			v->first = v->n - (uint64_t)rows;
		v->rescroll = 0;
	}
	pane_list_scroll(&v->sel, &v->first, v->n, rows);
	for (i = v->first, k = 0; i < v->n && k < rows; i++, k++) {
		row_text(a, v, i, text, sizeof text);
		pane_list_row(a, cb, r, r->y + 2 + k, text,
		    site_label(a, v, v->rows[i].site), i == v->sel, focused,
		    UIC_DEFAULT);
	}
}

static int
bl_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct blocks_view *v = priv;
	struct rect rr = *r;
	int f;

	rr.h--;         /* the header row */
	if ((f = pane_list_move(&v->sel, v->n, act, &rr)) != 0) {
		a->detail = DETAIL_SITE;
		a->detail_scroll = 0;
		return f;
	}
	switch (act) {
	case ACT_SORT:
		v->col = (v->col + 1) % N_COLS;
		if (v->col == COL_CAT && !v->cats)
			v->col++;
		sort_rows(a, v, v->sel_addr);
		app_msg(a, "blocks sorted by %s", col_names[v->col]);
		break;
	case ACT_SORT_REVERSE:
		v->rev = !v->rev;
		sort_rows(a, v, v->sel_addr);
		break;
	case ACT_ENTER:
		if (v->sel >= v->n)
			return UI_HANDLED;
		/* the block in the segment map, which the table covered */
		a->sv.sel_seg = v->rows[v->sel].seg;
		a->sv.sel_block = v->rows[v->sel].b;
		a->detail = DETAIL_BLOCK;
		a->detail_scroll = 0;
		a->view.sel_elem = cursor_selected_elem(a);
		return UI_HANDLED | UI_REDRAW | UI_CLOSE_VIEW;
	default: return pane_timeline_move_cursor(a, act);
	}
	a->detail = DETAIL_SITE;
	return UI_HANDLED | UI_REDRAW;
}

static int
bl_write(struct app *a, void *priv, FILE *f)
{
	struct blocks_view *v = priv;
	char title[256], text[256], hd[256];
	size_t i;

	refresh(a, v);
	bl_title(a, v, title, sizeof title);
	header(v, hd, sizeof hd, a->utf8);
	fprintf(f, "%s\n%s\n", title, hd);
	for (i = 0; i < v->n; i++) {
		row_text(a, v, i, text, sizeof text);
		pane_list_write_row(f, text, site_label(a, v,
		    v->rows[i].site));
	}
	return ferror(f) ? -1 : 0;
}

/* Start of each column on a row, from the pane's text origin (the
 * header's and row_text's layout). */
static const int col_x[N_COLS] = {0, 16, 23, 30, 39, 45, 57};

static int
bl_click(struct app *a, void *priv, int x, int row, const struct rect *r)
{
	struct blocks_view *v = priv;
	int c, k = 0, rx = x - (r->x + 1);

	if (row == 1) {
		/* the header: sort by the column clicked, again: reverse */
		while (k + 1 < N_COLS && rx >= col_x[k + 1])
			k++;
		if (k == v->col)
			v->rev = !v->rev;
		else if (k != COL_CAT || v->cats)
			v->col = k;
		sort_rows(a, v, v->sel_addr);
		return UI_HANDLED | UI_REDRAW;
	}
	c = pane_list_click(&v->sel, v->first, v->n, row, 2);
	return pane_list_clicked(a, priv, r, c, 1, bl_action);
}

const struct view_ops view_blocks_ops = {
	.name = "blocks",
	.key = ACT_VIEW_BLOCKS,
	.slot = LAY_SEGMENTS,
	.priv_size = sizeof(struct blocks_view),
	.open = bl_open,
	.reset = bl_reset,
	.sync = bl_sync,
	.draw = bl_draw,
	.action = bl_action,
	.hint = "j/k block  . sort  R reverse  Enter show in map  q close",
	.write = bl_write,
	.click = bl_click,
};
