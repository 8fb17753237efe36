/*
 * The bands of a column in each stacking mode, bottom to top, the glyph
 * and colour each is drawn with, and the mode the viewer starts in. See
 * timeline.h.
 */
#include "config.h"

#include "render/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "render/tl_int.h"
#include "util/xalloc.h"

/* Patterns without colour: every band of a column differs from its
 * neighbours in colour mode by colour, in monochrome by pattern (and so
 * do the bands an 8-colour terminal has no colour of their own for). The
 * shades ░ and ▓ and the checker ▚ are kept for the summary band, the
 * picked band and the highlighted set. */
static const uint32_t mono_utf8[UIC_NBANDS] = {0x2588, 0x2592, 0x259e,
    0x258c, 0x2590, 0x2599, 0x259c, 0x2596};
static const char mono_ascii[UIC_NBANDS + 1] = "#%=+ox&$";

/* What a band is drawn with: the legend draws its key with the same. */
uint32_t
tl_band_glyph(const struct tl_view *v, const struct tl_band *b)
{
	if (b->kind == TL_PICK_SET && !b->hilite)
		return v->utf8 ? (v->mono ? 0x259a : 0x2588) : '!';
	if (b->hilite)
		return v->utf8 ? (v->mono ? 0x2593 : 0x2588) : '@';
	if (b->kind == TL_PICK_OTHER)
		return v->utf8 ? 0x2591 : ':';
	if (b->envelope)
		return v->utf8 ? 0x2591 : '.';
	/* with colours, the bands the terminal has no colour of their own
	 * for keep their pattern */
	if (!v->mono && (v->colors <= 0 || b->color % UIC_NBANDS <
	    (unsigned)v->colors))
		return v->utf8 ? 0x2588 : '#';
	return v->utf8 ? mono_utf8[b->color % UIC_NBANDS] :
	    (uint32_t)mono_ascii[b->color % UIC_NBANDS];
}

unsigned
tl_band_color(const struct tl_band *b)
{
	if (b->hilite)
		return UIC_HILITE;
	if (b->kind == TL_PICK_SET)
		return UIC_LEAK;
	if (b->kind == TL_PICK_OTHER)
		return UIC_SUMMARY;
	return UIC_BAND0 + b->color % UIC_NBANDS;
}

void
tl_rank(const struct tl_model *m, const struct tl_view *v,
    struct tl_frame *fr)
{
	const struct tl_groups *g;

	if (!tl_stack_grouped(v->stack) || !tl_groups_drawable(m, v->stack)) {
		fr->n_top = 0;
		fr->rank_stack = -1;
		return;
	}
	if (fr->rank_stack == v->stack && fr->rank_ev == fr->peak_ev)
		return;
	g = &m->groups[v->stack];
	fr->n_top = tl_groups_top(g, fr->peak_ev, TL_MAX_BANDS, fr->top);
	fr->rank_stack = v->stack;
	fr->rank_ev = fr->peak_ev;
}

static int
picked(const struct tl_view *v, int kind, uint64_t id)
{
	return v->pick.kind == kind && (kind == TL_PICK_OTHER ||
	    kind == TL_PICK_SET || v->pick.id == id);
}

static int
push_band(struct tl_band *out, int n, int max, uint64_t lo, uint64_t hi,
    int kind, uint64_t id, unsigned color, int hilite)
{
	if (n >= max)
		return n;
	out[n].lo = lo;
	out[n].hi = hi;
	out[n].kind = kind;
	out[n].id = id;
	out[n].color = (uint8_t)color;
	out[n].hilite = (uint8_t)hilite;
	out[n].envelope = 0;
	out[n].n = 0;
	out[n].j0 = out[n].j1 = 0;
	return n + 1;
}

/* Elements of a layer drawn one by one (at least a quarter of a row);
 * in the segment mode the thinner ones in runs of about a row. */
static int
layer_bands(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, int64_t ev, uint64_t *off,
    struct tl_band *out, int n, int max)
{
	int seg = v->stack == TL_STACK_SEGMENT, run = -1;
	const struct tl_layer *L = &m->layer[seg ? TL_LAYER_SEG :
	    TL_LAYER_ALLOC];
	const struct tl_hilite *hl = v->hl;
	uint32_t j;

	for (j = 0; j < L->n && n < max - 1; j++) {
		const struct tl_drawn *d = &L->d[j];
		int hi = v->pick.kind != TL_PICK_NONE ?
		    picked(v, TL_PICK_ELEM, d->elem) :
		    !seg && d->elem == v->sel_elem;

		if (!tl_live_at(d->alloc_ev, d->free_ev, ev) ||
		    (!seg && hl != NULL && j < hl->n_drawn && hl->drawn[j]))
			continue;
		if ((double)d->size < fr->row_bytes / 4) {
			if (!seg)
				continue; /* into the summary band */
			if (run < 0) {
				unsigned col = d->color_alloc;

				/* runs change with what is alive: keep
				 * neighbours apart here */
				if (n > 0 && out[n - 1].kind == TL_PICK_ELEM &&
				    out[n - 1].color == col)
					col = (col + 1) % UIC_NBANDS;
				run = n;
				n = push_band(out, n, max, *off, *off,
				    TL_PICK_ELEM, d->elem, col, 0);
				out[run].n = 0;
				out[run].j0 = j;
			}
			out[run].hi += d->size;
			out[run].hilite |= (uint8_t)hi;
			out[run].n++;
			out[run].j1 = j;
			*off += d->size;
			if ((double)(out[run].hi - out[run].lo) >=
			    fr->row_bytes)
				run = -1;
			continue;
		}
		run = -1;
		n = push_band(out, n, max, *off, *off + d->size, TL_PICK_ELEM,
		    d->elem, !seg && v->by_site ? d->color_site :
		    d->color_alloc, hi);
		out[n - 1].n = 1;
		out[n - 1].j0 = out[n - 1].j1 = j;
		*off += d->size;
	}
	return n;
}

uint64_t
tl_envelope_bytes(const struct tl_model *m, int st, uint32_t g, int64_t ev)
{
	uint64_t all, res;

	if (st != TL_STACK_POOL || !tl_groups_drawable(m, st))
		return 0;
	all = tl_groups_bytes(&m->groups[st], g, ev);
	res = tl_pool_reserved(m, g, ev);
	return res > all ? res - all : 0;
}

/* The frame's top groups, each less its part of the highlighted set;
 * in the pool mode each with the free part of its reserved memory
 * above it (*env gets their bytes). */
static int
group_bands(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, int64_t ev, uint64_t *off,
    struct tl_band *out, int n, int max, uint64_t *env)
{
	const struct tl_groups *g = &m->groups[v->stack];
	uint32_t k;
	uint64_t fb;

	if (fr->rank_stack != v->stack)
		return n;
	for (k = 0; k < fr->n_top && n < max - 1; k++) {
		uint64_t b = tl_groups_bytes(g, fr->top[k], ev);

		if (v->hl != NULL) {
			uint64_t s = tl_hilite_group_bytes(v->hl, v->stack,
			    fr->top[k], ev);

			b = b > s ? b - s : 0;
		}
		if (b > 0) {
			n = push_band(out, n, max, *off, *off + b,
			    TL_PICK_GROUP, fr->top[k], k,
			    picked(v, TL_PICK_GROUP, fr->top[k]));
			*off += b;
		}
		if (n >= max - 1 || (fb = tl_envelope_bytes(m, v->stack,
		    fr->top[k], ev)) == 0)
			continue;
		n = push_band(out, n, max, *off, *off + fb,
		    TL_PICK_GROUP, fr->top[k], k,
		    picked(v, TL_PICK_GROUP, fr->top[k]));
		out[n - 1].envelope = 1;
		*off += fb;
		*env += fb;
	}
	return n;
}

int
tl_bands_at(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, int64_t ev, struct tl_band *out, int max)
{
	return tl_bands_total(m, v, fr, ev, tl_stack_total(m, v->stack, ev),
	    out, max);
}

int
tl_bands_total(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, int64_t ev, uint64_t total,
    struct tl_band *out, int max)
{
	uint64_t off = 0, set, env = 0;
	int n = 0;

	if (max < 3)
		return 0;
	/* the set rests at the bottom; over reserved memory (segments) it
	 * is drawn on top of the bands instead, not stacked */
	if (v->hl != NULL && v->stack != TL_STACK_SEGMENT &&
	    (set = tl_hilite_bytes(v->hl, ev)) > 0) {
		off = set < total ? set : total;
		n = push_band(out, n, max, 0, off, TL_PICK_SET, 0, 0,
		    picked(v, TL_PICK_SET, 0));
	}
	if (tl_stack_grouped(v->stack))
		n = group_bands(m, v, fr, ev, &off, out, n, max, &env);
	else
		n = layer_bands(m, v, fr, ev, &off, out, n, max);
	/* the envelopes stand above the total: the rest of it on top */
	if (total > off - env)
		n = push_band(out, n, max, off, off + (total - (off - env)),
		    TL_PICK_OTHER, 0, 0, picked(v, TL_PICK_OTHER, 0));
	return n;
}

/* ---- starting mode ------------------------------------------------------ */

int
tl_model_auto_stack(const struct tl_model *m, int w, int h, int *share)
{
	struct tl_view v;
	struct tl_frame fr;
	struct tl_band *b;
	uint64_t ymax, drawn = 0, peak = m->tl->peak, k;
	int n, i, ph = h - 4; /* axis, labels, annotations, legend */

	*share = 100;
	if (peak == 0 || ph < 1 || w <= TL_YAXIS_W)
		return TL_STACK_ALLOC;
	memset(&v, 0, sizeof v);
	memset(&fr, 0, sizeof fr);
	v.stack = TL_STACK_ALLOC;
	v.sel_elem = TL_NO_ELEM;
	v.ev0 = 0;
	v.ev1 = m->tl->n_events > 0 ? (int64_t)m->tl->n_events : 1;
	/* the fitted y range of the whole trace */
	ymax = m->tl->base_reserved > peak ? m->tl->base_reserved : peak;
	for (k = 0; k < m->lod[1].n; k++)
		if (m->lod[1].max[TL_SER_RESERVED][k] > ymax)
			ymax = m->lod[1].max[TL_SER_RESERVED][k];
	fr.row_bytes = (double)ymax / ph;
	fr.rank_stack = -1;
	b = xcalloc(TL_MAX_COL_BANDS, sizeof *b);
	n = tl_bands_at(m, &v, &fr, m->tl->peak_ev, b, TL_MAX_COL_BANDS);
	for (i = 0; i < n; i++)
		if (b[i].kind == TL_PICK_ELEM)
			drawn += b[i].hi - b[i].lo;
	free(b);
	*share = (int)(drawn * 100 / peak);
	return drawn * 2 < peak ? TL_STACK_SITE : TL_STACK_ALLOC;
}
