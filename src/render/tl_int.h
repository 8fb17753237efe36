#ifndef SNAPVIEW_RENDER_TL_INT_H
#define SNAPVIEW_RENDER_TL_INT_H
/*
 * Internals shared by the timeline's model (timeline.c, tl_modes.c) and
 * its drawing (tl_draw.c, tl_legend.c). Not for other modules.
 */
#include "render/timeline.h"

#define TL_LOD_BLOCK 256
#define TL_LOD_FAN 64   /* runs of level 0 in a run of level 1 */
#define TL_LOD_SUB 16   /* events of a run inside one of level 0 */
#define TL_LOD_SUBS (TL_LOD_BLOCK / TL_LOD_SUB)
/* Time axis only for |time_us| below this: spans cannot overflow. */
#define TL_TIME_LIMIT ((int64_t)1 << 62)

enum { TL_LAYER_ALLOC, TL_LAYER_SEG };

/* Builds the drawn set of a layer (TL_LAYER_*): its max_drawn largest
 * elements in stacking order, with their colours. */
void tl_build_layer(struct tl_model *m, int layer);

/* Is an element with these events alive after event at? */
int tl_live_at(int64_t alloc_ev, int64_t free_ev, int64_t at);

/* Total that mode st stacks after event ev: allocated or reserved. */
uint64_t tl_stack_total(const struct tl_model *m, int st, int64_t ev);

/* Aggregate of events [lo, hi) for mode st: the first event with the
 * highest stacked total (*top gets that total) and the highest reserved.
 * Reads the runs of the model's levels and, at each end of the range,
 * the events of a part of a run only when the maximum may lie there. */
void tl_col_agg(const struct tl_model *m, int st, int64_t lo, int64_t hi,
    int64_t *ev, uint64_t *top, uint64_t *maxres);

/* The columns of the view at plot width pw, from the model's column
 * cache when its key matches, else computed into it. */
const struct tl_cols *tl_columns(const struct tl_model *m,
    const struct tl_view *v, int pw);

/* tl_bands_at for an event whose stacked total is known. */
int tl_bands_total(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, int64_t ev, uint64_t total,
    struct tl_band *out, int max);

int tl_use_time(const struct tl_model *m, const struct tl_view *v);
int64_t tl_time_of(const struct tl_model *m, int64_t ev);

/* The label of group g of mode st, unescaped, into buf (brief: the short
 * form of a call site); "group N" for a group the mode does not know.
 * Returns buf. */
char *tl_group_text(const struct tl_model *m, int st, uint32_t g, int brief,
    char *buf, size_t size);

/* tl_model_group_of for element k, e (the mode must be prepared). */
uint32_t tl_group_of_elem(struct tl_model *m, int st, uint64_t k,
    const struct idx_elem *e);

/* The pool mode's reserved bytes of group g after event ev (-1: before
 * the first), 0 for a group it does not know. */
uint64_t tl_pool_reserved(const struct tl_model *m, uint32_t g, int64_t ev);

/* Bytes of the highlighted set in group g of mode st after ev. */
uint64_t tl_hilite_group_bytes(const struct tl_hilite *h, int st,
    uint32_t g, int64_t ev);

/* Ranks the groups of v's mode at the frame's visible peak into fr->top
 * (bottom to top), unless fr already holds that ranking. */
void tl_rank(const struct tl_model *m, const struct tl_view *v,
    struct tl_frame *fr);

/* Band glyph and colour under v. */
uint32_t tl_band_glyph(const struct tl_view *v, const struct tl_band *b);
unsigned tl_band_color(const struct tl_band *b);

/* The phase spans (tl_phases.c): the row they want in a pane of height
 * h (0 or 1), and drawing them in row y of cb. */
int tl_phases_rows(const struct tl_view *v, int h);
void tl_phases_draw(const struct tl_view *v, const struct tl_cols *cols,
    struct cellbuf *cb, int px, int y, int pw);

/* Legend: rows it wants in a pane of w x h, and drawing it in the rows
 * (x, y, w, rows) of cb. */
int tl_legend_rows(const struct tl_model *m, const struct tl_view *v,
    int w, int h);
void tl_legend_draw(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, struct cellbuf *cb, int x, int y, int w,
    int rows);

/* tl_overlay.c: the overlay's line over the columns just drawn. */
void tl_overlay_draw(const struct tl_view *v, const struct tl_frame *fr,
    const struct tl_cols *cols, struct cellbuf *cb, int px, int ybot);

#endif
