/*
 * The two things every file of src/tui may do to the shared state: set
 * the status message and open the prompt; and the one reader of the
 * numbers the tests set in the environment. Nothing in here calls
 * another file of src/tui, so calling it never makes a call cycle (the
 * panes, the views, the loop and export.c all do).
 */
#include "config.h"

#include "tui/app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
app_msg(struct app *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->msg, sizeof a->msg, fmt, ap);
	va_end(ap);
}

void
app_prompt(struct app *a, enum prompt_mode m, const char *label,
    const char *init)
{
	a->prompt = m;
	snprintf(a->plabel, sizeof a->plabel, "%s", label);
	snprintf(a->pbuf, sizeof a->pbuf, "%s", init != NULL ? init : "");
	a->plen = (int)strlen(a->pbuf);
}

uint64_t
app_test_number(const char *name, uint64_t dflt)
{
	const char *e = getenv(name);
	char *end;
	unsigned long long v;

	if (e == NULL || e[0] == '\0')
		return dflt;
	v = strtoull(e, &end, 10);
	return *end == '\0' && e[0] != '-' ? v : dflt;
}
