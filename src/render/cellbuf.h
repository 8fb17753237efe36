#ifndef SNAPVIEW_RENDER_CELLBUF_H
#define SNAPVIEW_RENDER_CELLBUF_H
/*
 * A cell buffer: width x height cells of (code point, colour id, attrs).
 * The render layer draws into it; only tui/ turns it into curses calls,
 * and tests serialise it as text. One column per cell: wide characters
 * are not used (everything drawn is single width; strings from files are
 * escaped and cut per code point).
 *
 * UI_COLORS is the one table of semantic colours: id, then for the colour
 * theme a foreground and background (ANSI numbers 0-7, -1 = terminal
 * default) and attrs, then the attrs of the monochrome theme (where the
 * focused pane's title is the only pane title in reverse video, the
 * others UIC_TITLE_PANE: bold alone is not seen on every terminal).
 * UIC_ALERT is a warning in a line of text (the rank overview's OOM and
 * leak line): bold, never reversed, so that it is not taken for the
 * selection (UIC_SELECT) without colours.
 * tui/colors.c expands it into curses pairs; render code only names the
 * ids.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CB_A_BOLD 0x1
#define CB_A_REVERSE 0x2
#define CB_A_UNDERLINE 0x4
#define CB_A_DIM 0x8

/* _(id, fg, bg, attrs, mono attrs) */
#define UI_COLORS(_)                                                           \
	_(UIC_DEFAULT, -1, -1, 0, 0)                                           \
	_(UIC_TITLE, 0, 6, 0, CB_A_REVERSE)                                    \
	_(UIC_TITLE_PANE, 0, 6, 0, 0)                                          \
	_(UIC_TITLE_FOCUS, 0, 3, CB_A_BOLD, CB_A_REVERSE | CB_A_BOLD)          \
	_(UIC_STATUS, 7, 4, 0, CB_A_REVERSE)                                   \
	_(UIC_AXIS, -1, -1, CB_A_DIM, 0)                                       \
	_(UIC_RESERVED, 1, -1, CB_A_BOLD, CB_A_BOLD)                           \
	_(UIC_WHATIF, 6, -1, CB_A_BOLD, CB_A_BOLD)                             \
	_(UIC_CURSOR, 3, -1, CB_A_BOLD, CB_A_BOLD)                             \
	_(UIC_SUMMARY, 7, -1, CB_A_DIM, 0)                                     \
	_(UIC_HILITE, 1, 7, CB_A_BOLD, CB_A_REVERSE)                           \
	_(UIC_BAND0, 4, -1, 0, 0)                                              \
	_(UIC_BAND1, 2, -1, 0, 0)                                              \
	_(UIC_BAND2, 5, -1, 0, 0)                                              \
	_(UIC_BAND3, 6, -1, 0, 0)                                              \
	_(UIC_BAND4, 3, -1, 0, 0)                                              \
	_(UIC_BAND5, 4, -1, CB_A_BOLD, 0)                                      \
	_(UIC_BAND6, 2, -1, CB_A_BOLD, 0)                                      \
	_(UIC_BAND7, 5, -1, CB_A_BOLD, 0)                                      \
	_(UIC_FREE, -1, -1, CB_A_DIM, 0)                                       \
	_(UIC_PENDING, 1, -1, 0, CB_A_BOLD)                                    \
	_(UIC_WASTE, 1, -1, CB_A_DIM, 0)                                       \
	_(UIC_SELECT, 0, 7, 0, CB_A_REVERSE)                                   \
	_(UIC_FRAMEWORK, -1, -1, CB_A_DIM, 0)                                  \
	_(UIC_ERROR, 7, 1, CB_A_BOLD, CB_A_REVERSE | CB_A_BOLD)                \
	_(UIC_LEAK, 1, -1, CB_A_BOLD, CB_A_REVERSE)                            \
	_(UIC_MARK, 3, -1, CB_A_BOLD, CB_A_BOLD)                               \
	_(UIC_ALERT, 1, -1, CB_A_BOLD, CB_A_BOLD)

enum ui_color {
#define UIC_ENUM(id, fg, bg, a, m) id,
	UI_COLORS(UIC_ENUM)
#undef UIC_ENUM
	UIC_COUNT
};
#define UIC_NBANDS 8
#define UIC_NBANDS_ANSI 5 /* bands the eight ANSI colours tell apart
			     (the others repeat them in bold) */

struct cell {
	uint32_t ch;    /* Unicode code point; ' ' when blank */
	uint8_t color;  /* enum ui_color */
	uint8_t attr;   /* CB_A_* */
	uint16_t pad;
};

struct cellbuf {
	int w, h;
	struct cell *cells; /* owned; w * h, row-major */
};

/* Sets up an empty w x h buffer (w, h >= 0); free with cellbuf_destroy. */
void cellbuf_init(struct cellbuf *cb, int w, int h);
void cellbuf_destroy(struct cellbuf *cb);
/* Resizes and clears. */
void cellbuf_resize(struct cellbuf *cb, int w, int h);

/* Pointer to cell (x, y), or NULL when outside. */
struct cell *cellbuf_at(struct cellbuf *cb, int x, int y);

/* Sets one cell; out-of-range coordinates are ignored. */
void cellbuf_put(struct cellbuf *cb, int x, int y, uint32_t ch,
    unsigned color, unsigned attr);

/* Fills the rectangle (clipped) with ch. */
void cellbuf_fill(struct cellbuf *cb, int x, int y, int w, int h,
    uint32_t ch, unsigned color, unsigned attr);

/* Writes UTF-8 text s at (x, y), at most maxw cells and never past the
 * right edge; invalid bytes and controls show as '?'. Returns the number
 * of cells written. Callers escape untrusted text first (util/escape.h). */
int cellbuf_puts(struct cellbuf *cb, int x, int y, const char *s, int maxw,
    unsigned color, unsigned attr);

/* Like cellbuf_puts with printf formatting. */
int cellbuf_printf(struct cellbuf *cb, int x, int y, int maxw,
    unsigned color, unsigned attr, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Writes the text of the buffer (code points as UTF-8, trailing blanks of
 * each row stripped, one '\n' per row) to f. */
void cellbuf_write_text(const struct cellbuf *cb, FILE *f);

/* Same into a malloc'd string the caller frees. */
char *cellbuf_to_text(const struct cellbuf *cb);

#endif
