#ifndef SNAPVIEW_TESTS_FUZZ_FUZZ_FILES_H
#define SNAPVIEW_TESTS_FUZZ_FUZZ_FILES_H
/*
 * Whole files in and out for the index fuzz targets' setup, and a warn
 * callback that says nothing. Test code only: every failure aborts.
 */
#include <stddef.h>
#include <stdint.h>

/* The bytes of path (heap, one byte more than *len; the caller frees). */
uint8_t *fuzz_slurp(const char *path, size_t *len);

/* Writes n bytes of b to path, replacing it. */
void fuzz_put(const char *path, const uint8_t *b, size_t n);

/* An idx_opts warn callback that drops the line. */
void fuzz_quiet(void *ctx, const char *msg);

#endif
