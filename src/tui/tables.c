/*
 * The device's call-site and category tables, built once, the first time
 * a pane, a view or a stacking mode needs them (the category table may
 * come from the worker that builds the modes, modeworker.h), the
 * category of a block of the state at the cursor, and the call site that
 * names an event (a free's, by its allocation: tables_event_site).
 */
#include "config.h"

#include "tui/app.h"

#include "tui/modeworker.h"

const struct an_categories *
tables_categories(struct app *a)
{
	struct sv_error err;

	if (a->cats_ok == 0 && modeworker_pending(a, TL_STACK_CATEGORY)) {
		/* the worker builds the table: no sooner done here */
		modeworker_wait(a, TL_STACK_CATEGORY);
		modeworker_take(a);
	}
	if (a->cats_ok == 0) {
		sv_error_clear(&err);
		a->cats_ok = an_categories_build(a->snap, &a->tl, NULL,
		    a->cat_rules, &a->cats, &err) == 0 ? 1 : -1;
		if (a->cats_ok < 0)
			app_msg(a, "categories: %s", err.msg);
	}
	return a->cats_ok > 0 ? &a->cats : NULL;
}

const struct an_categories *
tables_categories_if_ready(struct app *a)
{
	/* the worker's table is on its way, and the screen is drawn again
	 * when it comes */
	if (a->cats_ok == 0 && !a->wait_bands &&
	    modeworker_pending(a, TL_STACK_CATEGORY))
		return NULL;
	return tables_categories(a);
}

/* The probe of the table the worker builds (render/timeline.h), once it
 * has handed it over (waited for when it is on its way: half a second
 * at 10 GB, against seconds for the table), or NULL. */
static struct an_cat_probe *
building_probe(struct app *a)
{
	if (a->cats_ok != 0 || !modeworker_pending(a, TL_STACK_CATEGORY))
		return NULL;
	if (a->tm.cat_probe == NULL && modeworker_wait_probe(a))
		modeworker_take(a);
	return a->cats_ok == 0 ? a->tm.cat_probe : NULL;
}

int
tables_categories_able(struct app *a)
{
	return building_probe(a) != NULL || tables_categories(a) != NULL;
}

int
tables_block_category(struct app *a, uint64_t addr, int64_t alloc_ev)
{
	struct an_cat_probe *p = building_probe(a);
	const struct an_categories *c = p == NULL ? tables_categories(a) :
	    NULL;
	struct idx_elem el;
	uint64_t e;

	if (p == NULL && c == NULL)
		return -1;
	e = cursor_block_elem(a, addr, alloc_ev);
	if (e == TL_NO_ELEM)
		return AN_CAT_OTHER;
	if (c != NULL)
		return (int)an_category_of(c, e);
	/* classified as the table will */
	el = idx_tl_elem(&a->tl, e);
	return (int)an_cat_probe_classify(p, &el);
}

struct an_sites *
tables_sites(struct app *a)
{
	struct sv_error err;

	if (a->sites_ok == 0) {
		sv_error_clear(&err);
		a->sites_ok = an_sites_init(&a->sites, a->snap, 1, NULL,
		    &err) == 0 ? 1 : -1;
		if (a->sites_ok < 0)
			app_msg(a, "call sites: %s", err.msg);
	}
	return a->sites_ok > 0 ? &a->sites : NULL;
}

/* How well a kind of site names code a person knows: user code first,
 * then framework Python, an autograd node or an operator, a bare frame,
 * no stack. */
static int
rank(int kind)
{
	switch (kind) {
	case AN_SITE_USER: return 0;
	case AN_SITE_PYTHON: return 1;
	case AN_SITE_CPP: return 2;
	case AN_SITE_FRAME: return 3;
	default: return 4;
	}
}

uint32_t
tables_event_site(struct app *a, const struct snap_trace *t, uint64_t i,
    int *alloc)
{
	struct an_sites *sites = tables_sites(a);
	unsigned act = snap_ev_action(t, i);
	uint32_t site = an_site_of(sites, snap_ev_stack(t, i)), as;
	int kind = an_site_kind(sites, site);
	uint64_t e = TL_NO_ELEM;
	struct idx_elem el;

	*alloc = 0;
	if ((act != SNAP_FREE_REQUESTED && act != SNAP_FREE_COMPLETED) ||
	    kind == AN_SITE_USER || kind == AN_SITE_PYTHON)
		return site;
	if (act == SNAP_FREE_COMPLETED && i < a->tl.n_events)
		e = idx_tl_ev_elem(&a->tl, i);
	if (e >= a->tl.n_elems)
		e = tl_model_find_elem(&a->tm, snap_ev_addr(t, i), (int64_t)i);
	if (e >= a->tl.n_elems)
		return site;
	el = idx_tl_elem(&a->tl, e);
	/* a block from before the trace has only this stack */
	if (el.alloc_ev < 0 || el.flags & IDX_ELEM_PRE)
		return site;
	as = an_site_of(sites, el.stack);
	if (rank(an_site_kind(sites, as)) > rank(kind))
		return site;
	*alloc = 1;
	return as;
}
