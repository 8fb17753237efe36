/*
 * What the rank screens write (ranks_int.h): the status line's message,
 * file names and text from files escaped and fitted, title bars, the
 * line that names the OOM and leaking ranks. Kept
 * apart so that the overview calls the comparison and both call this,
 * and no two files call each other.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "render/fmt.h"
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

/* The columns of s: a character a column (the labels are escaped). */
static int
cols_of(const char *s)
{
	int cols = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			cols++;
	return cols;
}

/* The byte after the first n characters of s. */
static const char *
skip_cols(const char *s, int n)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80 && n-- == 0)
			break;
	return s;
}

const char *
ranks_common_fit_middle(char *buf, size_t size, const char *s, int maxw,
    int utf8)
{
	const char *dots = utf8 ? "\xe2\x80\xa6" : "..";
	int cols = cols_of(s), keep, head;

	if (cols <= maxw || maxw < 4) {
		snprintf(buf, size, "%s", s);
		return buf;
	}
	keep = maxw - (utf8 ? 1 : 2);
	/* the end tells the file apart (rank, step, suffix): it gets two
	 * thirds */
	head = keep / 3;
	snprintf(buf, size, "%.*s%s%s", (int)(skip_cols(s, head) - s), s,
	    dots, skip_cols(s, cols - (keep - head)));
	return buf;
}

void
ranks_common_title_bar(struct cellbuf *cb, int y, const char *text, int utf8)
{
	cellbuf_fill(cb, 0, y, cb->w, 1, utf8 ? 0x2500 : '-', UIC_TITLE, 0);
	cellbuf_printf(cb, 0, y, cb->w, UIC_TITLE, CB_A_BOLD, "%s %s ",
	    utf8 ? "\xe2\x94\x80" : "-", text);
}

/* The ranks that hit an OOM (leak 0) or have a leak suspect (leak 1),
 * "HEAD rank N (what), rank M (what)", into buf in at most w cells:
 * those that do not fit are counted, ", and K more" (none fits: "HEAD K
 * ranks"). Returns how many there are (0: buf empty). */
static size_t
news_list(const struct rk_news *it, size_t n_it, int leak, const char *head,
    char *buf, size_t size, int w)
{
	char item[160], what[64], a[32];
	size_t i, n = 0, left = 0, len;
	int reserve, pass;

	for (pass = 0; pass < 2; pass++) {
		/* the second pass leaves room for ", and 99 more" */
		reserve = pass == 0 ? 0 : 14;
		buf[0] = '\0';
		n = left = 0;
		for (i = 0; i < n_it; i++) {
			if (leak ? !it[i].leak : it[i].ooms == 0)
				continue;
			if (leak)
				snprintf(what, sizeof what, "+%s a step",
				    fmt_size_short(a, sizeof a,
				    it[i].leak_per_step));
			else
				snprintf(what, sizeof what, "%" PRIu64
				    " OOM%s", it[i].ooms, it[i].ooms == 1 ?
				    "" : "s");
			snprintf(item, sizeof item, "%s rank %" PRId64 " (%s)",
			    n++ == 0 ? head : ",", it[i].rank, what);
			len = strlen(buf);
			if (left > 0 || (int)(len + strlen(item)) + reserve > w)
				left++;
			else
				snprintf(buf + len, size - len, "%s", item);
		}
		if (left == 0)
			return n;
	}
	len = strlen(buf);
	if (len == 0) /* not even one: how many */
		snprintf(buf, size, "%s %zu rank%s", head, n,
		    n == 1 ? "" : "s");
	else
		snprintf(buf + len, size - len, ", and %zu more", left);
	return n;
}

void
ranks_common_news(struct cellbuf *cb, int y, const struct rk_news *it,
    size_t n, const char *not_judged)
{
	char line[512], part[256];
	size_t i, n_oom, n_leak = 0;
	int w = cb->w - 1;

	for (i = 0; i < n; i++)
		n_leak += it[i].leak != 0;
	/* the OOMs first, leaving the leaks half the line when there are
	 * some */
	n_oom = news_list(it, n, 0, "OOM on", line, sizeof line,
	    n_leak > 0 ? w / 2 : w - 20);
	if (n_oom == 0)
		snprintf(line, sizeof line, "No OOM");
	if (n_leak > 0)
		news_list(it, n, 1, "leak suspect:", part, sizeof part,
		    w - (int)strlen(line) - 4);
	else if (not_judged != NULL)
		snprintf(part, sizeof part, "leaks not judged: %s",
		    not_judged);
	else
		snprintf(part, sizeof part, "no leak suspect");
	snprintf(line + strlen(line), sizeof line - strlen(line), " - %s.",
	    part);
	cellbuf_fill(cb, 0, y, cb->w, 1, ' ', UIC_DEFAULT, 0);
	cellbuf_puts(cb, 1, y, line, w, n_oom + n_leak > 0 ? UIC_ALERT :
	    UIC_DEFAULT, 0);
}
