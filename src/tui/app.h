#ifndef SNAPVIEW_TUI_APP_H
#define SNAPVIEW_TUI_APP_H
/*
 * The TUI's shared state (internal to tui/): the open snapshot, the
 * device's timeline model and state source, the one event cursor (in the
 * timeline view), the selection, and the modes of the loop. Panes read
 * and change it through their action ops; only ui.c owns it.
 */
#include <stdint.h>

#include "analysis/frag.h"
#include "analysis/leaks.h"
#include "analysis/site.h"
#include "analysis/top.h"
#include "index/idx_timeline.h"
#include "render/anlist.h"
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

enum detail_mode { DETAIL_EVENT, DETAIL_BLOCK, DETAIL_SITE, DETAIL_BAND };
/* Analysis views: a list that takes the place of one pane (views.h). */
enum view_kind { VIEW_NONE, VIEW_LEAKS, VIEW_FRAG, VIEW_TOP, VIEW_N };

/* Results of the analyses for the current device, computed when a view
 * first needs them and kept until the device changes (pane_views.c).
 * *_ok: 0 not computed, 1 ready, -1 failed (message shown). */
struct app_an {
	struct an_sites sites;
	int sites_ok;
	struct an_leaks leaks;
	struct an_leak_elems leak_elems;
	int leaks_ok;
	struct an_frag frag;
	int frag_ok;
	struct an_top top;              /* at top_at (the cursor, lazily) */
	int64_t top_at;
	int top_ok;
	struct tl_hilite hl;            /* blocks of leak site hl_site */
	uint64_t hl_site;
	int64_t *marks;                 /* their alloc events, sorted */
	uint64_t n_marks;
	struct anlist list[VIEW_N];     /* selection per view */
	int prev_focus;
	/* the detail pane in DETAIL_SITE mode */
	uint32_t site_stack;
	char site_title[256], site_info[256];
};
enum prompt_mode { PROMPT_NONE, PROMPT_GOTO, PROMPT_SEARCH };

struct pane_ops;

struct app {
	struct sv_index *ix;            /* owned; NULL when loaded directly */
	struct snapshot *snap;          /* borrowed from ix, else owned */
	const char *path;               /* borrowed (argv) */
	uint32_t device, n_devices;
	struct idx_timeline tl;         /* owned arrays */
	struct tl_model tm;
	struct state_src src;
	const struct replay_state *st;  /* state at the cursor (borrowed) */
	struct segmap_totals totals;

	struct tl_view view;            /* holds the cursor */
	struct tl_frame tlf;            /* what the timeline drew last */
	uint64_t annot_cur;             /* annotation the cursor went to */
	struct band_info {              /* the picked band at the cursor */
		int64_t at;             /* cursor it was found at; -2 none */
		struct tl_pick pick;
		int stack;
		uint64_t count;         /* its live elements */
		uint64_t largest;       /* the largest of them */
	} band;
	struct segmap_view sv;
	enum detail_mode detail;
	int detail_scroll, help_scroll;
	int unfold;
	int focus;                      /* LAY_TIMELINE..LAY_DETAIL */
	int help;                       /* help screen shown */
	int utf8, mono;

	enum prompt_mode prompt;
	char pbuf[128];
	int plen;
	char query[128];                /* last search */
	uint64_t query_addr;
	int query_is_addr;
	uint8_t *stack_match;           /* per stack id: matches query */

	enum view_kind aview;
	struct app_an an;

	char msg[256];                  /* one-shot status message */
	struct layout lay;
	struct cellbuf screen;
};

/* Moves the cursor to ev (clamped), keeps it visible, refreshes the
 * state at the cursor. */
void app_set_cursor(struct app *a, int64_t ev);
/* Switches to device d (rebuilds the model). Returns 0 or -1 (message in
 * a->msg). */
int app_set_device(struct app *a, uint32_t d);
/* Element shown in the detail pane / highlighted, or TL_NO_ELEM. */
uint64_t app_selected_elem(struct app *a);
/* Runs the search in a->query from the cursor in direction dir. */
void app_search(struct app *a, int dir);
/* Sets the search query: "0x..." is an address, anything else frame
 * text (substring of a frame's name or filename). */
void app_set_query(struct app *a, const char *q);
/* Global actions (zoom, jumps, focus, help, device, ...): UI_* flags, 0
 * when act is not a global action. */
int app_action(struct app *a, enum action act);
/* ---- analysis views (pane_views.c) ---- */
/* Opens view kind (computing its analysis the first time), or closes it
 * when it is open. UI_* flags. */
int views_toggle(struct app *a, enum view_kind kind);
void views_close(struct app *a);
/* Frees the cached analyses (device change, exit). */
void views_reset(struct app *a);
/* Pane in layout slot (LAY_TIMELINE..LAY_DETAIL) given the open view. */
const struct pane_ops *views_pane(struct app *a, int slot);
/* Brings the timeline's highlight and marks in line with the view and
 * its selection; call after every action. */
void views_sync(struct app *a);
/* Status line keys of the open view, or NULL. */
const char *views_hint(const struct app *a);
/* Actions that act on the open view whatever the focus (close, ]/[):
 * UI_* flags, 0 when not one of them or no view is open. */
int views_action(struct app *a, enum action act);

/* ---- the timeline's modes, picking, y zoom (pane_timeline.c) ---- */
/* Sets the timeline up for a newly opened device: the call-site bands
 * when allocations are too small to draw one by one. */
void timeline_open(struct app *a);
/* Timeline actions that work whatever the focus (stacking mode, legend,
 * picking, y zoom and pan, annotations): UI_* flags, 0 when act is not
 * one of them. */
int timeline_action(struct app *a, enum action act);
/* Title and info of the detail pane for the picked band; returns the
 * stack to show. */
uint32_t timeline_band_detail(struct app *a, char *title, size_t tsize,
    char *info, size_t isize);

/* Frees everything the app owns. */
void app_close(struct app *a);
/* Status message (printf). */
void app_msg(struct app *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
