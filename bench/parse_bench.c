/*
 * Parse benchmark driver: loads a snapshot (the pickle reader and the
 * schema sink, nothing else) and prints the thread's CPU time, the wall
 * time and the events loaded, so a change to the parse can be measured
 * without the index build around it.
 * usage: parse_bench FILE [RUNS]
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "snapshot/snap_load.h"
#include "util/xalloc.h"

static double
clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct snapshot *s;
	struct sv_error err;
	int runs, i;

	if (argc < 2) {
		fprintf(stderr, "usage: parse_bench FILE [RUNS]\n");
		return 2;
	}
	xalloc_tune(); /* as src/main.c */
	runs = argc > 2 ? atoi(argv[2]) : 1;
	for (i = 0; i < runs; i++) {
		double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		double w0 = clock_s(CLOCK_MONOTONIC);
		uint64_t ev = 0;
		uint32_t d;

		if (snap_load_file(argv[1], NULL, &s, &err) != 0) {
			fprintf(stderr, "parse_bench: %s\n", err.msg);
			return 1;
		}
		for (d = 0; d < s->n_traces; d++)
			ev += s->traces[d].n;
		printf("parse: cpu %.3f s  wall %.3f s  %" PRIu64 " events\n",
		    clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0,
		    clock_s(CLOCK_MONOTONIC) - w0, ev);
		snap_free(s);
	}
	return 0;
}
