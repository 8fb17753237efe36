#ifndef SNAPVIEW_TUI_EXPORT_H
#define SNAPVIEW_TUI_EXPORT_H
/*
 * Export (w) and copy (C): the open view, or the stack in the detail
 * pane, as text to a file or to the clipboard. See export.c for how a
 * file is opened.
 */
#include <stdio.h>

#include "tui/app.h"

/* Opens the file name prompt (PROMPT_EXPORT), with a name to start. */
void export_begin(struct app *a);
/* Writes to the file name: creates it, or asks (PROMPT_CONFIRM) when it
 * exists. The outcome is in a->msg. */
void export_to(struct app *a, const char *name);
/* The answer to the question: overwrite (yes) the file asked about. */
void export_confirm(struct app *a, int yes);

/* How much of text[0..len) C copies when it may copy max bytes. */
size_t export_copy_len(const char *text, size_t len, size_t max);

/* Copies the stack in the detail pane to the clipboard with an OSC 52
 * sequence written to term (the terminal). */
void export_copy_stack(struct app *a, FILE *term);

#endif
