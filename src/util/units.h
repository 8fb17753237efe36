#ifndef SNAPVIEW_UTIL_UNITS_H
#define SNAPVIEW_UTIL_UNITS_H
/*
 * Human-readable numbers: sizes in binary units with one decimal ("1.5
 * GiB", "512 B"), counts with thousands separators. The one
 * implementation behind the commands' text and the viewer's screen
 * (render/fmt.c calls these), so both show a size the same way.
 */
#include <stddef.h>
#include <stdint.h>

/* Splits a size for display: returns the unit (0 = bytes, 1 = KiB, ...
 * 6 = EiB) and, for units above bytes, the value in tenths of the unit,
 * rounded half up in exact integer arithmetic (1,280 B = 1.25 KiB gives
 * 13: "1.3 KiB"). The unit is the first whose rounded value is below
 * 1024.0, so 1,048,524 B is "1023.9 KiB" and 1,048,525 B "1.0 MiB".
 * Bytes below 1024 give unit 0 and *tenths = 0. */
int sv_size_tenths(uint64_t bytes, uint64_t *tenths);

/* Unit names: "B", "KiB", ... "EiB", indexed by sv_size_tenths(). */
const char *sv_size_unit(int unit);

/* Writes a size like "20.0 MiB" (or "512 B") into buf; returns buf. */
char *sv_fmt_size(char *buf, size_t size, uint64_t bytes);
/* Writes the change from a to b, its sign glued to it: "+1.2 GiB",
 * "-277.0 MiB", "0 B" when equal; returns buf. Padded as a whole
 * (printf's %12s), the sign stays with its number. */
char *sv_fmt_size_delta(char *buf, size_t size, uint64_t a, uint64_t b);
/* Writes a size as _memory_viz.py's Bytes() does, "%3.1f" and a unit
 * glued on ("20.0MiB", "512.0B"), for output meant to match it. */
char *sv_fmt_vz_bytes(char *buf, size_t size, uint64_t bytes);
/* Writes n with ',' every three digits ("1,204,551"); returns buf
 * (always NUL-terminated, cut short when size is too small). */
char *sv_fmt_count(char *buf, size_t size, uint64_t n);

#endif
