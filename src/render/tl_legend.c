/*
 * The timeline's legend: each band's glyph (in its colour, or its pattern
 * without colour) with what it is and its bytes at the cursor. In the
 * grouped modes one entry per group band and one for "other"; in the
 * allocation and segment modes, what is drawn one by one and what is
 * summarised (the bands there are single allocations, named by picking).
 * Group labels are cut at the left so file, line and function stay.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/fmt.h"
#include "render/frames.h"
#include "render/tl_int.h"
#include "util/escape.h"
#include "util/xalloc.h"

#define LEG_MAX (TL_MAX_BANDS + 3)
#define LEG_MIN_W 18    /* narrowest entry worth drawing */
#define LEG_AUTO_W 30   /* entry width the automatic layout aims at */
#define LEG_MIN_LABEL 17 /* label cells an entry needs at least (a
			     call site: its file and line) */
#define LEG_LINE_LABEL 24 /* label cells an entry of a one-row legend
			     takes before the room left is shared */

struct leg_entry {
	struct tl_band band;  /* glyph and colour */
	uint64_t bytes;
	const char *prefix;   /* kept whole before the label ("freed at ") */
	char label[160];      /* in full */
	char brief[160];      /* when the full one does not fit */
};

/* The label of an entry for w cells: its prefix, then the full label
 * when it fits, else the full one without its directories, else the
 * brief one, shortened. */
static void
entry_label(const struct leg_entry *e, int w, int utf8, char *buf,
    size_t size)
{
	size_t pl = strlen(e->prefix);
	int lw = w - (int)pl;

	snprintf(buf, size, "%s", e->prefix);
	if (pl >= size)
		return;
	if (sv_utf8_cells(e->label) <= lw || strcmp(e->label, e->brief) == 0)
		frames_shorten(buf + pl, size - pl, e->label, lw, utf8);
	else {
		frames_shorten(buf + pl, size - pl, e->label, lw, utf8);
		/* some directory left and it fits: keep that */
		if (strchr(buf + pl, '/') != strrchr(buf + pl, '/') &&
		    sv_utf8_cells(buf + pl) <= lw)
			return;
		frames_shorten(buf + pl, size - pl, e->brief, lw, utf8);
	}
}

char *
tl_group_label(const struct tl_model *m, int st, uint32_t g, int w,
    int utf8, char *buf, size_t size)
{
	struct leg_entry e;
	char raw[512];
	size_t n;

	e.prefix = tl_group_prefix(m, st, g);
	tl_group_text(m, st, g, 0, raw, sizeof raw);
	sv_escape(e.label, sizeof e.label, raw, strlen(raw));
	tl_group_text(m, st, g, 1, raw, sizeof raw);
	sv_escape(e.brief, sizeof e.brief, raw, strlen(raw));
	if (w < 0) {
		/* the short form */
		memcpy(e.label, e.brief, sizeof e.label);
		w = -w;
	}
	if (w > 0)
		entry_label(&e, w, utf8, buf, size);
	else if (size > 0) {
		/* in full, cut to size as snprintf would (GCC, inlining
		 * this into a caller with a smaller buffer, warns about
		 * snprintf) */
		snprintf(buf, size, "%s", e.prefix);
		n = strlen(buf);
		if (strlen(e.label) < size - n) {
			memcpy(buf + n, e.label, strlen(e.label) + 1);
		} else {
			memcpy(buf + n, e.label, size - n - 1);
			buf[size - 1] = '\0';
		}
	}
	return buf;
}

/* ---- entries ------------------------------------------------------------- */

static int
add(struct leg_entry *e, int n, int kind, uint64_t id, unsigned color,
    int hilite, uint64_t bytes, const char *label)
{
	if (n >= LEG_MAX)
		return n;
	memset(&e[n], 0, sizeof e[n]);
	e[n].band.kind = kind;
	e[n].band.id = id;
	e[n].band.color = (uint8_t)color;
	e[n].band.hilite = (uint8_t)hilite;
	e[n].bytes = bytes;
	e[n].prefix = "";
	snprintf(e[n].label, sizeof e[n].label, "%s", label);
	snprintf(e[n].brief, sizeof e[n].brief, "%s", label);
	return n + 1;
}

/* Bytes of the bands at the cursor of kind (and id, for groups), and
 * how many elements they hold (bands, for groups). */
static uint64_t
sum_kind(const struct tl_band *b, int n, int kind, uint64_t id, int any,
    uint64_t *count)
{
	uint64_t s = 0;
	int i;

	*count = 0;
	for (i = 0; i < n; i++)
		if (b[i].kind == kind && (any || b[i].id == id)) {
			s += b[i].hi - b[i].lo;
			*count += b[i].n > 0 ? b[i].n : 1;
		}
	return s;
}

static int
group_entries(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, const struct tl_band *b, int nb,
    struct leg_entry *e, int n)
{
	char label[160];
	uint64_t cnt, k;

	char raw[512];

	for (k = 0; k < fr->n_top; k++) {
		uint64_t bytes = sum_kind(b, nb, TL_PICK_GROUP, fr->top[k], 0,
		    &cnt);

		tl_group_text(m, v->stack, fr->top[k], 0, raw, sizeof raw);
		sv_escape(label, sizeof label, raw, strlen(raw));
		n = add(e, n, TL_PICK_GROUP, fr->top[k], (unsigned)k,
		    v->pick.kind == TL_PICK_GROUP && v->pick.id == fr->top[k],
		    bytes, label);
		e[n - 1].prefix = tl_group_prefix(m, v->stack, fr->top[k]);
		tl_group_text(m, v->stack, fr->top[k], 1, raw, sizeof raw);
		sv_escape(e[n - 1].brief, sizeof e[n - 1].brief, raw,
		    strlen(raw));
	}
	/* every group has its band: no "other" entry */
	if (m->groups[v->stack].n_used <= fr->n_top)
		return n;
	snprintf(label, sizeof label, "other %s", tl_modes[v->stack].nouns);
	return add(e, n, TL_PICK_OTHER, 0, 0, v->pick.kind == TL_PICK_OTHER,
	    sum_kind(b, nb, TL_PICK_OTHER, 0, 1, &cnt), label);
}

/* Allocation bands coloured by call site: one entry per colour at the
 * cursor, named by the site of its largest band ("+N" more sites share
 * the colour). Returns the new count, or n when there is nothing to
 * name. */
static int
site_colour_entries(const struct tl_model *m, const struct tl_view *v,
    const struct tl_band *b, int nb, struct leg_entry *e, int n)
{
	uint64_t bytes[UIC_NBANDS] = {0}, top[UIC_NBANDS] = {0};
	uint32_t frame[UIC_NBANDS], f;
	int best[UIC_NBANDS], others[UIC_NBANDS] = {0}, i, c;
	struct idx_elem el;
	char raw[512];

	if (m->snap == NULL)
		return n;
	for (c = 0; c < UIC_NBANDS; c++)
		best[c] = -1;
	for (i = 0; i < nb; i++) {
		if (b[i].kind != TL_PICK_ELEM)
			continue;
		c = b[i].color % UIC_NBANDS;
		el = idx_tl_elem(m->tl, b[i].id);
		f = frames_call_site(m->snap, el.stack);
		bytes[c] += b[i].hi - b[i].lo;
		if (best[c] < 0 || b[i].hi - b[i].lo > top[c]) {
			if (best[c] >= 0 && f != frame[c])
				others[c]++;
			best[c] = i;
			top[c] = b[i].hi - b[i].lo;
			frame[c] = f;
		} else if (f != frame[c])
			others[c]++;
	}
	for (c = 0; c < UIC_NBANDS && n < LEG_MAX - 1; c++) {
		if (best[c] < 0)
			continue;
		el = idx_tl_elem(m->tl, b[best[c]].id);
		if (frame[c] == UINT32_MAX)
			snprintf(raw, sizeof raw, "<no stack>");
		else
			frames_format(m->snap, frame[c], raw, sizeof raw);
		if (others[c] > 0)
			snprintf(raw + strlen(raw), sizeof raw - strlen(raw),
			    " +%d", others[c]);
		n = add(e, n, TL_PICK_ELEM, 0, (unsigned)c, 0, bytes[c], raw);
		/* a block from before the trace has only its free's stack */
		if (el.alloc_ev < 0 && el.flags & IDX_ELEM_PRE &&
		    frame[c] != UINT32_MAX)
			e[n - 1].prefix = "freed at ";
		frames_shorten(e[n - 1].brief, sizeof e[n - 1].brief, raw,
		    (int)(strrchr(raw, '/') != NULL ? sv_utf8_cells(strrchr(raw,
		    '/') + 1) : sv_utf8_cells(raw)), v->utf8);
	}
	return n;
}

static int
layer_entries(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, const struct tl_band *b, int nb,
    struct leg_entry *e, int n)
{
	char label[160], th[FMT_BUF];
	uint64_t cnt, bytes;
	const struct tl_mode *md = &tl_modes[v->stack];
	int seg = v->stack == TL_STACK_SEGMENT;

	uint64_t other = sum_kind(b, nb, TL_PICK_OTHER, 0, 1, &cnt);
	int n0 = n;

	bytes = sum_kind(b, nb, TL_PICK_ELEM, 0, 1, &cnt);
	/* coloured by call site: the colours' sites */
	if (!seg && v->by_site && bytes > 0)
		n = site_colour_entries(m, v, b, nb, e, n);
	/* a part with nothing at the cursor is left out ("0B under 201M"
	 * says nothing), unless both are empty */
	if (n == n0 && (bytes > 0 || other == 0)) {
		snprintf(label, sizeof label, "%" PRIu64 " %s, %s%s", cnt,
		    cnt == 1 ? md->noun : md->nouns, seg ?
		    "in stacking order, thin ones in runs" : "one band each",
		    !seg && v->by_site ? " (colour: call site)" : "");
		n = add(e, n, TL_PICK_ELEM, 0, 0, 0, bytes, label);
		snprintf(e[n - 1].brief, sizeof e[n - 1].brief, "%" PRIu64
		    " %s", cnt, md->nouns);
	}
	if (other == 0 && n > n0)
		return n;
	fmt_size_short(th, sizeof th, (uint64_t)(fr->row_bytes / 4));
	snprintf(label, sizeof label, "%s under %s, or past the %u largest",
	    md->nouns, th, m->max_drawn);
	n = add(e, n, TL_PICK_OTHER, 0, 0, v->pick.kind == TL_PICK_OTHER,
	    other, label);
	snprintf(e[n - 1].brief, sizeof e[n - 1].brief, "under %s", th);
	return n;
}

static int
entries(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, struct leg_entry *e)
{
	/* not zeroed, as tl_render()'s: tl_bands_at() writes the bands
	 * it returns */
	struct tl_band *b = xmalloc(TL_MAX_COL_BANDS * sizeof *b);
	int nb = tl_bands_at(m, v, fr, v->cursor, b, TL_MAX_COL_BANDS), n = 0;
	uint64_t cnt;

	/* bottom to top: the set rests at the bottom */
	if (v->hl != NULL) {
		uint64_t set = v->stack == TL_STACK_SEGMENT ?
		    tl_hilite_bytes(v->hl, v->cursor) :
		    sum_kind(b, nb, TL_PICK_SET, 0, 1, &cnt);

		n = add(e, n, TL_PICK_SET, 0, 0, v->pick.kind == TL_PICK_SET,
		    set, v->hl_label != NULL ? v->hl_label :
		    v->stack == TL_STACK_SEGMENT ?
		    "leaked blocks (inside the segments)" : "leaked blocks");
		snprintf(e[n - 1].brief, sizeof e[n - 1].brief, "%s",
		    v->hl_label != NULL ? v->hl_label : "leaked");
	}
	if (tl_stack_grouped(v->stack))
		n = group_entries(m, v, fr, b, nb, e, n);
	else
		n = layer_entries(m, v, fr, b, nb, e, n);
	free(b);
	return n;
}

/* ---- layout -------------------------------------------------------------- */

static int
n_entries_guess(const struct tl_model *m, const struct tl_view *v)
{
	int n = 2 + (v->hl != NULL);

	if (tl_stack_grouped(v->stack) && tl_groups_drawable(m, v->stack))
		n = (int)(m->groups[v->stack].n < TL_MAX_BANDS ?
		    m->groups[v->stack].n : TL_MAX_BANDS) + 1 + (v->hl != NULL);
	else if (v->stack == TL_STACK_ALLOC && v->by_site)
		n = UIC_NBANDS + 1 + (v->hl != NULL); /* a colour each */
	return n;
}

int
tl_legend_rows(const struct tl_model *m, const struct tl_view *v, int w,
    int h)
{
	int n = n_entries_guess(m, v), per = w / LEG_AUTO_W, rows;

	if (v->legend == TL_LEGEND_OFF || h < 6)
		return 0;
	if (per < 1)
		per = 1;
	if (v->legend == TL_LEGEND_FULL) {
		rows = n;
		return rows < h / 2 ? rows : h / 2;
	}
	rows = (n + per - 1) / per;
	if (h < 16)
		return 1;
	return rows < 3 ? rows : 3;
}

/* Draws entry e at (x, y) in at most w cells: glyph, bytes, label (in
 * full when it fits, else the brief one cut at the left, to at most lw
 * cells when lw > 0). Returns the cells used. */
static int
draw_entry(const struct tl_view *v, const struct leg_entry *e,
    struct cellbuf *cb, int x, int y, int w, int lw)
{
	char sz[FMT_BUF], lab[200];
	unsigned col = e->band.hilite ? UIC_HILITE : UIC_DEFAULT;
	int n;

	if (w < 4)
		return 0;
	cellbuf_put(cb, x, y, tl_band_glyph(v, &e->band),
	    tl_band_color(&e->band), 0);
	fmt_size_short(sz, sizeof sz, e->bytes);
	n = 2 + cellbuf_puts(cb, x + 2, y, sz, w - 2, col, 0) + 1;
	if (lw <= 0 || lw > w - n)
		lw = w - n;
	if (lw < 1)
		return n - 1;
	entry_label(e, lw, v->utf8, lab, sizeof lab);
	return n + cellbuf_puts(cb, x + n, y, lab, lw, col, 0);
}

/* Cells entry e's label wants: its prefix and its full label when that
 * is short ("leaked blocks"), else its brief one (a call site without
 * its directories). */
static int
label_want(const struct leg_entry *e)
{
	int f = sv_utf8_cells(e->label), b = sv_utf8_cells(e->brief);

	return (int)strlen(e->prefix) + (f <= LEG_LINE_LABEL || f < b ? f : b);
}

/* Cells entry e's label needs at least to say what it is: the file and
 * line of a call site ("optimizer.py:73"), LEG_MIN_LABEL of anything
 * else; with its prefix. */
static int
label_need(const struct leg_entry *e)
{
	const char *b = e->brief, *sp = strchr(b, ' '), *colon = strchr(b,
	    ':');
	int n = sv_utf8_cells(b);

	if (sp != NULL && colon != NULL && colon < sp && colon[1] >= '0' &&
	    colon[1] <= '9' && strchr(b, '/') == NULL)
		n -= sv_utf8_cells(sp);
	else if (n > LEG_MIN_LABEL)
		n = LEG_MIN_LABEL;
	return (int)strlen(e->prefix) + n;
}

/* One row: as many entries as fit with their labels up to
 * LEG_LINE_LABEL cells (never below what they need, label_need), "+N
 * (i)" for the rest; the room left goes to the labels, first to the
 * first entries, so a label is shortened only when the row has no room
 * for it, and never below its file and line. */
static void
draw_line(const struct tl_view *v, const struct leg_entry *e, int n,
    struct cellbuf *cb, int x, int y, int w)
{
	char more[32], sz[FMT_BUF];
	int i, k, used, left, pos = 0, lw[LEG_MAX], fixed[LEG_MAX], give;

	/* how many fit: glyph, space, bytes, space, label, two spaces */
	for (k = 0, used = 0; k < n; k++) {
		fmt_size_short(sz, sizeof sz, e[k].bytes);
		fixed[k] = 3 + (int)strlen(sz);
		/* the whole label up to LEG_LINE_LABEL, never below need */
		lw[k] = label_want(&e[k]) - (int)strlen(e[k].prefix);
		if (lw[k] > LEG_LINE_LABEL)
			lw[k] = LEG_LINE_LABEL;
		lw[k] += (int)strlen(e[k].prefix);
		if (lw[k] < label_need(&e[k]))
			lw[k] = label_need(&e[k]);
		snprintf(more, sizeof more, "+%d (i)", n - k - 1);
		if (k > 0 && used + fixed[k] + lw[k] + (k + 1 < n ?
		    (int)strlen(more) + 2 : 0) > w)
			break;
		used += fixed[k] + lw[k] + 2;
	}
	snprintf(more, sizeof more, "+%d (i)", n - k);
	left = w - used + 2 - (k < n ? (int)strlen(more) + 2 : 0);
	/* the room left, to the labels in order */
	for (i = 0; i < k && left > 0; i++) {
		give = label_want(&e[i]) - lw[i];
		if (give > left)
			give = left;
		if (give > 0) {
			lw[i] += give;
			left -= give;
		}
	}
	for (i = 0; i < k; i++)
		pos += draw_entry(v, &e[i], cb, x + pos, y, w - pos, lw[i]) + 2;
	if (k < n)
		cellbuf_puts(cb, x + pos, y, more, w - pos, UIC_AXIS, 0);
}

void
tl_legend_draw(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, struct cellbuf *cb, int x, int y, int w,
    int rows)
{
	struct leg_entry e[LEG_MAX], t;
	int n = entries(m, v, fr, e), per, colw, shown, i;
	char more[32], sz[FMT_BUF];

	if (n == 0 || rows <= 0)
		return;
	if (rows == 1) {
		/* the picked band's entry first, so it is always seen */
		for (i = 1; i < n; i++)
			if (e[i].band.hilite) {
				t = e[i];
				memmove(&e[1], &e[0], (size_t)i * sizeof e[0]);
				e[0] = t;
				break;
			}
		draw_line(v, e, n, cb, x, y, w);
		return;
	}
	per = (n + rows - 1) / rows;
	colw = w / per;
	if (colw < LEG_MIN_W) {
		per = w / LEG_MIN_W > 0 ? w / LEG_MIN_W : 1;
		colw = w / per;
	}
	/* fewer columns rather than labels cut below what they need */
	for (; per > 1; per--, colw = w / per) {
		shown = rows * per < n ? rows * per - 1 : n;
		for (i = 0; i < shown; i++) {
			fmt_size_short(sz, sizeof sz, e[i].bytes);
			if (4 + (int)strlen(sz) + label_need(&e[i]) > colw)
				break;
		}
		if (i == shown)
			break;
	}
	shown = rows * per < n ? rows * per - 1 : n;
	for (i = 0; i < shown; i++)
		draw_entry(v, &e[i], cb, x + (i % per) * colw, y + i / per,
		    colw - 1, 0);
	if (shown < n) {
		snprintf(more, sizeof more, "+%d more (i)", n - shown);
		cellbuf_puts(cb, x + (shown % per) * colw, y + shown / per,
		    more, colw - 1, UIC_AXIS, 0);
	}
}
