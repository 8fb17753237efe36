/*
 * Shared pane helpers.
 */
#include "config.h"

#include "tui/pane.h"

void
pane_title(struct app *a, struct cellbuf *cb, const struct rect *r,
    int focused, const char *text)
{
	unsigned col = focused ? UIC_TITLE_FOCUS : UIC_TITLE;
	uint32_t rule = a->utf8 ? 0x2500 : '-';
	int n;

	cellbuf_fill(cb, r->x, r->y, r->w, 1, rule, col, 0);
	cellbuf_put(cb, r->x + 1, r->y, ' ', col, 0);
	n = cellbuf_puts(cb, r->x + 2, r->y, text, r->w - 4, col, 0);
	cellbuf_put(cb, r->x + 2 + n, r->y, ' ', col, 0);
}
