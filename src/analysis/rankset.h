#ifndef SNAPVIEW_ANALYSIS_RANKSET_H
#define SNAPVIEW_ANALYSIS_RANKSET_H
/*
 * A set of snapshots of one job, one per rank, and their summaries
 * (summary.h): the input of snapview ranks and of the viewer's rank
 * overview.
 *
 * Members come from the arguments: one directory stands for its regular
 * files named *.pickle or *.pkl; anything else is a member as given. A
 * member's rank is the number after "rank" in its file name (rank3,
 * rank_3, rank-3; the last such in the name) when every member has one
 * and no two share it; otherwise every rank is the position in the set.
 *
 * Loading reads each member's summary from its index. First, in this
 * process, every member whose index is there is opened (its summary
 * section read, added when the index lacks it); an open that would have
 * to parse the snapshot is given up at its first progress report. Then
 * the members left are built in child processes, up to `jobs` at a time
 * and never more at once than the memory available allows: a build is
 * estimated at an_rankset_build_mem(file size), and a new one starts only
 * while the estimates of those running, its own included, fit in three
 * quarters of the memory available (MemAvailable) when loading began;
 * one build always runs. A child sends its progress, warnings and the
 * summary (or the error) through a pipe and ends through the caller's
 * child_exit (this layer never ends a process itself); a member that
 * fails or crashes gets its error and the others go on.
 *
 * Nothing here prints: progress and warnings go to the callbacks.
 */
#include <stddef.h>
#include <stdint.h>

#include "analysis/summary.h"
#include "index/idx.h"
#include "util/err.h"

enum an_rs_state { AN_RS_PENDING, AN_RS_OK, AN_RS_FAILED };

#define AN_RS_EXTRA_MAX 2      /* sections read besides the summary */

struct an_rs_member {
	char *path;            /* owned */
	int64_t rank;
	uint64_t size;         /* bytes of the file, 0 when unknown */
	int state;             /* enum an_rs_state */
	struct sv_error err;   /* AN_RS_FAILED: why */
	struct an_summary sum; /* AN_RS_OK */
	int built;             /* its index was built by this load */
	/* AN_RS_OK: the bytes of an_rankset_opts.extra[i] (owned), NULL
	 * when that section could not be had */
	uint8_t *extra[AN_RS_EXTRA_MAX];
	size_t extra_len[AN_RS_EXTRA_MAX];
};

struct an_rankset {
	struct an_rs_member *m;
	size_t n;
	int ranks_from_names;  /* ranks are the files' rank<N> */
	char *dir;             /* the directory given, or NULL; owned */
};

/* Members from args (see above). Returns 0, or -1 with err set (a
 * directory with no snapshot in it, an unreadable directory). */
int an_rankset_collect(char *const *args, size_t n, struct an_rankset *rs,
    struct sv_error *err);
void an_rankset_free(struct an_rankset *rs);

/* Members at the given paths with the given ranks, in that order (a run
 * directory's dumps: their ranks come from its layout); ranks_from_names
 * is set. Nothing is checked. */
void an_rankset_from_paths(char *const *paths, const int64_t *ranks,
    size_t n, struct an_rankset *rs);

struct an_rankset_progress {
	size_t done, total;     /* members loaded or failed, of all */
	size_t building;        /* builds running now */
	uint64_t bytes_done;    /* of the files being and already built */
	uint64_t bytes_total;
};

struct an_rankset_opts {
	/* cache_dir, no_cache and warn/warn_ctx are used; the sections and
	 * progress are the loader's own */
	const struct idx_opts *io;
	unsigned jobs;          /* at most this many builds; 0: online CPUs */
	uint64_t mem_avail;     /* 0: the system's MemAvailable */
	/* called at least every 100 ms while building; non-zero cancels */
	int (*progress)(void *ctx, const struct an_rankset_progress *p);
	void *progress_ctx;
	/* How a build's child process ends once it has sent its answer:
	 * the program's _exit (no exit handlers, no stdio flush: they are
	 * the parent's). Required; must not return. */
	void (*child_exit)(int status);
	/* Sections read for every member besides its summary (at most
	 * AN_RS_EXTRA_MAX; NULL: none): kept in the index like the summary
	 * (added to an index that lacks them), built from the snapshot with
	 * no cache, and their bytes left in each member's extra[]. */
	const struct idx_section_builder *extra;
	size_t n_extra;
};

/* Loads every member's summary. Returns 0 (each member AN_RS_OK or
 * AN_RS_FAILED), or -1 with err set when cancelled. */
int an_rankset_load(struct an_rankset *rs, const struct an_rankset_opts *o,
    struct sv_error *err);

/* The overview's rows: one per loaded member and device, the highest
 * peak first (ties: lower rank, then lower device). */
struct an_rs_row {
	size_t member;               /* index in rs->m */
	const struct an_sum_dev *dev; /* borrowed from the member */
};

struct an_rs_report {
	struct an_rs_row *rows;         /* owned */
	size_t n_rows;
	size_t n_failed;             /* members not loaded */
	uint64_t median;             /* median peak of the rows (the mean of
					the middle two for an even count) */
	double skew;                 /* rows[0] peak / median (0: none) */
};

/* only: the one device to report, or -1 for every device. */
void an_rankset_report(const struct an_rankset *rs, int64_t only,
    struct an_rs_report *out);
void an_rankset_report_free(struct an_rs_report *r);
/* The skew in words: which rank peaked and how far above the median
 * (or that it is within 5% of it). */
void an_rankset_skew_text(const struct an_rankset *rs,
    const struct an_rs_report *r, char *buf, size_t size);

/* The memory an index build of a file of size bytes is taken to need. */
uint64_t an_rankset_build_mem(uint64_t size);
/* MemAvailable (else free pages), in bytes; 0 when unknown. */
uint64_t an_rankset_mem_available(void);

/* The rank in name ("rank" followed by digits, '_' or '-' between
 * allowed), or -1. */
int64_t an_rankset_rank_of(const char *name);

#endif
