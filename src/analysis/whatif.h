#ifndef SNAPVIEW_ANALYSIS_WHATIF_H
#define SNAPVIEW_ANALYSIS_WHATIF_H
/*
 * What if the allocator had been set differently: the recorded requests
 * of one device (sizes, streams, pools, frees as free_completed says
 * they happened, empty_cache calls) fed through the simulated caching
 * allocator (replay/sim.h) under other settings, in one pass over the
 * events for all of them, beside what the file recorded.
 *
 * The simulation proves itself first: under the settings the file
 * recorded (allocator_settings, else the defaults; expandable segments
 * when the trace maps pages), seeded with the allocator's state before
 * the first event (the replay's state at -1, so that memory allocated
 * before the trace counts), it must make the recorded segment
 * allocations and frees, the same sizes in the same order. The count
 * that agrees, where it first does not, and what keeps it from being
 * exact are part of every answer (struct an_whatif_agree).
 *
 * Where the recording depends on the world (a cudaMalloc that failed,
 * the address it returned), the agreement pass follows the recording:
 * a release of cached blocks followed by a segment allocation with the
 * same stack was a failed device allocation, and the simulated one fails
 * there too. The other columns run against a capacity: --capacity, else
 * one bounded by the recorded OOM (the most the process held before it:
 * what it surely had), else none.
 *
 * Under settings other than the recorded ones the live blocks of the
 * state before the trace are allocated again, in address order, under
 * those settings; the cached free memory of that state is not carried
 * over (its history is unknown).
 *
 * Rules and their sources: doc/snapshot-format.md §13.12.
 */
#include <stdint.h>

#include "analysis/steps.h"
#include "replay/replay.h"
#include "replay/simconf.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

#define AN_WHATIF_MAX_COLS 8

/* Why the agreement pass may not be exact (bits of reasons). */
enum an_whatif_reason {
	AN_WI_PRE_TRACE = 1u << 0,	/* blocks from before the trace */
	AN_WI_NPU = 1u << 1,		/* torch_npu's allocator */
	AN_WI_UNKNOWN = 1u << 2,	/* actions snapview does not know */
	AN_WI_UNDO = 1u << 3,		/* start state uncertain */
	AN_WI_SEED = 1u << 4,		/* start segments not seeded */
	AN_WI_SKIPPED = 1u << 5,	/* events the recorder skipped */
	AN_WI_GC = 1u << 6,		/* gc: the fraction is unknown */
	AN_WI_ES_START = 1u << 7,	/* expandable before the trace */
	AN_WI_WORKSPACE = 1u << 8,	/* torch_npu workspace triples */
	AN_WI_RETRY = 1u << 9,		/* failed device allocations followed */
	AN_WI_PRIVATE = 1u << 10	/* a private pool was released */
};

struct an_whatif_agree {
	uint64_t seg_allocs, seg_allocs_ok;	/* recorded, reproduced */
	uint64_t seg_frees, seg_frees_ok;
	uint64_t sim_extra;		/* device actions only simulated */
	uint64_t allocs, allocs_at_addr; /* placed at the recorded address */
	int64_t first_misplaced;	/* the first alloc placed elsewhere */
	uint64_t misplaced_rec, misplaced_sim; /* its addresses */
	int64_t first_diff;		/* event, -1: none */
	uint64_t ok_before;		/* segment actions agreeing before it */
	char diff[240];			/* what differed there */
	int exact;
	unsigned reasons;		/* enum an_whatif_reason */
	uint64_t n_pre_blocks, n_free_no_alloc, n_unknown, n_undo,
	    n_unseeded, n_unknown_frees, n_implicit_frees, n_forced,
	    n_workspace, n_aligned;
};

struct an_whatif_col {
	char name[160];			/* the settings as written */
	struct sim_conf conf;
	int recorded;			/* the recording itself */
	int exact_start;		/* seeded with the state as it was */
	uint64_t peak_reserved;
	int64_t peak_ev;		/* -1: before the trace */
	uint64_t peak_segments;
	uint64_t peak_internal;		/* block - requested, live blocks */
	uint64_t peak_external;		/* reserved - live block bytes */
	uint64_t end_reserved, end_segments;
	uint64_t device_allocs, device_frees;
	uint64_t n_oom;
	int64_t first_oom;		/* event, -1: none */
	uint64_t first_oom_request;	/* its requested bytes */
	uint64_t pre_oom;		/* live blocks from before the trace
					   that did not fit */
	uint64_t *step_peak;		/* per step: most reserved */
	uint64_t *series;		/* reserved after each event, when
					   asked; owned */
};

struct an_whatif_step {
	int64_t first, last;
	uint64_t allocated_peak;	/* requested bytes live, the most */
	int64_t allocated_peak_ev;
};

enum an_whatif_capacity {
	AN_WI_CAP_NONE,			/* unbounded */
	AN_WI_CAP_GIVEN,		/* --capacity */
	AN_WI_CAP_OOM			/* bounded by the recorded OOM */
};

struct an_whatif {
	uint32_t device;
	uint64_t n_events;
	struct sim_conf recorded;	/* the settings the file recorded */
	int settings_from_file;		/* allocator_settings present */
	int expandable_inferred;	/* from segment_map events */
	uint64_t capacity;		/* 0: none */
	int capacity_source;		/* enum an_whatif_capacity */
	int64_t capacity_oom_ev;	/* the OOM that bounded it */
	uint64_t capacity_hi;		/* the most it can have been */
	int capacity_full;		/* the OOM found the device full */
	struct an_whatif_agree agree;
	struct an_whatif_col *cols;	/* [0]: recorded; then each setting */
	uint32_t n_cols;
	struct an_steps steps;		/* owned */
	struct an_whatif_step *step;	/* per step */
	uint64_t requested_peak;	/* requested bytes, the most */
	int64_t requested_peak_ev;
};

struct an_whatif_opts {
	const struct sim_conf *confs;	/* what-if settings */
	const char *const *names;	/* as written (NULL: formatted) */
	uint32_t n_confs;
	uint64_t capacity;		/* 0: none given */
	int series;			/* keep reserved per event */
	int no_steps;			/* skip finding steps */
};

/* Runs the simulations of device d. r: the device's replay (it is moved
 * to the state before the trace and to the recorded peak). Returns 0, or
 * -1 with err set (SV_ERR_CANCELLED when this thread was asked to stop);
 * out is then empty. */
int an_whatif(const struct snapshot *s, uint32_t d, struct replay *r,
    const struct an_whatif_opts *o, struct an_whatif *out,
    struct sv_error *err);
void an_whatif_destroy(struct an_whatif *w);

/* ---- the simulated state at an event (whatif --at, the viewer's S) ----
 * One setting's simulation walked to an event, for its segments and
 * blocks there: the same start, capacity and rules as an_whatif()'s
 * column of that setting. Forward moves apply the events between;
 * a move back starts again from the state before the first event, so a
 * seek costs at most one pass over the events up to it (about what
 * an_whatif() spends per setting on them). */
struct an_whatif_walk;

/* r: the device's replay (moved to the state before the trace; read,
 * not moved, afterwards: it must outlive the walk). capacity as
 * an_whatif_opts'. NULL with err set on failure. */
struct an_whatif_walk *an_whatif_walk_new(const struct snapshot *s,
    uint32_t d, struct replay *r, const struct sim_conf *conf,
    uint64_t capacity, struct sv_error *err);
/* To the simulated state after event at (-1: before the first). -1 with
 * err set: out of range, or cancelled (sv_stop). */
int an_whatif_walk_seek(struct an_whatif_walk *k, int64_t at,
    struct sv_error *err);
/* The state there (borrowed until the next call on the walk): blocks
 * of allocations made in the trace carry their alloc event and stack. */
const struct replay_state *an_whatif_walk_state(struct an_whatif_walk *k);
/* The setting's column (its name, capacity: an_whatif_walk_info()). */
const struct an_whatif_col *an_whatif_walk_col(
    const struct an_whatif_walk *k);
const struct an_whatif *an_whatif_walk_info(const struct an_whatif_walk *k);
/* Events applied since it was made (a test's measure of the cost). */
uint64_t an_whatif_walk_events(const struct an_whatif_walk *k);
void an_whatif_walk_free(struct an_whatif_walk *k);

/* One sentence per reason in w->agree.reasons, for the reason bit k
 * (NULL when not set). */
const char *an_whatif_reason_text(const struct an_whatif *w, unsigned bit,
    char *buf, size_t size);
/* The reason's name in JSON ("pre_trace", "npu", ...). */
const char *an_whatif_reason_name(unsigned bit);

/* The agreement in one line: "reproduces 412 of 412 segment allocations
 * and 50 of 50 segment frees; 6,526 of 6,526 allocations at the
 * recorded address: exact". */
void an_whatif_agree_line(const struct an_whatif *w, char *buf,
    size_t size);

/* ---- verdicts (snapview oom, frag; the viewer's OOM view) ------------ */

enum an_whatif_verdict {
	AN_WI_V_CONTIGUOUS,	/* fits in the free memory, were it whole */
	AN_WI_V_EXPANDABLE,	/* expandable segments avoid the OOM */
	AN_WI_V_NEVER,		/* live memory alone exceeds the device */
	AN_WI_V_UNDECIDED	/* depends on a capacity the file hides */
};

struct an_whatif_oom_verdict {
	int64_t ev;		/* the recorded OOM */
	int kind;		/* enum an_whatif_verdict */
	uint64_t live;		/* active block bytes there */
	uint64_t request;	/* rounded, as the event says */
	uint64_t capacity;	/* the device's memory: given, or the most
				   it can have had */
	uint64_t held;		/* the most the run held before it */
	uint64_t sim_peak;	/* expandable: most reserved up to ev */
	int64_t sim_oom;	/* expandable: its first OOM, or -1 */
	char text[400];		/* the verdict, a sentence */
};

/* A verdict for each OOM event of device d: *out (malloc'd, free()),
 * *n of them. capacity: --capacity, or 0 (then bounded by the OOM:
 * expandable segments must fit in the most the run held, the live memory
 * in the most the device can have had). */
int an_whatif_oom_verdicts(const struct snapshot *s, uint32_t d,
    struct replay *r, uint64_t capacity,
    struct an_whatif_oom_verdict **out, uint64_t *n, struct sv_error *err);

#define AN_WI_FRAG_SITES 3

struct an_whatif_frag_setting {
	char name[160];
	uint64_t peak_reserved;
	uint64_t waste;			/* internal + external at its peak */
	int64_t first_oom;
};

/* What expandable segments and max_split_size_mb do to the waste. */
struct an_whatif_frag {
	uint64_t rec_peak, rec_waste;	/* recorded: peak, waste there */
	struct an_whatif_frag_setting set[2];
	int n_set;
	int64_t step;			/* of expandable's peak, or -1 */
	uint64_t alloc_peak;		/* its allocated (requested) peak */
	int64_t alloc_peak_ev;
	uint32_t sites[AN_WI_FRAG_SITES]; /* short-lived there, by bytes */
	uint64_t site_bytes[AN_WI_FRAG_SITES];
	uint64_t site_count[AN_WI_FRAG_SITES];
	int n_sites;
	uint64_t short_bytes;		/* all short-lived bytes there */
	int agree_exact;		/* the agreement pass was exact */
	char text[700];			/* the sentence */
};

struct idx_timeline;
struct an_sites;
/* max_split_mb: the max_split_size_mb to try (0: none). tl and sites:
 * the device's timeline and call sites (the short-lived allocations at
 * the allocated peak). */
int an_whatif_frag(const struct snapshot *s, uint32_t d, struct replay *r,
    const struct idx_timeline *tl, struct an_sites *sites,
    uint64_t max_split_mb, struct an_whatif_frag *out, struct sv_error *err);

#endif
