/*
 * Shared pane helpers.
 */
#include "config.h"

#include "tui/pane.h"

#include <stdio.h>
#include <string.h>

#include "render/anlist.h"
#include "util/escape.h"

#define LABEL_MAX 1024

/* s past its first n code points. */
static const char *
skip_cells(const char *s, int n)
{
	for (; n > 0 && *s != '\0'; n--)
		for (s++; ((unsigned char)*s & 0xc0) == 0x80; s++)
			;
	return s;
}

/* Does the word [w, end) name a Python file? */
static int
has_py(const char *w, const char *end)
{
	const char *p;

	for (p = w; p + 3 <= end; p++)
		if (strncmp(p, ".py", 3) == 0)
			return 1;
	return 0;
}

/* Drops the first directory of the first path of buf (a word starting
 * at the root, the home or dots, or naming a .py file): "/a/b/f.py"
 * becomes "…/b/f.py", "…/f.py" becomes "f.py". Returns 0 when there is
 * none left to drop. */
static int
drop_dir(char *buf, size_t size, int utf8)
{
	const char *dots = utf8 ? "\xe2\x80\xa6" : "...";
	char *w, *end, *last, *p, *q, rest[1024];
	size_t nd = strlen(dots);

	for (w = buf; *w != '\0'; w = end) {
		while (*w == ' ')
			w++;
		end = w + strcspn(w, " ");
		last = NULL;
		for (p = w; p < end; p++)
			if (*p == '/')
				last = p;
		/* a path: from the root, the home or cut already, or a
		 * Python file ("1/8" is none) */
		if (last == NULL || last == w || (*w != '/' && *w != '~' &&
		    strncmp(w, dots, nd) != 0 && !has_py(w, end)))
			continue;
		if (strncmp(w, dots, nd) == 0 && w + nd == last) {
			/* "…/f.py": the file alone */
			snprintf(rest, sizeof rest, "%s", last + 1);
			snprintf(w, size - (size_t)(w - buf), "%s", rest);
			return 1;
		}
		/* the first directory after the start (and its dots) */
		q = memchr(w + 1, '/', (size_t)(last - w));
		if (strncmp(w, dots, nd) == 0 && q == w + nd)
			q = memchr(q + 1, '/', (size_t)(last - q));
		if (q == NULL)
			continue;
		snprintf(rest, sizeof rest, "%s", q);
		snprintf(w, size - (size_t)(w - buf), "%s%s", dots, rest);
		return 1;
	}
	return 0;
}

void
pane_title_fit(const char *text, int w, int utf8, char *buf, size_t size)
{
	char *p, *last;

	snprintf(buf, size, "%s", text);
	/* a path loses its directories first */
	while (sv_utf8_cells(buf) > w && drop_dir(buf, size, utf8))
		;
	/* then whole " - " fields off the right */
	while (sv_utf8_cells(buf) > w) {
		for (last = NULL, p = buf; (p = strstr(p, " - ")) != NULL;
		    p++)
			last = p;
		if (last == NULL)
			break;
		*last = '\0';
	}
	if (sv_utf8_cells(buf) <= w || w <= 0)
		return;
	/* one field too long: cut at a space, so no number is cut */
	p = (char *)skip_cells(buf, w);
	*p = '\0';
	if ((last = strrchr(buf, ' ')) != NULL && last > buf)
		*last = '\0';
}

void
pane_title(struct app *a, struct cellbuf *cb, const struct rect *r,
    int focused, const char *text)
{
	/* without colours only the focused title is reversed */
	unsigned col = focused ? UIC_TITLE_FOCUS : UIC_TITLE_PANE;
	uint32_t rule = a->utf8 ? 0x2500 : '-';
	char fit[1024];
	int n;

	pane_title_fit(text, r->w - 4, a->utf8, fit, sizeof fit);
	cellbuf_fill(cb, r->x, r->y, r->w, 1, rule, col, 0);
	cellbuf_put(cb, r->x + 1, r->y, ' ', col, 0);
	n = cellbuf_puts(cb, r->x + 2, r->y, fit, r->w - 4, col, 0);
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
