#ifndef SNAPVIEW_TUI_SCRIPT_H
#define SNAPVIEW_TUI_SCRIPT_H
/*
 * Headless key scripts (tig's TIG_SCRIPT). One item per line:
 *   keys           "<Down>", "jjj", "/train<Enter>", ":1234<Enter>"
 *   :dump-screen F write the screen text to F (relative to the cwd)
 *   :resize C R    resize the virtual terminal
 *   :quit          stop (also at the end of the file)
 *   :click X Y     a mouse click at column X, row Y (from 0)
 *   :wheel-up X Y, :wheel-down X Y   the mouse wheel there
 *   :wait on, :wait off, :wait samples   from here, what the script
 *                  waits for before each item when the stacking mode on
 *                  screen is still being built: its build (on, the
 *                  default: what a test captures does not depend on the
 *                  machine's pace), nothing (off: the keys meet the
 *                  modes as a user's would), or its bands drawn from
 *                  samples in full (samples: render/tl_sample.h); on
 *                  the first line, from the start (the mode the first
 *                  screen goes to included)
 *   :wait-modes    wait until every mode being built is built
 *   :ACTION-NAME   run an action by its name in actions.h (":zoom-in")
 *   # comment, blank lines ignored
 * A line starting with ':' that is not one of these commands is keys
 * (so ":1234<Enter>" types the goto prompt).
 */
#include <stddef.h>

enum script_kind { SCR_KEY, SCR_DUMP, SCR_RESIZE, SCR_QUIT, SCR_ACTION,
    SCR_MOUSE, SCR_WAIT, SCR_WAIT_MODES };

enum script_wait { SCR_WAIT_NONE, SCR_WAIT_BUILT, SCR_WAIT_SAMPLES };

struct script_item {
	enum script_kind kind;
	int key;        /* SCR_KEY; action for SCR_ACTION; SCR_MOUSE: button
			   (enum mouse_button, tui/mouse.h); SCR_WAIT: an
			   enum script_wait */
	int cols, rows; /* SCR_RESIZE; SCR_MOUSE: x, y */
	char *arg;      /* SCR_DUMP path (owned) */
};

struct script {
	struct script_item *items;
	size_t n, cap, pos;
};

/* Reads path into sc. Returns 0, or -1 with a message in msg. */
int script_load(struct script *sc, const char *path, char *msg, size_t size);
void script_free(struct script *sc);

/* Next item or NULL at the end. */
const struct script_item *script_next(struct script *sc);

#endif
