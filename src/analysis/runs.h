#ifndef SNAPVIEW_ANALYSIS_RUNS_H
#define SNAPVIEW_ANALYSIS_RUNS_H
/*
 * A run directory: the snapshots one job dumped, one per rank per step
 * (and one on an OOM), laid out as a framework names them. The input of
 * snapview ranks DIR and of the viewer's grid when DIR holds one.
 *
 * Layouts, matched against the end of each file's path under DIR (any
 * directories above, memory_snapshot/ for instance, are allowed):
 *   verl        step{step}/torch_memory_rank{rank}_pid{pid}.pickle
 *   torchtitan  iteration_{step}/rank{rank}_memory_snapshot.pickle, and
 *               iteration_{step}_exit/... for the dump taken on an OOM
 * and a pattern of the caller's (--layout), matched against the whole
 * path under DIR: {rank}, {step} and {pid} stand for digits, * for any
 * characters but '/', anything else for itself. Only files named
 * *.pickle or *.pkl are looked at, at most AN_RUN_DEPTH directories
 * down, and the walk stops after AN_RUN_MAX_ENTRIES entries or
 * AN_RUN_MAX_FILES such files (a home directory given by mistake). The
 * layout that names the most files is the run's; a file of a cell that
 * has one already (an OOM dump wins) and the files it does not name are
 * the run's other files, ranked as an_rankset_collect() ranks
 * the files of a directory.
 *
 * A run is a grid: ranks as rows, steps as columns, a cell per dump. A
 * cell is a dump (its figures from the member's summary, summary.h), an
 * OOM dump (its trace has an oom event, or it is named as one), an empty
 * file (0 bytes: a writer that never finished), a file that could not be
 * read, or missing.
 *
 * What each dump held at the moment it was written is in the final
 * segments and blocks of its file: the ring buffer covers only its own
 * window of events, so that state is the evidence that compares across
 * dumps, and memory allocated before the window counts as it is (its
 * block is there, with its allocation stack). The blocks section
 * (AN_RUN_BLOCKS_SECTION, kept in the index beside the summary) holds,
 * per device, each allocated block's address, size, requested size, a
 * hash of its allocation stack (the frames' file, function and line) and
 * its call site (site.h); the OOM dump and the dumps at the end of a
 * step are compared with that only:
 *
 *   - growth: for each rank, the call sites whose live bytes grow from
 *     each dump to the next, over three dumps or more at the end of a
 *     step (an OOM dump is taken inside one, and is left out): bytes per
 *     step between the first and the last dump, and the blocks of the
 *     last dump that persist, matched by address, size and stack: how
 *     many were in the dump before, and since which step the oldest has
 *     been live;
 *   - skew: at each step, the ranks whose live bytes at the dump exceed
 *     the median rank's by more than 5%, and the call sites that make the
 *     difference: a site's bytes on that rank less the median of its
 *     bytes over the ranks of the step (none counts 0).
 *
 * Nothing here prints; the run owns everything it points to, except the
 * summaries, which are the rank set's.
 */
#include <stddef.h>
#include <stdint.h>

#include "analysis/rankset.h"
#include "index/idx.h"
#include "util/err.h"

#define AN_RUN_BLOCKS_SECTION "blocks.1"
#define AN_RUN_DEPTH 8          /* directories looked into under DIR */
#define AN_RUN_MAX_FILES 100000 /* snapshot files kept */
#define AN_RUN_MAX_ENTRIES 1000000 /* directory entries looked at */
#define AN_RUN_TOP 3            /* sites kept per rank and step (skew) */

enum an_run_state {
	AN_RUN_MISSING,         /* no file */
	AN_RUN_DUMP,            /* a dump at the end of its step */
	AN_RUN_OOM,             /* a dump with an oom event, or so named */
	AN_RUN_EMPTY,           /* a file of 0 bytes */
	AN_RUN_FAILED           /* could not be read (the member's err) */
};

struct an_run_cell {
	int state;              /* enum an_run_state */
	char *path;             /* owned; NULL when missing */
	size_t member;          /* in the rank set; SIZE_MAX when EMPTY or
				   MISSING */
	int oom_name;           /* named as an OOM dump (torchtitan) */
	/* DUMP and OOM, after an_run_analyse(): */
	const struct an_sum_dev *dev; /* the device shown (the member's) */
	int has_blocks;         /* its blocks section was read */
	uint64_t reserved;      /* bytes of its segments at the dump */
	uint64_t allocated;     /* requested bytes of its allocated blocks */
	uint64_t n_blocks;
	struct an_run_dump *dump; /* private: the blocks, by site */
};

/* One dump of a growing site. */
struct an_run_point {
	int64_t step;
	uint64_t bytes, blocks;
};

struct an_run_growth {
	size_t row;             /* the rank's row */
	uint32_t site;          /* in sites */
	int64_t per_step;       /* bytes a step, first to last dump */
	struct an_run_point *pts; /* owned: every dump compared */
	size_t n_pts;
	uint64_t kept_blocks;   /* of the last dump's blocks of the site, */
	uint64_t kept_bytes;    /* those in the dump before too */
	int64_t oldest_step;    /* the first dump the oldest was live in */
};

struct an_run_excess {
	uint32_t site;
	uint64_t bytes;         /* above the site's median at the step */
};

struct an_run_heavy {
	size_t row;
	uint64_t bytes;         /* live at the dump */
	uint64_t excess;        /* above the median rank's */
	struct an_run_excess top[AN_RUN_TOP];
	size_t n_top;
};

struct an_run_skew {
	size_t col;
	size_t n_ranks;         /* dumps compared at this step */
	uint64_t median;        /* their median live bytes */
	struct an_run_heavy *heavy; /* owned, heaviest first */
	size_t n_heavy;
};

struct an_run {
	char *dir;              /* owned */
	char *layout;           /* "verl", "torchtitan" or the pattern */
	const char *pattern;    /* the layout's pattern (the dumps') */
	int64_t *ranks;         /* rows, ascending */
	size_t n_ranks;
	int64_t *steps;         /* columns, ascending */
	size_t n_steps;
	struct an_run_cell *cells; /* n_ranks x n_steps, row by row */
	size_t n_members;       /* the first members are the grid's */
	size_t n_empty, n_failed, n_oom, n_dumps;
	/* after an_run_analyse(): */
	char **sites;           /* owned: call-site labels */
	uint32_t n_sites;
	struct an_run_growth *growth; /* largest bytes a step first */
	size_t n_growth;
	size_t n_judged;        /* ranks with three dumps or more */
	struct an_run_skew *skew; /* one per step with two dumps or more */
	size_t n_skew;
	void *priv;
};

/* The files of dir as a run, in rs: the grid's dumps first (rank by
 * rank, step by step), then the other files. layout: NULL to recognise
 * verl and torchtitan, else a pattern. Returns 1 with rs and run filled;
 * 0 when no file matches a layout (nothing filled: dir is a plain rank
 * set); -1 with err set (an unreadable directory, a pattern without
 * {rank} and {step}, a pattern that names no file). */
int an_run_collect(const char *dir, const char *layout,
    struct an_rankset *rs, struct an_run *run, struct sv_error *err);
void an_run_free(struct an_run *run);

/* The cell of row, col. */
struct an_run_cell *an_run_cell(const struct an_run *run, size_t row,
    size_t col);

/* The blocks section, for an_rankset_opts.extra (its index 0). */
extern const struct idx_section_builder an_run_blocks_section;

/* The figures, growth and skew of a loaded set (an_rankset_load() with
 * an_run_blocks_section as its first extra section). device: the one to
 * show, or -1 for each file's device with the most events. */
void an_run_analyse(struct an_run *run, const struct an_rankset *rs,
    int64_t device);

/* "verl", "torchtitan", or NULL: a layout's name is no pattern. */
const char *an_run_builtin_pattern(const char *name, int oom);

/* Does path (under the run's directory) match pattern? 1 with *rank,
 * *step set; 0. Exposed for the tests. */
int an_run_match(const char *pattern, const char *path, int whole,
    int64_t *rank, int64_t *step);

/* A dump's state in words: "dump", "OOM", "empty", "failed",
 * "missing"; and why an empty file is one. */
const char *an_run_state_name(int state);
#define AN_RUN_EMPTY_TEXT "empty file (a dump that did not finish?)"

#endif
