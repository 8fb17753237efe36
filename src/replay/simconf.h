#ifndef SNAPVIEW_REPLAY_SIMCONF_H
#define SNAPVIEW_REPLAY_SIMCONF_H
/*
 * The settings of PyTorch's caching allocator that change where memory
 * goes, as PYTORCH_CUDA_ALLOC_CONF writes them (doc/snapshot-format.md
 * §13.12): expandable_segments, max_split_size_mb,
 * max_non_split_rounding_mb, roundup_power2_divisions (one number, or
 * [256:1,512:2,>:4] per power-of-two interval of MiB) and
 * garbage_collection_threshold; keys that only concern pinned host
 * memory or locking are accepted and change nothing here. The rules
 * follow c10/core/AllocatorConfig.cpp (the parser) and
 * c10/cuda/CUDAAllocatorConfig.h.
 *
 * A struct sim_conf is plain data: copy it freely.
 */
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap_model.h"

#define SIMCONF_MIB (1024ull * 1024)
#define SIMCONF_INTERVALS 16	/* 1 MiB .. 32 GiB and above */
#define SIMCONF_NO_SPLIT_LIMIT UINT64_MAX

struct sim_conf {
	uint64_t max_split;	/* bytes; SIMCONF_NO_SPLIT_LIMIT: none */
	uint64_t max_non_split_rounding; /* bytes (kLargeBuffer: 20 MiB) */
	uint32_t div[SIMCONF_INTERVALS]; /* roundup_power2_divisions */
	double gc_threshold;	/* garbage_collection_threshold, 0: off */
	int expandable;		/* expandable_segments:True */
	uint32_t pad;		/* bytes torch_npu adds before rounding */
};

/* The defaults (no PYTORCH_CUDA_ALLOC_CONF). */
void simconf_default(struct sim_conf *c);

/* Parses text as PYTORCH_CUDA_ALLOC_CONF (starting from the defaults).
 * Returns 0, or -1 with one sentence in why naming the key: "unknown key
 * 'foo'", "max_split_size_mb: '1x' is not a number". */
int simconf_parse(const char *text, struct sim_conf *c, char *why,
    size_t wl);

/* The settings device d's file recorded: allocator_settings when the
 * file has them (its structured keys win over the string), else the
 * defaults. Returns 1 when the file named settings, 0 for defaults. */
int simconf_from_snapshot(const struct snapshot *s, struct sim_conf *c);

/* Equal in every rule the simulation applies. */
int simconf_equal(const struct sim_conf *a, const struct sim_conf *b);

/* The settings written back as PYTORCH_CUDA_ALLOC_CONF, only the keys
 * that differ from the defaults ("" for the defaults). */
void simconf_format(const struct sim_conf *c, char *buf, size_t size);

/* Divisions for a rounded request of size bytes (the interval of
 * floor(log2(size)) MiB, clamped to the table). */
uint32_t simconf_divisions(const struct sim_conf *c, uint64_t size);

/* round_size(): the block size the allocator gives a request. */
uint64_t simconf_round(const struct sim_conf *c, uint64_t req);

#endif
