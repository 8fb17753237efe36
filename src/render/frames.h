#ifndef SNAPVIEW_RENDER_FRAMES_H
#define SNAPVIEW_RENDER_FRAMES_H
/*
 * Call-stack display: which frames are the user's and which belong to the
 * framework, and folding of framework runs for the detail pane.
 *
 * The rules are analysis/frame.h's, shared with call sites and
 * categories: a frame is FRAMEWORK when its filename has a path component
 * torch/, site-packages/ or dist-packages/ (either slash, so Windows
 * paths too; doc/snapshot-format.md §16.5), or it is a C++ frame:
 * filename "??", empty, or not ending in ".py" (doc/snapshot-format.md
 * §16.7). It is FILTERED when memory_viz's frame filter would drop it
 * (doc/snapshot-format.md §5): such frames are hidden when folded and
 * shown when unfolded. In a stack with no user frame the
 * frames that name its call site (analysis/site.h: an autograd node and
 * its operator, a workspace, a framework Python frame) stay unfolded.
 */
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap_model.h"

enum frame_kind { FRAME_USER, FRAME_FRAMEWORK, FRAME_FILTERED };

/* Classifies a frame by its name and filename (NUL-terminated). */
enum frame_kind frames_classify(const char *name, const char *filename);

/* One line of a displayed stack: a frame, or a folded run of nfold
 * framework frames starting at stack position pos. */
struct frame_line {
	uint32_t pos;    /* index in the stack (0 = innermost) */
	uint32_t frame;  /* frame id of the first frame of the line */
	uint32_t nfold;  /* 0 = a single frame shown; > 0 = folded run */
	uint8_t kind;    /* enum frame_kind of the (first) frame */
	uint8_t pad[3];
};

/* Lays out stack `stack` of s into out (at most max lines). Folded
 * (unfold == 0): consecutive framework frames become one line, filtered
 * frames are counted into the run. Unfolded: one line per frame. Returns
 * the number of lines the full layout needs (may exceed max). */
size_t frames_layout(const struct snapshot *s, uint32_t stack, int unfold,
    struct frame_line *out, size_t max);

/* The frame that names the call site of a stack (analysis/site.h): the
 * first user frame (innermost first), else the frame a person recognises
 * (never an allocator frame); UINT32_MAX for an empty stack. */
uint32_t frames_call_site(const struct snapshot *s, uint32_t stack);

/* Writes "file:line name" of frame f, escaped for the terminal
 * (util/escape.h), into buf; returns buf. */
char *frames_format(const struct snapshot *s, uint32_t f, char *buf,
    size_t size);

/* Escaped label esc ("file:line name", or any text) shortened to w
 * cells into buf; returns buf. A path ("/dir/file.py:73 name") loses its
 * directories first, one at a time from the left ("…/file.py:73 name"),
 * then the "…/", then the end of its name ("file.py:73 na…"), then the
 * name ("file.py:73"); only when file and line alone do not fit is the
 * file name cut at the left, its line kept ("…ics.py:47"). Any other
 * text is cut at the left, which keeps its most specific end ("…Grad ->
 * at::mul"). */
char *frames_shorten(char *buf, size_t size, const char *esc, int w,
    int utf8);

#endif
