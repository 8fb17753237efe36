/*
 * Colour themes: one curses pair per UI_COLORS row (pairs are cheap and
 * the table is short), attributes precomputed for the colour and the
 * monochrome theme.
 */
#include "config.h"

#include "tui/colors.h"

#include <stdlib.h>

static const struct {
	short fg, bg;
	unsigned attr, mono;
} table[UIC_COUNT] = {
#define UIC_ROW(id, fg, bg, a, m) [id] = {fg, bg, a, m},
    UI_COLORS(UIC_ROW)
#undef UIC_ROW
};

static int use_color;

static attr_t
to_attr(unsigned a)
{
	attr_t r = A_NORMAL;

	if (a & CB_A_BOLD)
		r |= A_BOLD;
	if (a & CB_A_REVERSE)
		r |= A_REVERSE;
	if (a & CB_A_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & CB_A_DIM)
		r |= A_DIM;
	return r;
}

int
colors_init(int force_mono)
{
	const char *nc = getenv("NO_COLOR");
	int i;

	use_color = !force_mono && (nc == NULL || nc[0] == '\0') &&
	    has_colors();
	if (!use_color)
		return 0;
	start_color();
	use_default_colors();
	for (i = 1; i < UIC_COUNT && i < COLOR_PAIRS; i++)
		init_pair((short)i, table[i].fg, table[i].bg);
	return 1;
}

attr_t
colors_attr(unsigned color, unsigned cb_attr, short *pair)
{
	if (color >= UIC_COUNT)
		color = UIC_DEFAULT;
	if (!use_color) {
		*pair = 0;
		return to_attr(table[color].mono | cb_attr);
	}
	*pair = color < (unsigned)COLOR_PAIRS ? (short)color : 0;
	return to_attr(table[color].attr | cb_attr);
}
