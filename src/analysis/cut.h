#ifndef SNAPVIEW_ANALYSIS_CUT_H
#define SNAPVIEW_ANALYSIS_CUT_H
/*
 * A cut: a smaller snapshot holding one window of one device's trace.
 *
 * What is written (pickle protocol 4, pickle/pkl_write.h), with the
 * top-level keys and the per-entry keys the file had (snap_feature):
 *   segments              the allocator state after the window's last
 *                         event, replayed (replay.h): every segment of
 *                         the device with its blocks, as the allocator
 *                         would have written them had it been asked
 *                         then; the segment totals are the blocks' sums
 *   device_traces         the window's events, in order; the other
 *                         devices' lists are empty
 *   allocator_settings    as read, each value back to the type its text
 *                         shows (an integer, a float, True/False, a dict
 *                         of integers; otherwise the text)
 *   external_annotations  those of the device whose time falls after the
 *                         event before the window and before the event
 *                         after it, less an END before its first event
 *                         and a START after its last (their ranges hold
 *                         none of its events); a stage other than START
 *                         and END is not kept by the loader and so not
 *                         written
 * So a reader (memory_viz, _memory_viz.py, snapview) that takes the blocks
 * alive at the end and never allocated in the trace as alive from the
 * start sees the window as the original showed it.
 *
 * Strings are written exactly as they were read (the bytes of the file,
 * embedded NULs included): escaping is for screens. A 1.13 file (a bare
 * segment list) or a device without events has no window to cut.
 */
#include <stdint.h>
#include <stdio.h>

#include "replay/replay.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

struct an_cut_info {
	uint64_t events, segments, blocks, annotations;
};

/* Writes the cut of device d, events [from, to] (0 <= from <= to <
 * events), to f; r is a replay of device d (moved to `to`). Returns 0,
 * or -1 with err set (SV_ERR_USAGE: nothing to cut; SV_ERR_IO: f failed
 * to take the bytes). */
int an_cut_write(const struct snapshot *s, uint32_t d, struct replay *r,
    int64_t from, int64_t to, FILE *f, struct an_cut_info *info,
    struct sv_error *err);

#endif
