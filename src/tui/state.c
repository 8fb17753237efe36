/*
 * State at the cursor, from the replay engine. If the replay cannot be
 * built or cannot reach an event (a damaged saved checkpoint), the pane
 * falls back to the final segments of the device and its title says
 * "(final)".
 */
#include "config.h"

#include "tui/state.h"

#include <stdlib.h>
#include <string.h>

#include "replay/replay_idx.h"

/*
 * The final segments of device d as the replay engine reads them (blocks
 * laid end to end inside their segment, free neighbours merged, inactive
 * blocks without a requested size, segments by address): a replay of the
 * snapshot with its traces hidden is a replay with no events, whose one
 * state is the end (replay.h, legacy_no_trace). Its event number is the
 * device's last event, as the state shown stands for it.
 */
static const struct replay_state *
final_state(struct state_src *src)
{
	struct sv_error err;

	if (src->final == NULL) {
		sv_error_clear(&err);
		src->untraced = *src->snap;
		src->untraced.traces = NULL;
		src->untraced.n_traces = 0;
		src->final = replay_new(&src->untraced, src->device, &err);
		if (src->final != NULL)
			src->fin = *replay_state(src->final);
		src->fin.at = src->last;
	}
	src->showing_final = 1;
	return &src->fin;
}

static void
src_init(struct state_src *src, const struct snapshot *s, uint32_t d)
{
	const struct snap_trace *t = snap_trace_of(s, d);

	memset(src, 0, sizeof *src);
	src->snap = s;
	src->device = d;
	src->last = t != NULL ? (int64_t)t->n - 1 : -1;
}

void
state_open_final(struct state_src *src, const struct snapshot *s,
    uint32_t d)
{
	src_init(src, s, d);
	final_state(src);
}

int
state_open(struct state_src *src, const struct sv_index *ix,
    const struct snapshot *s, uint32_t d, struct sv_error *err)
{
	src_init(src, s, d);
	src->replay = ix != NULL ? replay_from_index(ix, d, err)
				 : replay_new(s, d, err);
	if (src->replay != NULL)
		return 0;
	final_state(src);
	return -1;
}

void
state_close(struct state_src *src)
{
	replay_free(src->replay);
	replay_free(src->final);
	memset(src, 0, sizeof *src);
}

const struct replay_state *
state_at(struct state_src *src, int64_t at)
{
	struct sv_error err;

	if (src->replay != NULL) {
		sv_error_clear(&err);
		if (at > src->last)
			at = src->last;
		if (at < -1)
			at = -1;
		if (replay_seek(src->replay, at, &err) == 0) {
			src->showing_final = 0;
			return replay_state(src->replay);
		}
	}
	return final_state(src);
}

int
state_exact(const struct state_src *src, int64_t at)
{
	return !src->showing_final || at == src->last;
}
