/*
 * Cell buffer: the drawing surface of the pure render layer. Knows no
 * terminal; tui/ blits it to curses and tests read it back as text.
 */
#include "config.h"

#include "render/cellbuf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void
cellbuf_init(struct cellbuf *cb, int w, int h)
{
	cb->w = cb->h = 0;
	cb->cells = NULL;
	cellbuf_resize(cb, w, h);
}

void
cellbuf_destroy(struct cellbuf *cb)
{
	free(cb->cells);
	cb->cells = NULL;
	cb->w = cb->h = 0;
}

void
cellbuf_resize(struct cellbuf *cb, int w, int h)
{
	if (w < 0)
		w = 0;
	if (h < 0)
		h = 0;
	free(cb->cells);
	cb->w = w;
	cb->h = h;
	cb->cells = xcalloc((size_t)w * h + 1, sizeof *cb->cells);
	cellbuf_fill(cb, 0, 0, w, h, ' ', UIC_DEFAULT, 0);
}

struct cell *
cellbuf_at(struct cellbuf *cb, int x, int y)
{
	if (x < 0 || y < 0 || x >= cb->w || y >= cb->h)
		return NULL;
	return &cb->cells[(size_t)y * cb->w + x];
}

void
cellbuf_put(struct cellbuf *cb, int x, int y, uint32_t ch, unsigned color,
    unsigned attr)
{
	struct cell *c = cellbuf_at(cb, x, y);

	if (c == NULL)
		return;
	c->ch = ch;
	c->color = (uint8_t)color;
	c->attr = (uint8_t)attr;
}

void
cellbuf_fill(struct cellbuf *cb, int x, int y, int w, int h, uint32_t ch,
    unsigned color, unsigned attr)
{
	int i, j;

	for (j = y < 0 ? 0 : y; j < y + h && j < cb->h; j++)
		for (i = x < 0 ? 0 : x; i < x + w && i < cb->w; i++)
			cellbuf_put(cb, i, j, ch, color, attr);
}

/* Decodes one UTF-8 sequence; returns its length (>= 1) and the code
 * point, or '?' for an invalid byte. */
static size_t
utf8_next(const unsigned char *s, uint32_t *cp)
{
	size_t k, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, c = s[0] & 0x07;
	else {
		*cp = '?';
		return 1;
	}
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*cp = '?';
			return 1;
		}
		c = c << 6 | (s[i] & 0x3f);
	}
	*cp = c;
	return k;
}

int
cellbuf_puts(struct cellbuf *cb, int x, int y, const char *s, int maxw,
    unsigned color, unsigned attr)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	int n = 0;

	if (y < 0 || y >= cb->h)
		return 0;
	while (*p != '\0' && n < maxw && x + n < cb->w) {
		p += utf8_next(p, &cp);
		if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
			cp = '?';
		cellbuf_put(cb, x + n, y, cp, color, attr);
		n++;
	}
	return n;
}

int
cellbuf_printf(struct cellbuf *cb, int x, int y, int maxw, unsigned color,
    unsigned attr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return cellbuf_puts(cb, x, y, buf, maxw, color, attr);
}

int
cellbuf_utf8(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

char *
cellbuf_to_text(const struct cellbuf *cb)
{
	size_t cap = (size_t)cb->w * cb->h * 4 + cb->h + 1, n = 0;
	char *out = xmalloc(cap);
	int x, y, last;

	for (y = 0; y < cb->h; y++) {
		const struct cell *row = &cb->cells[(size_t)y * cb->w];

		for (last = cb->w - 1; last >= 0 && row[last].ch == ' '; last--)
			;
		for (x = 0; x <= last; x++)
			n += cellbuf_utf8(row[x].ch, out + n);
		out[n++] = '\n';
	}
	out[n] = '\0';
	return out;
}

void
cellbuf_write_text(const struct cellbuf *cb, FILE *f)
{
	char *s = cellbuf_to_text(cb);

	fputs(s, f);
	free(s);
}
