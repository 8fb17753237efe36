/*
 * whatif benchmark driver: opens a snapshot through its index (built
 * into $BENCH_CACHE, default /tmp/snapview-bench-cache, the first time),
 * then, in one run on the default device, times
 *   - the project's forward replay of every event (replay_seek() one
 *     event at a time from the state before the trace: what check's
 *     forward pass does), the baseline;
 *   - an_whatif() with the agreement pass only, and with 1 .. N of the
 *     settings given,
 * and prints each time, the ratio to the baseline and the cost of each
 * setting. Times are the process's CPU time (SV_BENCH_WALL=1: wall
 * clock): on a shared machine the wall clock measures the scheduler.
 * usage: whatif_bench FILE [SETTINGS ...]
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/whatif.h"
#include "index/idx.h"
#include "replay/replay.h"
#include "replay/replay_idx.h"
#include "replay/simconf.h"

static clockid_t bench_clock = CLOCK_PROCESS_CPUTIME_ID;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(bench_clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	const struct snapshot *s;
	struct sv_index *ix;
	struct idx_opts io;
	struct sv_error err;
	struct replay *r;
	struct an_whatif_opts wo;
	struct an_whatif w;
	struct sim_conf confs[AN_WHATIF_MAX_COLS];
	char why[200];
	uint32_t d, k, n;
	uint64_t ne, i;
	double t0, base, t, prev = 0;

	if (getenv("SV_BENCH_WALL") != NULL)
		bench_clock = CLOCK_MONOTONIC;
	if (argc < 2) {
		fprintf(stderr, "usage: whatif_bench FILE [SETTINGS ...]\n");
		return 1;
	}
	n = (uint32_t)(argc - 2);
	if (n > AN_WHATIF_MAX_COLS)
		n = AN_WHATIF_MAX_COLS;
	for (k = 0; k < n; k++)
		if (simconf_parse(argv[k + 2], &confs[k], why,
		    sizeof why) != 0) {
			fprintf(stderr, "whatif_bench: %s\n", why);
			return 1;
		}
	memset(&io, 0, sizeof io);
	io.cache_dir = getenv("BENCH_CACHE") != NULL ? getenv("BENCH_CACHE")
	    : "/tmp/snapview-bench-cache";
	io.sections = &replay_idx_section;
	io.n_sections = 1;
	if (idx_open(argv[1], &io, &ix, &err) != 0) {
		fprintf(stderr, "%s: %s\n", argv[1], err.msg);
		return 2;
	}
	s = idx_snapshot(ix);
	d = snap_default_device(s);
	if ((r = replay_from_index(ix, d, &err)) == NULL) {
		fprintf(stderr, "%s: %s\n", argv[1], err.msg);
		return 2;
	}
	ne = replay_n_events(r);
	printf("clock:            %s\n", bench_clock == CLOCK_MONOTONIC ?
	    "wall" : "process CPU time");
	printf("events:           %" PRIu64 " (device %u)\n", ne, d);

	t0 = now_s();
	if (replay_seek(r, -1, &err) != 0)
		goto fail;
	for (i = 0; i < ne; i++)
		if (replay_seek(r, (int64_t)i, &err) != 0)
			goto fail;
	base = now_s() - t0;
	printf("forward replay:   %.2f s (every event, one at a time)\n",
	    base);

	for (k = 0; k <= n; k++) {
		memset(&wo, 0, sizeof wo);
		wo.confs = confs;
		wo.n_confs = k;
		t0 = now_s();
		if (an_whatif(s, d, r, &wo, &w, &err) != 0)
			goto fail;
		t = now_s() - t0;
		if (k == 0)
			printf("whatif, agreement only: %.2f s = %.2fx the "
			    "replay\n", t, base > 0 ? t / base : 0);
		else
			printf("whatif, %u setting%s:    %.2f s = %.2fx the "
			    "replay (this setting, %s: %.2f s = %.2fx)\n", k,
			    k == 1 ? " " : "s", t, base > 0 ? t / base : 0,
			    argv[k + 1], t - prev,
			    base > 0 ? (t - prev) / base : 0);
		prev = t;
		an_whatif_destroy(&w);
	}
	replay_free(r);
	idx_close(ix);
	return 0;
fail:
	fprintf(stderr, "%s: %s\n", argv[1], err.msg);
	return 2;
}
