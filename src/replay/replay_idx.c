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
#include "util/xalloc.h"

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
		if (r == NULL && err->code == SV_ERR_CANCELLED)
			return -1;
		if (r == NULL) {
			/* an inconsistent device: no checkpoints for it;
			 * the commands that need them report the error
			 * themselves */
			sv_error_clear(err);
			continue;
		}
		sv_le64_put(head, d);
		sv_le64_put(head + 8, replay_checkpoints_len(r));
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
	.progress_passes = 2,
};

/* The replay.3 bytes of one device, read through the index's reader. */
struct dev_src {
	struct idx_reader *rd;
	uint64_t base;
};

static const uint8_t *
dev_span(void *ctx, uint64_t off, uint64_t n)
{
	struct dev_src *x = ctx;

	return off <= UINT64_MAX - x->base
	    ? idx_reader_span(x->rd, x->base + off, n) : NULL;
}

static void
dev_release(void *ctx)
{
	struct dev_src *x = ctx;

	idx_reader_free(x->rd);
	free(x);
}

/* The replay of device d from the section, read a piece at a time: a
 * seek decodes the pieces its checkpoint's blobs lie in (one or two of
 * the blobs' table and of the arena, on the files measured), not the
 * section (2.6 GB at 50 GB of snapshot). NULL when the section or the
 * device's record is not there or does not load. */
static struct replay *
from_section(const struct sv_index *ix, uint32_t d, struct sv_error *err)
{
	uint64_t len, off = 0;
	struct idx_reader *rd = idx_reader_open(ix, SECTION_NAME, &len);

	while (rd != NULL && len - off >= 16) {
		const uint8_t *p = idx_reader_span(rd, off, 16);
		uint64_t dev, blen;

		if (p == NULL)
			break;
		dev = sv_le64_get(p);
		blen = sv_le64_get(p + 8);
		off += 16;
		if (blen > len - off)
			break;
		if (dev == d) {
			struct dev_src *x = xmalloc(sizeof *x);
			struct replay_src src = {dev_span, x, dev_release};

			x->rd = rd;
			x->base = off;
			/* the reader lives as long as the replay, which
			 * reads ix's snapshot: ix must outlive both */
			return replay_new_saved_src(idx_snapshot(ix), d, &src,
			    blen, err);
		}
		off += blen;
	}
	idx_reader_free(rd);
	return NULL;
}

struct replay *
replay_from_index(const struct sv_index *ix, uint32_t d, struct sv_error *err)
{
	struct replay *r = from_section(ix, d, err);

	if (r != NULL)
		return r;
	sv_error_clear(err);
	return replay_new(idx_snapshot(ix), d, err);
}
