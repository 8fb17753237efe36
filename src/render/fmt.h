#ifndef SNAPVIEW_RENDER_FMT_H
#define SNAPVIEW_RENDER_FMT_H
/*
 * Number formatting for the screen. Every function writes into a caller
 * buffer (size bytes, always NUL-terminated, truncated if short) and
 * returns it, so calls can be nested in printf arguments.
 */
#include <stddef.h>
#include <stdint.h>

#define FMT_BUF 32

/* Binary units with one decimal: "512 B", "1.0 KiB", "20.0 MiB",
 * "61.2 GiB", "1.5 TiB". */
char *fmt_size(char *buf, size_t size, uint64_t bytes);

/* Compact form for axes and tight columns (at most 6 cells): "512B",
 * "1.0K", "20.0M", "61.2G", "512M", "1.5T". */
char *fmt_size_short(char *buf, size_t size, uint64_t bytes);

/* The change from a to b in the compact form, its sign glued to it:
 * "+1.2G", "-277M", "0B" when equal. Padded as a whole ("%10s"), never
 * "-     277M". */
char *fmt_size_short_delta(char *buf, size_t size, uint64_t a, uint64_t b);

/* Hex address with 0x: "0x7f3a00000000". */
char *fmt_addr(char *buf, size_t size, uint64_t addr);

/* Count with ',' every three digits: "1,204,551". */
char *fmt_count(char *buf, size_t size, uint64_t n);

/* Event number: "#1,204,551", or "start" for -1. */
char *fmt_event(char *buf, size_t size, int64_t ev);

/* Duration in microseconds as "+12.345s", "+1m02.5s", "+350us",
 * relative times on a wall-clock axis; none at all is "0". */
char *fmt_duration(char *buf, size_t size, int64_t us);

/* Parses a size/number the user typed: decimal, 0x hex, or a bare hex
 * string with at least one a-f digit. Returns 0 and sets *out, or -1. */
int fmt_parse_u64(const char *s, uint64_t *out);

#endif
