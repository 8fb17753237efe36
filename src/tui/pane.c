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

int
pane_list_move(uint64_t *sel, uint64_t n, enum action act,
    const struct rect *r)
{
	int64_t page = r->h > 3 ? r->h - 3 : 1, s = (int64_t)*sel;

	switch (act) {
	case ACT_UP: s--; break;
	case ACT_DOWN: s++; break;
	case ACT_PAGE_UP: s -= page; break;
	case ACT_PAGE_DOWN: s += page; break;
	case ACT_FIRST: s = 0; break;
	case ACT_LAST: s = (int64_t)n - 1; break;
	default: return 0;
	}
	if (s >= (int64_t)n)
		s = (int64_t)n - 1;
	if (s < 0)
		s = 0;
	*sel = (uint64_t)s;
	return UI_HANDLED | UI_REDRAW;
}

int
pane_move_cursor(struct app *a, enum action act)
{
	enum detail_mode d = a->detail;
	int f;

	if (act != ACT_LEFT && act != ACT_RIGHT)
		return 0;
	f = pane_timeline_ops.action(a, act, &a->lay.r[LAY_TIMELINE]);
	if (d == DETAIL_SITE)
		a->detail = d;
	return f;
}

int
pane_list_click(uint64_t *sel, uint64_t first, uint64_t n, int row,
    int header)
{
	uint64_t k;

	if (row < header)
		return -1;
	k = first + (uint64_t)(row - header);
	if (k >= n)
		return -1;
	if (k == *sel)
		return 1;
	*sel = k;
	return 0;
}
