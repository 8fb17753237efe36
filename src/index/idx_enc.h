#ifndef SNAPVIEW_INDEX_IDX_ENC_H
#define SNAPVIEW_INDEX_IDX_ENC_H
/*
 * The streamed encoder of index format 2 (private to src/index): takes
 * parsed events one batch at a time, in file order, pairs allocations
 * with frees, keeps the running sums, and writes each device's events
 * and timeline elements in stripes (snapshot/snap_stripe.h) as soon as a
 * stripe is full. What it keeps is one stripe of events, a few open
 * stripes of elements per device (their frees are still to come), the
 * live allocations, and per device the stripe directories and the level
 * 0 of the pyramid (one bucket per 2^IDX_LOD_MIN_SHIFT events).
 */
#include <stddef.h>
#include <stdint.h>

#include "index/idx_int.h"
#include "snapshot/snap_load.h"

struct idx_enc;

/* What the encoder produced, for the sections after the column data. */
struct idx_enc_out {
	struct idx_devrec *recs;
	struct idx_ev_tally *tally; /* one per record, its device's; the
				       caller's to free() */
	uint64_t n_recs;
	struct snap_stripedir *evdir;
	uint64_t n_evdir;
	struct snap_stripedir *eldir;
	uint64_t n_eldir;
	uint64_t *late;         /* pairs */
	uint64_t n_late;        /* pairs */
	struct idx_lod_cum *lod;
	uint64_t n_lod;
	uint64_t data_off;      /* where the column data starts in the file */
	uint64_t data_len;
	uint64_t data_hash;     /* XXH3_64bits of the column data */
};

/* A new encoder writing its column data through w, from w's current
 * offset (which must be aligned). */
struct idx_enc *idx_enc_new(struct writer *w);

/* An event in a cache line of its own: the parser hands its events to
 * the encoder's thread in these (idx_build.c's pipe), written whole
 * with streaming stores. */
struct idx_enc_slot {
	struct snap_evrec r;
} __attribute__((aligned(64)));

/* Takes the n events of s (any devices, file order). */
void idx_enc_events(struct idx_enc *e, const struct idx_enc_slot *s,
    size_t n);

/* After the last event: closes every device, adds the ghosts (active
 * blocks of s's final segments never allocated in the trace) and the
 * devices that have segments only, and fills out (the encoder keeps
 * owning it). Returns 0, or -1 when writing failed (w->err). */
int idx_enc_finish(struct idx_enc *e, const struct snapshot *s,
    struct idx_enc_out *out);

void idx_enc_free(struct idx_enc *e);

#endif
