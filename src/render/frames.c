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
