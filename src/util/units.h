#ifndef SNAPVIEW_UTIL_UNITS_H
#define SNAPVIEW_UTIL_UNITS_H
/*
 * Human-readable numbers for text output: sizes in binary units with one
 * decimal ("1.5 GiB", "512 B"), counts with thousands separators.
 */
#include <stddef.h>
#include <stdint.h>

/* Writes a size like "20.0 MiB" into buf; returns buf. */
char *sv_fmt_size(char *buf, size_t size, uint64_t bytes);
/* Writes n with ',' every three digits ("1,204,551"); returns buf. */
char *sv_fmt_count(char *buf, size_t size, uint64_t n);

#endif
