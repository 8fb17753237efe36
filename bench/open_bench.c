/*
 * Reopen benchmark driver: opens a snapshot through its existing index
 * (in DIR, as `--cache-dir DIR`) and takes the viewer's first answer for
 * the default device: its peak, and the timeline's 200 columns over the
 * whole trace from the pyramid. Prints the time of the open and of the
 * answer, best of RUNS and their median, wall clock and process CPU. A
 * process does one open per run, like a user's second command.
 * usage: open_bench FILE DIR [RUNS]
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "index/idx.h"

static double
clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run in a child process; writes wall, cpu to fd. */
static int
run(const char *file, const char *dir, int fd)
{
	struct idx_opts io;
	struct sv_index *ix;
	struct sv_error err;
	const struct snapshot *s;
	const struct idx_timeline *tl;
	struct idx_lod_bucket cols[200];
	double w0 = clock_s(CLOCK_MONOTONIC);
	double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t[4];
	uint32_t d;

	memset(&io, 0, sizeof io);
	io.cache_dir = dir;
	if (idx_open(file, &io, &ix, &err) != 0) {
		fprintf(stderr, "%s: %s\n", file, err.msg);
		return 1;
	}
	t[0] = clock_s(CLOCK_MONOTONIC) - w0;
	t[1] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	s = idx_snapshot(ix);
	d = snap_default_device(s);
	tl = idx_timeline(ix, d);
	if (tl != NULL && tl->n_events > 0)
		idx_lod_columns(idx_lod(ix, d), tl, 0, tl->n_events, 200, cols);
	t[2] = clock_s(CLOCK_MONOTONIC) - w0;
	t[3] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	if (write(fd, t, sizeof t) != (ssize_t)sizeof t)
		return 1;
	if (tl != NULL)
		fprintf(stderr, "device %u: peak %" PRIu64 " at %" PRId64 "\n",
		    d, tl->peak, tl->peak_ev);
	idx_close(ix);
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0, n) (sorts v). */
static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	int runs = argc > 3 ? atoi(argv[3]) : 5, i, k;
	double best[4] = {1e9, 1e9, 1e9, 1e9}, *all[4];

	if (argc < 3 || runs < 1) {
		fprintf(stderr, "usage: open_bench FILE DIR [RUNS]\n");
		return 2;
	}
	for (k = 0; k < 4; k++)
		if ((all[k] = calloc((size_t)runs, sizeof *all[k])) == NULL)
			return 1;
	for (i = 0; i < runs; i++) {
		int p[2], st;
		double t[4];
		pid_t pid;

		if (pipe(p) != 0)
			return 1;
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			_exit(run(argv[1], argv[2], p[1]));
		}
		close(p[1]);
		if (read(p[0], t, sizeof t) != (ssize_t)sizeof t ||
		    waitpid(pid, &st, 0) != pid || st != 0)
			return 1;
		close(p[0]);
		for (k = 0; k < 4; k++) {
			if (t[k] < best[k])
				best[k] = t[k];
			all[k][i] = t[k];
		}
	}
	printf("open:          %.1f ms wall, %.1f ms cpu (best of %d); "
	    "median %.1f ms wall, %.1f ms cpu\n", best[0] * 1e3,
	    best[1] * 1e3, runs, median(all[0], runs) * 1e3,
	    median(all[1], runs) * 1e3);
	printf("first answer:  %.1f ms wall, %.1f ms cpu (open, peak, 200 "
	    "timeline columns); median %.1f ms wall, %.1f ms cpu\n",
	    best[2] * 1e3, best[3] * 1e3, median(all[2], runs) * 1e3,
	    median(all[3], runs) * 1e3);
	for (k = 0; k < 4; k++)
		free(all[k]);
	return 0;
}
