#ifndef SNAPVIEW_TUI_STATE_H
#define SNAPVIEW_TUI_STATE_H
/*
 * The allocator state at the cursor, for the segment pane. Wraps the
 * replay engine; when the replay cannot be built or cannot reach an event
 * the state is the final one from the snapshot's segments, as the replay
 * engine reads them (state_exact() says which).
 */
#include <stdint.h>

#include "index/idx.h"
#include "replay/replay.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

struct state_src {
	const struct snapshot *snap; /* borrowed */
	uint32_t device;
	int64_t last;                /* last event of the device */
	struct replay *replay;       /* owned; NULL in final-state mode */
	struct replay *final;        /* owned: the final state, made on need */
	struct snapshot untraced;    /* snap without its traces (what final
					replays: no events, the end state) */
	struct replay_state fin;     /* final's state, at = last */
	int showing_final;           /* the last state_at() gave fin */
};

/* Opens the state of device d of s (the snapshot of ix, whose saved
 * checkpoints are used, when ix is not NULL). Returns 0, or -1 with err
 * set when only the final state can be shown (the source is usable
 * either way). */
int state_open(struct state_src *src, const struct sv_index *ix,
    const struct snapshot *s, uint32_t d, struct sv_error *err);
/* Opens the state of device d of s with no replay (yet): the final
 * state until state_close() and a state_open() that has one. */
void state_open_final(struct state_src *src, const struct snapshot *s,
    uint32_t d);
void state_close(struct state_src *src);

/* State after event at (-1 .. last); borrowed until the next call. */
const struct replay_state *state_at(struct state_src *src, int64_t at);

/* 1 when the last state_at(at) gave the exact state at `at`, 0 when it
 * showed the final state instead. */
int state_exact(const struct state_src *src, int64_t at);

#endif
