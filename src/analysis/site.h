#ifndef SNAPVIEW_ANALYSIS_SITE_H
#define SNAPVIEW_ANALYSIS_SITE_H
/*
 * Call sites: where user code asked for memory.
 *
 * A stack is innermost first and starts, with stacks='all', with C++
 * frames, then PyTorch's own Python. The call site is the first frame
 * that is not a framework frame (an_frame_is_framework): what users mean
 * by "the line that allocated". With frames = K the site is the first K
 * user frames (site, caller, ...); with a regex, the path starts at the
 * first frame whose "filename:line name" matches instead. A stack with
 * no user frame falls back to its first frame that the memory_viz filter
 * keeps (doc/snapshot-format.md §5), else its first frame; an empty stack is
 * the site "<no stack>".
 *
 * Sites are interned per table: an id indexes the table's paths. The
 * table caches the site of every stack id, so resolving an event is O(1)
 * after the first time its stack is seen.
 */
#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap_model.h"
#include "util/err.h"
#include "util/u64map.h"

#define AN_SITE_MAX_FRAMES 64

struct an_sites {
	const struct snapshot *s;   /* borrowed */
	uint32_t k;                 /* frames per site (>= 1) */
	int has_re;
	regex_t re;
	uint32_t *by_stack;         /* site id + 1 per stack; 0 = unresolved */
	/* Interned paths: site i is frames[off[i] .. off[i+1]). */
	uint32_t *off;
	uint32_t *frames;
	uint8_t *user;              /* site i starts at a user frame */
	uint32_t n, cap, cap_frames;
	struct u64map ids;          /* path hash -> site id */
};

/* Is frame f framework code (PyTorch, site-packages, C++, interpreter)
 * rather than user code? */
int an_frame_is_framework(const struct snapshot *s, uint32_t f);

/* Is frame f dropped by memory_viz's frame filter? */
int an_frame_filtered(const struct snapshot *s, uint32_t f);

/* Sets up a table for s (borrowed). k = 0 means 1. regex may be NULL;
 * a bad regex gives -1 with err set (SV_ERR_USAGE). */
int an_sites_init(struct an_sites *t, const struct snapshot *s, uint32_t k,
    const char *regex, struct sv_error *err);
void an_sites_destroy(struct an_sites *t);

/* Site id of a stack id. */
uint32_t an_site_of(struct an_sites *t, uint32_t stack);

/* The path from the site frame outward: up to max frame ids into out
 * (site first, then the user frames that called it). Returns the count
 * (0 for an empty stack). Independent of k. */
uint32_t an_site_path(struct an_sites *t, uint32_t stack, uint32_t *out,
    uint32_t max);

/* Frames of site id (borrowed): *n receives the count (0 = no stack). */
const uint32_t *an_site_frames(const struct an_sites *t, uint32_t site,
    uint32_t *n);

/* Does site id start at a user frame? */
int an_site_is_user(const struct an_sites *t, uint32_t site);

/* "filename:line name" of frame f into buf (raw file text: escape it
 * before printing). Returns buf. */
char *an_frame_label(const struct snapshot *s, uint32_t f, char *buf,
    size_t size);

/* Label of a site: its first frame's label, or "<no stack>". */
char *an_site_label(const struct an_sites *t, uint32_t site, char *buf,
    size_t size);

#endif
