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
 * before the trace: the element alive before the trace at its address,
 * a free without alloc or a ghost), grouped by the
 * mode's own group function, so the bands are
 * the ones the curves give there. Each state's bytes are checked against
 * the timeline's total after the event: a state that disagrees (a
 * damaged or inconsistent file) makes every mode wait for its curves.
 * The seek is most of a sample's cost: the elements live after each
 * event are kept (the live sets, for every mode, each element once, and
 * its group once per mode), so another mode sampled after the same
 * events needs none.
 *
 * The sampled curves are the model's groups of the mode
 * (tl_groups_sampled: exact at the sampled events, held between them),
 * with m->groups_sampled[st] set and groups_ok[st] still 0; the model's
 * thread only. tl_model_adopt drops them for the built ones
 * (tl_sample_drop). What they cannot know is the groups that hold bytes
 * at no sampled event: their count (n, n_used) is of the groups seen,
 * so the legend's "other" entry, which a mode whose groups all have a
 * band leaves out, can be missing until the build.
 */
#include <stddef.h>
#include <stdint.h>

#include "render/timeline.h"
#include "render/tl_groups.h"
#include "replay/replay.h"

/* How a mode groups (its grouper's, tl_modes.c): setup readies m for
 * group_of (once, before the first sample) and gives the ids' bound;
 * find_elem finds the element alive at an address after an event
 * (tl_model_find_elem), for the blocks alive since before the trace. */
struct tl_sampler {
	int (*setup)(struct tl_model *m, uint32_t *max_groups, char *why,
	    size_t size);
	tl_group_fn group_of;
	uint64_t (*find_elem)(const struct tl_model *m, uint64_t addr,
	    int64_t at);
};

/* Can mode st of m still be sampled: not built, and not found unable
 * before? (Which modes can be at all is tl_model_sample_able's.) */
int tl_sample_able(const struct tl_model *m, int st);

/* Samples mode st of m, grouped as how says, after the n events ev (-1
 * .. n_events - 1; those sampled before are not again) in their order,
 * with replay r, which it moves (*moved: 1 when it did), until
 * budget_us microseconds have passed (0: no limit; one event at least).
 * Returns 0 when m's groups of st hold the bytes of every group after
 * each of them; 1 when some are left for another call (the groups hold
 * those sampled: a column not sampled yet shows the sample before it);
 * -1 with why when nothing is sampled, and when the mode cannot be
 * (which tl_sample_able says from then on). */
int tl_sample_cover(struct tl_model *m, int st, const struct tl_sampler *how,
    struct replay *r, const int64_t *ev, size_t n, long long budget_us,
    int *moved, char *why, size_t size);

/* Reads the replay's states after the n events ev, as tl_sample_cover
 * would (the same returns; of how, only find_elem), into the live sets
 * every mode's samples are summed from: a mode sampled after the same
 * events later needs no seek. */
int tl_sample_states(struct tl_model *m, const struct tl_sampler *how,
    struct replay *r, const int64_t *ev, size_t n, long long budget_us,
    int *moved, char *why, size_t size);

/* Drops the live sets (once no mode is sampled any more). */
void tl_sample_live_drop(struct tl_model *m);

/* Events sampled for mode st (0: none). */
size_t tl_sample_count(const struct tl_model *m, int st);

/* Drops mode st's samples and its sampled groups. */
void tl_sample_drop(struct tl_model *m, int st);

#endif
