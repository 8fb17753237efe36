#ifndef SNAPVIEW_RENDER_FIX_H
#define SNAPVIEW_RENDER_FIX_H
/*
 * What the render layer's unit tests share (check_render.c and
 * check_render_modes.c, which it runs): the small timeline worked out
 * by hand. check_render_modes.c adds its tests to the suite's test case
 * with the function declared last here.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "render/anlist.h"
#include "render/cellbuf.h"
#include "render/fmt.h"
#include "render/frames.h"
#include "render/segmap.h"
#include "render/timeline.h"
#include "render/tl_groups.h"
#include "render/tl_int.h"
#include "render/tl_segs.h"
#include "analysis/top.h"
#include "snapshot/snap_load.h"
#include "util/escape.h"

/* The worked example of doc/snapshot-format.md §10.2: segment_alloc(512),
 * alloc A(100), alloc B(200), free A, snapshot; C(50) a ghost; example()
 * makes a timeline of them. */
extern struct idx_elem ex_elems[3];
extern uint64_t ex_total[5];
extern uint64_t ex_res[5];
extern uint64_t ex_ev_elem[5];
void example(struct idx_timeline *tl);
/* The file rel of tests/data, loaded (the test fails when it does
 * not load). */
struct snapshot *load_data(const char *rel);
/* The tests of check_render_modes.c and check_render_sample.c. */
void render_modes_tests(TCase *tl);
void render_sample_tests(TCase *tl);

#endif
