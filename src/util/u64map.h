#ifndef SNAPVIEW_UTIL_U64MAP_H
#define SNAPVIEW_UTIL_U64MAP_H
/*
 * Open-addressing hash map from uint64 keys to uint64 values (linear
 * probing, backward-shift deletion: no tombstones, so lookups stay fast
 * after millions of inserts and removals).
 *
 * Keys often come from a file (addresses, sizes), so the slot of a key is
 * a keyed hash, with keys drawn from the kernel once per process (see
 * u64map.c). Without them a file could pick addresses that all land in
 * one slot and make every insert walk all the others (a fixed mixing
 * function is invertible). The order of the slots therefore changes from
 * run to run: a caller that walks them must not let that order decide an
 * answer.
 */
#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
	uint64_t key, val;
};

struct u64map {
	struct u64map_slot *slots; /* a key beside its value: one cache
				    * line for both */
	uint8_t *used;
	size_t cap; /* power of two, 0 when empty */
	size_t n;
	uint64_t seed, mult; /* the hash's keys */
	unsigned shift;      /* 64 - log2(cap) */
};

void u64map_init(struct u64map *m);
void u64map_destroy(struct u64map *m);
/* Sets key to val (replacing an old value). */
void u64map_put(struct u64map *m, uint64_t key, uint64_t val);
/* Returns 1 and *val when present, else 0. */
int u64map_get(const struct u64map *m, uint64_t key, uint64_t *val);
/* Removes key; returns 1 if it was present. */
int u64map_del(struct u64map *m, uint64_t key);

#endif
