/*
 * The allocator's size rule per device: CUDA's or torch_npu's. See
 * replay_round.h.
 */
#include "config.h"

#include "replay/replay_round.h"

#include <string.h>

#include "util/u64map.h"

/* The gap scan stops when one rule leads by this many and the other has
 * at most 1/16 of it. */
#define ROUND_LEAD 64

uint64_t
replay_round_size(int rule, uint64_t req)
{
	uint64_t pad = rule == REPLAY_ROUND_NPU ? 32 : 0;

	/* a request no allocator could round (a file can say 2^64 - 1):
	 * more than any free block, never wrapped to a small one */
	if (req > UINT64_MAX - 511 - pad)
		return UINT64_MAX - 511;
	req += pad;
	if (req < 512)
		return 512;
	return (req + 511) / 512 * 512;
}

static void
count_blocks(const struct snapshot *s, uint32_t d,
    struct replay_round_evidence *ev)
{
	uint32_t i, end, b;

	snap_device_segments(s, d, &i, &end);
	for (; i < end; i++) {
		const struct snap_segment *sg = &s->segments[i];

		if (sg->device != d)
			continue;
		for (b = sg->first_block; b < sg->first_block + sg->n_blocks &&
		     b < s->n_blocks; b++) {
			const struct snap_block *bl = &s->blocks[b];
			uint64_t q = bl->requested_size;
			int c, n;

			if (bl->state != SNAP_BLOCK_ACTIVE_ALLOCATED ||
			    (bl->flags & SNAP_BLOCK_F_NO_REQUESTED))
				continue;
			c = bl->size == replay_round_size(REPLAY_ROUND_CUDA, q);
			n = bl->size == replay_round_size(REPLAY_ROUND_NPU, q);
			ev->cuda_blocks += c && !n;
			ev->npu_blocks += n && !c;
		}
	}
}

static int
clear_lead(uint64_t a, uint64_t b)
{
	return a >= b + ROUND_LEAD && b * 16 <= a;
}

/* Map values: the start address of the live allocation whose block would
 * end at the key, tagged in bit 0 with the rule (addresses of blocks are
 * multiples of 512, so bit 0 is free). */
static void
gap_put(struct u64map *m, uint64_t end, uint64_t start, int rule)
{
	uint64_t v;

	if (u64map_get(m, end, &v) && (v & ~1ull) != start)
		return; /* another live block claims this end: ambiguous */
	u64map_put(m, end, start | (uint64_t)rule);
}

static void
gap_del(struct u64map *m, uint64_t end, uint64_t start)
{
	uint64_t v;

	if (u64map_get(m, end, &v) && (v & ~1ull) == start)
		u64map_del(m, end);
}

static void
scan_gaps(const struct snapshot *s, uint32_t d,
    struct replay_round_evidence *ev)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	struct u64map ends;
	uint64_t i;

	if (t == NULL || t->n == 0)
		return;
	ev->scanned = 1;
	u64map_init(&ends);
	for (i = 0; i < t->n; i++) {
		unsigned act = snap_ev_action(t, i);
		uint64_t a = snap_ev_addr(t, i), q = snap_ev_size(t, i), v;
		uint64_t ec, en;

		if (act != SNAP_ALLOC && act != SNAP_FREE_COMPLETED)
			continue;
		if (a % 512 != 0 || a > UINT64_MAX / 2 || q > UINT64_MAX / 4)
			continue;
		ec = a + replay_round_size(REPLAY_ROUND_CUDA, q);
		en = a + replay_round_size(REPLAY_ROUND_NPU, q);
		if (act == SNAP_FREE_COMPLETED) {
			gap_del(&ends, ec, a);
			gap_del(&ends, en, a);
			continue;
		}
		if (u64map_get(&ends, a, &v)) {
			if ((v & 1) == REPLAY_ROUND_NPU)
				ev->npu_gaps++;
			else
				ev->cuda_gaps++;
			if (clear_lead(ev->npu_gaps, ev->cuda_gaps) ||
			    clear_lead(ev->cuda_gaps, ev->npu_gaps))
				break;
		}
		if (ec == en)
			continue; /* both rules agree: no evidence */
		gap_put(&ends, ec, a, REPLAY_ROUND_CUDA);
		gap_put(&ends, en, a, REPLAY_ROUND_NPU);
	}
	u64map_destroy(&ends);
}

int
replay_round_detect(const struct snapshot *s, uint32_t d,
    struct replay_round_evidence *ev)
{
	struct replay_round_evidence own;
	uint64_t npu, cuda;

	if (ev == NULL)
		ev = &own;
	memset(ev, 0, sizeof *ev);
	ev->npu_flag = (s->features & SNAP_F_NPU) != 0;
	count_blocks(s, d, ev);
	if (!clear_lead(ev->npu_blocks, ev->cuda_blocks) &&
	    !clear_lead(ev->cuda_blocks, ev->npu_blocks))
		scan_gaps(s, d, ev);
	npu = ev->npu_blocks + ev->npu_gaps;
	cuda = ev->cuda_blocks + ev->cuda_gaps;
	if (npu != cuda)
		ev->rule = npu > cuda ? REPLAY_ROUND_NPU : REPLAY_ROUND_CUDA;
	else
		ev->rule = ev->npu_flag ? REPLAY_ROUND_NPU : REPLAY_ROUND_CUDA;
	return ev->rule;
}
