/*
 * Fixtures of the render layer's unit tests (render_fix.h).
 */
#include "config.h"

#include "render_fix.h"

/* The worked example of doc/snapshot-format.md §10.2: segment_alloc(512),
 * alloc A(100), alloc B(200), free A, snapshot; C(50) a ghost. */
struct idx_elem ex_elems[3] = {
    {0x1000, 100, 0, 1, 3, 0, 0},
    {0x2000, 200, 0, 2, -1, 0, 0},
    {0x3000, 50, 0, -1, -1, 0, IDX_ELEM_GHOST},
};
uint64_t ex_total[5] = {50, 150, 350, 250, 250};
uint64_t ex_res[5] = {512, 512, 512, 512, 512};
uint64_t ex_ev_elem[5] = {UINT64_MAX, 0, 1, 0, UINT64_MAX};

void
example(struct idx_timeline *tl)
{
	memset(tl, 0, sizeof *tl);
	tl->n_events = 5;
	tl->elems = ex_elems;
	tl->n_elems = 3;
	tl->ev_elem = ex_ev_elem;
	tl->total = ex_total;
	tl->reserved = ex_res;
	tl->base_total = 50;
	tl->peak = 350;
	tl->peak_ev = 2;
	tl->n_ghost = 1;
}

struct snapshot *
load_data(const char *rel)
{
	char path[1024];
	struct snapshot *s;
	struct sv_error err;

	snprintf(path, sizeof path, "%s/tests/data/%s", TOP_SRCDIR, rel);
	ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0, "%s: %s",
	    path, err.msg);
	return s;
}
