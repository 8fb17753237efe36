/*
 * The "replay.3" extension section of the index: every device's checkpoints
 * in one blob. See replay_idx.h for the layout.
 */
#include "config.h"

#include "replay/replay_idx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay_ckpt.h"
#include "util/tape.h"

#define SECTION_NAME "replay.3"

/* Every device's checkpoints, appended to out as the replays are built:
 * each replay's own go to temporary files as they are made (at 10 GB of
 * snapshot they are about 500 MB, the largest thing an index build held
 * in memory), and out is one too once past a few MB. */
static int
build(const struct snapshot *s, void *arg, struct tape *out,
    struct sv_error *err)
{
	uint32_t d, n = snap_device_count(s);

	(void)arg;
	for (d = 0; d < n; d++) {
		const struct snap_trace *t = snap_trace_of(s, d);
		struct replay *r;
		uint8_t head[16];
		int e;

		if (t == NULL || t->n == 0)
			continue;
		r = replay_new_for_save(s, d, err);
		if (r == NULL) {
			/* an inconsistent device: no checkpoints for it;
			 * the commands that need them report the error
			 * themselves */
			sv_error_clear(err);
			continue;
		}
		le64_put(head, d);
		le64_put(head + 8, replay_checkpoints_len(r));
		tape_write(out, head, sizeof head);
		if (replay_checkpoints_write(r, out, &e) != 0) {
			replay_free(r);
			return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
			    "replay checkpoints: %s", strerror(e ? e : EIO));
		}
		replay_free(r);
	}
	return 0;
}

const struct idx_section_builder replay_idx_section = {
	.name = SECTION_NAME,
	.build_tape = build,
};

struct replay *
replay_from_index(const struct sv_index *ix, uint32_t d, struct sv_error *err)
{
	const struct snapshot *s = idx_snapshot(ix);
	const uint8_t *data;
	size_t len, off = 0;

	if (idx_section(ix, SECTION_NAME, &data, &len) == 0) {
		while (len - off >= 16) {
			uint64_t dev = le64_get(data + off);
			uint64_t blen = le64_get(data + off + 8);
			struct replay *r;

			off += 16;
			if (blen > len - off)
				break;
			if (dev == d) {
				/* the section lives as long as ix, and so
				 * must the replay, which reads ix's
				 * snapshot */
				r = replay_new_saved_view(s, d, data + off,
				    (size_t)blen, err);
				if (r != NULL)
					return r;
				sv_error_clear(err);
				break;
			}
			off += (size_t)blen;
		}
	}
	return replay_new(s, d, err);
}
