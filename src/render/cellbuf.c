/*
 * Cell buffer: the drawing surface of the pure render layer. Knows no
 * terminal; tui/ blits it to curses and tests read it back as text.
 */
#include "config.h"

#include "render/cellbuf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"
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

/* Draws s one code point a cell, decoded by the one strict decoder
 * (util/escape.h): an invalid byte, a control or an invisible code point
 * shows as '?'. Text from a file is escaped before it gets here; this
 * keeps anything else from reaching the terminal as is. */
int
cellbuf_puts(struct cellbuf *cb, int x, int y, const char *s, int maxw,
    unsigned color, unsigned attr)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), k;
	uint32_t cp;
	int n = 0;

	if (y < 0 || y >= cb->h)
		return 0;
	while (len > 0 && n < maxw && x + n < cb->w) {
		if ((k = sv_utf8_decode(p, len, &cp)) == 0) {
			cp = '?';
			k = 1;
		}
		p += k;
		len -= k;
		if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) ||
		    sv_is_invisible(cp))
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
			n += sv_utf8_encode(row[x].ch, out + n);
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
