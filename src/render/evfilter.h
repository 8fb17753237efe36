#ifndef SNAPVIEW_RENDER_EVFILTER_H
#define SNAPVIEW_RENDER_EVFILTER_H
/*
 * Event filters of the event table, and the frame-text match it shares
 * with search. A filter is typed as words, all of which must hold:
 *
 *   alloc free_requested ... oom   actions (any of those named); "free"
 *                                  is both frees, "segment" every
 *                                  segment action
 *   >1M  >=1M  <4K  <=4K  =512     requested size (units B K M G T, binary)
 *   1M..4M                         size range, inclusive
 *   stream=N                       stream (decimal or 0x hex)
 *   0x7f3a02a00000                 events whose range holds the address
 *   anything else                  frame text: a frame's "file:line name"
 *                                  contains it, in any case (the words
 *                                  joined by spaces)
 *
 * Matching reads one event through the snap_ev_* accessors and, for
 * frame text, one byte per stack resolved once per filter.
 */
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap_model.h"

struct evfilter {
	uint32_t actions;        /* bit per known action; 0 = any */
	uint64_t size_min, size_max;
	int has_stream;
	uint64_t stream;
	int has_addr;
	uint64_t addr;
	char text[128];          /* frame text, lower case; "" = any */
	uint8_t *stack_match;    /* per stack id, with text */
	uint32_t n_stacks;
	char desc[256];          /* the words, as typed (printable ASCII) */
};

/* Parses q into f (replacing it). Returns 0, or -1 with a reason in err
 * (f unchanged). */
int evfilter_parse(struct evfilter *f, const struct snapshot *s,
    const char *q, char *err, size_t errsize);
void evfilter_destroy(struct evfilter *f);
/* No condition at all. */
int evfilter_empty(const struct evfilter *f);
/* Does event i of t pass? */
int evfilter_match(const struct evfilter *f, const struct snap_trace *t,
    uint64_t i);

/* Per stack id of s (n_stacks + 1 bytes, caller frees): 1 when a frame of
 * the stack has a "filename:line name" that contains text (lower case)
 * without regard to ASCII case; a text ending in a digit must not be
 * followed by one there (":11" is not ":110"). */
uint8_t *evfilter_stacks(const struct snapshot *s, const char *text);
/* The same per frame id (n_frames + 1 bytes, caller frees): 1 when the
 * frame's "filename:line name" contains text as above. */
uint8_t *evfilter_frames(const struct snapshot *s, const char *text);

/* Parses a size with an optional binary unit ("512", "4K", "1.5M",
 * "2GiB"). Returns 0 and *out, or -1. */
int evfilter_parse_size(const char *s, uint64_t *out);

#endif
