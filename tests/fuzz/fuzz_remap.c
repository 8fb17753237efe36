/*
 * Fuzz target: an index rewritten in place while it is open (issue of a
 * mapped index trusted only once, doc/SECURITY.md "While mapped"). The
 * index of one of three fixed small snapshots (tests/data/fixtures/) is
 * built once; each input opens a fresh copy of it, then runs a script
 * read from the input: between reader calls, bytes of the open index
 * file are overwritten through pwrite() (the reader's MAP_SHARED mapping
 * sees them at once), the way its owner may rewrite it under a reader.
 * The script is deterministic: no thread, no timing.
 *
 * Input: byte 0 picks the fixture; then operations until the end:
 *   0x00..0x3f  walk everything (tests/fuzz/idx_walk.c), with the
 *               pyramid when bit 0 is set
 *   0x40..0x7f  drop this thread's cache entries (the next walk decodes
 *               from the file again)
 *   0x80..0xff  write: u32 offset (little-endian, taken modulo the file
 *               size), then (op & 0x3f) + 1 bytes of data (fewer when the
 *               input ends), written at that offset within the file
 * Oracle: no crash, no sanitizer report, no leak; and every walk that
 * follows writes outside the column data and the pyramid digests to the
 * value of the first walk (nothing else may be read from the file after
 * the open), checked with abort().
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unit/idx_forge.h"
#include "fuzz.h"
#include "fuzz_files.h"
#include "idx_walk.h"
#include "index/idx.h"
#include "index/idx_format.h"
#include "snapshot/snap_stripe.h"
#include "util/err.h"

#define N_FIX 3
#define MAX_DEVICES 8
#define PINNED_MTIME 1000000000

static const char *const fixtures[N_FIX] = {
	"newest.pickle", "small_p4.pickle", "two_traces.pickle",
};

static char dir[256];
static char src[N_FIX][300];
static char *ipath[N_FIX];
static uint8_t *pristine[N_FIX];
static size_t pristine_n[N_FIX];
/* where the sections read in place lie in each pristine index */
static uint64_t inplace_off[N_FIX][2], inplace_len[N_FIX][2];

static void
cleanup(void)
{
	char cmd[400];
	int i;

	for (i = 0; i < N_FIX; i++) {
		free(ipath[i]);
		free(pristine[i]);
	}
	if (dir[0] != '\0') {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "fuzz_remap: cannot remove %s\n", dir);
	}
}




/* Where the in-place sections lie in the pristine index of fixture k. */
static void
find_inplace(int k)
{
	static const char *const names[2] = {IDX_SEC_COLDATA, IDX_SEC_LOD};
	struct forge fg;
	int s;

	forge_load(&fg, ipath[k]);
	for (s = 0; s < 2; s++) {
		const struct forge_sec *t = forge_find(&fg, names[s]);

		if (t == NULL)
			abort();
		inplace_off[k][s] = t->off;
		inplace_len[k][s] = t->len;
	}
	forge_free(&fg);
}

static void
setup(void)
{
	const char *tmp = getenv("TMPDIR");
	struct timespec ts[2];
	struct idx_opts o;
	struct sv_index *ix;
	struct sv_error err;
	int i;

	snprintf(dir, sizeof dir, "%s/fuzz_remap.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		abort();
	atexit(cleanup);
	ts[0].tv_sec = ts[1].tv_sec = PINNED_MTIME;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	for (i = 0; i < N_FIX; i++) {
		char from[1024];
		uint8_t *b;
		size_t n;

		snprintf(from, sizeof from, "%s/tests/data/fixtures/%s",
		    TOP_SRCDIR, fixtures[i]);
		b = fuzz_slurp(from, &n);
		snprintf(src[i], sizeof src[i], "%s/%s", dir, fixtures[i]);
		fuzz_put(src[i], b, n);
		free(b);
		if (utimensat(AT_FDCWD, src[i], ts, 0) != 0 ||
		    idx_path_beside(src[i], &ipath[i], &err) != 0)
			abort();
		memset(&o, 0, sizeof o);
		o.warn = fuzz_quiet;
		if (idx_open(src[i], &o, &ix, &err) != 0)
			abort();
		idx_close(ix);
		pristine[i] = fuzz_slurp(ipath[i], &pristine_n[i]);
		find_inplace(i);
	}
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* 1 when [off, off + n) touches a section read in place. */
static int
hits_inplace(int k, uint64_t off, uint64_t n)
{
	int s;

	for (s = 0; s < 2; s++)
		if (off < inplace_off[k][s] + inplace_len[k][s] &&
		    inplace_off[k][s] < off + n)
			return 1;
	return 0;
}

static void
run(int k, int fd, const struct sv_index *ix, const uint8_t *d, size_t n)
{
	uint64_t first = idx_walk(ix, MAX_DEVICES, 0), got;
	int clean = 1; /* nothing read in place was written yet */
	size_t at = 0;

	while (at < n) {
		uint8_t op = d[at++];

		if (op < 0x40) {
			got = idx_walk(ix, MAX_DEVICES, op & 1);
			if (clean && !(op & 1) && got != first) {
				fprintf(stderr, "fuzz_remap: a rewrite outside "
				    "the column data changed what was read\n");
				abort();
			}
		} else if (op < 0x80) {
			snap_stripe_cache_clear();
		} else {
			size_t len = (size_t)(op & 0x3f) + 1;
			uint64_t off;

			if (n - at < 4)
				break;
			off = le32(d + at) % pristine_n[k];
			at += 4;
			if (len > n - at)
				len = n - at;
			if (len > pristine_n[k] - off)
				len = (size_t)(pristine_n[k] - off);
			if (hits_inplace(k, off, len))
				clean = 0;
			if (pwrite(fd, d + at, len, (off_t)off) != (ssize_t)len)
				abort();
			at += len;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct idx_opts o;
	struct sv_index *ix = NULL;
	struct sv_error err;
	struct idx_info info;
	int k, fd;

	if (!ready) {
		setup();
		ready = 1;
	}
	if (size == 0)
		return 0;
	k = data[0] % N_FIX;
	fuzz_put(ipath[k], pristine[k], pristine_n[k]);
	memset(&o, 0, sizeof o);
	o.warn = fuzz_quiet;
	if (idx_open(src[k], &o, &ix, &err) != 0)
		abort();
	idx_get_info(ix, &info);
	if (info.built)
		abort(); /* the pristine index must be used as it is */
	fd = open(ipath[k], O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		abort();
	snap_stripe_cache_clear();
	run(k, fd, ix, data + 1, size - 1);
	close(fd);
	snap_stripe_cache_clear();
	idx_close(ix);
	return 0;
}
