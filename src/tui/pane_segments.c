/*
 * Segment pane: the allocator state at the cursor as a segment map, with
 * the totals in the title. Up/down select a segment, left/right a block.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "render/fmt.h"
#include "tui/pane.h"
#include "util/escape.h"

/*
 * The title: the totals at the cursor, in the longest of these forms that
 * fits the pane, so that an 80-column terminal still shows the largest
 * free block (the figure a fragmentation question starts from) rather
 * than losing the end of the line.
 */
static void
seg_title(struct app *a, const struct rect *r, char *title, size_t size)
{
	const struct replay_totals *t = &a->totals;
	char at[FMT_BUF], res[FMT_BUF], al[FMT_BUF], fi[FMT_BUF], fe[FMT_BUF],
	    lf[FMT_BUF], segs[48];
	const char *fin;
	int form;

	fmt_event(at, sizeof at, a->view.cursor);
	if (a->tl.n_events == 0)	/* no trace: the file's own state */
		snprintf(at, sizeof at, "end");
	fmt_size_short(res, sizeof res, t->reserved);
	fmt_size_short(al, sizeof al, t->allocated);
	fmt_size_short(fi, sizeof fi, t->free_internal);
	fmt_size_short(fe, sizeof fe, t->free_external);
	fmt_size_short(lf, sizeof lf, t->largest_free);
	fin = state_exact(&a->src, a->view.cursor) ? "" : " (final)";
	snprintf(segs, sizeof segs, " - %" PRIu64 " seg%s", t->n_segments,
	    t->n_segments == 1 ? "" : "s");
	for (form = 0; form < 5; form++) {
		switch (form) {
		case 0:
			snprintf(title, size, "%s @ %s%s - reserved %s alloc %s"
			    " - free int %s ext %s - largest %s%s",
			    r->w >= 110 ? "Allocator state" : "State", at, fin,
			    res, al, fi, fe, lf, segs);
			break;
		case 1:
			snprintf(title, size, "State @ %s%s - reserved %s "
			    "alloc %s - free int %s ext %s - largest %s", at,
			    fin, res, al, fi, fe, lf);
			break;
		case 2:
			snprintf(title, size, "State @ %s%s - res %s alloc %s"
			    " - free int %s ext %s - largest %s", at, fin, res,
			    al, fi, fe, lf);
			break;
		case 3:
			snprintf(title, size, "State @ %s%s - res %s alloc %s"
			    " - int %s ext %s - max free %s", at, fin, res, al,
			    fi, fe, lf);
			break;
		default:
			snprintf(title, size, "@ %s%s - res %s alloc %s - "
			    "int %s ext %s - max free %s", at, fin, res, al,
			    fi, fe, lf);
			break;
		}
		/* pane_title() draws the text in w - 4 cells */
		if (sv_utf8_cells(title) <= r->w - 4)
			break;
	}
}

static void
seg_draw(struct app *a, struct cellbuf *cb, const struct rect *r, int focused)
{
	char title[512];
	int rows = r->h - 1;

	seg_title(a, r, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	if (a->sv.sel_seg != SEGMAP_NONE && rows > 0) {
		if (a->sv.sel_seg < a->sv.first)
			a->sv.first = a->sv.sel_seg;
		if (a->sv.sel_seg >= a->sv.first + (uint32_t)rows)
			a->sv.first = a->sv.sel_seg - (uint32_t)rows + 1;
	}
	segmap_render(a->st, &a->sv, cb, r->x, r->y + 1, r->w, rows);
}

static void
select_seg(struct app *a, int64_t s)
{
	const struct replay_state *st = a->st;

	if (st->n_segments == 0)
		return;
	if (s < 0)
		s = 0;
	if (s >= st->n_segments)
		s = st->n_segments - 1;
	a->sv.sel_seg = (uint32_t)s;
	a->sv.sel_block = SEGMAP_NONE;
}

static void
select_block(struct app *a, int dir)
{
	const struct replay_state *st = a->st;
	const struct replay_segment *sg;
	uint32_t b;

	if (a->sv.sel_seg == SEGMAP_NONE)
		select_seg(a, 0);
	if (a->sv.sel_seg == SEGMAP_NONE || a->sv.sel_seg >= st->n_segments)
		return;
	sg = &st->segments[a->sv.sel_seg];
	if (sg->n_blocks == 0)
		return;
	b = a->sv.sel_block;
	if (b == SEGMAP_NONE || b < sg->first_block ||
	    b >= sg->first_block + sg->n_blocks)
		b = dir > 0 ? sg->first_block :
		    sg->first_block + sg->n_blocks - 1;
	else if (dir > 0 && b + 1 < sg->first_block + sg->n_blocks)
		b++;
	else if (dir < 0 && b > sg->first_block)
		b--;
	a->sv.sel_block = b;
	a->detail = DETAIL_BLOCK;
	a->detail_scroll = 0;
}

static int
seg_action(struct app *a, enum action act, const struct rect *r)
{
	int64_t cur = a->sv.sel_seg == SEGMAP_NONE ? -1 :
	    (int64_t)a->sv.sel_seg;
	int page = r->h > 2 ? r->h - 2 : 1;

	switch (act) {
	case ACT_UP: select_seg(a, cur - 1); break;
	case ACT_DOWN: select_seg(a, cur + 1); break;
	case ACT_PAGE_UP: select_seg(a, cur - page); break;
	case ACT_PAGE_DOWN: select_seg(a, cur + page); break;
	case ACT_FIRST: select_seg(a, 0); break;
	case ACT_LAST: select_seg(a, (int64_t)a->st->n_segments - 1); break;
	case ACT_LEFT: select_block(a, -1); break;
	case ACT_RIGHT: select_block(a, 1); break;
	case ACT_ENTER:
		if (a->sv.sel_block == SEGMAP_NONE)
			select_block(a, 1);
		if (a->sv.sel_block != SEGMAP_NONE) {
			a->detail = DETAIL_BLOCK;
			a->focus = LAY_DETAIL;
		}
		break;
	default: return 0;
	}
	a->view.sel_elem = cursor_selected_elem(a);
	return UI_HANDLED | UI_REDRAW;
}

const struct pane_ops pane_segments_ops = {"segments", seg_draw,
    seg_action};
