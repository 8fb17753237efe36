#ifndef SNAPVIEW_RENDER_TL_SAMPLE_H
#define SNAPVIEW_RENDER_TL_SAMPLE_H
/*
 * Sampled bands: a grouped mode drawn before its curves are built.
 *
 * A grouped mode's curves take a pass over every allocation and every
 * event (seconds at 10 GB). The columns on screen need only the bytes of
 * each group after one event a column. Those come from the replay: its
 * state after the event holds every live block; each block's allocation
 * is the timeline element its alloc event starts (a block alive since
 * before the trace: the element at its address among those alive the
 * whole trace, else one made from the block, as the index makes it from
 * the free), grouped by the mode's own group function, so the bands are
 * the ones the curves give there. Each state's bytes are checked against
 * the timeline's total after the event: a state that disagrees (a
 * damaged or inconsistent file) makes the mode wait for its curves.
 *
 * The sampled curves are the model's groups of the mode
 * (tl_groups_sampled: exact at the sampled events, held between them),
 * with m->groups_sampled[st] set and groups_ok[st] still 0; the model's
 * thread only. tl_model_adopt drops them for the built ones
 * (tl_sample_drop).
 */
#include <stddef.h>
#include <stdint.h>

#include "render/timeline.h"
#include "render/tl_groups.h"
#include "replay/replay.h"

/* How a mode groups (its grouper's, tl_modes.c): setup readies m for
 * group_of (once, before the first sample) and gives the ids' bound. */
struct tl_sampler {
	int (*setup)(struct tl_model *m, uint32_t *max_groups, char *why,
	    size_t size);
	tl_group_fn group_of;
};

/* Can mode st of m still be sampled: not built, and not found unable
 * before? (Which modes can be at all is tl_model_sample_able's.) */
int tl_sample_able(const struct tl_model *m, int st);

/* Samples mode st of m, grouped as how says, after each of the n events
 * ev (any order, -1 .. n_events - 1; those sampled before are not
 * again) with replay r, which it moves (*moved: 1 when it did). Returns
 * 0 when m's groups of st hold the bytes of every group after each of
 * them, or -1 with why (the mode cannot be sampled, which
 * tl_sample_able says from then on). */
int tl_sample_cover(struct tl_model *m, int st, const struct tl_sampler *how,
    struct replay *r, const int64_t *ev, size_t n, int *moved, char *why,
    size_t size);

/* Events sampled for mode st (0: none). */
size_t tl_sample_count(const struct tl_model *m, int st);

/* Drops mode st's samples and its sampled groups. */
void tl_sample_drop(struct tl_model *m, int st);

#endif
