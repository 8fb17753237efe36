/*
 * The two things every file of src/tui may do to the shared state: set
 * the status message and open the prompt. Nothing in here calls another
 * file of src/tui, so calling it never makes a call cycle (the panes,
 * the views, the loop and export.c all do).
 */
#include "config.h"

#include "tui/app.h"

#include <stdarg.h>
#include <stdio.h>
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
