/*
 * Search (/, n, N): events whose address range holds a hex address
 * ("0x7f3a02a00000"), or whose call stack has a frame whose label
 * "filename:line name" contains the text, without regard to case
 * ("memory_leaks_demo.py:11", "train_step", "Optimizer.py"). A text that
 * ends with a line number matches that line only (":11" is not ":110").
 * Each query resolves the stacks once (O(stack frames)); a search then
 * reads the events in order from the cursor and wraps. The detail pane
 * then shows the frame that matched, scrolled into view and highlighted
 * (unfolded when it is a framework frame), until the cursor moves.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/evfilter.h"
#include "render/fmt.h"
#include "tui/app.h"

void
search_set_query(struct app *a, const char *q)
{
	char low[sizeof a->query];
	size_t i;

	snprintf(a->query, sizeof a->query, "%s", q);
	a->query_is_addr = q[0] == '0' && (q[1] == 'x' || q[1] == 'X') &&
	    fmt_parse_u64(q, &a->query_addr) == 0;
	free(a->stack_match);
	free(a->frame_match);
	a->stack_match = a->frame_match = NULL;
	if (a->query_is_addr || q[0] == '\0')
		return;
	for (i = 0; a->query[i] != '\0'; i++)
		low[i] = (char)tolower((unsigned char)a->query[i]);
	low[i] = '\0';
	a->stack_match = evfilter_stacks(a->snap, low);
	a->frame_match = evfilter_frames(a->snap, low);
}

static int
event_matches(struct app *a, const struct snap_trace *t, uint64_t i)
{
	uint64_t addr, size;

	if (a->query_is_addr) {
		addr = snap_ev_addr(t, i);
		size = snap_ev_size(t, i);
		/* an oom event's address is the device's free bytes */
		if (snap_ev_action(t, i) == SNAP_OOM)
			return 0;
		return addr <= a->query_addr &&
		    a->query_addr - addr < (size > 0 ? size : 1);
	}
	return a->stack_match != NULL && snap_ev_stack(t, i) <
	    a->snap->n_stacks && a->stack_match[snap_ev_stack(t, i)];
}

void
search_run(struct app *a, int dir)
{
	const struct snap_trace *t = snap_trace_of(a->snap, a->device);
	int64_t n, i, k, start;

	if (a->query[0] == '\0') {
		app_msg(a, "no search yet: / starts one");
		return;
	}
	if (t == NULL || t->n == 0)
		return;
	n = (int64_t)t->n;
	start = a->view.cursor < 0 ? 0 : a->view.cursor;
	for (k = 1; k <= n; k++) {
		i = ((start + dir * k) % n + n) % n;
		if (event_matches(a, t, (uint64_t)i)) {
			cursor_set(a, i);
			a->detail = DETAIL_EVENT;
			/* the detail pane shows the frame that matched */
			a->search_show = a->query_is_addr ? 0 : 2;
			a->detail_scroll = 0;
			app_msg(a, "/%s: %s%s", a->query,
			    (dir > 0) == (i > start) ? "" : "wrapped, ",
			    a->query_is_addr ? "address" : "frame text");
			return;
		}
	}
	app_msg(a, "/%s: not found (%s)", a->query, a->query_is_addr ?
	    "no event's block holds that address" :
	    "no frame's file:line name contains it");
}
