#ifndef SNAPVIEW_TUI_APP_H
#define SNAPVIEW_TUI_APP_H
/*
 * The TUI's shared state (internal to tui/): the open snapshot, the
 * device's timeline model and state source, the one event cursor (in the
 * timeline view), the selection, and the modes of the loop. Panes read
 * and change it through their action ops; only tui.c owns it.
 */
#include <stdint.h>

#include "analysis/category.h"
#include "analysis/phases.h"
#include "analysis/site.h"
#include "index/idx_timeline.h"
#include "render/cellbuf.h"
#include "render/segmap.h"
#include "render/timeline.h"
#include "snapshot/snap_model.h"
#include "tui/actions.h"
#include "tui/layout.h"
#include "tui/state.h"

/* Handler results (htop's HandlerResult). */
#define UI_HANDLED 0x1
#define UI_REDRAW 0x2
#define UI_RELAYOUT 0x4
#define UI_QUIT 0x8
#define UI_CLOSE_VIEW 0x10      /* a view: close me, focus my pane's slot */

enum detail_mode { DETAIL_EVENT, DETAIL_BLOCK, DETAIL_SITE, DETAIL_BAND,
    DETAIL_SIM /* the block selected in the simulated state (D) */ };

/* What a view shows in the detail pane (DETAIL_SITE): a title, a line of
 * information and a stack. Written by the open view (view.h). */
struct app_vdetail {
	uint32_t stack;
	uint64_t ev1;   /* 1 + the event whose stack it is (the event
			   table), 0: none; the site line names it */
	char title[256], info[256];
};

/* The status line prompt: goto, search, a view's (its prompt op gets the
 * text), the export file name, and a yes/no question. */
enum prompt_mode {
	PROMPT_NONE,
	PROMPT_GOTO,
	PROMPT_SEARCH,
	PROMPT_VIEW,
	PROMPT_EXPORT,
	PROMPT_CONFIRM,
	PROMPT_WHATIF		/* what-if settings (simulate.c) */
};

struct views;
struct modeworker;
struct replay_bg;
struct simulate;

struct app {
	struct sv_index *ix;            /* owned; NULL when loaded directly */
	struct snapshot *snap;          /* borrowed from ix, else owned */
	const char *path;               /* borrowed (argv) */
	uint32_t device, n_devices;
	struct idx_timeline tl;         /* owned arrays */
	struct tl_model tm;
	struct state_src src;
	const struct replay_state *st;  /* state at the cursor (borrowed) */
	struct replay_totals totals;    /* of st (replay_totals) */

	struct tl_view view;            /* holds the cursor */
	struct tl_frame tlf;            /* what the timeline drew last */
	uint64_t annot_cur;             /* annotation the cursor went to */
	struct segmap_view sv;
	enum detail_mode detail;
	int detail_scroll, help_scroll;
	int unfold;
	int focus;                      /* LAY_TIMELINE..LAY_DETAIL */
	int timeline_only;              /* the panes below hidden (Z) while
					   no view is open */
	int help;                       /* help screen shown */
	int utf8, mono;

	enum prompt_mode prompt;
	char plabel[96];                /* shown before the text */
	char pbuf[256];
	int plen;
	char query[128];                /* last search */
	uint64_t query_addr;
	int query_is_addr;
	uint8_t *stack_match;           /* per stack id: matches query */
	uint8_t *frame_match;           /* per frame id: matches query */
	int search_show;                /* the detail pane shows the search
					   hit: its frame highlighted (2:
					   and scrolled into view, once) */

	uint32_t dev_gen;               /* changes with the device */
	struct an_sites sites;          /* call sites (tables_sites) */
	int sites_ok;                   /* 0 not built, 1 ready, -1 failed */
	struct an_categories cats;      /* of the device (tables_categories) */
	int cats_ok;
	struct modeworker *modeworker;  /* modes built in the background
					   (modeworker.h) */
	struct replay_bg *replay_bg;    /* the replay's checkpoints built
					   behind the first screen
					   (replay_bg.h) */
	int stack_dir;                  /* the way m/M went (a mode found
					   unavailable is passed over) */
	int auto_stack;                 /* the mode the view goes to once
					   it is built (pane_timeline_open),
					   -1: none */
	int auto_share;                 /* % of the peak one band per
					   allocation shows, said then */
	int sampling;                   /* the grouped modes that can be
					   are drawn from samples while
					   the worker builds them
					   (render/tl_sample.h: a trace of
					   a million events or more, with
					   a replay; pane_timeline_open, and
					   when the replay comes,
					   pane_timeline_set_sampling) */
	int sample_later;               /* a trace long enough for that,
					   with a replay or when it comes */
	int auto_sampled;               /* the mode the view went to by
					   itself, drawn from samples, -1 */
	int sample_more;                /* the last frame left columns
					   to sample to the next ones */
	long long sample_since;         /* when the frames that sample
					   the view began (monotonic us) */
	int building_pct;               /* how far the build of the mode
					   shown was when last drawn
					   (modeworker_progress) */
	int building_after;             /* and the mode it waited for
					   (modeworker_running), -1 */
	int wait_bands;                 /* a key script runs: wait for what
					   the worker builds, never go on
					   without it (unless the script
					   said :wait off, script.h) */
	const struct an_cat_rules *cat_rules; /* --categories, or NULL */
	const struct an_phase_rules *phase_rules; /* --phase, or NULL */
	struct an_phases phases;        /* of the device (phaseset.c) */
	int phases_ok;                  /* 0 none, 1 found, 2 measured */
	struct views *views;            /* the views' state (view.h) */
	struct app_vdetail vdetail;

	struct replay_check chk;        /* check of the device (check.c) */
	int chk_done;                   /* 0 not run, 1 done, -1 cannot */
	int64_t win_from, win_to;       /* leak window; -2 = not set */
	int64_t win_marks[2];           /* its ends, marked on the axis */
	char export_path[1024];         /* the file an overwrite asks about */
	int no_clipboard, no_mouse;     /* --no-clipboard, --no-mouse */

	struct simulate *simulate;      /* what-if simulation (simulate.c) */
	char msg[256];                  /* one-shot status message */
	struct layout lay;
	struct cellbuf screen;
};

/* ---- the status message and the prompt (app.c) ---- */
/* Status message (printf). */
void app_msg(struct app *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Opens the prompt: mode, the label before the text, the text to start
 * with (NULL: empty). */
void app_prompt(struct app *a, enum prompt_mode m, const char *label,
    const char *init);
/* The number a test sets in the environment variable name (decimal,
 * no sign), else dflt. */
uint64_t app_test_number(const char *name, uint64_t dflt);

/* ---- the cursor (cursor.c) ---- */
/* Moves the cursor to ev (clamped to the events), keeps it visible,
 * refreshes the state at the cursor. */
void cursor_set(struct app *a, int64_t ev);
/* The same, where -1 is the state before the first event (the goto
 * prompt, --at -1), as the commands' --at -1 is. */
void cursor_goto(struct app *a, int64_t ev);
/* After an analysis moved the device's replay (a->src.replay): the state
 * at the cursor is fetched again, the block selection (which pointed into
 * the old state) dropped. */
void cursor_replay_moved(struct app *a);
/* Element shown in the detail pane / highlighted, or TL_NO_ELEM. */
uint64_t cursor_selected_elem(struct app *a);
/* The timeline's element of the block at addr allocated at event
 * alloc_ev (-1: before the trace) alive at the cursor, or TL_NO_ELEM. */
uint64_t cursor_block_elem(struct app *a, uint64_t addr, int64_t alloc_ev);

/* ---- the call-site and category tables (tables.c) ---- */
/* The call-site table (one frame per site), built the first time it is
 * needed; NULL with a message in a->msg when it cannot be. */
struct an_sites *tables_sites(struct app *a);
/* The category of every element of the device's timeline, built the
 * first time it is needed; NULL with a message when it cannot be. */
const struct an_categories *tables_categories(struct app *a);
/* The same when it is there or quick to get; NULL (and no wait) while
 * the worker builds it (modeworker.h), unless a key script runs
 * (wait_bands), so that a pane drawn on every frame never waits for it. */
const struct an_categories *tables_categories_if_ready(struct app *a);
/* Can blocks be put in categories (tables_block_category): the table is
 * there, or built (waited for), or the worker builds it and has handed
 * over its probe (waited for: the first part of the build)? */
int tables_categories_able(struct app *a);
/* Category of the block at addr allocated at event alloc_ev (-1: before
 * the trace) alive at the cursor (AN_CAT_OTHER when the timeline has no
 * such allocation), or -1 without categories: from the table, or while
 * the worker builds it, from its probe, which classifies as the table
 * will. */
int tables_block_category(struct app *a, uint64_t addr, int64_t alloc_ev);
/* The call site of event i of trace t (the device's): its stack's,
 * except for a free whose stack holds no Python frame (the autograd
 * engine's thread, a destructor: its site is a C++ function such as a
 * template's reset_not_null_), which is named by the allocation it frees
 * when that site says as much (the timeline's bands and the views name a
 * block by it); *alloc says so. The event table's site column and the
 * detail pane's site line. */
uint32_t tables_event_site(struct app *a, const struct snap_trace *t,
    uint64_t i, int *alloc);

/* ---- the phases of the device (phaseset.c) ---- */
/* Finds the device's phase instances (annotation ranges, or the
 * --phase rules) and has the timeline draw them; called by device_set. */
void phaseset_open(struct app *a);
void phaseset_free(struct app *a);
/* The phases measured (analysis/phases.h: peaks, what each leaves
 * behind, what grows), the first time they are needed; NULL with a
 * message when there are none or they cannot be. */
const struct an_phases *phaseset_measured(struct app *a);
/* Moves the cursor to the start of the next (dir > 0) or previous phase
 * instance. */
void phaseset_jump(struct app *a, int dir);

/* ---- the device (device.c) ---- */
/* Switches to device d (rebuilds the model). Returns 0 or -1 (message in
 * a->msg). */
int device_set(struct app *a, uint32_t d);
/* What the first screen says before anything else, in the status line:
 * the device's OOMs (marked on the timeline's axis, views.c) and its
 * leak suspect (a trace of up to 2 million events: one pass), each with
 * the key that explains it. */
void device_news(struct app *a);
/* The replay built behind the first screen came (replay_bg_poll said
 * 2): the state at the cursor from its index, and the check that waited
 * for it. */
void device_replay_came(struct app *a);
/* Frees everything the app owns: the device, then the snapshot and its
 * index. */
void device_close(struct app *a);

/* ---- the actions of no pane (global.c) ---- */
/* Global actions (zoom, jumps, focus, help, device, ...): UI_* flags, 0
 * when act is not a global action. */
int global_action(struct app *a, enum action act);

/* ---- search (search.c) ---- */
/* Runs the search in a->query from the cursor in direction dir. */
void search_run(struct app *a, int dir);
/* Sets the search query: "0x..." is an address, anything else frame
 * text, found in a frame's "filename:line name" without regard to case
 * (a text ending in a line number matches that line only). */
void search_set_query(struct app *a, const char *q);

/* ---- the replay check (check.c) ---- */
/* Runs the check of the device once (force: however long its trace):
 * 1 done (a->chk), 0 not run (too long to run unasked), -1 no replay
 * (yet, while it is built behind the screen: then it runs when it
 * comes). */
int check_run(struct app *a, int force);
void check_free(struct app *a);
/* The status line warning ("! 12 mismatches") or NULL. */
const char *check_warning(struct app *a, char *buf, size_t size);
/* Moves the cursor to the first mismatch and says what it is. */
void check_first(struct app *a);

/* ---- the timeline's modes, picking, y zoom (pane_timeline.c) ---- */
/* Sets the timeline up for a newly opened device: the call-site bands
 * when allocations are too small to draw one by one; for a trace of a
 * million events or more, after the first screen (pane_timeline_poll),
 * the allocations shown until then: from samples while the worker builds
 * them (a->sampling), else once it has; at once for a
 * shorter one, or when no worker builds modes (SNAPVIEW_BANDS_SYNC). */
void pane_timeline_open(struct app *a);
/* Sets a->sampling: on when the device has a replay and a trace long
 * enough (a->sample_later); when the pane opens, and when a replay
 * built behind the first screen comes. */
void pane_timeline_set_sampling(struct app *a);
/* Timeline actions that work whatever the focus (stacking mode, legend,
 * picking, y zoom and pan, annotations): UI_* flags, 0 when act is not
 * one of them. */
int pane_timeline_action(struct app *a, enum action act);
/* Is the mode shown one whose bands are still being built (modeworker.h)? */
int pane_timeline_building(struct app *a);
/* Is it the category mode, to be drawn from samples once the worker has
 * begun its table (modeworker_wait_probe) and the loop has taken its
 * probe? */
int pane_timeline_probe_due(struct app *a);

/* Takes what the background builds finished (modeworker_take); when it
 * is the mode shown, says so, or passes over it as m does when it turned
 * out unavailable; when it is the mode pane_timeline_open chose, goes
 * to it. UI_REDRAW when something came, else 0. */
int pane_timeline_poll(struct app *a);
/* Title and info of the detail pane for the picked band; returns the
 * stack to show. */
uint32_t pane_timeline_band_detail(struct app *a, char *title, size_t tsize,
    char *info, size_t isize);

#endif
