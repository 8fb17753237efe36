/*
 * The timeline's overlay: a series of bytes after each event drawn as a
 * dashed line over the plot (timeline.h, struct tl_overlay).
 */
#include "config.h"

#include "render/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "render/tl_int.h"
#include "util/xalloc.h"

void
tl_overlay_init(struct tl_overlay *o, const uint64_t *v, uint64_t n)
{
	uint64_t runs = (n + TL_OVERLAY_RUN - 1) / TL_OVERLAY_RUN, i;

	memset(o, 0, sizeof *o);
	o->v = v;
	o->n = n;
	if (runs == 0)
		return;
	o->run_max = xcalloc(runs, sizeof *o->run_max);
	for (i = 0; i < n; i++)
		if (v[i] > o->run_max[i / TL_OVERLAY_RUN])
			o->run_max[i / TL_OVERLAY_RUN] = v[i];
}

void
tl_overlay_destroy(struct tl_overlay *o)
{
	free(o->run_max);
	memset(o, 0, sizeof *o);
}

uint64_t
tl_overlay_max(const struct tl_overlay *o, int64_t lo, int64_t hi)
{
	uint64_t m = 0, i, end;

	if (lo < 0)
		lo = 0;
	if (hi > (int64_t)o->n)
		hi = (int64_t)o->n;
	for (i = (uint64_t)lo; i < (uint64_t)hi;) {
		if (i % TL_OVERLAY_RUN == 0 &&
		    i + TL_OVERLAY_RUN <= (uint64_t)hi) {
			if (o->run_max[i / TL_OVERLAY_RUN] > m)
				m = o->run_max[i / TL_OVERLAY_RUN];
			i += TL_OVERLAY_RUN;
			continue;
		}
		end = (i / TL_OVERLAY_RUN + 1) * TL_OVERLAY_RUN;
		if (end > (uint64_t)hi)
			end = (uint64_t)hi;
		for (; i < end; i++)
			if (o->v[i] > m)
				m = o->v[i];
	}
	return m;
}

void
tl_overlay_draw(const struct tl_view *v, const struct tl_frame *fr,
    const struct tl_cols *cols, struct cellbuf *cb, int px, int ybot)
{
	uint64_t y;
	int c, r;

	for (c = 0; c < fr->pw; c++) {
		y = tl_overlay_max(v->overlay, cols->lo[c], cols->lo[c + 1]);
		if (y == 0 || y < fr->ylo || y > fr->yhi ||
		    fr->row_bytes <= 0)
			continue;
		r = (int)(((double)y - (double)fr->ylo) / fr->row_bytes);
		if (r >= fr->ph)
			r = fr->ph - 1;
		cellbuf_put(cb, px + c, ybot - r, v->utf8 ? 0x2504 : '~',
		    UIC_WHATIF, 0);
	}
}
