#ifndef SNAPVIEW_TUI_APP_H
#define SNAPVIEW_TUI_APP_H
/*
 * The TUI's shared state (internal to tui/): the open snapshot, the
 * device's timeline model and state source, the one event cursor (in the
 * timeline view), the selection, and the modes of the loop. Panes read
 * and change it through their action ops; only ui.c owns it.
 */
#include <stdint.h>

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

enum detail_mode { DETAIL_EVENT, DETAIL_BLOCK, DETAIL_SITE };

/* What a view shows in the detail pane (DETAIL_SITE): a title, a line of
 * information and a stack. Written by the open view (view.h). */
struct app_vdetail {
	uint32_t stack;
	char title[256], info[256];
};

enum prompt_mode { PROMPT_NONE, PROMPT_GOTO, PROMPT_SEARCH };

struct views;

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

	uint32_t dev_gen;               /* changes with the device */
	struct an_sites sites;          /* call sites (app_sites) */
	int sites_ok;                   /* 0 not built, 1 ready, -1 failed */
	struct views *views;            /* the views' state (view.h) */
	struct app_vdetail vdetail;

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
/* The call-site table (one frame per site), built the first time it is
 * needed; NULL with a message in a->msg when it cannot be. */
struct an_sites *app_sites(struct app *a);

/* Frees everything the app owns. */
void app_close(struct app *a);
/* Status message (printf). */
void app_msg(struct app *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
