/*
 * What both rank screens write (ranks_int.h): the status line's message,
 * file names and text from files escaped and fitted, title bars. Kept
 * apart so that the overview calls the comparison and both call this,
 * and no two files call each other.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tui/ranks_int.h"
#include "util/escape.h"

void
ranks_common_msgf(struct rk *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

void
ranks_common_message(struct rk *r, const char *msg)
{
	char esc[sizeof r->msg];

	sv_escape(esc, sizeof esc, msg, strlen(msg));
	snprintf(r->msg, sizeof r->msg, "%s", esc);
}

const char *
ranks_common_base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b != NULL && b[1] != '\0' ? b + 1 : path;
}

const char *
ranks_common_member_label(const struct rk *r, size_t member, char *buf,
    size_t size)
{
	size_t k;

	for (k = 0; r->run != NULL && member < r->run->n_members &&
	    k < r->run->n_ranks * r->run->n_steps; k++)
		if (r->run->cells[k].member == member) {
			snprintf(buf, size, "rank %lld step %lld",
			    (long long)r->run->ranks[k / r->run->n_steps],
			    (long long)r->run->steps[k % r->run->n_steps]);
			return buf;
		}
	return ranks_common_shown(buf, size,
	    ranks_common_base_name(r->rs.m[member].path));
}

const char *
ranks_common_shown(char *buf, size_t size, const char *s)
{
	sv_escape(buf, size, s, strlen(s));
	return buf;
}

const char *
ranks_common_fit_left(char *buf, size_t size, const char *s, int maxw, int utf8)
{
	int cols = 0;
	const char *p;

	for (p = s; *p != '\0'; p++)
		if (((unsigned char)*p & 0xc0) != 0x80)
			cols++;
	if (cols <= maxw || maxw < 4) {
		snprintf(buf, size, "%s", s);
		return buf;
	}
	/* skip cols - maxw + 1 characters, the ellipsis takes one */
	cols -= maxw - (utf8 ? 1 : 2);
	for (p = s; *p != '\0' && cols > 0; p++)
		if (((unsigned char)p[1] & 0xc0) != 0x80)
			cols--;
	snprintf(buf, size, "%s%s", utf8 ? "\xe2\x80\xa6" : "..", p);
	return buf;
}

void
ranks_common_title_bar(struct cellbuf *cb, int y, const char *text, int utf8)
{
	cellbuf_fill(cb, 0, y, cb->w, 1, utf8 ? 0x2500 : '-', UIC_TITLE, 0);
	cellbuf_printf(cb, 0, y, cb->w, UIC_TITLE, CB_A_BOLD, "%s %s ",
	    utf8 ? "\xe2\x94\x80" : "-", text);
}
