/*
 * Segment pane: the allocator state at the cursor as a segment map, with
 * the totals in the title. Up/down select a segment, left/right a block.
 * With a what-if simulation shown (D, simulate.h) the same map of the
 * simulated state, labelled with its settings, with a selection of its
 * own; its block selected shows in the detail pane (DETAIL_SIM) with the
 * recorded allocation the simulation placed there.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "render/fmt.h"
#include "tui/pane.h"
#include "tui/replay_bg.h"
#include "tui/simulate.h"
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
	char fin[48];
	int form;

	fmt_event(at, sizeof at, a->view.cursor);
	if (a->tl.n_events == 0)	/* no trace: the file's own state */
		snprintf(at, sizeof at, "end");
	fmt_size_short(res, sizeof res, t->reserved);
	fmt_size_short(al, sizeof al, t->allocated);
	fmt_size_short(fi, sizeof fi, t->free_internal);
	fmt_size_short(fe, sizeof fe, t->free_external);
	fmt_size_short(lf, sizeof lf, t->largest_free);
	/* the final state stands in for the cursor's: while the replay is
	 * built behind the screen, how far it is */
	if (state_exact(&a->src, a->view.cursor))
		fin[0] = '\0';
	else if (replay_bg_pending(a))
		snprintf(fin, sizeof fin, " (final; replay %d%%)",
		    replay_bg_percent(a));
	else
		snprintf(fin, sizeof fin, " (final)");
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

/* The simulated state's title: its settings first, then as many of the
 * totals as fit. */
static void
sim_title(struct app *a, const struct rect *r, const char *name,
    const struct replay_totals *t, char *title, size_t size)
{
	char at[FMT_BUF], res[FMT_BUF], al[FMT_BUF], fi[FMT_BUF], fe[FMT_BUF],
	    lf[FMT_BUF];
	int form;

	fmt_event(at, sizeof at, a->view.cursor);
	fmt_size_short(res, sizeof res, t->reserved);
	fmt_size_short(al, sizeof al, t->allocated);
	fmt_size_short(fi, sizeof fi, t->free_internal);
	fmt_size_short(fe, sizeof fe, t->free_external);
	fmt_size_short(lf, sizeof lf, t->largest_free);
	for (form = 0; form < 5; form++) {
		switch (form) {
		case 0:
			snprintf(title, size, "simulated: %s @ %s - reserved "
			    "%s alloc %s - free int %s ext %s - largest %s - "
			    "%" PRIu64 " seg%s", name, at, res, al, fi, fe, lf,
			    t->n_segments, t->n_segments == 1 ? "" : "s");
			break;
		case 1:
			snprintf(title, size, "simulated: %s @ %s - res %s "
			    "alloc %s - int %s ext %s - max free %s", name, at,
			    res, al, fi, fe, lf);
			break;
		case 2:
			snprintf(title, size, "simulated: %s @ %s - res %s "
			    "alloc %s - ext %s", name, at, res, al, fe);
			break;
		case 3:
			snprintf(title, size, "simulated: %s @ %s - res %s",
			    name, at, res);
			break;
		default:
			snprintf(title, size, "simulated: %s", name);
			break;
		}
		if (sv_utf8_cells(title) <= r->w - 4)
			break;
	}
}

/* The map of st with the selection of sv, its selected row in view. */
static void
draw_map(const struct replay_state *st, struct segmap_view *sv,
    struct cellbuf *cb, const struct rect *r)
{
	int rows = r->h - 1;

	if (sv->sel_seg != SEGMAP_NONE && rows > 0) {
		if (sv->sel_seg < sv->first)
			sv->first = sv->sel_seg;
		if (sv->sel_seg >= sv->first + (uint32_t)rows)
			sv->first = sv->sel_seg - (uint32_t)rows + 1;
	}
	segmap_render(st, sv, cb, r->x, r->y + 1, r->w, rows);
}

static void
seg_draw(struct app *a, struct cellbuf *cb, const struct rect *r, int focused)
{
	char title[512];
	const struct replay_state *sst;
	struct replay_totals t;
	struct segmap_view *ssv;
	const char *name;

	if ((sst = simulate_state(a, &t, &name, &ssv)) != NULL) {
		sim_title(a, r, name, &t, title, sizeof title);
		pane_title(a, cb, r, focused, title);
		draw_map(sst, ssv, cb, r);
		return;
	}
	seg_title(a, r, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	draw_map(a->st, &a->sv, cb, r);
}

static void
select_seg(const struct replay_state *st, struct segmap_view *sv,
    int64_t s)
{
	if (st->n_segments == 0)
		return;
	if (s < 0)
		s = 0;
	if (s >= st->n_segments)
		s = st->n_segments - 1;
	sv->sel_seg = (uint32_t)s;
	sv->sel_block = SEGMAP_NONE;
}

static int
select_block(const struct replay_state *st, struct segmap_view *sv,
    int dir)
{
	const struct replay_segment *sg;
	uint32_t b;

	if (sv->sel_seg == SEGMAP_NONE)
		select_seg(st, sv, 0);
	if (sv->sel_seg == SEGMAP_NONE || sv->sel_seg >= st->n_segments)
		return 0;
	sg = &st->segments[sv->sel_seg];
	if (sg->n_blocks == 0)
		return 0;
	b = sv->sel_block;
	if (b == SEGMAP_NONE || b < sg->first_block ||
	    b >= sg->first_block + sg->n_blocks)
		b = dir > 0 ? sg->first_block :
		    sg->first_block + sg->n_blocks - 1;
	else if (dir > 0 && b + 1 < sg->first_block + sg->n_blocks)
		b++;
	else if (dir < 0 && b > sg->first_block)
		b--;
	sv->sel_block = b;
	return 1;
}

/* The moves of the selection in st's map (both states' keys). */
static int
move(const struct replay_state *st, struct segmap_view *sv, enum action act,
    int page)
{
	int64_t cur = sv->sel_seg == SEGMAP_NONE ? -1 : (int64_t)sv->sel_seg;

	switch (act) {
	case ACT_UP: select_seg(st, sv, cur - 1); break;
	case ACT_DOWN: select_seg(st, sv, cur + 1); break;
	case ACT_PAGE_UP: select_seg(st, sv, cur - page); break;
	case ACT_PAGE_DOWN: select_seg(st, sv, cur + page); break;
	case ACT_FIRST: select_seg(st, sv, 0); break;
	case ACT_LAST: select_seg(st, sv, (int64_t)st->n_segments - 1); break;
	case ACT_LEFT: return select_block(st, sv, -1) ? 2 : 1;
	case ACT_RIGHT: return select_block(st, sv, 1) ? 2 : 1;
	default: return 0;
	}
	return 1;
}

static int
seg_action(struct app *a, enum action act, const struct rect *r)
{
	int page = r->h > 2 ? r->h - 2 : 1, m;
	const struct replay_state *sst;
	struct segmap_view *ssv;

	if ((sst = simulate_state(a, NULL, NULL, &ssv)) != NULL) {
		/* the simulated map: its own selection, its block in the
		 * detail pane as a recorded one */
		m = move(sst, ssv, act, page);
		if (m == 0 && act == ACT_ENTER) {
			if (ssv->sel_block == SEGMAP_NONE)
				(void)select_block(sst, ssv, 1);
			if (ssv->sel_block == SEGMAP_NONE)
				return UI_HANDLED;
			a->focus = LAY_DETAIL;
			m = 2;
		}
		if (m == 0)
			return 0;
		if (m == 2) {
			a->detail = DETAIL_SIM;
			a->detail_scroll = 0;
		}
		return UI_HANDLED | UI_REDRAW;
	}
	m = move(a->st, &a->sv, act, page);
	if (m == 2) {
		a->detail = DETAIL_BLOCK;
		a->detail_scroll = 0;
	}
	switch (act) {
	case ACT_UP: case ACT_DOWN: case ACT_PAGE_UP: case ACT_PAGE_DOWN:
	case ACT_FIRST: case ACT_LAST: case ACT_LEFT: case ACT_RIGHT:
		break;
	case ACT_ENTER:
		if (a->sv.sel_block == SEGMAP_NONE)
			(void)select_block(a->st, &a->sv, 1);
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
