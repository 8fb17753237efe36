#ifndef SNAPVIEW_RENDER_RANKVIEW_H
#define SNAPVIEW_RENDER_RANKVIEW_H
/*
 * The drawings of the rank overview and of the comparison (pure: no
 * curses): a one-row sparkline of a rank's Active Memory Timeline from
 * its summary, and an area chart of a whole timeline from an index, both
 * over an axis shared with other traces (align.h).
 *
 * A column's value is the highest total over the events drawn in it, so
 * a peak is never hidden; a column no event falls in is left blank (a
 * trace that ends earlier on a step axis).
 */
#include <stdint.h>

#include "analysis/summary.h"
#include "index/idx_timeline.h"
#include "render/align.h"
#include "render/cellbuf.h"

struct rv_cols {
	int w;
	uint64_t *val;     /* highest total per column */
	int64_t *arg;      /* its first event (rv_cols_timeline), else -1 */
	uint8_t *has;      /* some event is drawn in the column */
	int peak;          /* column of the trace's peak, -1 */
};

void rv_cols_init(struct rv_cols *c, int w);
void rv_cols_free(struct rv_cols *c);

/* Columns of a rank from its summary's samples. */
void rv_cols_summary(struct rv_cols *c, const struct align *a,
    const struct align_trace *t, const struct an_sum_dev *d);
/* Columns of a timeline, exact: every event is read once. */
void rv_cols_timeline(struct rv_cols *c, const struct align *a,
    const struct align_trace *t, const struct idx_timeline *tl);

/* One row at (x, y): each column an eighth-block glyph of its value
 * against scale (a column with events never drops to blank), the peak
 * column in UIC_MARK, reversed. Without UTF-8: ".,:-=+*#". */
void rv_sparkline(struct cellbuf *cb, int x, int y, const struct rv_cols *c,
    uint64_t scale, int utf8);

/* An area chart h rows high at (x, y) against scale, in colour color;
 * the cursor column (or -1) reversed. */
void rv_area(struct cellbuf *cb, int x, int y, int h, const struct rv_cols *c,
    uint64_t scale, int cursor, unsigned color, int utf8);

/* The axis row under a chart: a rule with a tick at the start of every
 * step unit (a by-step axis), the cursor and peak marks. */
void rv_axis(struct cellbuf *cb, int x, int y, int w, const struct align *a,
    int cursor, int utf8);

#endif
