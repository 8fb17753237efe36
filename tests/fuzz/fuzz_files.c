/*
 * Whole files in and out for the index fuzz targets (fuzz_files.h).
 */
#include "config.h"

#include "fuzz_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint8_t *
fuzz_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		abort();
	}
	b = malloc((size_t)n + 1);
	if (b == NULL || fread(b, 1, (size_t)n, f) != (size_t)n)
		abort();
	fclose(f);
	*len = (size_t)n;
	return b;
}

void
fuzz_put(const char *path, const uint8_t *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL || (n > 0 && fwrite(b, 1, n, f) != n) || fclose(f) != 0)
		abort();
}

void
fuzz_quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}
