/*
 * Fuzz target: the replay's saved checkpoints, what the index keeps so
 * that a reopen seeks at once: read as the index reads them, a span at
 * a time (replay_new_saved_src()), and whole (replay_new_saved()). The
 * input is the bytes replay_checkpoints_save() wrote for a fixed
 * snapshot built here (three segments, allocs and frees over 9,500
 * events: several checkpoints; two findings of the forward pass); read
 * whole, the harness recomputes the trailing XXH3, as whoever writes
 * the index can, so that mutations reach the decoders. A buffer that
 * loads is then seeked to eight events picked from the input and
 * checked as the commands read it:
 *   - every state shown is possible (segments in order and apart, below
 *     2^64; blocks tiling their segment, each non-empty; a requested
 *     size at most its block; the totals their sums);
 *   - a refused seek says why (bad input), and the replay goes on;
 *   - replay_check() runs to the end.
 * SNAPVIEW_FUZZ_CKPT_SEEDS=DIR writes the valid buffer to DIR/seed.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "fuzz.h"
#include "replay/replay.h"
#include "snapshot/snap_model.h"

#define BASE 0x7f0000000000ull
#define MIB (1024ull * 1024)

static struct snapshot *snap;

static void
push(struct snapshot *s, unsigned action, uint64_t addr, uint64_t size)
{
	snap_trace_push(s, snap_trace_get(s, 0), action, addr, size, 0, 0);
}

/* A final segment of the file with blocks {size, state, requested}. */
static void
final(struct snapshot *s, uint64_t addr, const uint64_t (*b)[3], int nb)
{
	struct snap_segment *sg = snap_push_segment(s);
	uint64_t off = addr;
	int i;

	sg->addr = addr;
	sg->is_large = 1;
	sg->first_block = s->n_blocks;
	sg->n_blocks = (uint32_t)nb;
	for (i = 0; i < nb; i++) {
		struct snap_block *k = snap_push_block(s);

		sg = &s->segments[s->n_segments - 1];
		k->addr = off;
		k->size = b[i][0];
		k->state = (uint8_t)b[i][1];
		k->requested_size = b[i][2];
		off += b[i][0];
		sg->total_size += b[i][0];
	}
}

/* Allocs and frees over three segments, the state changing throughout;
 * the final segments agree with the trace, so the backward pass learns
 * sizes and segment attributes too; two events the forward pass reports
 * (check's findings, saved with the checkpoints). */
static struct snapshot *
build(void)
{
	struct snapshot *s = snap_new();
	uint64_t i, j;

	push(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);
	push(s, SNAP_SEGMENT_ALLOC, BASE + 4 * MIB, 20 * MIB);
	/* each round fills the segments from their start, as the allocator
	 * does, and frees it all: only the two events below are findings
	 * (thousands would push the checkpoints out of the inputs'
	 * reach). The requests round to the same block under CUDA's rule
	 * and torch_npu's (+32), so that neither is guessed from the
	 * trace. */
	for (i = 0; i < 46; i++) {
		for (j = 0; j < 64; j++) {
			push(s, SNAP_ALLOC, BASE + j * 512, 480);
			if (j % 8 == 0)
				push(s, SNAP_ALLOC,
				    BASE + 4 * MIB + j / 8 * MIB, MIB - 32);
		}
		for (j = 0; j < 64; j++) {
			push(s, SNAP_FREE_REQUESTED, BASE + j * 512, 480);
			push(s, SNAP_FREE_COMPLETED, BASE + j * 512, 480);
		}
		for (j = 0; j < 8; j++)
			push(s, SNAP_FREE_COMPLETED, BASE + 4 * MIB + j * MIB,
			    MIB - 32);
	}
	/* two events the forward pass finds wrong, so that the saved
	 * findings are there to mutate: an alloc where no segment is, a
	 * free of no block */
	push(s, SNAP_ALLOC, BASE + 30 * MIB, 512);
	push(s, SNAP_FREE_COMPLETED, BASE + 3 * MIB, 512);
	push(s, SNAP_SEGMENT_ALLOC, BASE + 40 * MIB, 2 * MIB);
	push(s, SNAP_ALLOC, BASE + 40 * MIB, 4096);
	final(s, BASE, (const uint64_t[][3]){{2 * MIB, 0, 0}}, 1);
	final(s, BASE + 4 * MIB, (const uint64_t[][3]){{20 * MIB, 0, 0}}, 1);
	final(s, BASE + 40 * MIB, (const uint64_t[][3]){{4096, 1, 4096},
	    {2 * MIB - 4096, 0, 0}}, 2);
	s->features |= SNAP_F_REQUESTED;
	snap_finish(s);
	return s;
}

static void
cleanup(void)
{
	snap_free(snap);
}

static void
write_seed(void)
{
	const char *dir = getenv("SNAPVIEW_FUZZ_CKPT_SEEDS");
	struct sv_error err;
	struct replay *r;
	char path[1024];
	uint8_t *buf;
	size_t len;
	FILE *f;

	if (dir == NULL)
		return;
	r = replay_new(snap, 0, &err);
	if (r == NULL || replay_checkpoints_save(r, &buf, &len) != 0)
		abort();
	snprintf(path, sizeof path, "%s/seed", dir);
	if ((f = fopen(path, "wb")) == NULL || fwrite(buf, 1, len, f) != len ||
	    fclose(f) != 0)
		abort();
	free(buf);
	replay_free(r);
}

/* Aborts unless st is a possible allocator state. */
static void
check_state(const struct replay_state *st)
{
	uint64_t prev_end = 0, res = 0, al = 0;
	uint32_t i, j;

	for (i = 0; i < st->n_segments; i++) {
		const struct replay_segment *sg = &st->segments[i];
		uint64_t off = sg->addr;

		if (sg->size == 0 || sg->size > UINT64_MAX - sg->addr ||
		    (i > 0 && sg->addr < prev_end) ||
		    sg->first_block > st->n_blocks ||
		    sg->n_blocks > st->n_blocks - sg->first_block)
			abort();
		prev_end = sg->addr + sg->size;
		for (j = 0; j < sg->n_blocks; j++) {
			const struct replay_block *b =
			    &st->blocks[sg->first_block + j];

			if (b->addr != off || b->size == 0 ||
			    b->size > prev_end - off ||
			    b->requested_size > b->size ||
			    b->state > SNAP_BLOCK_ACTIVE_PENDING_FREE)
				abort();
			off += b->size;
			if (b->state == SNAP_BLOCK_ACTIVE_ALLOCATED)
				al += b->size;
		}
		if (off != prev_end)
			abort();
		res += sg->size;
	}
	if (res != st->reserved || al != st->allocated)
		abort();
}

/* Seeks r to eight events picked from the input and checks each state,
 * then runs replay_check(); frees r. */
static void
exercise(struct replay *r, const uint8_t *data, size_t size)
{
	struct sv_error err;
	struct replay_check c;
	uint64_t h, n = replay_n_events(r);
	int k;

	check_state(replay_state(r));
	h = XXH3_64bits(data, size);
	for (k = 0; k < 8; k++) {
		uint64_t pick = (h >> (8 * k)) * 2654435761u % (n + 1);
		int64_t at = (int64_t)pick - 1;

		sv_error_clear(&err);
		if (replay_seek(r, at, &err) != 0) {
			if (err.code != SV_ERR_FORMAT)
				abort();
			continue;
		}
		check_state(replay_state(r));
	}
	if (replay_check(r, &c, &err) == 0)
		replay_check_destroy(&c);
	else if (err.code != SV_ERR_FORMAT)
		abort();
	replay_free(r);
}

/* The input read as the index's reader hands it out
 * (replay_new_saved_src()): each span a fresh heap copy, so that ASan
 * sees a read past it or a span kept across calls. */
struct fuzz_src {
	const uint8_t *p;
	size_t len;
	uint8_t *copy;
	int released;
};

static const uint8_t *
fuzz_span(void *ctx, uint64_t off, uint64_t n)
{
	struct fuzz_src *f = ctx;

	if (off > f->len || n > f->len - off)
		abort(); /* the replay asks only within its bytes */
	free(f->copy);
	f->copy = malloc(n ? n : 1);
	if (f->copy == NULL)
		abort();
	memcpy(f->copy, f->p + off, n);
	return f->copy;
}

static void
fuzz_release(void *ctx)
{
	((struct fuzz_src *)ctx)->released++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_src f = {data, size, NULL, 0};
	struct replay_src src = {fuzz_span, &f, fuzz_release};
	struct sv_error err;
	struct replay *r;
	uint8_t *buf;
	uint64_t h;
	int k;

	if (snap == NULL) {
		snap = build();
		atexit(cleanup);
		write_seed();
	}
	if (size < 16)
		return 0;
	/* read as the index reads it: the trailing hash not read, the
	 * blobs' table checked as it is used */
	sv_error_clear(&err);
	r = replay_new_saved_src(snap, 0, &src, size, &err);
	if (r != NULL)
		exercise(r, data, size);
	else if (err.code == SV_OK || err.msg[0] == '\0')
		abort();
	free(f.copy);
	if (f.released != 1)
		abort();
	/* read whole, the hash made right */
	buf = malloc(size);
	if (buf == NULL)
		abort();
	memcpy(buf, data, size);
	h = XXH3_64bits(buf, size - 8);
	for (k = 0; k < 8; k++)
		buf[size - 8 + (size_t)k] = (uint8_t)(h >> (8 * k));
	sv_error_clear(&err);
	r = replay_new_saved(snap, 0, buf, size, &err);
	free(buf);
	if (r == NULL) {
		if (err.code == SV_OK || err.msg[0] == '\0')
			abort();
		return 0;
	}
	exercise(r, data, size);
	return 0;
}
