#ifndef SNAPVIEW_TESTS_FUZZ_IDX_WALK_H
#define SNAPVIEW_TESTS_FUZZ_IDX_WALK_H
/*
 * Reading everything an open index holds, the way the commands and the
 * viewer read it (strings, frames, stacks, segments, blocks, annotations,
 * settings, every event and element of the first max_devices devices,
 * their totals), digested into one XXH3 value: two walks of an index that
 * has not changed for its reader give the same digest. With lod set, the
 * pyramid's answers too. Shared by the index fuzz targets and the
 * hostile-index unit tests.
 */
#include <stdint.h>

struct sv_index;

uint64_t idx_walk(const struct sv_index *ix, uint32_t max_devices, int lod);

#endif
