/*
 * Shared pane helpers.
 */
#include "config.h"

#include "tui/pane.h"

#include <string.h>

#include "render/anlist.h"
#include "util/escape.h"

#define LABEL_MAX 1024

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

int
pane_list_clicked(struct app *a, void *priv, const struct rect *r,
    int c, int site,
    int (*action)(struct app *, void *, enum action, const struct rect *))
{
	if (c == 1)
		return action(a, priv, ACT_ENTER, r);
	if (c == 0 && site) {
		a->detail = DETAIL_SITE;
		a->detail_scroll = 0;
	}
	return UI_HANDLED | UI_REDRAW;
}

void
pane_list_scroll(uint64_t *sel, uint64_t *first, uint64_t n, int rows)
{
	if (*sel >= n)
		*sel = n - 1;
	if (*sel < *first)
		*first = *sel;
	if (*sel >= *first + (uint64_t)rows)
		*first = *sel - (uint64_t)rows + 1;
}

void
pane_list_row(struct app *a, struct cellbuf *cb, const struct rect *r,
    int y, const char *text, const char *raw, int sel, int focused,
    unsigned col)
{
	char label[LABEL_MAX];
	unsigned at = sel && focused ? CB_A_BOLD : 0;
	int len;

	if (sel) {
		col = UIC_SELECT;
		cellbuf_fill(cb, r->x, y, r->w, 1, ' ', col, at);
	}
	len = cellbuf_puts(cb, r->x + 1, y, text, r->w - 1, col, at);
	if (raw == NULL)
		return;
	anlist_cut_label(raw, r->w - 1 - len, a->utf8, label, sizeof label);
	cellbuf_puts(cb, r->x + 1 + len, y, label, r->w - 1 - len, col, at);
}

void
pane_list_write_row(FILE *f, const char *text, const char *raw)
{
	char esc[LABEL_MAX];

	fprintf(f, "%s", text);
	if (raw != NULL) {
		sv_escape(esc, sizeof esc, raw, strlen(raw));
		fprintf(f, "%s", esc);
	}
	fprintf(f, "\n");
}
