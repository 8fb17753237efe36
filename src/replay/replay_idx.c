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
#include "replay/replay_int.h"
#include "util/tape.h"
#include "util/xalloc.h"

#define SECTION_NAME "replay.3"

/* ---- the forward passes made beside the parse (replay_early.c) ---- */

/* Devices from this number on get none: every device's pass is held at
 * once, until the parse ends (a node has up to 16 GPUs; the host's
 * pinned memory, SNAP_HOST_DEVICE, is built after the parse). */
#define EARLY_DEVICES 64
/* The checkpoints' bytes a pass keeps in memory before its tapes go to
 * temporary files: less than a build's (CKPT_TAPE_MEM), as the parse's
 * memory is held beside it (at 256 KiB a 1 GB file's peak RSS was 1.1
 * MiB over a build's without the pass, at 64 KiB 0.8). */
#define EARLY_TAPE_MEM (64u << 10)

/* Each device's pass so far, by device; NULL when it has none or its
 * pass gave up (gave_up[d]). */
struct early {
	struct replay **dev;
	uint8_t *gave_up;
	uint32_t n;
	/* the final segments of each device, as the parse had them before
	 * the first event (stream_begin), by device */
	struct finseg **fin;
	size_t *n_fin;
	uint32_t n_fin_dev;
};

static void *
early_new(void *arg)
{
	(void)arg;
	return xcalloc(1, sizeof(struct early));
}

/* Before the first event, on the parsing thread: each device's final
 * segments, copied (the parse goes on filling s). */
static void
early_begin(void *st, const struct snapshot *s)
{
	struct early *x = st;

	x->fin = xcalloc(EARLY_DEVICES, sizeof *x->fin);
	x->n_fin = xcalloc(EARLY_DEVICES, sizeof *x->n_fin);
	x->n_fin_dev = EARLY_DEVICES;
	replay_early_final(s, EARLY_DEVICES, x->fin, x->n_fin);
}

/* The events of one batch, to their devices' passes. */
static void
early_stream(void *st, const struct snap_evrec *first, size_t n,
    size_t stride)
{
	struct early *x = st;
	size_t k;

	for (k = 0; k < n; k++) {
		const struct snap_evrec *v = (const void *)
		    ((const char *)first + k * stride);
		uint32_t d = v->device;
		struct rev e;

		if (d >= EARLY_DEVICES)
			continue;
		if (d >= x->n) {
			x->dev = xreallocarray(x->dev, d + 1, sizeof *x->dev);
			x->gave_up = xreallocarray(x->gave_up, d + 1, 1);
			memset(x->dev + x->n, 0, (d + 1 - x->n) *
			    sizeof *x->dev);
			memset(x->gave_up + x->n, 0, d + 1 - x->n);
			x->n = d + 1;
		}
		if (x->gave_up[d])
			continue;
		if (x->dev[d] == NULL)
			x->dev[d] = replay_early_new(d, EARLY_TAPE_MEM,
			    d < x->n_fin_dev ? x->fin[d] : NULL,
			    d < x->n_fin_dev ? x->n_fin[d] : 0);
		rev_make(&e, v->action, v->addr, v->size, v->stream, v->stack);
		if (replay_early_event(x->dev[d], &e, v->pool != 0) != 0) {
			replay_free(x->dev[d]);
			x->dev[d] = NULL;
			x->gave_up[d] = 1;
		}
	}
}

static void
early_free(void *st)
{
	struct early *x = st;
	uint32_t d;

	for (d = 0; d < x->n; d++)
		replay_free(x->dev[d]);
	for (d = 0; d < x->n_fin_dev; d++)
		free(x->fin[d]);
	free(x->fin);
	free(x->n_fin);
	free(x->dev);
	free(x->gave_up);
	free(x);
}

/* Device d's pass, handed over (NULL when there is none); the build
 * settles it (replay_early_settle()). */
static struct replay *
early_take(struct early *x, uint32_t d)
{
	struct replay *r;

	if (x == NULL || d >= x->n)
		return NULL;
	r = x->dev[d];
	x->dev[d] = NULL;
	return r;
}

/* ---- the section ------------------------------------------------------ */

/* Every device's checkpoints, appended to out as the replays are built:
 * each replay's own go to temporary files as they are made (at 10 GB of
 * snapshot they are about 500 MB, the largest thing an index build held
 * in memory), and out is one too once past a few MB. */
static int
build(const struct snapshot *s, void *arg, void *early, struct tape *out,
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
		r = replay_build(s, d, CKPT_TAPE_MEM, early_take(early, d),
		    err);
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
	.stream_new = early_new,
	.stream_begin = early_begin,
	.stream = early_stream,
	.stream_free = early_free,
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
