/*
 * Escaping of untrusted strings for terminals and JSON.
 */
#include "config.h"

#include "util/escape.h"

#include <stdint.h>
#include <string.h>

#include "util/invisible.h"
#include "util/search.h"

int
sv_utf8_encode(uint32_t cp, char *out)
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

size_t
sv_utf8_fit(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char t[4] = {0x80, 0x80, 0x80, 0x80};
	size_t i = len, need;
	uint32_t cp;

	/* back over at most 3 continuation bytes to a lead byte */
	while (i > 0 && len - i < 3 && (p[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0 || (p[i - 1] & 0xc0) != 0xc0)
		return len;
	i--;
	need = p[i] >= 0xf0 ? 4 : p[i] >= 0xe0 ? 3 : 2;
	if (len - i >= need)
		return len;
	/* a sequence cut short: dropped when what is there starts a valid
	 * one (completed with the lowest continuation bytes it allows) */
	memcpy(t, p + i, len - i);
	if (len - i == 1 && t[0] == 0xe0)
		t[1] = 0xa0;
	if (len - i == 1 && t[0] == 0xf0)
		t[1] = 0x90;
	return sv_utf8_decode(t, need, &cp) == need ? i : len;
}

char *
sv_utf8_mend(char *buf, size_t size, int n)
{
	if (size > 0 && n >= 0 && (size_t)n >= size)
		buf[sv_utf8_fit(buf, size - 1)] = '\0';
	return buf;
}

int
sv_utf8_cells(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

size_t
sv_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t k, i;
	uint32_t c;

	if (n == 0)
		return 0;
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
	else
		return 0;
	if (k > n)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF */
	if ((k == 3 && c < 0x800) ||
	    (k == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return k;
}

/*
 * Code points that draw nothing, or nothing like themselves: bidi
 * embeddings, overrides and isolates, zero-width spaces and joiners,
 * variation selectors, tag characters, the BOM, the soft hyphen, fillers,
 * line and paragraph separators, spaces other than U+0020; private-use
 * characters and noncharacters, drawn as each font likes. They cannot
 * drive the terminal, but they can make one frame name look like another
 * ("Trojan source"), so they are shown as \u{XXXX}. The table
 * (invisible.h) is made from Unicode's own data by mkinvisible.py.
 */
static int
range_below(const void *ctx, uint64_t i)
{
	return invisible[i].hi < *(const uint32_t *)ctx;
}

int
sv_is_invisible(uint32_t cp)
{
	uint64_t n = sizeof invisible / sizeof invisible[0];
	uint64_t i = sv_partition(0, n, range_below, &cp);

	return i < n && invisible[i].lo <= cp;
}

/* C0 and C1 controls and DEL: they drive the terminal. */
static int
is_control(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
}

struct out {
	char *buf;
	size_t size, used;
	int full;
};

/* One piece, a character or an escape, goes in whole or not at all, and
 * nothing goes in after one that did not: a cut never ends inside a
 * character or an escape. */
static void
put(struct out *o, const char *s, size_t n)
{
	if (!o->full && o->used + n < o->size) {
		memcpy(o->buf + o->used, s, n);
		o->buf[o->used + n] = '\0';
	} else
		o->full = 1;
	o->used += n;
}

static int
is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

/* Would a backslash written before s[0..n) read as the start of an
 * escape: xHH or u{ follows it. */
static int
starts_escape(const unsigned char *s, size_t n)
{
	if (n >= 3 && s[0] == 'x' && is_hex(s[1]) && is_hex(s[2]))
		return 1;
	return n >= 2 && s[0] == 'u' && s[1] == '{';
}

/* sv_escape() of s[0..len), a backslash there seeing what follows it up
 * to s[avail] (a piece of a longer string). */
static size_t
escape_span(char *buf, size_t size, const char *s, size_t len, size_t avail)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	struct out o = {buf, size, 0, 0};
	size_t i = 0;

	if (size > 0)
		buf[0] = '\0';
	while (i < len) {
		uint32_t cp = 0;
		size_t k = sv_utf8_decode(p + i, len - i, &cp);
		char esc[8] = {'\\', 'x', 0, 0, '\\', 'x', 0, 0};

		if (k > 0 && !is_control(cp) &&
		    (cp != '\\' || !starts_escape(p + i + 1, avail - i - 1))) {
			if (sv_is_invisible(cp)) {
				char u[12];

				put(&o, u, (size_t)snprintf(u, sizeof u,
				    "\\u{%04x}", (unsigned)cp));
			} else {
				put(&o, s + i, k);
			}
			i += k;
			continue;
		}
		if (k == 0)
			k = 1;
		/* a C1 control is two bytes in UTF-8: show both, as one
		 * piece; a backslash that would start an escape is \x5c */
		for (size_t j = 0; j < k; j++) {
			esc[4 * j + 2] = hex[p[i + j] >> 4];
			esc[4 * j + 3] = hex[p[i + j] & 15];
		}
		put(&o, esc, 4 * k);
		i += k;
	}
	return o.used;
}

size_t
sv_escape(char *buf, size_t size, const char *s, size_t len)
{
	return escape_span(buf, size, s, len, len);
}

void
sv_escape_fputs(FILE *f, const char *s)
{
	char buf[512];
	size_t len = strlen(s), n;

	n = sv_escape(buf, sizeof buf, s, len);
	if (n < sizeof buf) {
		fputs(buf, f);
		return;
	}
	/* long string: escape in pieces at character boundaries */
	while (len > 0) {
		size_t chunk = len < 100 ? len : 100;

		while (chunk < len && ((unsigned char)s[chunk] & 0xc0) == 0x80)
			chunk++;
		/* a backslash at its end sees what follows it */
		escape_span(buf, sizeof buf, s, chunk, len);
		fputs(buf, f);
		s += chunk;
		len -= chunk;
	}
}

void
sv_json_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	fputc('"', f);
	while (i < len) {
		uint32_t cp = 0;
		size_t k = sv_utf8_decode(p + i, len - i, &cp);

		if (k == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		if (cp == '"' || cp == '\\') {
			fputc('\\', f);
			fputc((int)cp, f);
		} else if (is_control(cp) || sv_is_invisible(cp)) {
			/* JSON escapes are UTF-16: past U+FFFF, a pair */
			if (cp > 0xffff)
				fprintf(f, "\\u%04x\\u%04x",
				    0xd800 + ((cp - 0x10000) >> 10),
				    0xdc00 + ((cp - 0x10000) & 0x3ff));
			else
				fprintf(f, "\\u%04x", (unsigned)cp);
		} else {
			fwrite(s + i, 1, k, f);
		}
		i += k;
	}
	fputc('"', f);
}
