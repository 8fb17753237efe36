#ifndef SNAPVIEW_INDEX_IDX_H
#define SNAPVIEW_INDEX_IDX_H
/*
 * The snapshot index: a file beside the snapshot (or in the cache) that
 * holds the parsed model as fixed-width columns, the timeline pairing and
 * totals of every device, a level-of-detail pyramid and extension
 * sections (replay checkpoints), so that a second open maps it and parses
 * nothing. Layout: doc/FORMAT.md and idx_format.h.
 *
 * idx_open() finds a valid index for the snapshot, or builds one (parse,
 * timelines, write to a temp file, rename), or, when nothing can be
 * written, builds everything in memory. Stale, corrupt, truncated,
 * other-version or foreign files are reported through opts->warn and
 * rebuilt; a file at an index path that this program did not write is
 * never replaced. This layer never prints.
 */
#include <stddef.h>
#include <stdint.h>

#include "index/idx_lod.h"
#include "index/idx_timeline.h"
#include "snapshot/snap_load.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

struct sv_index;

/* An extension section: built from the snapshot when the index lacks it,
 * stored LZ4-compressed, handed back by idx_section(). build returns 0 and
 * a heap buffer in *data (the index takes it over) or -1 with err set.
 * An index is read for the sections its opener registers only: a section
 * of another name is never read. */
struct tape;
struct idx_section_builder {
	const char *name; /* [A-Za-z0-9_.-], at most 40 characters */
	int (*build)(const struct snapshot *s, void *arg, uint8_t **data,
	    size_t *len, struct sv_error *err);
	void *arg;
	/* The largest section accepted for s: a stored one that is longer
	 * is not read (it is rebuilt). NULL: IDX_EXT_BASE plus IDX_EXT_PER
	 * bytes per event, segment and allocator block (idx_format.h). */
	uint64_t (*max_len)(const struct snapshot *s, void *arg);
	/* When set, used instead of build: the section is built from the
	 * index being written (idx_snapshot(), idx_timeline(), idx_lod()),
	 * so that a builder needs no pairing of its own (which would cost a
	 * pass and memory in proportion to the events). */
	int (*build_index)(const struct sv_index *ix, void *arg,
	    uint8_t **data, size_t *len, struct sv_error *err);
	/* When set, used instead of both: the section is appended to out (an
	 * empty tape, util/tape.h), which goes to a temporary file once
	 * past a few MB, so that a section of hundreds of MB is never held
	 * whole in memory by the build. */
	int (*build_tape)(const struct snapshot *s, void *arg, void *early,
	    struct tape *out, struct sv_error *err);
	/* Optional, with build_tape: a pass of the build made beside the
	 * parse. When the parse hands its events to an encoder on a thread
	 * of its own, stream_new(arg) is called before the first event,
	 * stream(st, first, n, stride) on that thread with every batch of
	 * events in file order (n records, stride bytes apart), and
	 * build_tape gets st as early (NULL otherwise: with one thread, or
	 * when stream_new returned NULL) to take what it can from;
	 * stream_free(st) comes after. Its result must be the same bytes
	 * either way: the one-thread build is the test of that. */
	void *(*stream_new)(void *arg);
	/* optional: called once on the parsing thread before the first
	 * event, with the snapshot parsed so far (snap_load_opts'
	 * events_begin), for the stream to copy what it needs of it */
	void (*stream_begin)(void *st, const struct snapshot *s);
	void (*stream)(void *st, const struct snap_evrec *first, size_t n,
	    size_t stride);
	void (*stream_free)(void *st);
	/* The passes over every event its meter counts (util/stop.h) when
	 * that tells how far its build is (the replay's two); 0 when it
	 * does not. The progress of the sections is the furthest of such
	 * meters. */
	unsigned progress_passes;
	/* Non-zero: the section's thread yields the cores to the others'
	 * (5 nice steps, sv_thread_yield_cores()): its build is shorter
	 * than the replay's, which on two cores it slowed by sharing them
	 * (the summary: the sections after a 1 GB parse 0.68 -> 0.645 s,
	 * 12 runs each). */
	int background;
};

/* How much of an existing index is checked on open. QUICK (the default)
 * hashes every section except the column data (the stripe-coded events
 * and elements) and the extension sections, so a reopen reads only what
 * it uses: each stripe's chunks are hashed when first decoded, and an
 * extension section when first asked for. FULL hashes everything. A
 * damaged stripe reads as zeros and marks the index damaged, never an
 * out-of-bounds read (doc/SECURITY.md). */
enum idx_verify { IDX_VERIFY_QUICK, IDX_VERIFY_FULL };

#define IDX_PROGRESS_PARSE 600    /* per mille, where the parse ends */
#define IDX_PROGRESS_SECTIONS 950 /* and the sections */
/* per_mille of n, on that scale */
static inline uint64_t
idx_progress_at(uint64_t n, unsigned per_mille)
{
	return (uint64_t)((unsigned __int128)n * per_mille / 1000);
}

struct idx_opts {
	const char *cache_dir;  /* NULL: beside the snapshot, else XDG cache */
	enum idx_verify verify;
	int no_cache;           /* build in memory, read and write nothing */
	int force_rebuild;      /* ignore an existing index */
	/* Progress in source-byte units (done of total); a non-zero return
	 * cancels the build (SV_ERR_CANCELLED). May be NULL. The parse is
	 * reported as the first 60%, the extension sections after it up to
	 * 95% (called every tenth of a second while they are built, from
	 * the calling thread), the writing the rest: about what each part
	 * takes of a build on big snapshots (bench/index.sh). */
	int (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* One line, no newline, for each thing worth telling (stale index
	 * rebuilt, cannot write, ...). May be NULL. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	const struct idx_section_builder *sections;
	size_t n_sections;
	/* With sections: this open builds none of them, but when it parses,
	 * their streams run beside the parse (idx_section_builder.stream)
	 * and what they gathered goes to *streamed_out (else that stays
	 * NULL), for the open that adds them to the index (streamed): the
	 * viewer's first screen does not wait for the sections, and their
	 * build behind it still has the passes made beside the parse. */
	int sections_later;
	struct idx_streamed **streamed_out;
	/* What an earlier open's streams gathered (borrowed): a section of
	 * the same name that this open adds to an index of the same
	 * snapshot file (its size, time and hashed ends, as the index's
	 * staleness rule reads them) takes its part of it; an open that
	 * parses takes nothing from it. */
	struct idx_streamed *streamed;
	/* Loader; NULL means snap_load_file. Tests pass their own to index
	 * builder-made snapshots. */
	int (*load)(const char *path, const struct snap_load_opts *lo,
	    struct snapshot **out, struct sv_error *err);
};

struct idx_info {
	const char *path;     /* index file, NULL when in memory */
	uint64_t size;        /* bytes of the index file (0 in memory) */
	uint64_t source_size; /* bytes of the snapshot */
	int built;            /* built by this open (else reused) */
	int in_memory;
	/* Where a build's wall time went, in seconds: the parse (the
	 * events encoded beside it, on another thread), and the extension
	 * sections built after it (the replay's passes and the summary,
	 * beside each other); what is left of an open is the last stripes,
	 * the snapshot's own sections and the writing. Zeros for what this
	 * open did not do: both for an index reused as it was, the parse
	 * for one that was given the sections it lacked. */
	double parse_s, sections_s;
};

/* Opens the snapshot at path through its index. opts may be NULL. On
 * success *out is a handle the caller closes with idx_close(). */
int idx_open(const char *path, const struct idx_opts *opts,
    struct sv_index **out, struct sv_error *err);
void idx_close(struct sv_index *ix);

/* The extension section name (as registered) of the index of path that
 * idx_open() would use, checked as it would check it (the same places,
 * the same trust rule, the prelude, header, version and source key, the
 * section's hash), without mapping the model: for an overview that needs
 * one small section of many indexes. The bytes are a heap buffer the
 * caller frees (when not longer than max_len). Builds nothing and tells
 * nothing. Returns 0; 1 when there is no such index or section, or it
 * is not usable (idx_open() then says why and builds); -1 with err set
 * when the snapshot cannot be read. */
int idx_peek_section(const char *path, const struct idx_opts *opts,
    const char *name, uint64_t max_len, uint8_t **data, size_t *len,
    struct sv_error *err);

/* The snapshot (borrowed; columns may point into the mapped file). */
const struct snapshot *idx_snapshot(const struct sv_index *ix);

/* Timeline and pyramid of device d (borrowed), NULL when d >= the number
 * of devices with data (snap_device_count). */
const struct idx_timeline *idx_timeline(const struct sv_index *ix,
    uint32_t d);
const struct idx_lod *idx_lod(const struct sv_index *ix, uint32_t d);

/* What a pass over the events of a device counts, as the build's encoder
 * saw them go by: the events by action (the last: unknown actions), the
 * distinct streams they name, and their lowest and highest time_us (of
 * those that have one, in a trace with the column). A section builder
 * reads it instead of making that pass. */
#define IDX_TALLY_STREAMS 16
struct idx_ev_tally {
	uint32_t device;         /* whose events */
	uint64_t events;
	uint64_t by_action[SNAP_ACTION_COUNT + 1];
	int has_time;
	int64_t time_first, time_last;
	uint32_t n_streams;      /* in streams[], unless streams_over */
	int streams_over;        /* more than IDX_TALLY_STREAMS: not kept */
	uint64_t streams[IDX_TALLY_STREAMS];
};

/* Device d's tally (borrowed), known only to the sections built right
 * after the parse that made the index: NULL otherwise (an index mapped
 * from a file, or given its sections later). */
const struct idx_ev_tally *idx_ev_tally(const struct sv_index *ix,
    uint32_t d);

/* Extension section name (borrowed data). Returns 0, or -1 when absent. */
int idx_section(const struct sv_index *ix, const char *name,
    const uint8_t **data, size_t *len);

/* A reader of extension section name, for a section too big to decode
 * whole for a few of its bytes: a section stored in pieces is decoded a
 * piece at a time as its bytes are asked for, a few pieces kept, each
 * piece's stored bytes checked again against what the section's hash
 * vouched for (any other section is read whole, as idx_section()). The
 * reader is the caller's, for one thread at a time, and must not
 * outlive ix. NULL when the section is absent or does not check; *len:
 * the section's length. */
struct idx_reader;
struct idx_reader *idx_reader_open(const struct sv_index *ix,
    const char *name, uint64_t *len);
/* The n bytes at off of the section, valid until the next call on r;
 * NULL when [off, off + n) is not in the section, or a piece no longer
 * checks (the index is then marked damaged, idx_damaged()). */
const uint8_t *idx_reader_span(struct idx_reader *r, uint64_t off,
    uint64_t n);
void idx_reader_free(struct idx_reader *r);

void idx_get_info(const struct sv_index *ix, struct idx_info *info);

/* Frees what an open's streams gathered for later (idx_opts
 * .sections_later); NULL is a no-op. */
void idx_streamed_free(struct idx_streamed *st);

/* 1 when a section o registers has no entry in ix: an idx_open() with o
 * would add it (the viewer opens a large snapshot without them, then
 * adds them behind its first screen). Nothing is read. */
int idx_missing_extensions(const struct sv_index *ix,
    const struct idx_opts *o);

/* 1 when a stripe of the index failed its checks while decoding (what was
 * read from it came out as zeros): the file is damaged. idx_close() then
 * removes it when it still holds our magic, so the next open rebuilds. */
int idx_damaged(const struct sv_index *ix);

/* Where the index of path goes: beside it (path + ".snapidx") or, under
 * cache_dir (or the XDG cache when cache_dir is NULL), a name derived from
 * the absolute path. Heap strings. Returns -1 with err set on failure. */
int idx_path_beside(const char *path, char **out, struct sv_error *err);
int idx_path_cache(const char *path, const char *cache_dir, char **out,
    struct sv_error *err);

#endif
