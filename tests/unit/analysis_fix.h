#ifndef SNAPVIEW_ANALYSIS_FIX_H
#define SNAPVIEW_ANALYSIS_FIX_H
/*
 * What the analysis' unit tests share (check_analysis.c and the
 * check_analysis_*.c files it runs): frames, the autograd engine's
 * stacks and annotations added to a snapshot built by hand. Each
 * check_analysis_*.c file adds its tests to the one test case with the
 * function declared last here.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/category.h"
#include "analysis/frame.h"
#include "analysis/leaks.h"
#include "analysis/site.h"
#include "analysis/steps.h"
#include "analysis/top.h"
#include "index/idx_timeline.h"
#include "replay/replay.h"
#include "replay/replay_round.h"
#include "snapshot/snap_load.h"
#include "snapshot/snap_model.h"
#include "util/stop.h"
#include "util/xalloc.h"

uint32_t frame(struct snapshot *s, const char *file, const char *name,
    uint64_t line);
/* Frames of the autograd engine's thread, innermost first, ending with
 * the node and op given. */
uint32_t engine_stack(struct snapshot *s, const char *op, const char *node);
void annotate(struct snapshot *s, const char *name, int stage, int64_t time);
/* The tests of check_analysis_steps.c. */
void analysis_steps_tests(TCase *tc);
/* The tests of check_analysis_categories.c. */
void analysis_categories_tests(TCase *tc);

#endif
