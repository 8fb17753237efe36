/*
 * Framework-frame folding and call sites for displayed stacks.
 */
#include "config.h"

#include "render/frames.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/frame.h"
#include "analysis/site.h"
#include "util/escape.h"

enum frame_kind
frames_classify(const char *name, const char *filename)
{
	switch (an_frame_kind(name, filename)) {
	case AN_FRAME_USER: return FRAME_USER;
	case AN_FRAME_FILTERED: return FRAME_FILTERED;
	default: return FRAME_FRAMEWORK;
	}
}

static enum frame_kind
kind_of(const struct snapshot *s, uint32_t f)
{
	const struct snap_frame *fr = &s->frames[f];

	return frames_classify(snap_str(s, fr->name),
	    snap_str(s, fr->filename));
}

size_t
frames_layout(const struct snapshot *s, uint32_t stack, int unfold,
    struct frame_line *out, size_t max)
{
	const uint32_t *fs;
	struct an_stack_site ss;
	uint32_t n, i;
	size_t k = 0;
	int in_run = 0;

	fs = snap_stack(s, stack, &n);
	/* a stack with no user frame keeps the frames that name its site */
	an_stack_site(s, stack, &ss);
	if (ss.kind == AN_SITE_USER)
		ss.pos = ss.aux_pos = UINT32_MAX;
	for (i = 0; i < n; i++) {
		enum frame_kind kind = fs[i] < s->n_frames ? kind_of(s, fs[i])
		    : FRAME_FRAMEWORK;
		int fold = !unfold && kind != FRAME_USER && i != ss.pos &&
		    i != ss.aux_pos;

		if (fold && in_run) {
			if (k - 1 < max)
				out[k - 1].nfold++;
			continue;
		}
		in_run = fold;
		if (k < max) {
			out[k].pos = i;
			out[k].frame = fs[i];
			out[k].nfold = fold ? 1 : 0;
			out[k].kind = (uint8_t)kind;
		}
		k++;
	}
	return k;
}

uint32_t
frames_call_site(const struct snapshot *s, uint32_t stack)
{
	struct an_stack_site ss;

	an_stack_site(s, stack, &ss);
	return ss.kind == AN_SITE_NONE ? UINT32_MAX : ss.frame;
}

char *
frames_format(const struct snapshot *s, uint32_t f, char *buf, size_t size)
{
	char file[256], name[256];
	const struct snap_frame *fr;
	const char *fn, *nm;

	if (f >= s->n_frames) {
		snprintf(buf, size, "?");
		return buf;
	}
	fr = &s->frames[f];
	fn = snap_str(s, fr->filename);
	nm = snap_str(s, fr->name);
	sv_escape(file, sizeof file, fn, strlen(fn));
	sv_escape(name, sizeof name, nm, strlen(nm));
	if (fr->line == UINT64_MAX || fr->line == 0)
		snprintf(buf, size, "%s %s", file, name);
	else
		snprintf(buf, size, "%s:%" PRIu64 " %s", file, fr->line, name);
	return buf;
}

/* ---- shortening ---------------------------------------------------------- */

/* Skips n code points of s. */
static const char *
skip_cells(const char *s, int n)
{
	for (; n > 0 && *s != '\0'; n--)
		for (s++; ((unsigned char)*s & 0xc0) == 0x80; s++)
			;
	return s;
}

/* The first code points of s that fit w cells, then dots. */
static void
cut_right(char *buf, size_t size, const char *s, int w, const char *dots,
    int nd)
{
	const char *e = skip_cells(s, w - nd);

	snprintf(buf, size, "%.*s%s", (int)(e - s), s, dots);
}

char *
frames_shorten(char *buf, size_t size, const char *esc, int w, int utf8)
{
	const char *dots = utf8 ? "\xe2\x80\xa6" : "...", *sp, *p, *file;
	const char *colon;
	int n = sv_utf8_cells(esc), nd = utf8 ? 1 : 3;

	if (w <= nd || n <= w) {
		snprintf(buf, size, "%s", esc);
		return buf;
	}
	/* the file is after the last '/' before the name; a label with no
	 * directory is a file when a line number follows its ':' */
	sp = strchr(esc, ' ');
	file = NULL;
	for (p = esc; *p != '\0' && (sp == NULL || p < sp); p++)
		if (*p == '/' || *p == '\\')
			file = p + 1;
	colon = strchr(esc, ':');
	if (file == NULL && colon != NULL && (sp == NULL || colon < sp) &&
	    colon[1] >= '0' && colon[1] <= '9')
		file = esc;
	if (file != NULL && *file != '\0') {
		/* "…/" then the rest from each separator, longest first */
		for (p = esc + 1; p <= file && file != esc; p++)
			if ((p[-1] == '/' || p[-1] == '\\') &&
			    sv_utf8_cells(p - 1) + nd <= w) {
				snprintf(buf, size, "%s%s", dots, p - 1);
				return buf;
			}
		if (sv_utf8_cells(file) <= w) {
			snprintf(buf, size, "%s", file);
			return buf;
		}
		/* file:line whole, the name cut at its end, else left out */
		colon = strchr(file, ':');
		sp = strchr(file, ' ');
		if (sp != NULL && (colon == NULL || colon < sp) &&
		    sv_utf8_cells(file) - sv_utf8_cells(sp) + 2 + nd <= w) {
			cut_right(buf, size, file, w, dots, nd);
			return buf;
		}
		if (sp != NULL && (colon == NULL || colon < sp)) {
			n = sv_utf8_cells(file) - sv_utf8_cells(sp);
			if (n <= w) {
				snprintf(buf, size, "%.*s", (int)(sp - file),
				    file);
				return buf;
			}
			/* the end of the file and its line */
			snprintf(buf, size, "%s%.*s", dots,
			    (int)(sp - skip_cells(file, n - (w - nd))),
			    skip_cells(file, n - (w - nd)));
			return buf;
		}
		esc = file;
		n = sv_utf8_cells(esc);
	}
	snprintf(buf, size, "%s%s", dots, skip_cells(esc, n - (w - nd)));
	return buf;
}
