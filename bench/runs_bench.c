/*
 * Run directory benchmark driver (bench/runs.sh): on a run whose indexes
 * exist, times the grid (the layout recognised, every dump's summary
 * read, the cells' figures) and the growth analysis (the same with every
 * dump's blocks section read, then growth between dumps and skew), each
 * in a child process of its own as a command runs it. Prints the best
 * and the median of RUNS, wall clock, and what was found.
 * usage: runs_bench DIR [RUNS]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/rankset.h"
#include "analysis/runs.h"
#include "index/idx.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One pass; writes its wall time and what it found to fd. */
static int
run(const char *dir, int growth, int fd)
{
	struct an_rankset rs;
	struct an_rankset_opts ro;
	struct an_run r;
	struct idx_opts io;
	struct sv_error err;
	double t0 = now(), t;
	size_t k, pending = 0;
	char out[256];
	int n;

	sv_error_clear(&err);
	if (an_run_collect(dir, NULL, &rs, &r, &err) != 1) {
		fprintf(stderr, "%s: no run (%s)\n", dir, err.msg);
		return 1;
	}
	memset(&io, 0, sizeof io);
	memset(&ro, 0, sizeof ro);
	ro.io = &io;
	ro.child_exit = _exit;
	if (growth) {
		ro.extra = &an_run_blocks_section;
		ro.n_extra = 1;
	}
	if (an_rankset_load(&rs, &ro, &err) != 0) {
		fprintf(stderr, "%s: %s\n", dir, err.msg);
		return 1;
	}
	for (k = 0; k < rs.n; k++)
		pending += rs.m[k].built;
	an_run_analyse(&r, &rs, -1);
	t = now() - t0;
	n = snprintf(out, sizeof out, "%.6f %zu %zu %zu %zu %zu\n", t,
	    r.n_dumps + r.n_oom, r.n_growth, r.n_skew, pending, rs.n);
	if (write(fd, out, (size_t)n) != n)
		return 1;
	an_run_free(&r);
	an_rankset_free(&rs);
	return 0;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
measure(const char *dir, int growth, int runs)
{
	double *t = calloc((size_t)runs, sizeof *t);
	size_t dumps = 0, grow = 0, skew = 0, built = 0, files = 0;
	int i;

	for (i = 0; i < runs; i++) {
		int p[2], status;
		char buf[256];
		ssize_t n;
		pid_t pid;

		if (pipe(p) != 0 || (pid = fork()) < 0)
			return 1;
		if (pid == 0) {
			close(p[0]);
			_exit(run(dir, growth, p[1]));
		}
		close(p[1]);
		n = read(p[0], buf, sizeof buf - 1);
		close(p[0]);
		waitpid(pid, &status, 0);
		if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 1;
		buf[n] = '\0';
		if (sscanf(buf, "%lf %zu %zu %zu %zu %zu", &t[i], &dumps,
		    &grow, &skew, &built, &files) != 6)
			return 1;
		if (built > 0) {
			fprintf(stderr, "%zu indexes were built: build them "
			    "first (snapview ranks DIR)\n", built);
			return 1;
		}
	}
	qsort(t, (size_t)runs, sizeof *t, cmp_d);
	printf("%s %.4f %.4f %zu %zu %zu %zu\n", growth ? "growth" : "grid",
	    t[0], t[runs / 2], files, dumps, grow, skew);
	free(t);
	return 0;
}

int
main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[2]) : 5;

	if (argc < 2 || runs < 1) {
		fprintf(stderr, "usage: runs_bench DIR [RUNS]\n");
		return 2;
	}
	/* what: best median files dumps growing-sites skew-steps */
	if (measure(argv[1], 0, runs) != 0 || measure(argv[1], 1, runs) != 0)
		return 1;
	return 0;
}
