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
#include "render/tl_int.h"
#include "util/escape.h"
#include "util/xalloc.h"

#define LEG_MAX (TL_MAX_BANDS + 3)
#define LEG_MIN_W 18    /* narrowest entry worth drawing */
#define LEG_AUTO_W 30   /* entry width the automatic layout aims at */
#define LEG_LINE_LABEL 22 /* label cells in a one-row legend */

struct leg_entry {
	struct tl_band band;  /* glyph and colour */
	uint64_t bytes;
	char label[160];      /* in full */
	char brief[160];      /* when the full one does not fit */
};

/* Cuts escaped text at the left to w cells, at a path component when
 * one is left. */
static void
cut_left(char *buf, size_t size, const char *esc, int w, int utf8)
{
	const char *p = esc, *dots = utf8 ? "\xe2\x80\xa6" : "...";
	int n = sv_utf8_cells(esc), nd = utf8 ? 1 : 3;

	if (w <= nd || n <= w) {
		snprintf(buf, size, "%s", esc);
		return;
	}
	for (n -= w - nd; n > 0; n--)
		for (p++; ((unsigned char)*p & 0xc0) == 0x80; p++)
			;
	if (*p != '/' && strchr(p, '/') != NULL && strchr(p, ':') != NULL &&
	    strchr(p, '/') < strchr(p, ':'))
		p = strchr(p, '/');
	snprintf(buf, size, "%s%s", dots, p);
}

char *
tl_group_label(const struct tl_model *m, int st, uint32_t g, int w,
    int utf8, char *buf, size_t size)
{
	char raw[512], esc[512];
	size_t n;

	tl_group_text(m, st, g, w < 0, raw, sizeof raw);
	sv_escape(esc, sizeof esc, raw, strlen(raw));
	if (w > 0)
		cut_left(buf, size, esc, w, utf8);
	else if (w < 0)
		cut_left(buf, size, esc, -w, utf8);
	else if (size > 0) {
		/* cut to size as snprintf would (GCC, inlining this into
		 * a caller with a smaller buffer, warns about snprintf) */
		n = strlen(esc) < size ? strlen(esc) : size - 1;
		memcpy(buf, esc, n);
		buf[n] = '\0';
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

	for (k = 0; k < fr->n_top; k++) {
		uint64_t bytes = sum_kind(b, nb, TL_PICK_GROUP, fr->top[k], 0,
		    &cnt);

		tl_group_label(m, v->stack, fr->top[k], 0, v->utf8, label,
		    sizeof label);
		n = add(e, n, TL_PICK_GROUP, fr->top[k], (unsigned)k,
		    v->pick.kind == TL_PICK_GROUP && v->pick.id == fr->top[k],
		    bytes, label);
		tl_group_label(m, v->stack, fr->top[k], -(int)sizeof e->brief,
		    v->utf8, e[n - 1].brief, sizeof e[n - 1].brief);
	}
	/* every group has its band: no "other" entry */
	if (m->groups[v->stack].n_used <= fr->n_top)
		return n;
	snprintf(label, sizeof label, "other %s", tl_modes[v->stack].nouns);
	return add(e, n, TL_PICK_OTHER, 0, 0, v->pick.kind == TL_PICK_OTHER,
	    sum_kind(b, nb, TL_PICK_OTHER, 0, 1, &cnt), label);
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

	bytes = sum_kind(b, nb, TL_PICK_ELEM, 0, 1, &cnt);
	snprintf(label, sizeof label, "%" PRIu64 " %s, %s%s", cnt,
	    cnt == 1 ? md->noun : md->nouns, seg ?
	    "in stacking order, thin ones in runs" : "one band each", !seg &&
	    v->by_site ? " (colour: call site)" : "");
	n = add(e, n, TL_PICK_ELEM, 0, 0, 0, bytes, label);
	snprintf(e[n - 1].brief, sizeof e[n - 1].brief, "%" PRIu64 " %s",
	    cnt, md->nouns);
	fmt_size_short(th, sizeof th, (uint64_t)(fr->row_bytes / 4));
	snprintf(label, sizeof label, "%s under %s, or past the %u largest",
	    md->nouns, th, m->max_drawn);
	n = add(e, n, TL_PICK_OTHER, 0, 0, v->pick.kind == TL_PICK_OTHER,
	    sum_kind(b, nb, TL_PICK_OTHER, 0, 1, &cnt), label);
	snprintf(e[n - 1].brief, sizeof e[n - 1].brief, "under %s", th);
	return n;
}

static int
entries(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, struct leg_entry *e)
{
	struct tl_band *b = xcalloc(TL_MAX_COL_BANDS, sizeof *b);
	int nb = tl_bands_at(m, v, fr, v->cursor, b, TL_MAX_COL_BANDS), n = 0;
	uint64_t cnt;

	/* bottom to top: the set rests at the bottom */
	if (v->hl != NULL) {
		uint64_t set = v->stack == TL_STACK_SEGMENT ?
		    tl_hilite_bytes(v->hl, v->cursor) :
		    sum_kind(b, nb, TL_PICK_SET, 0, 1, &cnt);

		n = add(e, n, TL_PICK_SET, 0, 0, v->pick.kind == TL_PICK_SET,
		    set, v->stack == TL_STACK_SEGMENT ?
		    "leaked blocks (inside the segments)" : "leaked blocks");
		snprintf(e[n - 1].brief, sizeof e[n - 1].brief, "leaked");
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

	if (tl_stack_grouped(v->stack) && m->groups_ok[v->stack] > 0)
		n = (int)(m->groups[v->stack].n < TL_MAX_BANDS ?
		    m->groups[v->stack].n : TL_MAX_BANDS) + 1 + (v->hl != NULL);
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
	cut_left(lab, sizeof lab,
	    sv_utf8_cells(e->label) <= lw ? e->label : e->brief, lw, v->utf8);
	return n + cellbuf_puts(cb, x + n, y, lab, lw, col, 0);
}

/* One row: entries one after the other, labels of at most a third of
 * the row (LEG_LINE_LABEL cells), "+N (i)" when some do not fit. */
static void
draw_line(const struct tl_view *v, const struct leg_entry *e, int n,
    struct cellbuf *cb, int x, int y, int w)
{
	char more[32];
	int i, pos = 0, need, left, lw = w / 3 - 10, bw;

	/* room for about three entries */
	if (lw > LEG_LINE_LABEL)
		lw = LEG_LINE_LABEL;
	if (lw < 12)
		lw = 12;
	for (i = 0; i < n; i++) {
		snprintf(more, sizeof more, "+%d (i)", n - i - 1);
		left = w - pos - (i + 1 < n ? (int)strlen(more) + 2 : 0);
		bw = sv_utf8_cells(e[i].brief);
		need = 8 + (bw < lw ? bw : lw);
		if (need > left && i > 0)
			break;
		pos += draw_entry(v, &e[i], cb, x + pos, y, left, lw) + 2;
	}
	if (i < n) {
		snprintf(more, sizeof more, "+%d (i)", n - i);
		cellbuf_puts(cb, x + pos, y, more, w - pos, UIC_AXIS, 0);
	}
}

void
tl_legend_draw(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, struct cellbuf *cb, int x, int y, int w,
    int rows)
{
	struct leg_entry e[LEG_MAX], t;
	int n = entries(m, v, fr, e), per, colw, shown, i;
	char more[32];

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
