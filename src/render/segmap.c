/*
 * Segment map rendering: each segment a row of cells, each cell the
 * dominant state of the bytes it covers. See segmap.h.
 */
#include "config.h"

#include "render/segmap.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/fmt.h"
#include "snapshot/snap_model.h"
#include "util/sat.h"

enum cat { CAT_FREE, CAT_ALLOC, CAT_PEND, CAT_WASTE, CAT_N };

static uint32_t
hash32(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ULL;
	x ^= x >> 29;
	return (uint32_t)x;
}

/* Accumulates, for the cell range [c0, c1), the bytes per category and
 * the allocated block holding most bytes. Blocks are clipped to their
 * segment: one that runs past it (a file can say so) is drawn up to the
 * segment's end. */
struct cellacc {
	uint64_t bytes[CAT_N];
	uint32_t best_block;
	uint64_t best_bytes;
};

static void
acc_add(struct cellacc *a, enum cat c, uint64_t n, uint32_t block)
{
	a->bytes[c] += n;
	if ((c == CAT_ALLOC || c == CAT_PEND) && n > a->best_bytes) {
		a->best_bytes = n;
		a->best_block = block;
	}
}

static uint64_t
overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static void
cell_classify(const struct replay_state *st, const struct replay_segment *sg,
    uint64_t c0, uint64_t c1, uint32_t *bi, struct cellacc *a)
{
	uint32_t b, end = sg->n_blocks;
	uint64_t covered = 0, sg_end = sv_sat_add(sg->addr, sg->size);

	memset(a, 0, sizeof *a);
	a->best_block = SEGMAP_NONE;
	if (sg->first_block > st->n_blocks)
		end = 0;
	else if (end > st->n_blocks - sg->first_block)
		end = st->n_blocks - sg->first_block;
	end += sg->first_block;
	while (*bi < end &&
	    sv_sat_add(st->blocks[*bi].addr, st->blocks[*bi].size) <= c0)
		(*bi)++;
	for (b = *bi; b < end && st->blocks[b].addr < c1; b++) {
		const struct replay_block *bl = &st->blocks[b];
		uint64_t req = bl->requested_size;
		uint64_t e = sv_sat_add(bl->addr, bl->size);
		uint64_t n;

		if (req == 0 || req > bl->size)
			req = bl->size;
		if (e > sg_end)
			e = sg_end;
		n = overlap(c0, c1, bl->addr, e);
		covered += n;
		if (bl->state == SNAP_BLOCK_ACTIVE_ALLOCATED ||
		    bl->state == SNAP_BLOCK_ACTIVE_PENDING_FREE) {
			enum cat c = bl->state == SNAP_BLOCK_ACTIVE_ALLOCATED ?
			    CAT_ALLOC : CAT_PEND;

			acc_add(a, c, overlap(c0, c1, bl->addr,
			    sv_sat_add(bl->addr, req)), b);
			acc_add(a, CAT_WASTE, overlap(c0, c1,
			    sv_sat_add(bl->addr, req), e), b);
		} else
			acc_add(a, CAT_FREE, n, b);
	}
	if (c1 - c0 > covered)
		a->bytes[CAT_FREE] += c1 - c0 - covered;
}

/* Offset of cell i of bw in a segment of size bytes, never past size
 * (long double rounding could otherwise step over 2^64 - 1). */
static uint64_t
cell_off(uint64_t size, int i, int bw)
{
	long double x = (long double)size * i / bw;

	return x >= (long double)size ? size : (uint64_t)x;
}

static void
draw_bar(const struct replay_state *st, const struct segmap_view *v,
    const struct replay_segment *sg, struct cellbuf *cb, int x, int y,
    int bw)
{
	uint32_t bi = sg->first_block, sel_cells = 0;
	uint64_t size = sg->size;
	int i, k, sel_first = -1;

	if (sv_span_wraps(sg->addr, size))
		size = UINT64_MAX - sg->addr;
	for (i = 0; i < bw; i++) {
		uint64_t c0 = sg->addr + cell_off(size, i, bw);
		uint64_t c1 = sg->addr + cell_off(size, i + 1, bw);
		struct cellacc a;
		enum cat best = CAT_FREE;
		uint32_t ch = v->utf8 ? 0x00b7 : '.';
		unsigned color = UIC_FREE, attr = 0;

		if (c1 <= c0)
			c1 = sv_sat_add(c0, 1);
		cell_classify(st, sg, c0, c1, &bi, &a);
		for (k = 1; k < CAT_N; k++)
			if (a.bytes[k] > a.bytes[best])
				best = (enum cat)k;
		if (best == CAT_ALLOC && a.best_block != SEGMAP_NONE) {
			ch = 'A' + (a.best_block - sg->first_block) % 26;
			color = UIC_BAND0 +
			    hash32(st->blocks[a.best_block].addr) % UIC_NBANDS;
		} else if (best == CAT_PEND) {
			ch = '~';
			color = UIC_PENDING;
		} else if (best == CAT_WASTE) {
			ch = v->utf8 ? 0x2591 : '+';
			color = UIC_WASTE;
		}
		/* the selection style of every list (UIC_SELECT, reversed
		 * in monochrome by its own attributes): reversing it again
		 * would turn black on white into white on black, invisible
		 * on a dark terminal */
		if (v->sel_block != SEGMAP_NONE && best != CAT_FREE &&
		    a.best_block == v->sel_block) {
			color = UIC_SELECT;
			sel_cells++;
		}
		if (v->sel_block != SEGMAP_NONE &&
		    v->sel_block < st->n_blocks &&
		    st->blocks[v->sel_block].addr >= c0 &&
		    st->blocks[v->sel_block].addr < c1)
			sel_first = i;
		cellbuf_put(cb, x + i, y, ch, color, attr);
	}
	/* A block too small to own a cell still shows where it starts. */
	if (sel_cells == 0 && sel_first >= 0) {
		struct cell *c = cellbuf_at(cb, x + sel_first, y);

		if (c != NULL) {
			c->color = UIC_SELECT;
			c->attr = 0;
			if (!v->utf8 || v->mono)
				c->ch = '*';
		}
	}
}

static void
stream_label(uint64_t stream, char *buf, size_t size)
{
	if (stream < 1000)
		snprintf(buf, size, "s%" PRIu64, stream);
	else
		snprintf(buf, size, "s~%04" PRIx64, stream & 0xffff);
}

static void
draw_row(const struct replay_state *st, const struct segmap_view *v,
    uint32_t s, struct cellbuf *cb, int x, int y, int w)
{
	const struct replay_segment *sg = &st->segments[s];
	char addr[FMT_BUF], size[FMT_BUF], strm[FMT_BUF];
	int bw, pct;
	unsigned acol = s == v->sel_seg ? UIC_SELECT : UIC_DEFAULT;

	fmt_addr(addr, sizeof addr, sg->addr);
	fmt_size_short(size, sizeof size, sg->size);
	stream_label(sg->stream, strm, sizeof strm);
	/* a state from a file can claim more allocated than reserved */
	pct = sg->size == 0 ? 0 : sg->allocated >= sg->size ? 100
	    : (int)((long double)sg->allocated * 100 / sg->size);
	cellbuf_printf(cb, x, y, w, acol, 0, "%-14s", addr);
	cellbuf_printf(cb, x + 14, y, w - 14, UIC_DEFAULT, 0,
	    " %6s %-7s%c%c", size, strm, sg->is_expandable ? 'E' : ' ',
	    sg->pool_id[0] != 0 || sg->pool_id[1] != 0 ? 'P' : ' ');
	bw = w - SEGMAP_PREFIX_W - 2 - 5;
	if (bw < 4) {
		cellbuf_printf(cb, x + SEGMAP_PREFIX_W, y, w - SEGMAP_PREFIX_W,
		    UIC_DEFAULT, 0, "%3d%%", pct);
		return;
	}
	cellbuf_put(cb, x + SEGMAP_PREFIX_W, y, '[', UIC_AXIS, 0);
	draw_bar(st, v, sg, cb, x + SEGMAP_PREFIX_W + 1, y, bw);
	cellbuf_put(cb, x + SEGMAP_PREFIX_W + 1 + bw, y, ']', UIC_AXIS, 0);
	cellbuf_printf(cb, x + SEGMAP_PREFIX_W + 2 + bw, y, 5, UIC_DEFAULT, 0,
	    " %3d%%", pct);
}

void
segmap_render(const struct replay_state *st, const struct segmap_view *v,
    struct cellbuf *cb, int x, int y, int w, int h)
{
	uint32_t s;
	int r;

	cellbuf_fill(cb, x, y, w, h, ' ', UIC_DEFAULT, 0);
	if (st->n_segments == 0) {
		cellbuf_puts(cb, x + 1, y, "(no segments at this event)", w - 1,
		    UIC_AXIS, 0);
		return;
	}
	for (r = 0, s = v->first; r < h && s < st->n_segments; r++, s++)
		draw_row(st, v, s, cb, x, y + r, w);
}
