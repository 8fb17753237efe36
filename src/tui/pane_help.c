/*
 * Help screen of the viewer: the keys by group, with the keys taken from
 * the action table (actions.h) so that a rebinding shows here, then the
 * legend of the two maps; it scrolls. The builder of help screens
 * (help.h), which the rank screens use too, is here.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/help.h"
#include "tui/keys.h"
#include "tui/pane.h"
#include "util/xalloc.h"

#define COL_MIN 38      /* two columns from 2 x COL_MIN + 2 cells */
#define KEYS_W 10       /* width of the keys field */

static const struct help_entry move[] = {
    {{ACT_LEFT, ACT_RIGHT}, "cursor, block; tree: fold"},
    {{ACT_UP, ACT_DOWN}, "event / segment / row"},
    {{ACT_PAGE_UP, ACT_PAGE_DOWN}, "half a screen / a page"},
    {{ACT_FIRST, ACT_LAST}, "start, end; first, last row"},
    {{ACT_GOTO}, "go to event #N (-1: start)"},
    {{ACT_FOCUS_NEXT, ACT_FOCUS_PREV}, "next / previous pane"},
};
static const struct help_entry timeline[] = {
    {{ACT_ZOOM_IN, ACT_ZOOM_OUT, ACT_FIT}, "zoom in, out, whole trace"},
    {{ACT_PAN_LEFT, ACT_PAN_RIGHT}, "pan left / right"},
    {{ACT_AXIS, ACT_COLOR, ACT_DEVICE}, "time axis; colour; device"},
    {{ACT_STACK_NEXT, ACT_STACK_PREV, ACT_LEGEND}, "bands: next, prev; legend"},
    {{ACT_PICK_UP, ACT_PICK_DOWN, ACT_YFIT, ACT_YRANGE},
	"pick band; y: fit, min..max"},
    {{ACT_YZOOM_IN, ACT_YZOOM_OUT, ACT_YPAN_UP, ACT_YPAN_DOWN},
	"y zoom in, out; pan"},
};
static const struct help_entry jumps[] = {
    {{ACT_PEAK, ACT_ANNOT_NEXT, ACT_ANNOT_PREV, ACT_PHASE_NEXT, ACT_PHASE_PREV},
	"peak; annotation; phase"},
    {{ACT_OOM_NEXT, ACT_OOM_PREV}, "next / previous OOM"},
    {{ACT_SEG_NEXT, ACT_SEG_PREV}, "next / prev segment_alloc"},
    {{ACT_SEARCH, ACT_SEARCH_NEXT, ACT_SEARCH_PREV},
	"search 0xaddr/file:line/name"},
    {{ACT_JUMP_ALLOC, ACT_JUMP_FREE}, "alloc / free of selection"},
    {{ACT_WIN_START, ACT_WIN_END, ACT_WIN_CLEAR},
	"leak window begin/end/clear"},
    {{ACT_MISMATCH}, "first replay mismatch"},
};
static const struct help_entry views[] = {
    {{ACT_VIEW_LEAKS}, "leaks (of the window)"},
    {{ACT_VIEW_FRAG}, "segment_allocs, worst gap"},
    {{ACT_VIEW_TOP}, "call-stack tree at cursor"},
    {{ACT_VIEW_EVENTS}, "events around the cursor"},
    {{ACT_VIEW_BLOCKS}, "live blocks at the cursor"},
    {{ACT_VIEW_OOM}, "why the OOM failed"},
    {{ACT_VIEW_INFO, ACT_WHATIF}, "settings, check; what if"},
    {{ACT_VIEW_PHASES}, "phases: peak, left behind"},
};
static const struct help_entry in_view[] = {
    {{ACT_ENTER}, "select / go there / expand"},
    {{ACT_ALLOC_NEXT, ACT_ALLOC_PREV}, "next / previous block or row"},
    {{ACT_EXPAND_ALL, ACT_ROOT}, "tree: expand all; subtree"},
    {{ACT_FOLD, ACT_GROUP}, "framework frames; category"},
    {{ACT_SORT, ACT_SORT_REVERSE}, "table: sort column; reverse"},
    {{ACT_FILTER, ACT_PHASE_WINDOW}, "event filter; phase window"},
};
static const struct help_entry other[] = {
    {{ACT_EXPORT, ACT_COPY}, "export view; copy stack"},
    {{ACT_REDRAW, ACT_HELP}, "redraw; this help"},
    {{ACT_BACK, ACT_QUIT}, "close help or view; quit"},
    {{ACT_RANKS}, "back to the rank overview"},
    {{ACT_TIMELINE_ONLY}, "timeline full height"},
};
static const struct help_group groups[] = {
    {"Move", move, sizeof move / sizeof move[0]},
    {"Timeline", timeline, sizeof timeline / sizeof timeline[0]},
    {"Jump", jumps, sizeof jumps / sizeof jumps[0]},
    {"Views (again, q or Esc: close)", views, sizeof views / sizeof views[0]},
    {"In a view", in_view, sizeof in_view / sizeof in_view[0]},
    {"Other", other, sizeof other / sizeof other[0]},
};

static const char *const legend[] = {
    "Timeline: m cycles the bands: one per allocation (the largest drawn, "
    "the rest one summarised band on top), per call site, category or "
    "stream (the 8 largest at the visible peak, the rest on top), or per "
    "segment (a mode reads \"building\" until its bands, built after "
    "opening, are ready); the legend names them with their bytes at the "
    "cursor; the "
    "reserved line shows segment bytes; x = event (t: time); annotations "
    "under the axis.",
    "Segment map: letters = allocated blocks, ~ pending free, + (or light "
    "shade) rounding waste, . free; E expandable, P private pool.",
    "Views take the place of a pane; Tab moves between them. Arrows work "
    "as h j k l. snapview(1) lists every key.",
};

static const struct help_page viewer_page = {
	groups, sizeof groups / sizeof groups[0], 3, KM_VIEW,
	legend, sizeof legend / sizeof legend[0]
};

static void
push(struct help_lines *h, const char *text, int bold)
{
	XGROW(h->l, h->cap, h->n + 1);
	snprintf(h->l[h->n].text, sizeof h->l[0].text, "%s", text);
	h->l[h->n].bold0 = 0;
	h->l[h->n++].bold1 = bold ? (int)sizeof h->l[0].text : 0;
}

/* Appends text wrapped at width w (at spaces when it can), the first
 * line after prefix, the others indented by indent. */
static void
push_wrapped(struct help_lines *h, const char *prefix, const char *text,
    int w, int indent)
{
	char line[160];
	int room, n, plen = (int)strlen(prefix);

	if (w > (int)sizeof line - 1)
		w = (int)sizeof line - 1;
	snprintf(line, sizeof line, "%s", prefix);
	room = w - plen;
	while (room > 0) {
		n = (int)strlen(text);
		if (n > room) {
			for (n = room; n > 0 && text[n] != ' '; n--)
				;
			if (n == 0)
				n = room;
		}
		snprintf(line + strlen(line), sizeof line - strlen(line),
		    "%.*s", n, text);
		push(h, line, 0);
		text += n;
		while (*text == ' ')
			text++;
		if (*text == '\0')
			return;
		snprintf(line, sizeof line, "%*s", indent, "");
		room = w - indent;
	}
}

static void
entry_lines(struct help_lines *h, const struct help_entry *e, int w)
{
	char keys[64] = "", k[16], prefix[80];
	int i;

	for (i = 0; i < HELP_MAX_ACTS && e->act[i] != ACT_NONE; i++)
		snprintf(keys + strlen(keys), sizeof keys - strlen(keys),
		    "%s%s", i > 0 ? " " : "",
		    keys_action_shown(e->act[i], k, sizeof k));
	snprintf(prefix, sizeof prefix, " %-*s ", KEYS_W - 1, keys);
	if ((int)strlen(prefix) > KEYS_W + 1) {
		/* long keys: on a line of their own */
		push_wrapped(h, "", prefix, w, 1);
		snprintf(prefix, sizeof prefix, "%*s", KEYS_W + 1, "");
	}
	push_wrapped(h, prefix, e->text, w, KEYS_W + 1);
}

static int
listed(const struct help_page *p, enum action act)
{
	size_t g, i;
	int k;

	for (g = 0; g < p->n_groups; g++)
		for (i = 0; i < p->groups[g].n; i++)
			for (k = 0; k < HELP_MAX_ACTS; k++)
				if (p->groups[g].e[i].act[k] == act)
					return 1;
	return 0;
}

static void
group_lines(struct help_lines *h, const struct help_page *p, size_t g0,
    size_t g1, int w)
{
	size_t g, i;

	for (g = g0; g < g1; g++) {
		push(h, p->groups[g].title, 1);
		for (i = 0; i < p->groups[g].n; i++)
			entry_lines(h, &p->groups[g].e[i], w);
	}
}

void
help_build(struct help_lines *out, const struct help_page *p, int w)
{
	struct help_lines left = {0}, right = {0};
	struct help_entry more = {{ACT_NONE}, NULL};
	char line[160];
	int cw = (w - 2) / 2, two = w >= 2 * COL_MIN + 2, a, lb, rb;
	size_t i;

	if (cw > 60)
		cw = 60;
	group_lines(&left, p, 0, two ? p->first_right : p->n_groups,
	    two ? cw : w - 1);
	if (two)
		group_lines(&right, p, p->first_right, p->n_groups, cw);
	for (a = 1; a < ACT_COUNT; a++) {
		if ((keys_action_keymaps((enum action)a) & p->km) == 0 ||
		    listed(p, (enum action)a))
			continue;
		if (more.text == NULL)
			push(two ? &right : &left, "More", 1);
		more.act[0] = (enum action)a;
		more.text = keys_action_help((enum action)a);
		entry_lines(two ? &right : &left, &more, two ? cw : w - 1);
	}
	for (i = 0; i < left.n || i < right.n; i++) {
		/* columns hold at most 60 cells each */
		snprintf(line, sizeof line, "%-*.60s  %.60s", cw,
		    i < left.n ? left.l[i].text : "",
		    i < right.n ? right.l[i].text : "");
		if (!two)
			snprintf(line, sizeof line, "%.150s", left.l[i].text);
		/* a title is bold in its own column only: bold across both,
		 * the other column's entry beside it read as a title too */
		lb = i < left.n && left.l[i].bold1 > 0;
		rb = two && i < right.n && right.l[i].bold1 > 0;
		push(out, line, 0);
		out->l[out->n - 1].bold0 = lb ? 0 : cw + 2;
		out->l[out->n - 1].bold1 = rb || (lb && !two) ?
		    (int)sizeof line : lb ? cw : 0;
	}
	free(left.l);
	free(right.l);
	push(out, "", 0);
	for (i = 0; i < p->n_legend; i++)
		push_wrapped(out, "", p->legend[i], w - 1, 2);
}

void
help_list(FILE *f, const char *name, const struct help_page *p)
{
	const struct help_entry *e;
	size_t g, i;
	int k;

	for (g = 0; g < p->n_groups; g++)
		for (i = 0; i < p->groups[g].n; i++) {
			e = &p->groups[g].e[i];
			fprintf(f, "%s\t%s\t", name, p->groups[g].title);
			for (k = 0; k < HELP_MAX_ACTS && e->act[k] != ACT_NONE;
			    k++)
				fprintf(f, "%s%s", k > 0 ? " " : "",
				    keys_action_name(e->act[k]));
			fprintf(f, "\t%s\n", e->text);
		}
}

void
pane_help_list(FILE *f)
{
	help_list(f, "viewer", &viewer_page);
}

static void
help_draw(struct app *a, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct help_lines h = {0};
	int i, row, rows = r->h - 1, n;
	char title[128];

	(void)focused;
	help_build(&h, &viewer_page, r->w);
	n = (int)h.n;
	if (a->help_scroll > n - rows)
		a->help_scroll = n - rows;
	if (a->help_scroll < 0)
		a->help_scroll = 0;
	snprintf(title, sizeof title, "Help - ? q Esc close%s",
	    a->help_scroll + rows < n ? " - more below: j" :
	    a->help_scroll > 0 ? " - more above: k" : "");
	pane_title(a, cb, r, 1, title);
	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	for (i = a->help_scroll, row = 0; i < n && row < rows; i++, row++)
		help_put_line(cb, r->x, r->y + 1 + row, r->w, &h.l[i]);
	free(h.l);
}

void
help_put_line(struct cellbuf *cb, int x, int y, int w,
    const struct help_line *l)
{
	struct cell *c;
	int k, n;

	n = cellbuf_puts(cb, x, y, l->text, w, UIC_DEFAULT, 0);
	for (k = l->bold0; k < l->bold1 && k < n; k++)
		if ((c = cellbuf_at(cb, x + k, y)) != NULL)
			c->attr |= CB_A_BOLD;
}

static int
help_action(struct app *a, enum action act, const struct rect *r)
{
	int page = r->h > 2 ? r->h - 2 : 1;

	switch (act) {
	case ACT_UP: a->help_scroll--; break;
	case ACT_DOWN: a->help_scroll++; break;
	case ACT_PAGE_UP: a->help_scroll -= page; break;
	case ACT_PAGE_DOWN: a->help_scroll += page; break;
	case ACT_FIRST: a->help_scroll = 0; break;
	case ACT_LAST: a->help_scroll = 1 << 20; break;
	case ACT_HELP:
	case ACT_BACK:
	case ACT_QUIT: a->help = 0; break;
	default: return UI_HANDLED; /* everything else is inert here */
	}
	return UI_HANDLED | UI_REDRAW;
}

const struct pane_ops pane_help_ops = {"help", help_draw, help_action};
