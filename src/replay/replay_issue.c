/*
 * Lists of issues: what check reports, kept up to REPLAY_MAX_ISSUES.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "replay/replay_int.h"
#include "util/xalloc.h"

void
replay_issue_add(struct replay_issue **v, uint64_t *n, uint64_t *kept,
    int64_t ev, uint64_t addr, const char *fmt, ...)
{
	va_list ap;
	struct replay_issue *is;

	(*n)++;
	if (*kept >= REPLAY_MAX_ISSUES)
		return;
	if (*kept == 0)
		*v = xreallocarray(*v, 8, sizeof **v);
	else if (*kept >= 8 && (*kept & (*kept - 1)) == 0)
		*v = xreallocarray(*v, *kept * 2, sizeof **v);
	is = &(*v)[(*kept)++];
	is->ev = ev;
	is->addr = addr;
	va_start(ap, fmt);
	vsnprintf(is->msg, sizeof is->msg, fmt, ap);
	va_end(ap);
}
