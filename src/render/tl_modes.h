#ifndef SNAPVIEW_RENDER_TL_MODES_H
#define SNAPVIEW_RENDER_TL_MODES_H
/*
 * The timeline's stacking modes, once: one row of TL_STACK_INFO per mode,
 * _(ID, name, title, noun, nouns, grouper), in the order m cycles
 * through them. It gives enum tl_stack and tl_modes[], which everything
 * that names a mode or treats the modes apart reads (the title bar, the
 * status messages, the legend, the detail pane, m, the viewer's
 * background builds):
 *
 *   name     what the status messages call the mode ("call site bands:
 *            ...", "bands: by call site"), as snapview(1) does
 *   title    what the timeline's title bar adds in the mode ("by site";
 *            "" adds nothing)
 *   noun     what one band or group is, in the legend and the detail
 *            pane ("Call site @ #12")
 *   nouns    its plural ("other call sites")
 *   grouper  the mode's builder: how it groups the allocations into
 *            bands, labels a group and gets ready (a struct tl_grouper,
 *            static in tl_modes.c, where the table is instantiated);
 *            NULL for the two layer modes, which stack the elements one
 *            by one: allocations (built with the model, timeline.c) and
 *            segments (tl_segs.h, reserved memory).
 *
 * A new grouped mode is one row here and its grouper in tl_modes.c.
 * Code that has to decide something for every mode switches on enum
 * tl_stack with no default, so that -Wswitch (in -Wall) names a mode
 * left out; everything else looks the mode up here. The strings are
 * constants: nothing frees them.
 */

#define TL_STACK_INFO(_)                                                       \
	_(TL_STACK_ALLOC, "allocation", "", "allocation", "allocations",      \
	    NULL)                                                              \
	_(TL_STACK_SITE, "call site", "by site", "call site", "call sites",   \
	    &group_by_site)                                                    \
	_(TL_STACK_CATEGORY, "category", "by category", "category",           \
	    "categories", &group_by_category)                                  \
	_(TL_STACK_STREAM, "stream/pool", "by stream", "stream", "streams",   \
	    &group_by_stream)                                                  \
	_(TL_STACK_SEGMENT, "segment", "", "segment", "segments", NULL)       \
	_(TL_STACK_POOL, "pool", "by pool", "pool", "pools", &group_by_pool)

enum tl_stack {
#define TL_STACK_ENUM(id, name, title, noun, nouns, grouper) id,
	TL_STACK_INFO(TL_STACK_ENUM)
#undef TL_STACK_ENUM
};

/* Outside enum tl_stack, so that a switch on it lists the modes only. */
enum {
#define TL_STACK_ONE(id, name, title, noun, nouns, grouper) +1
	TL_STACK_COUNT = 0 TL_STACK_INFO(TL_STACK_ONE)
#undef TL_STACK_ONE
};

struct tl_grouper;

struct tl_mode {
	const char *name;
	const char *title;
	const char *noun, *nouns;
	const struct tl_grouper *grouper;  /* NULL: a layer mode */
};

/* Indexed by enum tl_stack. */
extern const struct tl_mode tl_modes[TL_STACK_COUNT];

/* The name of mode st ("call site"), "?" when st is no mode. */
const char *tl_stack_name(int st);

/* Is st one of the grouped modes (one band per group, "other" on top)? */
int tl_stack_grouped(int st);

/* The other modes built in the same pass over the trace as mode st when
 * they are not built yet (bits 1 << mode): the grouped modes whose groups
 * need nothing but the snapshot and the timeline share one pass, and a
 * mode whose groups come from one of theirs (the pool mode's from the
 * stream/pool mode's) is built right after it. */
unsigned tl_stack_pass_mates(int st);

#endif
