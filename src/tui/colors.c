/*
 * Colour themes: one curses pair per UI_COLORS row (pairs are cheap and
 * the table is short), attributes precomputed for the colour and the
 * monochrome theme; on a terminal of 256 colours the eight band colours
 * are eight distinct hues (band256).
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

static int use_color, use_256;

/* The bands' colours on a terminal of 256 colours: eight hues told apart
 * without bold (the eight ANSI colours have five for bands, so bands 6
 * to 8 would repeat 1 to 3 in bold), each mid-dark enough for a light
 * background and light enough for a dark one: blue, green, magenta,
 * teal, orange, violet, olive, pink. None is the red of the reserved
 * line and the leaked set. */
static const short band256[UIC_NBANDS] = {33, 34, 127, 37, 172, 99, 142,
    168};

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
	use_256 = COLORS >= 256 && COLOR_PAIRS > UIC_COUNT;
	for (i = 1; i < UIC_COUNT && i < COLOR_PAIRS; i++)
		init_pair((short)i, use_256 && i >= UIC_BAND0 &&
		    i < UIC_BAND0 + UIC_NBANDS ? band256[i - UIC_BAND0] :
		    table[i].fg, table[i].bg);
	return 1;
}

int
colors_bands(void)
{
	if (!use_color)
		return 0;
	return use_256 ? UIC_NBANDS : UIC_NBANDS_ANSI;
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
	/* 256 colours: the bands need no bold to differ */
	if (use_256 && color >= UIC_BAND0 && color < UIC_BAND0 + UIC_NBANDS)
		return to_attr(cb_attr);
	return to_attr(table[color].attr | cb_attr);
}
