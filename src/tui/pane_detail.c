/*
 * Detail pane: the selected block (recorded, or simulated: D) or the
 * event at the cursor, with its call stack; framework frames folded
 * unless unfolded with the fold key. After a search, the frame that
 * matched is scrolled into view and drawn in the selection style (its
 * run unfolded when it is a framework frame).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/site.h"
#include "render/fmt.h"
#include "render/frames.h"
#include "tui/pane.h"
#include "tui/simulate.h"
#include "util/escape.h"
#include "util/xalloc.h"

static const char *const state_names[] = {"inactive", "allocated",
    "pending free", "unknown"};

/* Describes the alloc/free events of element e into buf. */
static void
elem_life(struct app *a, uint64_t e, char *buf, size_t size)
{
	char al[FMT_BUF], fr[FMT_BUF];
	int64_t alloc_ev, free_ev;

	if (e == TL_NO_ELEM || e >= a->tl.n_elems) {
		snprintf(buf, size, "not in the trace");
		return;
	}
	/* the two events alone (idx_tl_elem_life(): a far move decodes no
	 * element stripe for them) */
	idx_tl_elem_life(&a->tl, e, &alloc_ev, &free_ev);
	if (alloc_ev < 0)
		snprintf(al, sizeof al, "before trace");
	else
		fmt_event(al, sizeof al, alloc_ev);
	if (free_ev < 0) {
		snprintf(buf, size, "alloc %s, never freed", al);
		return;
	}
	fmt_event(fr, sizeof fr, free_ev);
	snprintf(buf, size, "alloc %s, free %s", al, fr);
}

/* Title and info of event i: what the event is about (the allocation
 * and its life for alloc and free events; the request and the device's
 * free memory for an oom), then size, stream and time. */
static void
event_header(struct app *a, const struct snap_trace *t, uint64_t i,
    const char *life, char *title, size_t tsize, char *info, size_t isize)
{
	char ev[FMT_BUF], addr[FMT_BUF], sz[FMT_BUF], fr[FMT_BUF],
	    tm[FMT_BUF] = "", un[64];
	unsigned act = snap_ev_action(t, i);
	const char *an = snap_action_name(act), *raw;

	if (an == NULL && act - SNAP_ACTION_COUNT <
	    a->snap->n_unknown_actions) {
		/* the name of an unknown action comes from the file */
		raw = snap_str(a->snap,
		    a->snap->unknown_actions[act - SNAP_ACTION_COUNT]);
		sv_escape(un, sizeof un, raw, strlen(raw));
		an = un;
	} else if (an == NULL)
		an = "unknown";
	/* times are from the file: subtract only when it cannot overflow
	 * (|t| < 2^62 holds for any real clock) */
	if (snap_trace_has_time(t) && snap_ev_time(t, i) != SNAP_NO_TIME &&
	    snap_ev_time(t, 0) != SNAP_NO_TIME &&
	    llabs(snap_ev_time(t, i)) < (INT64_C(1) << 62) &&
	    llabs(snap_ev_time(t, 0)) < (INT64_C(1) << 62))
		fmt_duration(tm, sizeof tm, snap_ev_time(t, i) -
		    snap_ev_time(t, 0));
	fmt_event(ev, sizeof ev, (int64_t)i);
	fmt_addr(addr, sizeof addr, snap_ev_addr(t, i));
	fmt_size(sz, sizeof sz, snap_ev_size(t, i));
	switch (act) {
	case SNAP_ALLOC:
	case SNAP_FREE_REQUESTED:
	case SNAP_FREE_COMPLETED:
		snprintf(title, tsize, "Event %s %s %s %s - %.80s", ev, an,
		    addr, sz, life);
		break;
	case SNAP_OOM:
		/* the event's address field holds the device's free bytes */
		snprintf(title, tsize, "Event %s oom - request %s, device free "
		    "%s", ev, sz, fmt_size(fr, sizeof fr, snap_ev_addr(t, i)));
		break;
	case SNAP_SNAPSHOT:
		snprintf(title, tsize, "Event %s snapshot (taken here)", ev);
		break;
	case SNAP_ANNOTATE:
		/* metadata added to the live allocation at addr */
		raw = snap_str(a->snap, snap_ev_meta(t, i));
		sv_escape(un, sizeof un, raw, strlen(raw));
		snprintf(title, tsize, "Event %s annotate %s - %s", ev, addr,
		    un);
		break;
	default:
		snprintf(title, tsize, "Event %s %s %s %s", ev, an, addr, sz);
	}
	snprintf(info, isize, "size %s stream %" PRIu64 " %s%s", sz,
	    snap_ev_stream(t, i), tm[0] != '\0' ? "time " : "", tm);
}

/* The header of block b of segment sg: kind ("Block"), its address,
 * size and state and life; then its sizes, stream and segment, and
 * tail. */
static void
block_text(const char *kind, const struct replay_block *b,
    const struct replay_segment *sg, const char *life, const char *tail,
    char *title, size_t tsize, char *info, size_t isize)
{
	char addr[FMT_BUF], sz[FMT_BUF], rq[FMT_BUF], sa[FMT_BUF];

	snprintf(title, tsize, "%s %s %s %s - %s", kind,
	    fmt_addr(addr, sizeof addr, b->addr),
	    fmt_size(sz, sizeof sz, b->size),
	    state_names[b->state < 4 ? b->state : 3], life);
	snprintf(info, isize, "size %s requested %s stream %" PRIu64
	    " segment %s%s", sz, fmt_size(rq, sizeof rq, b->requested_size),
	    sg->stream, fmt_addr(sa, sizeof sa, sg->addr), tail);
}

/* The block selected in the simulated state (D), described as a
 * recorded block is: its address, size and state, the recorded
 * allocation the simulation placed there (its event, its life) and that
 * allocation's stack. */
static uint32_t
sim_block(struct app *a, const struct replay_block *b,
    const struct replay_segment *sg, char *title, size_t tsize, char *info,
    size_t isize)
{
	char life[96], under[1024];
	const char *name = NULL;

	(void)simulate_state(a, NULL, &name, NULL);
	if (b->alloc_ev >= 0 && (uint64_t)b->alloc_ev < a->tl.n_events)
		elem_life(a, idx_tl_ev_elem(&a->tl, (uint64_t)b->alloc_ev),
		    life, sizeof life);
	else
		snprintf(life, sizeof life, "no recorded allocation");
	snprintf(under, sizeof under, " - under %s", name != NULL ? name :
	    "?");
	block_text("Simulated block", b, sg, life, under, title, tsize, info,
	    isize);
	return b->stack;
}

/* Header text and stack of what the pane shows. */
uint32_t
pane_detail_describe(struct app *a, char *title, size_t tsize, char *info,
    size_t isize)
{
	char sz[FMT_BUF], rq[FMT_BUF], life[96];
	uint64_t e = cursor_selected_elem(a);
	const struct snap_trace *t = snap_trace_of(a->snap, a->device);
	const struct replay_block *sb;
	const struct replay_segment *ssg;

	if (a->detail == DETAIL_BAND && a->view.pick.kind != TL_PICK_NONE)
		return pane_timeline_band_detail(a, title, tsize, info, isize);
	if (a->detail == DETAIL_SITE) {
		snprintf(title, tsize, "%s", a->vdetail.title);
		snprintf(info, isize, "%s", a->vdetail.info);
		return a->vdetail.stack;
	}
	if (a->detail == DETAIL_SIM && (sb = simulate_block(a, &ssg)) != NULL)
		return sim_block(a, sb, ssg, title, tsize, info, isize);
	elem_life(a, e, life, sizeof life);
	if (a->detail == DETAIL_BLOCK && a->sv.sel_block != SEGMAP_NONE &&
	    a->sv.sel_block < a->st->n_blocks) {
		const struct replay_block *b = &a->st->blocks[a->sv.sel_block];
		const struct replay_segment *sg =
		    &a->st->segments[a->sv.sel_seg];

		block_text("Block", b, sg, life, e != TL_NO_ELEM &&
		    b->alloc_ev < 0 &&
		    idx_tl_elem(&a->tl, e).flags & IDX_ELEM_PRE ?
		    " - the stack of its free (allocated before the trace)" :
		    "", title, tsize, info, isize);
		if (b->stack != 0)
			return b->stack;
		return e != TL_NO_ELEM ? idx_tl_elem(&a->tl, e).stack : 0;
	}
	if (t == NULL || t->n == 0) {
		/* a snapshot without trace: what the segments say */
		snprintf(title, tsize, "No trace - the state at the end: "
		    "reserved %s, allocated %s in %u segment%s",
		    fmt_size(sz, sizeof sz, a->st->reserved),
		    fmt_size(rq, sizeof rq, a->st->allocated),
		    a->st->n_segments, a->st->n_segments == 1 ? "" : "s");
		snprintf(info, isize, "select a block in the segment map "
		    "for its size and stack");
		return 0;
	}
	if (a->view.cursor < 0 || (uint64_t)a->view.cursor >= t->n) {
		snprintf(title, tsize, "No event");
		info[0] = '\0';
		return 0;
	}
	event_header(a, t, (uint64_t)a->view.cursor, life, title, tsize,
	    info, isize);
	return snap_ev_stack(t, (uint64_t)a->view.cursor);
}

/* A stack with no Python frame is named by its C++ frames, e.g.
 * "BmmBackward0 -> at::bmm": that label, as the analyses print it, into
 * buf (escaped); 0 for any other stack. */
static int
cpp_site(struct app *a, uint32_t stack, char *buf, size_t size)
{
	struct an_sites *sites = stack != 0 ? tables_sites(a) : NULL;
	char raw[400], esc[400];
	uint32_t site;

	if (sites == NULL)
		return 0;
	site = an_site_of(sites, stack);
	if (an_site_kind(sites, site) != AN_SITE_CPP)
		return 0;
	an_site_label(sites, site, raw, sizeof raw);
	sv_escape(esc, sizeof esc, raw, strlen(raw));
	snprintf(buf, size, "site %s", esc);
	return 1;
}

/* The event the pane describes (pane_detail_describe; a view's, the
 * event table's), or -1 when it shows a band, a site, a block or no
 * event. */
static int64_t
shown_event(struct app *a)
{
	const struct snap_trace *t = snap_trace_of(a->snap, a->device);
	const struct replay_segment *ssg;

	if (a->detail == DETAIL_SITE)
		return a->vdetail.ev1 > 0 && t != NULL &&
		    a->vdetail.ev1 <= t->n ? (int64_t)a->vdetail.ev1 - 1 : -1;
	if (a->detail == DETAIL_BAND && a->view.pick.kind != TL_PICK_NONE)
		return -1;
	if (a->detail == DETAIL_BLOCK && a->sv.sel_block != SEGMAP_NONE &&
	    a->sv.sel_block < a->st->n_blocks)
		return -1;
	if (a->detail == DETAIL_SIM && simulate_block(a, &ssg) != NULL)
		return -1;
	if (t == NULL || a->view.cursor < 0 || (uint64_t)a->view.cursor >= t->n)
		return -1;
	return a->view.cursor;
}

/* The site line: a free whose stack has no Python frame is named by its
 * block's allocation site, as the event table names it
 * (tables_event_site), "site alloc FILE:LINE NAME", its own C++ site
 * after it; another stack with no Python frame by its C++ frames
 * (cpp_site). 0: no site line. */
static int
site_line(struct app *a, uint32_t stack, char *buf, size_t size)
{
	const struct snap_trace *t = snap_trace_of(a->snap, a->device);
	int64_t ev = shown_event(a);
	struct an_sites *sites;
	char raw[400], esc[240], own[240];
	uint32_t site;
	int alloc = 0;

	if (ev >= 0 && stack != 0 && (sites = tables_sites(a)) != NULL) {
		site = tables_event_site(a, t, (uint64_t)ev, &alloc);
		if (alloc) {
			an_site_label(sites, site, raw, sizeof raw);
			sv_escape(esc, sizeof esc, raw, strlen(raw));
			if (!cpp_site(a, stack, own, sizeof own))
				own[0] = '\0';
			snprintf(buf, size, "site alloc %s%s%s", esc,
			    own[0] != '\0' ? " - freed from " : "",
			    own[0] != '\0' ? own + 5 : "");
			return 1;
		}
	}
	return cpp_site(a, stack, buf, size);
}

/* The frames the last search matched when the pane shows its hit (the
 * event a search went to, not moved from since), else NULL. */
static const uint8_t *
search_hit(struct app *a, uint32_t stack)
{
	if (!a->search_show || a->frame_match == NULL ||
	    a->detail != DETAIL_EVENT || stack == 0)
		return NULL;
	return a->frame_match;
}

/* Does a frame of stack that hit matched lie in a folded run (and none
 * outside one)? */
static int
hit_folded(struct app *a, uint32_t stack, const uint8_t *hit)
{
	struct frame_line *fl;
	const uint32_t *fs;
	uint32_t ns, k;
	size_t n, i;
	int in_fold = 0, shown = 0;

	fs = snap_stack(a->snap, stack, &ns);
	n = frames_layout(a->snap, stack, 0, NULL, 0);
	fl = xcalloc(n + 1, sizeof *fl);
	frames_layout(a->snap, stack, 0, fl, n);
	for (i = 0; i < n; i++) {
		if (fl[i].nfold == 0) {
			shown |= fl[i].frame < a->snap->n_frames &&
			    hit[fl[i].frame];
			continue;
		}
		for (k = fl[i].pos; k < fl[i].pos + fl[i].nfold && k < ns; k++)
			in_fold |= fs[k] < a->snap->n_frames && hit[fs[k]];
	}
	free(fl);
	return in_fold && !shown;
}

static void
det_draw(struct app *a, struct cellbuf *cb, const struct rect *r, int focused)
{
	char title[256], info[256], line[512], cut[512];
	struct frame_line *fl;
	const uint8_t *hit;
	uint32_t stack;
	size_t n, i;
	int row, y, top, unfold;

	stack = pane_detail_describe(a, title, sizeof title, info, sizeof info);
	pane_title(a, cb, r, focused, title);
	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	cellbuf_puts(cb, r->x + 1, r->y + 1, info, r->w - 1, UIC_AXIS, 0);
	/* the site line, above the frames (it does not scroll) */
	top = r->y + 2;
	if (site_line(a, stack, line, sizeof line))
		cellbuf_puts(cb, r->x + 1, top++, line, r->w - 1, UIC_DEFAULT,
		    CB_A_BOLD);
	hit = search_hit(a, stack);
	/* a framework frame that matched is shown: its run unfolded */
	unfold = a->unfold || (hit != NULL && hit_folded(a, stack, hit));
	n = frames_layout(a->snap, stack, unfold, NULL, 0);
	fl = xcalloc(n + 1, sizeof *fl);
	frames_layout(a->snap, stack, unfold, fl, n);
	if (n == 0)
		cellbuf_puts(cb, r->x + 1, top, "(no stack recorded)",
		    r->w - 1, UIC_AXIS, 0);
	if (hit != NULL && a->search_show == 2) {
		/* once: the first matched frame in view, a line of context
		 * above it */
		for (i = 0; i < n; i++)
			if (fl[i].nfold == 0 &&
			    fl[i].frame < a->snap->n_frames &&
			    hit[fl[i].frame])
				break;
		if (i < n && (int)i >= r->y + r->h - top)
			a->detail_scroll = (int)i - 1;
		a->search_show = 1;
	}
	if (a->detail_scroll > (int)n - 1)
		a->detail_scroll = n > 0 ? (int)n - 1 : 0;
	for (i = (size_t)a->detail_scroll, row = 0; i < n; i++, row++) {
		y = top + row;
		if (y >= r->y + r->h)
			break;
		if (fl[i].nfold > 0) {
			snprintf(line, sizeof line, "%s %u framework frame%s "
			    "(z unfolds)", a->utf8 ? "\xe2\x96\xb8" : "+",
			    fl[i].nfold, fl[i].nfold == 1 ? "" : "s");
			cellbuf_puts(cb, r->x + 1, y, line, r->w - 1,
			    UIC_FRAMEWORK, 0);
			continue;
		}
		frames_format(a->snap, fl[i].frame, line, sizeof line);
		/* a user frame too long loses its directories, never its
		 * file, line and function */
		if (fl[i].kind == FRAME_USER &&
		    sv_utf8_cells(line) > r->w - 1) {
			frames_shorten(cut, sizeof cut, line, r->w - 1,
			    a->utf8);
			snprintf(line, sizeof line, "%s", cut);
		}
		/* the frame the search matched: the lists' selection */
		if (hit != NULL && fl[i].frame < a->snap->n_frames &&
		    hit[fl[i].frame]) {
			cellbuf_fill(cb, r->x, y, r->w, 1, ' ', UIC_SELECT, 0);
			cellbuf_puts(cb, r->x + 1, y, line, r->w - 1,
			    UIC_SELECT, CB_A_BOLD);
			continue;
		}
		cellbuf_puts(cb, r->x + 1, y, line, r->w - 1,
		    fl[i].kind == FRAME_USER ? UIC_DEFAULT : UIC_FRAMEWORK, 0);
	}
	free(fl);
}

static int
det_action(struct app *a, enum action act, const struct rect *r)
{
	int page = r->h > 3 ? r->h - 3 : 1;

	switch (act) {
	case ACT_UP: a->detail_scroll--; break;
	case ACT_DOWN: a->detail_scroll++; break;
	case ACT_PAGE_UP: a->detail_scroll -= page; break;
	case ACT_PAGE_DOWN: a->detail_scroll += page; break;
	case ACT_FIRST: a->detail_scroll = 0; break;
	case ACT_LAST: a->detail_scroll = 1 << 30; break;
	default: return 0;
	}
	if (a->detail_scroll < 0)
		a->detail_scroll = 0;
	return UI_HANDLED | UI_REDRAW;
}

const struct pane_ops pane_detail_ops = {"detail", det_draw, det_action};
