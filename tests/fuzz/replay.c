/*
 * Replay driver for the fuzz targets when libFuzzer is not linked in
 * (plain builds): feeds each file named on the command line, and each
 * regular file of each directory named, to LLVMFuzzerTestOneInput once,
 * so `make check` replays the saved corpus and every crash ever found.
 * A finding shows up as a crash (or a sanitizer report under
 * --enable-asan), which fails the test.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int
run_file(const char *path, unsigned long *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (buf == NULL) {
				fclose(f);
				fprintf(stderr, "replay: out of memory\n");
				return -1;
			}
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
	/* a private copy of exactly len bytes, so ASan sees any overread */
	{
		uint8_t *exact = malloc(len ? len : 1);

		if (exact == NULL) {
			free(buf);
			return -1;
		}
		memcpy(exact, buf, len);
		free(buf);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	(*n)++;
	return 0;
}

static int
run_path(const char *path, unsigned long *n)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path, n);
	if ((d = opendir(path)) == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char sub[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode) &&
		    run_file(sub, n) != 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned long n = 0;
	int i, rc = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
		if (argv[i][0] != '-' && run_path(argv[i], &n) != 0)
			rc = 1;
	printf("replayed %lu inputs\n", n);
	return rc;
}
