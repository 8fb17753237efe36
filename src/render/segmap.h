#ifndef SNAPVIEW_RENDER_SEGMAP_H
#define SNAPVIEW_RENDER_SEGMAP_H
/*
 * The allocator state at the cursor as a segment map (pure: no curses):
 * one row per segment (address, size, stream, flags, blocks as cells,
 * % allocated), in the order of the state (by address).
 *
 * Each cell of a segment's bar covers size/width bytes and shows what
 * holds most of them: an allocated block (a letter per block, A..Z in
 * address order, coloured by a hash of its address), a pending free
 * ('~'), rounding waste inside an allocated block ('+', size minus
 * requested size), or free space ('.': inactive blocks and gaps).
 * Flags: E = expandable segment, P = private pool. The totals of a state
 * (the pane's title) are replay.h's replay_totals, the numbers
 * `snapview stats --at N` prints.
 *
 * Cost: O(visible rows x (cells + blocks of the row)).
 */
#include <stdint.h>

#include "render/cellbuf.h"
#include "replay/replay.h"

#define SEGMAP_NONE UINT32_MAX

struct segmap_view {
	uint32_t first;     /* segment shown on the first row */
	uint32_t sel_seg;   /* selected segment or SEGMAP_NONE */
	uint32_t sel_block; /* selected block (index in st->blocks) or NONE */
	int utf8;
	int mono;
};

/* Draws the rows of st starting at v->first into (x, y, w, h) of cb. */
void segmap_render(const struct replay_state *st,
    const struct segmap_view *v, struct cellbuf *cb, int x, int y, int w,
    int h);

/* Width of the text before the bar (for hit-testing and layout). */
#define SEGMAP_PREFIX_W 32

#endif
