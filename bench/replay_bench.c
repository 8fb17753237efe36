/*
 * Replay benchmark driver: opens a snapshot through its index (built
 * into $BENCH_CACHE, default /tmp/snapview-bench-cache, the first time:
 * the stripe-coded events and the stored checkpoints, as every command
 * reads them), takes the replay of its default device, then times
 * state-at-random-N (replay_seek + the flat view) and stepping +1 / -1,
 * and prints p50/p99 with the checkpoint memory. Baseline measured in
 * the same run: building the flat view of the current state alone (what
 * any consumer pays anyway).
 * usage: replay_bench FILE [SAMPLES]
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/idx.h"
#include "replay/replay.h"
#include "replay/replay_idx.h"
#include "snapshot/snap_load.h"

/* Samples use the thread's CPU clock (SV_BENCH_WALL=1: wall clock): on a
 * shared machine wall-clock percentiles measure the scheduler. */
static clockid_t sample_clock = CLOCK_THREAD_CPUTIME_ID;

static double
clock_us(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double
now_us(void)
{
	return clock_us(sample_clock);
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
report(const char *what, double *v, int n, double base)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	printf("%-22s p50 %9.1f us  p99 %9.1f us  (p99 = %.1fx view)\n", what,
	    v[n / 2], v[n * 99 / 100], base > 0 ? v[n * 99 / 100] / base : 0);
}

int
main(int argc, char **argv)
{
	const struct snapshot *s;
	struct sv_index *ix;
	struct idx_opts io;
	struct idx_info info;
	struct sv_error err;
	struct replay *r;
	const struct replay_info *in;
	int n = argc > 2 ? atoi(argv[2]) : 2000, i;
	double t0, *v, base;
	uint64_t ne, seed = 88172645463325252ull;
	int64_t at;

	if (getenv("SV_BENCH_WALL") != NULL)
		sample_clock = CLOCK_MONOTONIC;
	if (argc < 2 || n < 100) {
		fprintf(stderr, "usage: replay_bench FILE [SAMPLES>=100]\n");
		return 1;
	}
	memset(&io, 0, sizeof io);
	io.cache_dir = getenv("BENCH_CACHE") != NULL ? getenv("BENCH_CACHE")
	    : "/tmp/snapview-bench-cache";
	io.sections = &replay_idx_section;
	io.n_sections = 1;
	t0 = now_us();
	if (idx_open(argv[1], &io, &ix, &err) != 0) {
		fprintf(stderr, "%s: %s\n", argv[1], err.msg);
		return 2;
	}
	idx_get_info(ix, &info);
	s = idx_snapshot(ix);
	printf("open:            %.2f s (index %s)\n", (now_us() - t0) / 1e6,
	    info.built ? "built" : "reused");
	t0 = now_us();
	r = replay_from_index(ix, snap_default_device(s), &err);
	if (r == NULL) {
		fprintf(stderr, "%s: %s\n", argv[1], err.msg);
		return 2;
	}
	in = replay_info(r);
	ne = replay_n_events(r);
	printf("replay build:    %.2f s (%" PRIu64 " events, K %" PRIu64
	       ", %" PRIu64 " checkpoints, %.1f MiB checkpoints, %.1f "
	       "bytes/event)\n", (now_us() - t0) / 1e6, ne, in->k,
	    in->n_checkpoints, (double)in->checkpoint_bytes / 1048576.0,
	    ne ? (double)in->checkpoint_bytes / (double)ne : 0.0);
	if (ne < 2)
		return 0;
	v = malloc((size_t)n * sizeof *v);
	for (i = 0; i < n; i++) {
		replay_seek(r, (int64_t)(ne / 2), &err);
		t0 = now_us();
		replay_state(r);
		v[i] = now_us() - t0;
		replay_seek(r, (int64_t)(ne / 2) - 1, &err); /* invalidate */
	}
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	base = v[n * 99 / 100];
	printf("clock:           %s\n", sample_clock == CLOCK_MONOTONIC
	    ? "wall" : "thread CPU time");
	printf("state view alone: p99 %.1f us (%u blocks)\n", base,
	    replay_state(r)->n_blocks);
	for (i = 0; i < n; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		at = (int64_t)(seed % ne);
		t0 = now_us();
		replay_seek(r, at, &err);
		replay_state(r);
		v[i] = now_us() - t0;
	}
	report("seek random N", v, n, base);
	at = (int64_t)(ne / 3);
	replay_seek(r, at, &err);
	for (i = 0; i < n && at + 1 < (int64_t)ne; i++) {
		t0 = now_us();
		replay_seek(r, ++at, &err);
		replay_state(r);
		v[i] = now_us() - t0;
	}
	report("step +1", v, i, base);
	at = (int64_t)(ne * 2 / 3);
	replay_seek(r, at, &err);
	for (i = 0; i < n && at > 0; i++) {
		t0 = now_us();
		replay_seek(r, --at, &err);
		replay_state(r);
		v[i] = now_us() - t0;
	}
	report("step -1", v, i, base);
	free(v);
	replay_free(r);
	idx_close(ix);
	return 0;
}
