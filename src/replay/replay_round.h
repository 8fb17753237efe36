#ifndef SNAPVIEW_REPLAY_REPLAY_ROUND_H
#define SNAPVIEW_REPLAY_REPLAY_ROUND_H
/*
 * Which size rule a device's allocator used.
 *
 * CUDA's caching allocator rounds a request up to a multiple of 512 bytes
 * (at least 512; doc/snapshot-format.md §13.3). torch_npu's adds a 32-byte
 * pad first (AddPadSize() in NPUCachingAllocator.cpp; the pad is 0 on
 * Ascend950 with CANN 9.1.0 or later), so a 16,384-byte request takes a
 * 16,896-byte block.
 *
 * Evidence, per device, counting only what one rule explains and the
 * other does not:
 *   - the device's live blocks in the final segments: block size against
 *     the requested size;
 *   - the trace's address gaps: an alloc that lands exactly where a live
 *     allocation's block would end under one rule (the allocator carves
 *     consecutive requests from one free block);
 *   - failing both, the file's torch_npu flag (SNAP_F_NPU).
 * The rule with more evidence wins. The trace is only read when the live
 * blocks leave it open, and the scan stops once one rule leads clearly.
 */
#include <stdint.h>

#include "snapshot/snap_model.h"

enum replay_round_rule { REPLAY_ROUND_CUDA, REPLAY_ROUND_NPU };

struct replay_round_evidence {
	/* live blocks and trace gaps that fit one rule */
	uint64_t cuda_blocks, npu_blocks;
	uint64_t cuda_gaps, npu_gaps;
	int npu_flag;		/* the file looks like torch_npu */
	int scanned;		/* the trace was read */
	int rule;		/* the verdict */
};

/* Detects the rule of device d of s; ev may be NULL. */
int replay_round_detect(const struct snapshot *s, uint32_t d,
    struct replay_round_evidence *ev);

/* Block size the rule gives a request of req bytes. */
uint64_t replay_round_size(int rule, uint64_t req);

#endif
