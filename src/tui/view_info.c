/*
 * The info view (I): what the file is and what the allocator was told,
 * in the segment map's place: the format, size, frames and stacks; the
 * device's events by action, peak, streams, time span, and what the
 * trace does not hold (frees without alloc, blocks alive from before);
 * the allocator settings as recorded in the file (PyTorch 2.3+); and the
 * replay check (run now if it was not yet), with the first mismatches.
 * A list of lines that j/k scroll; w writes it.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "render/fmt.h"
#include "tui/replay_bg.h"
#include "tui/view.h"
#include "util/escape.h"
#include "util/xalloc.h"

#define MAX_ISSUES_SHOWN 20

struct info_view {
	char (*lines)[256];
	size_t n, cap;
	uint64_t sel, first;
};

static void
add(struct info_view *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
add(struct info_view *v, const char *fmt, ...)
{
	va_list ap;

	XGROW(v->lines, v->cap, v->n + 1);
	va_start(ap, fmt);
	vsnprintf(v->lines[v->n++], sizeof v->lines[0], fmt, ap);
	va_end(ap);
}

static void
facts(struct app *a, struct info_view *v)
{
	const struct snapshot *s = a->snap;
	struct an_stats st;
	uint64_t nst;
	char b0[FMT_BUF], b1[FMT_BUF], name[200], acts[256];
	unsigned i;
	size_t len = 0;

	sv_escape(name, sizeof name, a->path, strlen(a->path));
	add(v, "File          %s", name);
	add(v, "Format        %s, pickle protocol %d, %s", snap_format_label(s),
	    s->protocol, fmt_size(b0, sizeof b0, s->source_size));
	if (snap_device_family(s) != NULL)
		add(v, "Devices       %s (as the file says)",
		    snap_device_family(s));
	nst = s->n_stacks > 0 ? s->n_stacks - 1 : 0;
	add(v, "Stacks        %s distinct stack%s over %s frame%s; %u "
	    "annotation%s", fmt_count(b0, sizeof b0, nst),
	    nst == 1 ? "" : "s", fmt_count(b1, sizeof b1, s->n_frames),
	    s->n_frames == 1 ? "" : "s", s->n_annotations,
	    s->n_annotations == 1 ? "" : "s");
	an_stats(s, a->device, &a->tl, &st);
	add(v, "Device        %u of %u: %s event%s, %" PRIu64 " stream%s",
	    a->device, a->n_devices, fmt_count(b0, sizeof b0, st.events),
	    st.events == 1 ? "" : "s", st.streams,
	    st.streams == 1 ? "" : "s");
	acts[0] = '\0';
	for (i = 0; i <= SNAP_ACTION_COUNT; i++) {
		if (st.by_action[i] == 0)
			continue;
		len += (size_t)snprintf(acts + len, len < sizeof acts ?
		    sizeof acts - len : 0, "%s%s %s", len > 0 ? ", " : "",
		    i < SNAP_ACTION_COUNT ? snap_action_name(i) : "unknown",
		    fmt_count(b0, sizeof b0, st.by_action[i]));
		if (len >= sizeof acts)
			break;
	}
	add(v, "Actions       %s", acts[0] != '\0' ? acts : "none");
	add(v, "Peak          %s at %s (Active Memory Timeline); %s before "
	    "the first event", fmt_size(b0, sizeof b0, st.peak),
	    fmt_event(b1, sizeof b1, st.peak_ev), fmt_size(acts, sizeof acts,
	    st.base_total));
	if (st.has_time && st.time_last >= st.time_first &&
	    st.time_last - st.time_first >= 0)
		add(v, "Time          %s from the first event to the last",
		    fmt_duration(b0, sizeof b0, st.time_last - st.time_first));
	add(v, "Final state   %" PRIu64 " segment%s (%" PRIu64 " expandable, %"
	    PRIu64 " in private pools), %s reserved, %s allocated",
	    st.seg.sum.n_segments, st.seg.sum.n_segments == 1 ? "" : "s",
	    st.seg.expandable, st.seg.private_pool,
	    fmt_size(b0, sizeof b0, st.seg.sum.reserved), fmt_size(b1,
	    sizeof b1, st.seg.sum.alloc_requested));
	if (snap_ring_overflowed(s, a->device) >= 0) {
		if (snap_ring_max_entries(s, a->device) > 0)
			snprintf(b1, sizeof b1, " (%" PRIu64 " entries at "
			    "most)", snap_ring_max_entries(s, a->device));
		else
			b1[0] = '\0';
		add(v, "Ring buffer   %s%s",
		    snap_ring_overflowed(s, a->device) > 0 ? "OVERFLOWED: "
		    "the trace lost its start; leaks and steps are judged on "
		    "what remains" : "not overflowed: the trace is complete",
		    b1);
	}
	add(v, "Not in trace  %s free%s without their alloc (recording began "
	    "later), %s block%s alive from before the first event",
	    fmt_count(b0, sizeof b0, st.frees_without_alloc),
	    st.frees_without_alloc == 1 ? "" : "s",
	    fmt_count(b1, sizeof b1, st.ghost_blocks),
	    st.ghost_blocks == 1 ? "" : "s");
}

static void
settings(struct app *a, struct info_view *v)
{
	const struct snapshot *s = a->snap;
	char k[96], val[160];
	const char *kr, *vr;
	uint32_t i;

	add(v, "%s", "");
	if (s->n_settings == 0) {
		add(v, "Allocator settings: none recorded in the file (PyTorch "
		    "2.3 and later record them)");
		return;
	}
	add(v, "Allocator settings (as the file records them):");
	for (i = 0; i < s->n_settings; i++) {
		kr = snap_str(s, s->settings[i].key);
		vr = snap_str(s, s->settings[i].value);
		sv_escape(k, sizeof k, kr, strlen(kr));
		sv_escape(val, sizeof val, vr, strlen(vr));
		add(v, "  %-32s %s", k, val[0] != '\0' ? val : "(empty)");
	}
}

static void
check(struct app *a, struct info_view *v)
{
	const struct replay_info *ri;
	char b0[FMT_BUF], b1[FMT_BUF];
	uint64_t i;

	add(v, "%s", "");
	if (check_run(a, 1) < 0) {
		if (replay_bg_pending(a))
			add(v, "Replay: being built (%d%%): the segment map "
			    "shows the final state until it comes",
			    replay_bg_percent(a));
		else
			add(v, "Replay: none (the file cannot be replayed): "
			    "the segment map shows the final state");
		return;
	}
	ri = replay_info(a->src.replay);
	add(v, "Replay: %s pre-trace block%s reconstructed, checkpoints "
	    "every %s events", fmt_count(b0, sizeof b0, ri->n_pre_blocks),
	    ri->n_pre_blocks == 1 ? "" : "s", fmt_count(b1, sizeof b1, ri->k));
	if (a->chk.n_issues == 0) {
		add(v, "Check: OK - the replay reproduces the file's final "
		    "segments (%" PRIu64 " segment%s, %" PRIu64 " block%s)",
		    a->chk.n_segments, a->chk.n_segments == 1 ? "" : "s",
		    a->chk.n_blocks, a->chk.n_blocks == 1 ? "" : "s");
		return;
	}
	add(v, "Check: INCONSISTENT - %s mismatch%s with the file (! goes "
	    "to the first); the map may be wrong", fmt_count(b0, sizeof b0,
	    a->chk.n_issues), a->chk.n_issues == 1 ? "" : "es");
	for (i = 0; i < a->chk.n_kept && i < MAX_ISSUES_SHOWN; i++) {
		const struct replay_issue *is = &a->chk.issues[i];

		add(v, "  %-9s %s %.180s", is->ev >= 0 ? fmt_event(b0,
		    sizeof b0, is->ev) : is->ev == REPLAY_EV_FILE ? "file" :
		    "end", fmt_addr(b1, sizeof b1, is->addr), is->msg);
	}
	if (a->chk.n_issues > MAX_ISSUES_SHOWN)
		add(v, "  ... and %" PRIu64 " more (snapview check lists them)",
		    a->chk.n_issues - MAX_ISSUES_SHOWN);
}

static void
build(struct app *a, struct info_view *v)
{
	v->n = 0;
	facts(a, v);
	settings(a, v);
	check(a, v);
}

static int
in_open(struct app *a, void *priv)
{
	struct info_view *v = priv;

	build(a, v);
	v->sel = v->first = 0;
	a->detail = DETAIL_EVENT;
	return 0;
}

static void
in_reset(struct app *a, void *priv)
{
	struct info_view *v = priv;

	(void)a;
	free(v->lines);
}

static void
in_sync(struct app *a, void *priv)
{
	(void)a;
	(void)priv;
}

/* Rows of line i wrapped at w cells, continuations under the value
 * column; calls put(row text) for each, returns the count. */
static int
wrap(const char *l, int w, void (*put)(void *, const char *, int),
    void *ctx)
{
	char row[300];
	int n, rows = 0, ind = strncmp(l, "  ", 2) == 0 ? 4 : 14;
	const char *p = l;

	if (w < ind + 20)
		w = ind + 20;
	do {
		n = (int)strlen(p);
		if (n > (p == l ? w : w - ind)) {
			int room = p == l ? w : w - ind;

			for (n = room; n > 0 && p[n] != ' '; n--)
				;
			if (n == 0)
				n = room;
		}
		snprintf(row, sizeof row, "%*s%.*s", p == l ? 0 : ind, "", n,
		    p);
		if (put != NULL)
			put(ctx, row, rows);
		rows++;
		p += n;
		while (*p == ' ')
			p++;
	} while (*p != '\0');
	return rows;
}

struct draw_ctx {
	struct cellbuf *cb;
	const struct rect *r;
	int row0;               /* screen row of the line's first row */
	int first, rows;        /* visual rows shown */
	unsigned color;
};

static void
put_row(void *ctx, const char *text, int k)
{
	struct draw_ctx *d = ctx;
	int y = d->row0 + k - d->first;

	if (y >= 0 && y < d->rows)
		cellbuf_puts(d->cb, d->r->x + 1, d->r->y + 1 + y, text,
		    d->r->w - 1, d->color, 0);
}

static void
in_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct info_view *v = priv;
	struct draw_ctx d = {cb, r, 0, 0, r->h - 1, UIC_DEFAULT};
	int total = 0;
	size_t i;
	char title[128];

	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	for (i = 0; i < v->n; i++)
		total += wrap(v->lines[i], r->w - 2, NULL, NULL);
	/* j/k scroll by one row (sel is the first row shown) */
	if (v->sel + (uint64_t)d.rows > (uint64_t)total)
		v->sel = total > d.rows ? (uint64_t)(total - d.rows) : 0;
	d.first = (int)v->sel;
	snprintf(title, sizeof title, "Info - the file, the allocator "
	    "settings, the replay check%s", total > d.rows ?
	    " - j/k scroll" : "");
	pane_title(a, cb, r, focused, title);
	for (i = 0; i < v->n && d.rows > 0; i++) {
		d.color = strncmp(v->lines[i], "Check: INCONSISTENT", 19) == 0 ?
		    UIC_ERROR : UIC_DEFAULT;
		d.row0 += wrap(v->lines[i], r->w - 2, put_row, &d);
	}
}

static int
in_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct info_view *v = priv;
	/* the rows are counted when drawn: scroll within a generous range */
	int f = pane_list_move(&v->sel, v->n * 4 + (uint64_t)r->h, act, r);

	return f != 0 ? f : pane_timeline_move_cursor(a, act);
}

static int
in_write(struct app *a, void *priv, FILE *f)
{
	struct info_view *v = priv;
	size_t i;

	(void)a;
	for (i = 0; i < v->n; i++)
		fprintf(f, "%s\n", v->lines[i]);
	return ferror(f) ? -1 : 0;
}

const struct view_ops view_info_ops = {
	.name = "info",
	.key = ACT_VIEW_INFO,
	.slot = LAY_SEGMENTS,
	.priv_size = sizeof(struct info_view),
	.open = in_open,
	.reset = in_reset,
	.sync = in_sync,
	.draw = in_draw,
	.action = in_action,
	.hint = "j/k scroll  ! first mismatch  w write  q close",
	.write = in_write,
};
