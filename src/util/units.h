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
/* Writes a size as _memory_viz.py's Bytes() does, "%3.1f" and a unit
 * glued on ("20.0MiB", "512.0B"), for output meant to match it. */
char *sv_fmt_vz_bytes(char *buf, size_t size, uint64_t bytes);
/* Writes n with ',' every three digits ("1,204,551"); returns buf. */
char *sv_fmt_count(char *buf, size_t size, uint64_t n);

#endif
