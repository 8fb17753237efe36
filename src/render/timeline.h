#ifndef SNAPVIEW_RENDER_TIMELINE_H
#define SNAPVIEW_RENDER_TIMELINE_H
/*
 * The Active Memory Timeline, drawn into a cell buffer (pure: no curses).
 *
 * Stacked like memory_viz (doc/snapshot-format.md §10.2): every live element
 * is a band resting on the elements below it in stacking order, so a free
 * makes the bands above slide down. Stacking order is memory_viz's:
 * elements alive before the trace at the bottom (ghosts, last first; then
 * pre-trace frees, last freed first), then trace allocations in order.
 *
 * Only the largest elements are drawn individually (the "drawn set",
 * chosen once per device by tl_model_init); at render time a drawn element
 * smaller than a quarter of a row cell joins the rest in one summarised
 * band on top. Each column shows the state at the event of its range with
 * the highest total (so peaks are never hidden by zooming out), and the
 * highest reserved value of the range as a line.
 *
 * Cost per frame: O(columns x drawn + columns x range/TL_LOD_BLOCK); the
 * per-column aggregate is one function (col_agg in timeline.c) so it can
 * read the index's LOD pyramid instead.
 */
#include <stdint.h>

#include "index/idx_timeline.h"
#include "render/cellbuf.h"
#include "snapshot/snap_model.h"

#define TL_DEFAULT_DRAWN 2000
#define TL_YAXIS_W 7   /* "61.2G" + space + axis glyph */
#define TL_MIN_H 4     /* one plot row, axis, labels, + one */
#define TL_NO_ELEM UINT64_MAX

struct tl_model {
	const struct snapshot *snap;     /* borrowed */
	const struct idx_timeline *tl;   /* borrowed */
	const struct snap_trace *trace;  /* borrowed; may be NULL */
	uint64_t *drawn;                 /* element ids, stacking order */
	uint8_t *color_alloc;            /* band colour per drawn entry */
	uint8_t *color_site;
	uint32_t n_drawn;
	uint64_t *blk_argmax;            /* per TL_LOD_BLOCK events */
	uint64_t *blk_maxres;
	uint64_t n_blk;
	int time_ok;                     /* time_us present, non-decreasing */
	uint64_t *by_addr;               /* elements by (addr, id) */
	int64_t *jumps[3];               /* sorted events per TL_JUMP_* */
	uint64_t n_jumps[3];
};

enum tl_jump { TL_JUMP_OOM, TL_JUMP_SEGALLOC, TL_JUMP_SNAPSHOT };

/* A set of elements drawn as one highlighted band at the bottom of every
 * column (the leak view): the bytes of the set alive after each event,
 * from sorted alloc and free events with running sums (O(log n) per
 * column), and which drawn bands belong to the set (they are not drawn
 * again above it). */
struct tl_hilite {
	int64_t *alloc_ev, *free_ev;   /* sorted */
	uint64_t *alloc_cum, *free_cum; /* bytes up to and including [i] */
	uint64_t n_alloc, n_free;
	uint8_t *drawn;                /* per drawn index of the model */
	uint32_t n_drawn;
};

struct tl_view {
	int64_t ev0, ev1;   /* visible events [ev0, ev1), ev1 > ev0 */
	int64_t cursor;     /* -1 .. n_events-1 */
	uint64_t sel_elem;  /* highlighted element or TL_NO_ELEM */
	uint64_t ymax;      /* y range; 0 = fit to the visible data */
	int time_axis;      /* x is time_us (only when time_ok) */
	int by_site;        /* colour by call site, not by allocation */
	int utf8;           /* UTF-8 glyphs (else pure ASCII) */
	int mono;           /* patterns instead of colours */
	const struct tl_hilite *hl; /* highlighted set (borrowed) or NULL */
	const int64_t *marks; /* sorted events marked on the x axis row
				 (borrowed) or NULL */
	uint64_t n_marks;
	int64_t mark_sel;   /* the mark drawn highlighted; -2 = none */
};

/* Prepares the drawn set (the max_drawn largest elements), the LOD blocks
 * and the jump lists for tl (device tl->device of s). Both are borrowed
 * and must outlive m. Free with tl_model_destroy. */
void tl_model_init(struct tl_model *m, const struct snapshot *s,
    const struct idx_timeline *tl, uint32_t max_drawn);
void tl_model_destroy(struct tl_model *m);

/* Builds the set of the n elements elems (ids of m's timeline) for m.
 * Free with tl_hilite_destroy (also on a zeroed struct). */
void tl_hilite_init(struct tl_hilite *h, const struct tl_model *m,
    const uint64_t *elems, uint64_t n);
void tl_hilite_destroy(struct tl_hilite *h);
/* Bytes of the set alive after event ev. */
uint64_t tl_hilite_bytes(const struct tl_hilite *h, int64_t ev);

/* Draws the timeline into the rectangle (x, y, w, h) of cb: y axis labels
 * on the left, the plot, an x axis row and a label row. */
void tl_render(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int x, int y, int w, int h);

/* Plot width for a pane of width w. */
int tl_plot_width(int w);

/* First event of plot column col (0 .. pw-1) under v. */
int64_t tl_col_event(const struct tl_model *m, const struct tl_view *v,
    int pw, int col);
/* Plot column of event ev, or -1 when outside the view. */
int tl_event_col(const struct tl_model *m, const struct tl_view *v, int pw,
    int64_t ev);

/* The element with address addr alive after event at, or TL_NO_ELEM. */
uint64_t tl_model_find_elem(const struct tl_model *m, uint64_t addr,
    int64_t at);

/* Next (dir > 0) or previous (dir < 0) event of kind j strictly after or
 * before from; -2 when there is none. */
int64_t tl_model_jump(const struct tl_model *m, enum tl_jump j,
    int64_t from, int dir);

/* Total (stacked bytes) and reserved after event ev (-1 = start). */
uint64_t tl_total_at(const struct tl_model *m, int64_t ev);
uint64_t tl_reserved_at(const struct tl_model *m, int64_t ev);

#endif
