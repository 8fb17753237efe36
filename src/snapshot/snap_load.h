#ifndef SNAPVIEW_SNAPSHOT_SNAP_LOAD_H
#define SNAPVIEW_SNAPSHOT_SNAP_LOAD_H
/*
 * Loads a snapshot pickle into the model (snap_model.h), streaming: one
 * record (segment, block, trace event) at a time, never the whole file as
 * a value tree. Knows every format version (doc/snapshot-format.md §2-§6
 * and §16); unknown keys are counted and ignored, unknown actions kept.
 */
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap_model.h"
#include "util/err.h"

/* One trace event as parsed, for a loader that streams events out. */
struct snap_evrec {
	uint64_t addr;    /* block/segment address; device_free for oom */
	uint64_t size;
	uint64_t stream;
	int64_t time_us;  /* SNAP_NO_TIME when has_time is 0 */
	uint32_t device;
	uint32_t stack;
	uint32_t ctx;     /* compile_context string id, 0 = none */
	uint32_t meta;    /* user_metadata string id, 0 = none */
	uint32_t pool;    /* pool_id as the string id of "A,B", 0 = none */
	uint8_t action;
	uint8_t has_time; /* the entry had an integer time_us */
};

struct snap_load_opts {
	/* Called now and then with bytes consumed and total; a non-zero
	 * return cancels the load (SV_ERR_CANCELLED). May be NULL. */
	int (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* When set, every trace event is handed to this callback in file
	 * order and not stored: the snapshot's traces keep their event
	 * counts (n) and no columns. A non-zero return cancels the load
	 * (SV_ERR_CANCELLED). May be NULL. */
	int (*event)(void *ctx, const struct snap_evrec *ev);
	void *event_ctx;
	/* With event: called once before its first call, with the
	 * snapshot as parsed so far, on the same thread (a file whose
	 * segments come before its traces, as torch writes them, has them
	 * all by then). May be NULL. */
	void (*events_begin)(void *ctx, const struct snapshot *s);
	/* Non-zero: every trace entry goes the reader's general path (a
	 * dict built, then taken) instead of being read whole when it
	 * closes. The model is the same either way; tests compare them. */
	int general_path;
};

/* Loads path. On success *out is a new snapshot the caller frees with
 * snap_free(). On failure returns -1 with err set (byte offset of the
 * fault where known). opts may be NULL. */
int snap_load_file(const char *path, const struct snap_load_opts *opts,
    struct snapshot **out, struct sv_error *err);

/* Same for an in-memory buffer (borrowed for the duration of the call). */
int snap_load_buffer(const uint8_t *buf, size_t len,
    const struct snap_load_opts *opts, struct snapshot **out,
    struct sv_error *err);

#endif
