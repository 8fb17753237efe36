#ifndef SNAPVIEW_TUI_MOUSE_H
#define SNAPVIEW_TUI_MOUSE_H
/*
 * The mouse: a click moves the cursor (timeline), selects a segment or a
 * block (segment map), or selects a row of a view (a click on the
 * selected row is Enter); the wheel scrolls lists, the segment map and
 * the detail pane, and zooms the timeline. The pane clicked takes the
 * focus. This header does not need curses: tui.c turns curses mouse
 * events (and key scripts, :click X Y) into mouse_event calls.
 */
#include "tui/app.h"

enum mouse_button { MOUSE_CLICK = 1, MOUSE_WHEEL_UP, MOUSE_WHEEL_DOWN };

/* Handles a mouse event at screen cell (x, y): UI_* flags. */
int mouse_event(struct app *a, int x, int y, enum mouse_button b);

#endif
