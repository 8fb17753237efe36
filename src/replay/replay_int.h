#ifndef SNAPVIEW_REPLAY_REPLAY_INT_H
#define SNAPVIEW_REPLAY_REPLAY_INT_H
/*
 * Private to src/replay/: the replay handle and the passes that share it.
 *
 * Files, each calling only those listed before it (no call cycle):
 *   rstate.c        segments and blocks by address (the containers)
 *   replay_ckpt.c   checkpoints: take, restore, save, load (rstate only)
 *   replay_log.c    the undo log of forward steps (rstate only)
 *   replay_issue.c  lists of issues (what check reports)
 *   replay_round.c  the rounding rule of a device (CUDA's or torch_npu's)
 *   replay_final.c  the final state as the file shows it
 *   replay_evs.c    the events of a pass, read ahead on a thread
 *   replay_fwd.c    the forward pass: one event applied to a state
 *   replay_bwd.c    the backward pass: the start state, undoing the trace
 *   replay.c        construction, seeking, the flat view, totals
 *   replay_save.c   a replay to bytes and back
 *   replay_check.c  check: forward replay against the file's final state
 *   replay_idx.c    the index section holding the saved replays
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/replay.h"
#include "replay/replay_ckpt.h"
#include "replay/replay_log.h"
#include "replay/rstate.h"
#include "util/avl.h"

/* An exact block size the backward pass learned for the alloc at ev. */
struct learned {
	uint64_t ev, size;
};
/* The attributes of the segment that segment_alloc/map ev created. */
struct segattr {
	uint64_t ev;
	int64_t pool[2];
	uint32_t stack;
	uint8_t is_large, is_expandable;
	uint8_t final;  /* in r->seen: taken from r->fin, not guessed */
};
/* A segment of the file's final state, with the attributes a backward
 * pass learns for the event that made it when it lasts to the end: what
 * a forward pass beside the parse gives the segment it makes there
 * (replay_early.c). */
struct finseg {
	uint64_t addr, size;
	struct segattr a;
};
/* A pre-trace block at addr that the trace proves reached size bytes. */
struct fix {
	struct avl_node node;   /* key: the block's address */
	uint64_t size;
};

#define REPLAY_K 4096

struct replay {
	const struct snapshot *s;       /* borrowed */
	/* where the checkpoints' blobs are read from, when they are
	 * (replay_new_saved_src()) */
	struct replay_src src;
	const struct snap_trace *t;     /* borrowed; NULL if none */
	uint32_t device;
	uint64_t n;                     /* events */
	struct replay_info info;
	int npu_round;                  /* rounding rule: torch_npu's */

	struct rstate cur;              /* state at cur.at */

	/* what the backward pass learned, for forward replay; by event */
	struct learned *learned;
	uint64_t n_learned;
	size_t cap_learned;
	uint64_t learned_near;          /* where the last lookup ended */
	struct segattr *attrs;
	uint64_t n_attrs;
	size_t cap_attrs;
	uint64_t *workspace;            /* workspace segment addresses */
	uint64_t n_workspace;
	/* pre-trace block sizes learned from a forward pass: an alloc that
	 * landed inside the free space after such a block proves the block
	 * reached up to the alloc */
	struct avl fix;
	uint64_t n_fix_new;

	struct ckpt ck;
	struct ulog log;

	/* forward anomalies of the build pass (for check) */
	struct replay_issue *fwd_issues;
	uint64_t n_fwd_issues, n_fwd_kept;
	int collect;
	size_t tape_mem; /* > 0: checkpoints on tapes, only to be written
			    out (replay_new_for_save()) */

	/* a forward pass made beside the parse (replay_early.c): a
	 * checkpoint due before the next event, the event of the last one;
	 * and, while seen_on, the attributes it gave the segments it made */
	int early_ckpt;
	uint64_t early_last;
	struct segattr *seen;
	uint64_t n_seen;
	size_t cap_seen;
	int seen_on;
	/* the event being applied names a pool of its own (2.14), which
	 * such a pass cannot read; unknown_pool: a segment it made had to
	 * be given one */
	int ev_pool, unknown_pool;
	/* it made what a backward pass from its end would not learn back
	 * as it made it: expandable segments, an event's own pool, a
	 * segment freed with attributes no guess gives
	 * (replay_early_whole()) */
	int needs_backward;
	const struct finseg *fin;       /* borrowed, by address */
	size_t n_fin;
	/* once settled: the size of every block alive at its end, by the
	 * event that allocated it (its final state let go) */
	struct learned *made;
	uint64_t n_made;

	/* flat view */
	struct replay_state view;
	struct replay_segment *vseg;
	size_t cap_vseg;
	struct replay_block *vblk;
	size_t cap_vblk;
	int view_valid;
};

/* replay_issue.c: appends to a list of at most REPLAY_MAX_ISSUES kept
 * (*n counts them all). */
void replay_issue_add(struct replay_issue **v, uint64_t *n, uint64_t *kept,
    int64_t ev, uint64_t addr, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* replay_final.c */
/* The final state as the file shows it, made possible (see there); patch
 * = workspace segments as one allocated block. */
void replay_final_state(const struct replay *r, struct rstate *st, int patch);
/* The leading torch_npu workspace triples (r->workspace). */
void replay_find_workspace(struct replay *r);
int replay_is_workspace(const struct replay *r, uint64_t addr);

/* replay_evs.c: what the passes read of an event. */
struct rev {
	uint64_t addr;
	uint64_t size;     /* alloc, free_completed and segment events */
	uint64_t stream;   /* segment events */
	uint32_t stack;    /* alloc and free_completed */
	uint8_t action;
	uint8_t pad[3];
};
/* Event i of t, the fields the passes read (the others 0). */
void rev_read(const struct snap_trace *t, uint64_t i, struct rev *e);
/* The same from an event's values (those the action has no use for
 * dropped). */
void rev_make(struct rev *e, unsigned action, uint64_t addr, uint64_t size,
    uint64_t stream, uint32_t stack);
/*
 * The events of one pass over a trace, in its order (down: from the last
 * to the first), read in chunks a few chunks ahead of the pass, on a
 * thread of their own when the trace is stripe-coded and long enough:
 * decoding the stripes was a fifth of a pass, and a pass cannot be split.
 */
#define EVS_CHUNK 8192
#define EVS_RING 8
#define EVS_REFILL 4   /* free chunks that wake a waiting reader */
struct evs {
	const struct snap_trace *t;
	uint64_t n, n_chunks;
	int down;
	struct rev *ring;          /* EVS_RING chunks; chunk c in c % RING */
	uint64_t cur;              /* the chunk evs_get() reads, or none */
	uint64_t lo, hi;           /* its events */
	const struct rev *at;      /* its records: at[i - lo] */
	uint64_t filled, done;     /* chunks read ahead, chunks used */
	uint64_t wake_at;          /* done that wakes the waiting reader, or
				      UINT64_MAX when it does not wait */
	int stop;
	int threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};
/* Events from which a pass reads ahead on a thread (4 chunks); a
 * variable for the tests (0: always, SIZE_MAX: never). */
extern size_t replay_read_ahead_min;
void evs_open(struct evs *es, const struct snap_trace *t, uint64_t n,
    int down);
/* The chunk holding event i (evs_get()'s slow path). */
const struct rev *evs_next(struct evs *es, uint64_t i);
void evs_close(struct evs *es);

/* Event i, which must come in the pass's order (borrowed until the next
 * call). */
static inline const struct rev *
evs_get(struct evs *es, uint64_t i)
{
	if (i - es->lo < es->hi - es->lo)
		return &es->at[i - es->lo];
	return evs_next(es, i);
}

/* replay_fwd.c */
/* Applies event i to st (st->at must be i - 1), logged when r->log.on. */
void replay_apply(struct replay *r, struct rstate *st, uint64_t i);
/* The same with the event read (rev_read()). */
void replay_apply_ev(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e);
/* Shared with the backward pass: */
/* The block size r's rounding rule (replay_round.h) gives req bytes. */
uint64_t replay_rounded(const struct replay *r, uint64_t req);
uint64_t replay_split_size(const struct rseg *sg, uint64_t rs, uint64_t avail);
/* Attributes of a segment made by event ev: learned, else guessed (and
 * then recorded in r->seen while r->seen_on). */
void replay_seg_attrs(struct replay *r, struct rseg *sg, uint64_t ev,
    uint64_t stream, int expandable);
/* 1 when sg's attributes are those a guess gives a segment of its size
 * that is not expandable, in no pool named by its event. */
int replay_seg_guessed(const struct rseg *sg);
/* The attributes the backward pass learned for event ev, or NULL. */
const struct segattr *replay_attr_find(const struct replay *r, uint64_t ev);
/* Appends sg's attributes as event ev's to *v (*n of *cap). */
void replay_segattr_push(struct segattr **v, uint64_t *n, size_t *cap,
    uint64_t ev, const struct rseg *sg);
int replay_range_add(struct replay *r, struct rstate *st, uint64_t i,
    uint64_t a, uint64_t size, uint64_t stream);
int replay_range_remove(struct replay *r, struct rstate *st, uint64_t i,
    uint64_t a, uint64_t size);
const struct fix *replay_fix_find(const struct replay *r, uint64_t addr);

/* replay_bwd.c: undoes the whole trace on st (the final state), leaving
 * the start state; fills learned, attrs and the undo counts of info. */
/* Returns 0, or -1 when the thread's work was asked to stop (stop.h):
 * the state is then half undone, and the build is thrown away. */
int replay_backward(struct replay *r, struct rstate *st);
/* The counts of info that an event with action counts whatever the
 * state (oom, snapshot, unknown), as the backward pass keeps them. */
void replay_count_action(struct replay_info *info, unsigned action);

/* replay.c */
/* A replay of device d with nothing built (no start state, no
 * checkpoints); what replay_new() and replay_new_saved() start from. */
struct replay *replay_open(const struct snapshot *s, uint32_t d);
/* replay_new() (tape_mem 0) and replay_new_for_save() (CKPT_TAPE_MEM):
 * with tape_mem > 0 the checkpoints go to tapes past that many bytes. */
struct replay *replay_build(const struct snapshot *s, uint32_t d,
    size_t tape_mem, struct replay *early, struct sv_error *err);
/* replay_early.c: the forward pass of a build made beside the parse, from
 * an empty start, as the events stream in (replay_idx.c). A build takes
 * it instead of making its own when its backward pass shows that it is
 * the same pass (replay_early_fits()); else it is thrown away. */
/* An early pass of device d (checkpoints on tapes past tape_mem), which
 * gives a segment_alloc at the address and of the size of one of fin[n]
 * (the file's final segments of d, by address; borrowed until
 * replay_early_adopt()) its attributes. */
struct replay *replay_early_new(uint32_t d, size_t tape_mem,
    const struct finseg *fin, size_t n);
/* The final segments in s of every device below n_dev, as the fin[d]
 * (n[d] of them, by address) replay_early_new() takes; one pass over the
 * segments. */
void replay_early_final(const struct snapshot *s, uint32_t n_dev,
    struct finseg **fin, size_t *n);
/* Applies the next event (pool: it names a pool of its own, which the
 * pass cannot read; only a segment it makes without a final segment's
 * attributes would take it); -1 when the pass gives up (it found what an
 * empty start would not explain, or a pool it cannot read: a build
 * would not take it). */
int replay_early_event(struct replay *x, const struct rev *e, int pool);
/* After x's last event: keeps of its final state only what
 * replay_early_fits() asks (the sizes of the blocks alive), so that the
 * build's backward pass does not hold a second state beside its own. */
void replay_early_settle(struct replay *x);
/* 1 when r, after its backward pass, would make the forward pass x made:
 * the same start (empty), the same sizes and segment attributes where r
 * learned them, the same rounding. */
int replay_early_fits(const struct replay *r, const struct replay *x);
/* Moves what r learned backward into x: x is then the build, with its
 * own forward pass, and r is left to be freed. */
void replay_early_adopt(struct replay *r, struct replay *x);
/* 1 when x, not yet settled, ends in the final state r->cur holds
 * (replay_final_state()) and made nothing a backward pass would learn
 * otherwise: then that pass would find an empty start and learn what x
 * made, and replay_early_learn() tells r that without it. */
int replay_early_whole(const struct replay *r, const struct replay *x);
/* What r's backward pass would learn, from x (settled), for
 * replay_early_adopt(). */
void replay_early_learn(struct replay *r, struct replay *x);
/* The early passes builds took, and of those the ones taken with no
 * backward pass, for the tests that they do. */
extern atomic_uint_fast64_t replay_early_adopted, replay_early_whole_taken;

#endif
