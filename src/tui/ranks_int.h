#ifndef SNAPVIEW_TUI_RANKS_INT_H
#define SNAPVIEW_TUI_RANKS_INT_H
/*
 * Private to the rank screens (ranks.h): the state of the viewer on
 * several files, owned by ranks_overview.c (the overview, the entry
 * points ui.c calls, the help), the comparison of two runs,
 * ranks_compare.c's, which the overview opens and closes, and what both
 * write, ranks_common.c's (so that no two of them call each other).
 * Keys reach both screens as actions of their keymaps (KM_RANKS,
 * KM_COMPARE: actions.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "analysis/rankset.h"
#include "analysis/runs.h"
#include "render/align.h"
#include "render/cellbuf.h"
#include "tui/help.h"
#include "tui/ranks.h"

struct rk_cmp;

struct rk_row {
	size_t member;                  /* in rs.m */
	const struct an_sum_dev *dev;   /* NULL: the member failed */
};

struct rk {
	struct an_rankset rs;
	struct an_rs_report rp;
	struct rk_row *rows;            /* ok rows (sorted), then failed */
	size_t n_rows;
	struct align_trace *tr;         /* per ok row */
	struct align al;
	size_t sel, top;
	int by_rank;                    /* sorted by rank, else by peak */
	uint8_t *marked;                /* per member */
	int list_h;
	struct rk_cmp *cmp;             /* the comparison open, or NULL */
	int cmp_only;                   /* started on two files */
	int help;
	int64_t want_device;            /* --device, -1 */
	size_t target;                  /* the row RK_OPEN opens */
	const struct tui_opts *o;       /* borrowed */
	char msg[256];
	/* a run directory (analysis/runs.h) and its grid, ranks_grid.c's */
	struct an_run *run;             /* owned, NULL: no run */
	int grid;                       /* the grid shows, else the list */
	size_t g_row, g_col;            /* the grid's selected cell */
	size_t g_top, g_left;           /* its first row and step shown */
	int g_h, g_w;                   /* rows and steps it showed */
	int open_cell;                  /* RK_OPEN opens open_member */
	size_t open_member;
	uint32_t open_dev;
};

/* ---- the comparison (ranks_compare.c) ---------------------------------- */

/* Opens the comparison of members a and b of r's set (devices da, db;
 * -1: each file's default) as r->cmp, closing the one open. Returns 0,
 * or -1 with the reason in r's message (r->cmp unchanged). */
int ranks_compare_open(struct rk *r, size_t a, int64_t da, size_t b,
    int64_t db);
void ranks_compare_close(struct rk_cmp *c);
/* Puts each side after its last event (a dump as it was written), until
 * the cursor moves; the end of the axis (ACT_LAST) does the same. */
void ranks_compare_at_end(struct rk_cmp *c);

/* Action act on the comparison c (r->cmp): RK_NONE when it does nothing
 * there. Going back to the overview closes c and clears r->cmp. */
enum rk_result ranks_compare_key(struct rk *r, struct rk_cmp *c,
    enum action act);

void ranks_compare_draw(struct rk_cmp *c, struct cellbuf *cb, int utf8);

/* The status line's hint (left) and position in the site list (right). */
void ranks_compare_status(const struct rk_cmp *c, char *left, size_t ll,
    char *right, size_t rl);

/* The comparison's keys, a group of the rank screens' help. */
extern const struct help_group ranks_compare_help;

/* ---- the grid of a run directory (ranks_grid.c) ------------------------ */

/* The grid: ranks as rows, steps as columns, each dump's peak shaded and
 * printed, the selected cell's figures, its rank's growth and its
 * step's skew below. Keys reach it while r->grid is set; Enter asks to
 * open a cell (RK_OPEN with open_cell set), c compares two cells. */
void ranks_grid_draw(struct rk *r, struct cellbuf *cb, int utf8);
enum rk_result ranks_grid_key(struct rk *r, enum action act);
void ranks_grid_status(const struct rk *r, char *left, size_t ll, char *right,
    size_t rl);

/* The grid's keys, a group of the rank screens' help. */
extern const struct help_group ranks_grid_help;

/* ---- shared by both screens (ranks_common.c) --------------------------- */

/* How a member is named on the screens: "rank R step S" for a run's dump,
 * else the last component of its path (escaped). */
const char *ranks_common_member_label(const struct rk *r, size_t member,
    char *buf, size_t size);

/* A one-line message for the status line. */
void ranks_common_msgf(struct rk *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The last component of path. */
const char *ranks_common_base_name(const char *path);

/* s escaped into buf (file text reaches the screen only so). */
const char *ranks_common_shown(char *buf, size_t size, const char *s);

/* The last maxw columns of s (escaped text) after an ellipsis when it is
 * wider: the end of a call site (file, line, function) tells most. */
const char *ranks_common_fit_left(char *buf, size_t size, const char *s,
    int maxw, int utf8);

/* s (escaped text) in at most maxw columns: its start and its end
 * around an ellipsis in the middle when it is wider (a file name: the
 * end names the rank and the step). */
const char *ranks_common_fit_middle(char *buf, size_t size, const char *s,
    int maxw, int utf8);

/* A title bar across row y. */
void ranks_common_title_bar(struct cellbuf *cb, int y, const char *text,
    int utf8);

/* One rank, for the line that names the OOM and leaking ranks. */
struct rk_news {
	int64_t rank;
	uint64_t ooms;          /* oom events */
	int leak;               /* a leak suspect, of leak_per_step */
	uint64_t leak_per_step; /* bytes a step */
};

/* Row y: "OOM on rank 5 (1 OOM) - leak suspect: rank 1 (+156K a step)."
 * from the n ranks of it, as far as they fit (the rest counted), in
 * UIC_ALERT when any; else "No OOM" and "no leak suspect", or
 * "leaks not judged: NOT_JUDGED" when that is not NULL. */
void ranks_common_news(struct cellbuf *cb, int y, const struct rk_news *it,
    size_t n, const char *not_judged);

#endif
