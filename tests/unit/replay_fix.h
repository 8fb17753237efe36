#ifndef SNAPVIEW_REPLAY_FIX_H
#define SNAPVIEW_REPLAY_FIX_H
/*
 * What the replay's unit tests share (check_replay.c and the
 * check_replay_*.c files it runs): snapshots built by hand (final
 * segments and their blocks, events), a replay opened and sought that
 * must succeed, the count of check's issues. Each check_replay_*.c file
 * adds its tests to the suite's test cases with the function declared
 * last here.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include "analysis/frag.h"
#include "analysis/oom.h"
#include "analysis/site.h"
#include "index/idx_timeline.h"
#include "index/idx.h"
#include "replay/replay.h"
#include "replay/replay_idx.h"
#include "replay/replay_int.h"
#include "snapshot/snap_load.h"
#include "util/xalloc.h"

#define MIB (1024ull * 1024)
#define A SNAP_BLOCK_ACTIVE_ALLOCATED
#define P SNAP_BLOCK_ACTIVE_PENDING_FREE
#define I SNAP_BLOCK_INACTIVE
#define BASE 0x7f0000000000ull

struct fb {
	uint64_t size;
	int state;
	uint64_t req;
};

/* Pushes a final segment with blocks; totals computed from them. */
void push_seg(struct snapshot *s, uint64_t addr, uint64_t stream, int large,
    int exp, const struct fb *b, int nb);
void ev(struct snapshot *s, unsigned action, uint64_t addr, uint64_t size);
struct replay *open_ok(const struct snapshot *s);
void seek_ok(struct replay *r, int64_t at);
uint64_t check_issues(struct replay *r);
/* The tests of check_replay_model.c. */
void replay_model_tests(TCase *tp);
/* The tests of check_replay_saved.c. */
void replay_saved_tests(TCase *tc);

#endif
