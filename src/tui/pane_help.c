/*
 * Help screen: every action with its keys, generated from ACTION_INFO,
 * and the legend of the two maps.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tui/keys.h"
#include "tui/pane.h"

static const char *const legend[] = {
    "",
    "Timeline: m cycles the bands: one per allocation (the largest drawn,",
    "  the rest one summarised band on top), per call site, category or",
    "  stream (the top 8 at the visible peak + other), or per segment;",
    "  the legend (i) names them with their bytes at the cursor. J/K pick",
    "  a band (Enter: its alloc), >/< ( ) y zoom and pan, y fits; the",
    "  reserved line shows segment bytes; x = event (t: time); annotation",
    "  names under the axis, {/} jump to them.",
    "Segment map: letters = allocated blocks, ~ pending free,",
    "  + (or light shade) rounding waste, . free; E expandable, P pool.",
    "Search (/): a hex address (0x...) or text found in a frame.",
    "Views: U leaks (site's leaked blocks: bottom band, allocs marked on",
    "  the axis; Enter/]/[ go to them), F frag (segment_alloc marked;",
    "  Enter goes there), T top at the cursor. q or Esc closes a view.",
};

static int
help_lines(void)
{
	return ACT_COUNT - 1 + (int)(sizeof legend / sizeof legend[0]);
}

static void
help_draw(struct app *a, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	char line[256], keys[64];
	int i, row = 0, n = help_lines();

	(void)focused;
	pane_title(a, cb, r, 1, "snapview help - q, Esc or ? closes");
	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	if (a->help_scroll > n - (r->h - 1))
		a->help_scroll = n - (r->h - 1);
	if (a->help_scroll < 0)
		a->help_scroll = 0;
	for (i = a->help_scroll; i < n && row < r->h - 1; i++, row++) {
		if (i < ACT_COUNT - 1) {
			enum action act = (enum action)(i + 1);
			const char *k2 = keys_action_key(act, 1);

			snprintf(keys, sizeof keys, "%s%s%s",
			    keys_action_key(act, 0), k2[0] != '\0' ? " " : "",
			    k2);
			snprintf(line, sizeof line, "%-16s %-13s %s", keys,
			    keys_action_name(act), keys_action_help(act));
		} else
			snprintf(line, sizeof line, "%s",
			    legend[i - (ACT_COUNT - 1)]);
		cellbuf_puts(cb, r->x + 1, r->y + 1 + row, line, r->w - 1,
		    UIC_DEFAULT, 0);
	}
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
