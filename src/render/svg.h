#ifndef SNAPVIEW_RENDER_SVG_H
#define SNAPVIEW_RENDER_SVG_H
/*
 * The Active Memory Timeline as SVG: the bands of a grouped stacking
 * mode (tl_modes.h: by call site, by category, by stream, by pool with
 * each (pool, stream)'s envelope of free reserved memory above its
 * blocks), the same groups and bytes the viewer draws (tl_groups.h,
 * tl_envelope_bytes()), as filled paths, with
 * the peak, OOMs and steps marked, the axes and a legend. One <svg>
 * element, self-contained: no script, no link, no external reference;
 * every string from the snapshot XML-escaped (svg_text()), so it can be
 * a file of its own (the viewer's w) or sit inside an HTML page (snapview
 * report).
 *
 * Writes to the FILE * the caller hands it; errors stick in the stream.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "render/timeline.h"

enum svg_mark_kind {
	SVG_MARK_PEAK,
	SVG_MARK_OOM,
	SVG_MARK_STEP,
	SVG_MARK_ANNOTATION
};

/* A vertical line over the chart after event ev, label as a tooltip
 * (<title>; untrusted text, escaped here; may be NULL). */
struct svg_mark {
	int64_t ev;
	int kind;
	const char *label;
};

struct svg_opts {
	int width, height;        /* of the plot area and axes, pixels */
	int st;                   /* enum tl_stack: a grouped mode */
	uint32_t bands;           /* groups drawn (the rest: "other") */
	const struct svg_mark *marks;
	size_t n_marks;
	const char *title;        /* untrusted; may be NULL */
	int xml_decl;             /* a standalone file: <?xml ...?> first */
};

/* Writes the timeline of m (its mode o->st prepared here) as one <svg>.
 * Returns 0, or -1 with the reason in why when the mode is not
 * available. */
int svg_timeline(FILE *f, struct tl_model *m, const struct svg_opts *o,
    char *why, size_t size);

/* s with &, <, >, " and ' as character references: text and attribute
 * values alike. */
void svg_text(FILE *f, const char *s);

#endif
