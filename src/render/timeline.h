#ifndef SNAPVIEW_RENDER_TIMELINE_H
#define SNAPVIEW_RENDER_TIMELINE_H
/*
 * The Active Memory Timeline, drawn into a cell buffer (pure: no curses).
 *
 * Stacking modes (enum tl_stack, one row each of TL_STACK_INFO in
 * tl_modes.h, which names them):
 *   allocation  memory_viz's (doc/snapshot-format.md §10.2): every live
 *               element is a band resting on the elements below it in
 *               stacking order, so a free makes the bands above slide
 *               down. Order: elements alive before the trace at the
 *               bottom (ghosts, last first; then pre-trace frees, last
 *               freed first), then trace allocations in order. Only the
 *               largest elements are drawn individually (the "drawn set",
 *               chosen once per device); at render time a drawn element
 *               smaller than a quarter of a row joins the rest in one
 *               summarised band on top.
 *   call site, category, stream/pool
 *               one band per group: the K groups with the most bytes at
 *               the visible peak, largest at the bottom, and one "other"
 *               band on top for the rest (tl_groups.h: per-group byte
 *               curves built once per device, at first use or on
 *               another thread: struct tl_prep). Sites are
 *               site.h's (one frame); categories are a table of
 *               category.h's the caller builds and lends
 *               (tl_model_set_categories: the user's rules included),
 *               so the bands and the views that name categories agree.
 *   pool        one band per (pool, stream) as in stream/pool, each the
 *               envelope of its reserved memory: its blocks, then the
 *               rest of its segments (free memory only that pool and
 *               stream can use) in a lighter glyph, as memory_viz's
 *               "Allocated Memory (incl. Private Pools)" draws private
 *               pools (doc/snapshot-format.md §10.5). A group's reserved
 *               bytes follow its segment events (the pool the event
 *               names, else its final segment's, else the default one),
 *               from what its final segments hold.
 *   segment     memory_viz's Active Cached Segment Timeline (same, §10.3):
 *               reserved memory, one band per segment (or mapped range of
 *               an expandable segment, tl_segs.h), stacked like
 *               allocations; segments thinner than a quarter of a row
 *               are stacked in runs of neighbours about a row thick, so
 *               reserved memory stays banded in stacking order.
 *
 * Each column shows the state at the event of its range with the highest
 * total (so peaks are never hidden by zooming out), and the highest
 * reserved value of the range as a line. Below the plot: the x axis
 * (cursor, marks, the picked band's lifetime, annotation ticks), the
 * annotation names (ProfilerStep#N, external_annotations), the phase
 * spans (tl_phases.c), the axis labels and the legend.
 *
 * Cost per frame: O(columns x drawn) in the allocation and segment
 * modes, O(columns x K x log n) in the grouped ones. When the visible
 * range changes, the column aggregates: per column O(TL_LOD_FAN + range
 * / (TL_LOD_BLOCK x TL_LOD_FAN)) run maxima, and the events of a part
 * of a run at either end only when the column's maximum may lie there
 * (one block decoded); other frames reuse them (struct tl_cols).
 */
#include <stdint.h>

#include "analysis/category.h"
#include "analysis/phases.h"
#include "analysis/site.h"
#include "index/idx_timeline.h"
#include "render/cellbuf.h"
#include "render/tl_groups.h"
#include "render/tl_modes.h"
#include "render/tl_segs.h"
#include "snapshot/snap_model.h"

#define TL_DEFAULT_DRAWN 2000
#define TL_YAXIS_W 7   /* "61.2G" + space + axis glyph */
#define TL_MIN_H 4     /* one plot row, axis, labels, + one */
#define TL_NO_ELEM UINT64_MAX
#define TL_MAX_BANDS 8 /* group bands (+ "other") in the grouped modes */
#define TL_MAX_COL_BANDS 4096
#define TL_PRE_SPLIT 4     /* blocks from before the trace with no stack
			      that get call-site bands of their own */
#define TL_PRE_SIZES 4     /* and sizes the others share, with a band
			      each */

/* An element drawn as its own band: a copy of what drawing needs, so a
 * frame reads no element columns. */
struct tl_drawn {
	uint64_t elem;
	uint64_t size;
	int64_t alloc_ev, free_ev;
	uint8_t color_alloc, color_site;
};

struct tl_layer {
	struct tl_drawn *d;  /* stacking order */
	uint32_t n;
	int ok;              /* built */
};

/* A named mark on the x axis: an external annotation placed at the first
 * event at or after its time. */
struct tl_annot {
	int64_t ev;
	int64_t time_us;
	uint32_t name;       /* string id (untrusted text: escape it) */
	uint8_t stage;       /* enum snap_stage */
};

struct tl_stream_key {
	uint64_t stream;
	int64_t pool[2];
};

/* A final segment where an element's pool is looked for, one after the
 * other by address (no pointer to follow in the search). */
struct tl_seg_span {
	uint64_t addr, size;
	int64_t pool[2];
};

/* The pools found by address in a pass (tl_modes.c's). */
struct tl_seg_memo;

/* The pool mode's envelope of one (pool, stream) group: its reserved
 * bytes before the trace and after each of its segment events. */
struct tl_pool_env {
	uint64_t base;
	int64_t *ev;         /* its segment events, in order */
	uint64_t *res;       /* reserved after each */
	uint64_t n, cap;
};

/* The highest total and the highest reserved bytes of each run of
 * events of a level (the first event reaching each), so that a column
 * reads its runs and not its events. */
enum { TL_SER_TOTAL, TL_SER_RESERVED };

struct tl_lod_level {
	uint64_t *arg[2];   /* TL_SER_*: first event of the maximum */
	uint64_t *max[2];
	uint64_t n;         /* runs */
};

/* Runs of 16 events inside those of level 0, so that a column's end
 * reads 16 events, not 256, where the maximum may lie: their maximum as
 * what it is below their run's (a run where that exceeds 32 bits has
 * none: ok 0) and its first event. 10 bytes per 16 events. */
struct tl_lod_sub {
	uint32_t *below[2]; /* UINT32_MAX: the distance is in big[] */
	uint8_t *arg[2];
	uint64_t n;
	/* distances of UINT32_MAX and more (a run whose bytes move by 4 GiB
	 * and more within it: tensors of GiBs), by sub-run, ascending */
	int64_t *big_at[2];
	uint64_t *big[2];
	uint64_t n_big[2];
	size_t cap_big[2];
};

/* What the columns of the last frame showed, reused while the visible
 * range, the plot width and the axis stay the same: a cursor move, a
 * pick, a y zoom or another mode draws from them. One for the modes
 * that stack the total, one for the segment mode (reserved bytes). */
struct tl_cols {
	int valid;
	int64_t ev0, ev1;   /* the key: view range, */
	int pw;             /* plot columns, */
	int seg;            /* stacking reserved bytes, */
	int time;           /* the time axis in use */
	int cap;            /* columns allocated */
	int64_t *lo;        /* pw + 1: first event of each column, then ev1 */
	int64_t *ev;        /* the event each column shows */
	uint64_t *top;      /* its stacked total */
	uint64_t *res;      /* the column's highest reserved */
	uint64_t yfit;
	int64_t peak_ev;
	uint64_t n_built;   /* times the columns were computed */
};

/* Elements by address, for tl_model_find_elem: the distinct addresses in
 * order, each with its run of elements in creation order and, along the
 * run, the latest free event so far (UINT32_MAX: one is never freed), so
 * that the first element alive after an event is found by binary
 * searches in memory; and the elements alive before the trace (frees
 * without alloc, ghosts) by (address, element). 8 bytes per element, 12
 * per address, 16 per element alive before the trace. */
struct tl_addr_elem {
	uint64_t addr, elem;
};

struct tl_addrs {
	uint64_t *addr;
	uint32_t *off;       /* n_addr + 1: the run of addr[i] */
	uint32_t *elem;      /* elements by (address, element) */
	uint32_t *free_max;
	uint64_t n_addr;
	struct tl_addr_elem *pre;
	uint64_t n_pre;
	int ok;              /* else (2^32 elements or events) a scan */
};

struct tl_model {
	const struct snapshot *snap;     /* borrowed */
	const struct idx_timeline *tl;   /* borrowed */
	const struct snap_trace *trace;  /* borrowed; may be NULL */
	uint32_t max_drawn;
	struct tl_layer layer[2];        /* allocations, segments */
	/* runs of TL_LOD_BLOCK events, and of TL_LOD_FAN of those */
	struct tl_lod_level lod[2];
	struct tl_lod_sub sub;
	/* [2]: the total, reserved bytes; changed by tl_render (a model
	 * is drawn from one thread) */
	struct tl_cols *cols;
	int time_ok;                     /* time_us present, non-decreasing */
	int64_t *run_time;               /* first time of each run of level 0
					    (with time_ok) */
	struct tl_addrs addrs;
	int64_t *jumps[3];               /* sorted events per TL_JUMP_* */
	uint64_t n_jumps[3];
	/* the trace's segment events (alloc, free, map, unmap), in order,
	 * found by the same pass: the pool and segment modes read these
	 * instead of every event's action again (a struct tl_prep's model
	 * borrows them) */
	int64_t *seg_evs;
	uint64_t n_seg_evs;
	struct tl_annot *annots;         /* sorted by event */
	uint64_t n_annots;
	/* built at first use (tl_model_prepare, tl_model_adopt) */
	struct tl_segs segs;
	struct tl_groups groups[TL_STACK_COUNT];
	int8_t groups_ok[TL_STACK_COUNT]; /* 0 not yet, 1 ready, -1 n/a */
	/* groups[st] holds sampled curves while groups_ok[st] is 0
	 * (tl_sample.h), and their samples */
	int8_t groups_sampled[TL_STACK_COUNT];
	struct tl_samples *samples[TL_STACK_COUNT];
	struct tl_live *live;            /* the replay's states they came
					    from, for every mode */
	struct an_sites sites;
	int sites_ok;
	/* the call-site mode's largest blocks alive since before the trace
	 * with no stack, bands of their own (tl_modes.c) */
	uint64_t pre_split[TL_PRE_SPLIT];
	uint32_t n_pre_split;
	uint64_t pre_size[TL_PRE_SIZES];   /* and the sizes the others share */
	uint64_t pre_size_n[TL_PRE_SIZES]; /* blocks of each */
	uint32_t n_pre_size;
	struct tl_stream_key *skeys;     /* stream/pool group keys */
	uint32_t n_skeys;
	struct tl_seg_span *seg_by_addr; /* final segments of the device */
	uint32_t n_seg_by_addr;
	struct tl_seg_memo *seg_memo;    /* the last pools found by address
					    (tl_modes.c), or NULL */
	struct tl_stream_key *pkeys;     /* pool mode: (pool, stream) keys */
	uint32_t n_pkeys;
	struct tl_pool_env *penv;        /* and their envelopes */
	/* per element (analysis/), borrowed: tl_model_set_categories */
	const struct an_categories *cats;
	/* a struct tl_prep's only: cats, being filled by the category
	 * mode's pass over the elements (tl_prep_fill_categories) */
	struct an_categories *cats_fill;
	/* owned: the category mode's sampler while it is built
	 * (tl_model_set_cat_probe) */
	struct an_cat_probe *cat_probe;
};

enum tl_jump { TL_JUMP_OOM, TL_JUMP_SEGALLOC, TL_JUMP_SNAPSHOT };

/* A set of elements drawn as one highlighted band at the bottom of every
 * column (the leak view): the bytes of the set alive after each event,
 * from sorted alloc and free events with running sums (O(log n) per
 * column), which drawn bands belong to the set (they are not drawn again
 * above it), and in the grouped modes the set's bytes per group (taken
 * out of the group's band). */
struct tl_sums {
	int64_t *alloc_ev, *free_ev;    /* sorted */
	uint64_t *alloc_cum, *free_cum; /* bytes up to and including [i] */
	uint64_t n_alloc, n_free;
};

struct tl_hl_part {
	uint32_t group;
	struct tl_sums sums;
};

struct tl_hilite {
	struct tl_sums all;
	uint8_t *drawn;                 /* per drawn allocation band */
	uint32_t n_drawn;
	uint64_t *elems;                /* the set, sorted */
	struct idx_elem *vals;          /* its elements */
	uint64_t n_elems;
	struct tl_hl_part *parts[TL_STACK_COUNT];
	uint32_t n_parts[TL_STACK_COUNT];
	int8_t parts_ok[TL_STACK_COUNT];
};

enum tl_pick_kind {
	TL_PICK_NONE,
	TL_PICK_ELEM,   /* an element of the mode's layer */
	TL_PICK_GROUP,  /* a group of the grouped mode */
	TL_PICK_OTHER,  /* the summary / "other" band */
	TL_PICK_SET     /* the highlighted set */
};

struct tl_pick {
	int kind;           /* enum tl_pick_kind */
	uint64_t id;        /* element or group id */
};

enum tl_legend { TL_LEGEND_AUTO, TL_LEGEND_FULL, TL_LEGEND_OFF };

struct tl_view {
	int64_t ev0, ev1;   /* visible events [ev0, ev1), ev1 > ev0 */
	int64_t cursor;     /* -1 .. n_events-1 */
	uint64_t sel_elem;  /* highlighted element or TL_NO_ELEM */
	uint64_t ymax;      /* y range top; 0 = fit to the visible data */
	uint64_t ylo;       /* y range bottom (with ymax > ylo) */
	int time_axis;      /* x is time_us (only when time_ok) */
	int by_site;        /* allocation mode: colour by call site */
	int utf8;           /* UTF-8 glyphs (else pure ASCII) */
	int mono;           /* patterns instead of colours */
	int colors;         /* distinct band colours (UIC_NBANDS, or
			       UIC_NBANDS_ANSI on an 8-colour terminal:
			       the bands past them keep their patterns);
			       0 counts as UIC_NBANDS */
	int stack;          /* enum tl_stack */
	int legend;         /* enum tl_legend */
	struct tl_pick pick;
	struct tl_hilite *hl; /* highlighted set (borrowed; drawing only
				 reads it) or NULL */
	const char *hl_label; /* what the legend calls it (borrowed);
				 NULL: "leaked blocks" */
	const int64_t *marks; /* sorted events marked on the x axis row
				 (borrowed) or NULL */
	uint64_t n_marks;
	int64_t mark_sel;   /* the mark drawn highlighted; -2 = none */
	const struct tl_overlay *overlay; /* a series drawn as a line over
				 the plot (borrowed) or NULL */
	const struct an_phases *phases; /* drawn as spans under the axis
					   (borrowed) or NULL */
	uint64_t phase_sel; /* its instance drawn highlighted, + 1; 0 none */
};

/* An optional series of bytes after each event drawn as a dashed line
 * over the plot, each column at its highest value (the viewer's
 * simulation under other allocator settings: its reserved bytes). The
 * values are borrowed; the maxima of runs of TL_OVERLAY_RUN events are
 * the overlay's own, so that a column reads its runs, not its events. */
#define TL_OVERLAY_RUN 256
struct tl_overlay {
	const uint64_t *v;  /* n values, after event 0 .. n-1 */
	uint64_t n;
	uint64_t *run_max;  /* owned */
};
void tl_overlay_init(struct tl_overlay *o, const uint64_t *v, uint64_t n);
void tl_overlay_destroy(struct tl_overlay *o);
/* The highest value after events [lo, hi) (0 for an empty range). */
uint64_t tl_overlay_max(const struct tl_overlay *o, int64_t lo, int64_t hi);

/* One band of a column, bottom to top. */
struct tl_band {
	uint64_t lo, hi;    /* bytes */
	int kind;           /* enum tl_pick_kind (never NONE) */
	uint64_t id;        /* element or group id */
	uint8_t color;      /* palette slot (group rank, element colour) */
	uint8_t hilite;     /* the picked / selected band */
	uint8_t envelope;   /* pool mode: the free part of a group's
			       reserved memory, above its blocks */
	uint32_t n;         /* elements in the band (layer bands) */
	uint32_t j0, j1;    /* their drawn indices [j0, j1] (layer bands) */
};

/* What the last frame showed: the pane keeps it for picking, y zoom and
 * the legend. tl_render fills it; its group ranking is reused while the
 * visible peak and the mode stay the same. */
struct tl_frame {
	int pw, ph;         /* plot columns and rows */
	uint64_t ylo, yhi;  /* y range drawn */
	uint64_t yfit;      /* the y top that fits what is visible */
	double row_bytes;
	int64_t peak_ev;    /* visible peak (highest total of the columns) */
	int rank_stack;     /* mode of the ranking below; -1 none */
	int64_t rank_ev;
	uint32_t top[TL_MAX_BANDS]; /* group bands, bottom to top */
	uint32_t n_top;
	int legend_rows;
};

/* Prepares the drawn set (the max_drawn largest elements), the LOD
 * blocks, the jump lists and the annotations for tl (device tl->device
 * of s). Both are borrowed and must outlive m. Free with
 * tl_model_destroy. The pass over the elements runs on a second thread
 * beside the pass over the events, for a trace large enough to pay for
 * it (sv_thread_start(); on this thread where none starts). */
void tl_model_init(struct tl_model *m, const struct snapshot *s,
    const struct idx_timeline *tl, uint32_t max_drawn);
void tl_model_destroy(struct tl_model *m);

/* Builds what stacking mode st needs (once per device). Returns 0, or -1
 * with a reason in why when the mode is not available. */
int tl_model_prepare(struct tl_model *m, int st, char *why, size_t size);
/* 1 (the default): the pool mode's bytes of blocks are the stream/pool
 * mode's curves under its own ids, borrowed when that mode is built in
 * the same model or pass; 0: a pass of its own, as the tests compare. */
extern int tl_pool_derive;

/* Building a mode's data away from its model, so that the first switch
 * into a mode need not wait for a pass over the trace: tl_prep_begin
 * copies what the build reads of m (the borrowed snapshot and timeline,
 * which modes m has) on m's thread; tl_prep_build then builds, on any
 * thread, what tl_model_prepare(m, st) would (with the others of the
 * call-site, stream/pool and pool modes, in the same pass, as that
 * does: the pool mode's curves are the stream/pool mode's,
 * tl_pool_derive), reading nothing of m; tl_model_adopt moves it into
 * m, on m's thread.
 * The result is the same as tl_model_prepare's. */
struct tl_prep {
	int st;
	struct tl_model w;               /* the inputs and the modes' data */
	int8_t had[TL_STACK_COUNT];      /* m's groups_ok at tl_prep_begin */
	char why[128];
};

/* cats: the category table for the category mode (borrowed; it must not
 * change until tl_prep_destroy), else NULL. */
void tl_prep_begin(struct tl_prep *p, const struct tl_model *m, int st,
    const struct an_categories *cats);
/* For p's category mode (tl_prep_begin with no table): the table c,
 * from an_categories_begin, is classified in the mode's pass over the
 * elements (an_category_classify) instead of a pass of its own before;
 * an_categories_end(c) is the caller's, after tl_prep_build. */
void tl_prep_fill_categories(struct tl_prep *p, struct an_categories *c);
/* Returns 0, or -1 when this thread was asked to stop (util/stop.h):
 * then p holds what was cut short, for tl_prep_destroy only. */
int tl_prep_build(struct tl_prep *p);
/* The items the passes of tl_prep_build(p) go over, as util/stop.h's
 * meter counts them (each pass's count rounded down to SV_STOP_EVERY):
 * an estimate of its work, for a progress figure. categories: the
 * build classifies its own table as well (tl_prep_fill_categories;
 * an_categories_begin's pass over the events is counted too). */
uint64_t tl_prep_work(const struct tl_prep *p, int categories);
/* Modes p holds (built or found unavailable), as bits 1 << st. */
unsigned tl_prep_modes(const struct tl_prep *p);
/* Moves p's modes into m (those m has not prepared since; the category
 * mode only when m has categories lent, built as the ones p used were).
 * Returns tl_model_prepare's answer for p's mode: 0, or -1 with why.
 * p keeps nothing m took; free it with tl_prep_destroy. */
int tl_model_adopt(struct tl_model *m, struct tl_prep *p, char *why,
    size_t size);
void tl_prep_destroy(struct tl_prep *p);

/* The call-site table (site.h, one frame per site), set up the first
 * time; NULL when it cannot be. */
struct an_sites *tl_model_sites(struct tl_model *m);

/* Lends the model the category of every element of its timeline (built
 * for it: c->n_elems == tl->n_elems), for the category mode; c must
 * outlive the model, NULL takes it back (the mode is then unavailable). */
void tl_model_set_categories(struct tl_model *m,
    const struct an_categories *c);

/* Can grouped mode st's bands be drawn: its curves built, or sampled
 * (tl_sample.h)? */
static inline int
tl_groups_drawable(const struct tl_model *m, int st)
{
	return m->groups_ok[st] > 0 || m->groups_sampled[st];
}

/* Gives the model p (an_cat_probe_new: the category table being built
 * for it), which classifies the elements of the category mode's samples
 * until its bands are built; the model frees it then, or with the
 * model. NULL frees the one it has. */
void tl_model_set_cat_probe(struct tl_model *m, struct an_cat_probe *p);

/* Bands drawn before a mode is built (tl_sample.h): can grouped mode st
 * be sampled (not built; not refused before; the category mode, whose
 * groups need the whole trace's phases, once it has a probe:
 * tl_model_set_cat_probe)? */
int tl_model_sample_able(const struct tl_model *m, int st);
/* Samples mode st after the n events ev, in their order, with replay
 * r, which it moves (*moved: 1 when it did), for budget_us microseconds
 * at most (0: no limit), so that its bands can be drawn after them
 * (tl_groups_drawable) until tl_model_adopt brings the built ones.
 * Returns 0, 1 when events are left for another call, or -1 with why
 * (tl_sample_cover). */
struct replay;
int tl_model_sample(struct tl_model *m, int st, struct replay *r,
    const int64_t *ev, size_t n, long long budget_us, int *moved, char *why,
    size_t size);

/* Reads the replay's states after the n events ev (as tl_model_sample
 * does, and with the same returns) for the modes sampled later, which
 * then need no seek there: the category mode's while it waits for its
 * probe. */
int tl_model_sample_states(struct tl_model *m, struct replay *r,
    const int64_t *ev, size_t n, long long budget_us, int *moved, char *why,
    size_t size);

/* Group of element k (an allocation) in grouped mode st, or TL_NO_GROUP
 * (the mode must be prepared). */
uint32_t tl_model_group_of(struct tl_model *m, int st, uint64_t k);

/* Label of group g of mode st into buf, escaped: in full ("/path/
 * file.py:73 step"), cut to w cells when w > 0 (a path loses its
 * directories first); with w < 0 the short form ("file.py:73 step") cut
 * to -w cells. A label's prefix (tl_group_prefix) leads it and is never
 * cut. Returns buf. */
char *tl_group_label(const struct tl_model *m, int st, uint32_t g, int w,
    int utf8, char *buf, size_t size);

/* What leads the label of group g of mode st: "freed at " for a
 * call-site group of blocks allocated before the trace and named by the
 * stack of their free, else "". A constant string. */
const char *tl_group_prefix(const struct tl_model *m, int st, uint32_t g);

/* The call-site mode's group of an allocation by its stack and its
 * kind alone (blocks split off before the trace aside): the site, or
 * "freed at" the site for one allocated before the trace and freed in
 * it. TL_NO_GROUP without call sites. */
uint32_t tl_model_site_group(struct tl_model *m, const struct idx_elem *e);

/* Which mode to start in: the call-site mode when less than half of the
 * bytes at the peak would be drawn as individual allocations in a pane of
 * w x h cells (tl_render's rectangle), else the allocation mode. *share
 * gets that share in percent. */
int tl_model_auto_stack(const struct tl_model *m, int w, int h,
    int *share);

/* Builds the set of the n elements elems (ids of m's timeline) for m;
 * vals, when not NULL, holds the elements themselves (else they are
 * read: a decode for each element stripe the set touches). Free
 * with tl_hilite_destroy (also on a zeroed struct). */
void tl_hilite_init(struct tl_hilite *h, const struct tl_model *m,
    const uint64_t *elems, const struct idx_elem *vals, uint64_t n);
/* Adds the per-group parts of the modes prepared since (call after
 * tl_model_prepare). */
void tl_hilite_update(struct tl_hilite *h, struct tl_model *m);
void tl_hilite_destroy(struct tl_hilite *h);
/* Bytes of the set alive after event ev. */
uint64_t tl_hilite_bytes(const struct tl_hilite *h, int64_t ev);

/* Draws the timeline into the rectangle (x, y, w, h) of cb: y axis labels
 * on the left, the plot, the x axis row, annotation names, the label row
 * and the legend. fr (may be NULL) receives what was drawn. */
void tl_render(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int x, int y, int w, int h, struct tl_frame *fr);

/* The bands after event ev as drawn under the frame fr (its row size and
 * ranking), bottom to top, into out (at most max). Returns the count. */
int tl_bands_at(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, int64_t ev, struct tl_band *out, int max);

/* The pool mode's envelope of group g after event ev: the free part of
 * its (pool, stream)'s reserved bytes, drawn above its blocks (its
 * reserved bytes less its blocks' bytes; 0 when none, and in any other
 * mode st). The mode must be prepared. */
uint64_t tl_envelope_bytes(const struct tl_model *m, int st, uint32_t g,
    int64_t ev);

/* The events a plot of w cells (tl_render's width) draws its columns
 * after, the peak's first (the bands are ranked there), into ev (at most
 * max; tl_plot_width(w) + 1 holds them all). Returns the count. */
int tl_drawn_events(const struct tl_model *m, const struct tl_view *v,
    int w, int64_t *ev, int max);

/* The lowest and the highest level the columns of v show in a pane of
 * width w: the least of the columns' stacked totals, the most of their
 * totals and reserved bytes (what "fit min..max" fits the y axis to). */
void tl_visible_range(const struct tl_model *m, const struct tl_view *v,
    int w, uint64_t *lo, uint64_t *hi);

/* Plot width for a pane of width w. */
int tl_plot_width(int w);

/* First event of plot column col (0 .. pw-1) under v. */
int64_t tl_col_event(const struct tl_model *m, const struct tl_view *v,
    int pw, int col);
/* Plot column of event ev, or -1 when outside the view. */
int tl_event_col(const struct tl_model *m, const struct tl_view *v, int pw,
    int64_t ev);

/* The element with address addr alive after event at (the first created
 * when several are: an address allocated twice), or TL_NO_ELEM. Binary
 * searches in memory and one block's events (idx_tl_created). */
uint64_t tl_model_find_elem(const struct tl_model *m, uint64_t addr,
    int64_t at);

/* Next (dir > 0) or previous (dir < 0) event of kind j strictly after or
 * before from; -2 when there is none. */
int64_t tl_model_jump(const struct tl_model *m, enum tl_jump j,
    int64_t from, int dir);

/* Index of the next (dir > 0) or previous annotation strictly after or
 * before event from (ties: the next one in the list from cur, the index
 * of the current one or UINT64_MAX); UINT64_MAX when there is none. */
uint64_t tl_model_annot_step(const struct tl_model *m, int64_t from,
    uint64_t cur, int dir);

/* Total (stacked bytes) and reserved after event ev (-1 = start). */
uint64_t tl_total_at(const struct tl_model *m, int64_t ev);
uint64_t tl_reserved_at(const struct tl_model *m, int64_t ev);

/* Element k of mode st's layer (allocations, or segments in the segment
 * mode). */
struct idx_elem tl_layer_elem(const struct tl_model *m, int st, uint64_t k);

/* The alloc_ev and free_ev of tl_layer_elem(m, st, k), for the cursor's
 * allocation at every frame (idx_tl_elem_life(): a far move reads them
 * without decoding the allocation's stripe). */
void tl_layer_life(const struct tl_model *m, int st, uint64_t k,
    int64_t *alloc_ev, int64_t *free_ev);

#endif
