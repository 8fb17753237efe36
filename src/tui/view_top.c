/*
 * The top view (T): live bytes at the cursor as a call-stack tree
 * (render/stacktree.h), in the segment map's place: the call sites
 * first, each opening onto the frames that called it, with bytes and
 * share at every level. Enter toggles a node, Right opens it, Left
 * closes it (or goes to its parent), * opens or closes them all, r shows
 * only the selected subtree (again: one level up), z shows every frame
 * of the stacks instead of the user frames (C++-only stacks, as the
 * autograd engine's, split only then), V puts the categories
 * (analysis/category.h) above the call sites.
 *
 * It follows the cursor: the live blocks come from the replayed state at
 * the cursor (O(live blocks)), grouped by stack, each time the cursor
 * has moved; the tree keeps its expansion and selection by path.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/top.h"
#include "render/anlist.h"
#include "render/fmt.h"
#include "render/stacktree.h"
#include "tui/view.h"
#include "util/u64map.h"
#include "util/xalloc.h"

struct top_view {
	int ok;                 /* tree holds the blocks at `at` */
	int64_t at;
	struct stree tree;
	struct stree_entry *ents;
	size_t cap;
	uint64_t n;
	struct u64map by_stack; /* stack -> entry index + 1 */
};

static void
add(struct top_view *v, uint32_t stack, uint32_t group, int free_stack,
    uint64_t bytes)
{
	uint64_t k, key = (uint64_t)group << 33 | (uint64_t)(free_stack != 0)
	    << 32 | stack;

	if (!u64map_get(&v->by_stack, key, &k)) {
		XGROW(v->ents, v->cap, v->n + 1);
		memset(&v->ents[v->n], 0, sizeof v->ents[0]);
		v->ents[v->n].stack = stack;
		v->ents[v->n].group = group;
		v->ents[v->n].free_stack = free_stack != 0;
		k = ++v->n;
		u64map_put(&v->by_stack, key, k);
	}
	v->ents[k - 1].bytes += bytes;
	v->ents[k - 1].count++;
}

/* Was the block (allocated before the trace) freed in it, so that its
 * stack is that of its free? */
static int
freed_later(struct app *a, const struct replay_block *k)
{
	uint64_t e;

	if (k->alloc_ev >= 0)
		return 0;
	e = cursor_block_elem(a, k->addr, k->alloc_ev);
	return e != TL_NO_ELEM && (idx_tl_elem(&a->tl, e).flags &
	    IDX_ELEM_PRE);
}

/* The live blocks at the cursor, by stack (requested bytes, as the
 * Active Memory Timeline and `snapview top` count them); the blocks
 * allocated before the trace and freed in it apart (analysis/top.h). */
/* collect()'s view and groups, for the elements alive at the cursor */
struct top_walk {
	struct top_view *v;
	const struct an_categories *cats;
};

static int
add_alive(void *arg, uint64_t i, const struct idx_elem *e)
{
	struct top_walk *w = arg;

	add(w->v, e->stack, w->cats != NULL ? an_category_of(w->cats, i) : 0,
	    (e->flags & IDX_ELEM_PRE) != 0, e->size);
	return 0;
}

static void
collect(struct app *a, struct top_view *v)
{
	const struct replay_state *st = a->st;
	struct top_walk w;
	uint32_t b;

	v->n = 0;
	u64map_destroy(&v->by_stack);
	u64map_init(&v->by_stack);
	if (st != NULL && state_exact(&a->src, a->view.cursor)) {
		for (b = 0; b < st->n_blocks; b++) {
			const struct replay_block *k = &st->blocks[b];

			if (k->state != SNAP_BLOCK_ACTIVE_ALLOCATED &&
			    k->state != SNAP_BLOCK_ACTIVE_PENDING_FREE)
				continue;
			add(v, k->stack, v->tree.grouped ? (uint32_t)
			    tables_block_category(a, k->addr, k->alloc_ev) : 0,
			    freed_later(a, k), k->requested_size);
		}
		return;
	}
	/* no replay: the timeline's elements alive at the cursor */
	w.v = v;
	w.cats = v->tree.grouped ? tables_categories(a) : NULL;
	(void)idx_tl_alive_each(&a->tl, a->view.cursor, 0, a->tl.n_elems, 0,
	    add_alive, &w);
}

static void
refresh(struct app *a, struct top_view *v)
{
	if (v->tree.framework != a->unfold) {
		v->tree.framework = a->unfold;
		if (v->ok)
			stree_refresh(&v->tree);
	}
	if (v->ok && v->at == a->view.cursor)
		return;
	collect(a, v);
	stree_set(&v->tree, v->ents, v->n);
	v->at = a->view.cursor;
	v->ok = 1;
}

static const char *
group_name(void *ctx, uint32_t g)
{
	(void)ctx;
	return an_category_label(g);
}

static int
tp_open(struct app *a, void *priv)
{
	struct top_view *v = priv;
	struct an_sites *sites = tables_sites(a);

	if (sites == NULL)
		return -1;
	if (v->tree.s == NULL) {
		stree_init(&v->tree, a->snap, sites);
		v->tree.group_name = group_name;
		u64map_init(&v->by_stack);
	}
	v->tree.utf8 = a->utf8;
	refresh(a, v);
	a->detail = DETAIL_SITE;
	return 0;
}

static void
tp_reset(struct app *a, void *priv)
{
	struct top_view *v = priv;

	(void)a;
	if (v->tree.s != NULL) {
		stree_destroy(&v->tree);
		u64map_destroy(&v->by_stack);
	}
	free(v->ents);
}

static void
tp_sync(struct app *a, void *priv)
{
	struct top_view *v = priv;
	struct app_vdetail *d = &a->vdetail;
	const struct stree_row *r;
	char b[FMT_BUF], c[FMT_BUF], e[FMT_BUF], raw[512], lab[512];
	int freed;

	refresh(a, v);
	memset(d, 0, sizeof *d);
	if ((r = stree_selected(&v->tree)) == NULL)
		return;
	d->stack = stree_row_stack(&v->tree, r);
	freed = stree_freed(&v->tree, r->frame);
	stree_label(&v->tree, r->frame, raw, sizeof raw);
	anlist_cut_label(raw, 48, a->utf8, lab, sizeof lab);
	snprintf(d->title, sizeof d->title, "%s%.120s @ %s - %s (%.1f%%) in "
	    "%s block%s", freed ? "freed at " : "", lab,
	    fmt_event(e, sizeof e, v->at), fmt_size(b, sizeof b, r->bytes),
	    v->tree.bytes ? 100.0 * (double)r->bytes / (double)v->tree.bytes :
	    0.0, fmt_count(c, sizeof c, r->count), r->count == 1 ? "" : "s");
	if (freed)
		snprintf(d->info, sizeof d->info, "level %u; allocated before "
		    "the trace: the stack of its largest block's free:",
		    r->depth + 1);
	else
		snprintf(d->info, sizeof d->info, "level %u; the stack of its "
		    "largest block:", r->depth + 1);
}

static void
tp_title(struct app *a, struct top_view *v, char *t, size_t size)
{
	char b[FMT_BUF], c[FMT_BUF], e[FMT_BUF], raw[512], lab[512],
	    in[600] = "";

	if (v->tree.root_len > 0) {
		stree_label(&v->tree, v->tree.root[v->tree.root_len - 1], raw,
		    sizeof raw);
		anlist_cut_label(raw, 48, a->utf8, lab, sizeof lab);
		snprintf(in, sizeof in, " - under %s", lab);
	}
	snprintf(t, size, "Top @ %s - %s live in %s block%s%s%s%s",
	    fmt_event(e, sizeof e, v->at), fmt_size(b, sizeof b, v->tree.bytes),
	    fmt_count(c, sizeof c, v->tree.count),
	    v->tree.count == 1 ? "" : "s",
	    v->tree.grouped ? " - by category" : "",
	    v->tree.framework ? " - every frame" : "", in);
}

static void
tp_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct top_view *v = priv;
	char title[1024];

	refresh(a, v);
	tp_title(a, v, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	stree_render(&v->tree, cb, r->x, r->y + 1, r->w, r->h - 1, focused);
}

static int
tp_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct top_view *v = priv;
	int f = pane_list_move(&v->tree.sel, v->tree.n_rows, act, r);

	if (f != 0) {
		a->detail = DETAIL_SITE;
		a->detail_scroll = 0;
		return f;
	}
	switch (act) {
	case ACT_RIGHT: stree_open(&v->tree, 1); break;
	case ACT_LEFT: stree_open(&v->tree, 0); break;
	case ACT_ENTER: stree_open(&v->tree, -1); break;
	case ACT_EXPAND_ALL: stree_expand_all(&v->tree); break;
	case ACT_ROOT: stree_focus(&v->tree); break;
	case ACT_GROUP:
		if (!v->tree.grouped && !tables_categories_able(a))
			break;
		v->tree.grouped = !v->tree.grouped;
		v->ok = 0;      /* collect again, with or without groups */
		refresh(a, v);
		stree_refresh(&v->tree);
		app_msg(a, "top view: %s", v->tree.grouped ? "by category, "
		    "then call site" : "by call site");
		break;
	default: return 0;
	}
	a->detail = DETAIL_SITE;
	a->detail_scroll = 0;
	return UI_HANDLED | UI_REDRAW;
}

static int
tp_write(struct app *a, void *priv, FILE *f)
{
	struct top_view *v = priv;
	char title[1024];

	refresh(a, v);
	tp_title(a, v, title, sizeof title);
	fprintf(f, "%s\n", title);
	return stree_write(&v->tree, f);
}

static int
tp_click(struct app *a, void *priv, int x, int row, const struct rect *r)
{
	struct top_view *v = priv;
	int c = pane_list_click(&v->tree.sel, v->tree.first, v->tree.n_rows,
	    row, 2);

	(void)x;
	return pane_list_clicked(a, priv, r, c, 1, tp_action);
}

const struct view_ops view_top_ops = {
	.name = "top",
	.key = ACT_VIEW_TOP,
	.slot = LAY_SEGMENTS,
	.priv_size = sizeof(struct top_view),
	.open = tp_open,
	.reset = tp_reset,
	.sync = tp_sync,
	.draw = tp_draw,
	.action = tp_action,
	.hint = "l/h open/close  * all  r subtree  z frames  V category  "
		"q close",
	.write = tp_write,
	.click = tp_click,
};
