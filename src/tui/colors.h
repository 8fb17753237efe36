#ifndef SNAPVIEW_TUI_COLORS_H
#define SNAPVIEW_TUI_COLORS_H
/*
 * Semantic colours (UI_COLORS in render/cellbuf.h) turned into curses
 * attributes once at start-up. Monochrome when NO_COLOR is set (any
 * value, no-color.org), when the terminal has no colours, or when forced.
 */
#include <curses.h>

#include "render/cellbuf.h"

/* Call after the screen is up. Returns 1 if colours are used, else 0. */
int colors_init(int force_mono);

/* Distinct band colours the terminal shows: UIC_NBANDS with 256
 * colours, UIC_NBANDS_ANSI with eight, 0 without colour. */
int colors_bands(void);

/* Attributes (with colour pair) for colour id and cell attrs. */
attr_t colors_attr(unsigned color, unsigned cb_attr, short *pair);

#endif
