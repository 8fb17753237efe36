/*
 * The device's call-site and category tables, built once, the first time
 * a pane, a view or a stacking mode needs them (the category table may
 * come from the worker that builds the modes, modeworker.h), and the
 * category of a block of the state at the cursor.
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

int
tables_block_category(struct app *a, uint64_t addr, int64_t alloc_ev)
{
	const struct an_categories *c = tables_categories(a);
	uint64_t e;

	if (c == NULL)
		return -1;
	e = cursor_block_elem(a, addr, alloc_ev);
	return e == TL_NO_ELEM ? AN_CAT_OTHER : (int)an_category_of(c, e);
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
