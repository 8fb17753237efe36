/*
 * Opening a device of the snapshot (its timeline, the timeline model,
 * the state at the cursor, the check of a short trace) in place of the
 * one shown, and closing everything the viewer holds when it quits.
 */
#include "config.h"

#include "tui/app.h"

#include <stdlib.h>
#include <string.h>

#include "index/idx.h"
#include "tui/modeworker.h"

static int64_t
n_events(const struct app *a)
{
	return (int64_t)a->tl.n_events;
}

static void
device_free(struct app *a)
{
	modeworker_stop(a);
	if (a->cats_ok > 0)
		an_categories_destroy(&a->cats);
	a->cats_ok = 0;
	check_free(a);
	phaseset_free(a);
	tl_model_destroy(&a->tm);
	idx_timeline_destroy(&a->tl);
	state_close(&a->src);
	a->st = NULL;
}

int
device_set(struct app *a, uint32_t d)
{
	struct sv_error err;
	struct idx_timeline tl;

	sv_error_clear(&err);
	memset(&tl, 0, sizeof tl);
	/* the worker reads the device's timeline and model: it ends first */
	modeworker_stop(a);
	/* the index holds the timeline (borrowed arrays: owned = 0) */
	if (a->ix != NULL && idx_timeline(a->ix, d) != NULL) {
		tl = *idx_timeline(a->ix, d);
		tl.owned = 0; /* the index frees it */
	} else if (idx_timeline_build(a->snap, d, &tl, &err) != 0) {
		app_msg(a, "device %u: %s", d, err.msg);
		return -1;
	}
	if (a->st != NULL)
		device_free(a);
	check_free(a);
	/* the views drop what they computed for the old device (view.h) */
	a->dev_gen++;
	a->view.hl = NULL;
	a->view.marks = NULL;
	a->view.n_marks = 0;
	a->view.mark_sel = -2;
	a->tl = tl;
	a->device = d;
	tl_model_init(&a->tm, a->snap, &a->tl, TL_DEFAULT_DRAWN);
	phaseset_open(a);
	state_open(&a->src, a->ix, a->snap, d, &err);
	a->view.ev0 = 0;
	a->view.ev1 = n_events(a) > 0 ? n_events(a) : 1;
	a->view.sel_elem = TL_NO_ELEM;
	a->view.time_axis = 0;
	a->sv.first = 0;
	a->sv.sel_seg = SEGMAP_NONE;
	a->sv.sel_block = SEGMAP_NONE;
	a->detail = DETAIL_EVENT;
	free(a->stack_match);
	a->stack_match = NULL;
	a->st = NULL;
	cursor_set(a, a->tl.peak_ev >= 0 ? a->tl.peak_ev : 0);
	pane_timeline_open(a);
	/* a short trace is checked at once: the status line warns when the
	 * replay does not reproduce the file */
	check_run(a, 0);
	return 0;
}

void
device_close(struct app *a)
{
	modeworker_stop(a);
	if (a->sites_ok > 0)
		an_sites_destroy(&a->sites);
	a->sites_ok = 0;
	if (a->st != NULL || a->tl.elems != NULL || a->tl.el_stripes != NULL)
		device_free(a);
	free(a->stack_match);
	a->stack_match = NULL;
	if (a->ix != NULL)
		idx_close(a->ix);
	else
		snap_free(a->snap);
	a->ix = NULL;
	a->snap = NULL;
}
