#ifndef SNAPVIEW_INDEX_IDX_INT_H
#define SNAPVIEW_INDEX_IDX_INT_H
/*
 * Private to src/index: the index handle and what its four files share.
 *
 *   idx_locate.c  where indexes live (beside the snapshot, the cache), the
 *                 source key, which file may be replaced, temp files,
 *                 choosing between opening, building and memory
 *   idx_map.c     mapping an index file and validating every section
 *   idx_dec.c     binding devices to their stripe-coded columns, and the
 *                 decoders of the timeline's columns
 *   idx_reader.c  reading a big extension section a piece at a time
 *   idx_span.c    extremes of the timeline over runs of events, straight
 *                 from the event stripes (for the pyramid's ragged ends)
 *   idx_write.c   writing sections, the header and the prelude
 *   idx_enc.c     the streamed encoder: events in, stripes out
 *   idx_build.c   building an index while the snapshot is parsed
 *
 * Calls go locate -> build -> enc/write, and locate/build -> map -> dec;
 * never back.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "index/idx.h"
#include "index/idx_format.h"
#include "util/le.h"

struct src_key {
	uint64_t size;
	uint64_t mtime_ns;
	uint64_t hash;
};

struct toc_ent {
	char name[IDX_MAX_SECTION_NAME];
	uint64_t off, len, raw, hash;
	uint32_t comp;
};

/* A device's record in the "devices" section, stored as is (its size is
 * in the header's abi list). Devices are numbered densely in the index:
 * only devices with events or segments have a record, by ascending
 * device; device is the file's device id. */
struct idx_devrec {
	uint32_t device;
	uint32_t flags;        /* SNAP_TRACE_* columns, IDX_DEV_WRAP */
	uint64_t n_events;
	uint64_t n_elems;      /* all elements, the ghosts last */
	uint64_t n_pre, n_ghost;
	uint64_t base_total;
	int64_t base_reserved; /* before clamping at 0 */
	uint64_t peak;
	int64_t peak_ev;
	uint64_t ev_stripe, n_ev_stripe; /* its entries of "evdir" */
	uint64_t el_stripe, n_el_stripe; /* its entries of "eldir" */
	uint64_t late, n_late;     /* its pairs of "late" */
	uint64_t lod, n_lod;       /* its buckets of "lod" */
};
/* A running sum or a base reaches 2^62 in magnitude (only a hostile file
 * does that): no pyramid is stored and peak/peak_ev are not set; a reader
 * adds up the exact sums (idx_dec.c) and computes both from the totals.
 * Without it, every exact sum of changes (after each event) and both
 * bases stay below IDX_SUM_LIMIT in magnitude, so int64 arithmetic on
 * them is exact; a reader checks that and takes a device that breaks it
 * for a damaged one. */
#define IDX_DEV_WRAP 0x100u
#define IDX_SUM_LIMIT ((__int128)1 << 62)
#define IDX_DEV_FLAGS (SNAP_TRACE_TIME | SNAP_TRACE_CTX | SNAP_TRACE_META | \
	SNAP_TRACE_POOL | IDX_DEV_WRAP)

/* One device of an open index: its record, its stripe sets (events and
 * elements) and the views readers get. */
struct idx_dev {
	struct idx_timeline tl;
	struct idx_lod lod;
	struct snap_stripeset ev;      /* event stripes: trace and timeline */
	struct snap_stripeset el;      /* element stripes */
	struct idx_devrec rec;
	const uint64_t *late;       /* (element, free event) pairs */
	uint64_t n_late;
	uint64_t n_trace_elems;     /* elements before the ghosts */
	/* IDX_DEV_WRAP only: the exact sums of the changes of totals and
	 * of reserved bytes before each event stripe (two per stripe), and
	 * the exact reserved bytes before the first event */
	__int128 *xb;
	__int128 xbase_r;
	/* what the build's encoder counted (idx_ev_tally()), or NULL */
	const struct idx_ev_tally *tally;
};

/* An extension section: located at open, checked and decompressed on
 * first use (idx_section). */
struct idx_ext {
	char name[IDX_MAX_SECTION_NAME];
	struct toc_ent toc;      /* where it is stored (mapped index) */
	uint64_t max_len;        /* the builder's bound */
	uint8_t *data;           /* heap, owned; NULL until loaded */
	size_t len;
	/* or, built by a build_tape builder and not yet written: the bytes
	 * (owned), read into data when a reader asks for them */
	struct tape *tape;
	int state;               /* 0 not loaded, 1 loaded, -1 unusable */
	/* or, for a reader (idx_reader.c), where each piece of a section
	 * stored in pieces is and the hash of its stored bytes, made once;
	 * pieces_state 0 not made, 1 made, -1 the section is unusable */
	struct idx_piece *pieces;
	uint64_t n_pieces;
	int pieces_state;
};

/* A piece of a section stored in pieces (IDX_COMP_LZ4P): its stored
 * bytes (its 8-byte head and LZ4 data) at soff of the section, take of
 * them, XXH3_64bits hash; its raw bytes at roff of the section, rl of
 * them. */
struct idx_piece {
	uint64_t soff, roff, hash;
	uint32_t take, rl;
};

/* What the devices of an index are bound to: the column data and the
 * directory sections (mapped, or the builder's memory). */
struct idx_devsrc {
	const struct idx_devrec *recs;
	uint64_t n_recs;
	const struct snap_stripedir *evdir;
	uint64_t n_evdir;
	const struct snap_stripedir *eldir;
	uint64_t n_eldir;
	const uint64_t *late;     /* pairs */
	uint64_t n_late;          /* pairs */
	const struct idx_lod_cum *lod;
	uint64_t n_lod;
	const uint8_t *data;      /* column data */
	uint64_t data_len;
	struct snap_stripedrop *drop; /* NULL, or data's file mapping, whose
				      pages go back as they are read */
};

/* The state of an open index that readers change. */
struct idx_mut {
	pthread_mutex_t ext_lock; /* lazy loading of extension sections */
	int damaged;              /* a stripe failed to decode */
};

struct sv_index {
	struct snapshot *snap;
	struct idx_dev *devs;    /* devices with data, by ascending device */
	uint32_t n_devs;
	struct idx_ext *ext;
	size_t n_ext;
	struct idx_mut *mut; /* what readers change (they hold it const) */
	/* while a build makes the sections: what each section's stream
	 * gathered beside the parse, by its place in the options' list */
	void **early;
	char *path;          /* index file, NULL in memory */
	/* the file it was mapped from (fstat of the descriptor at open):
	 * idx_close() removes a damaged index only while path names it */
	dev_t file_dev;
	ino_t file_ino;
	int file_known;
	uint64_t file_size;
	uint64_t source_size;
	int built;
	int in_memory;
	double parse_s, sections_s; /* idx_info's, when built */
	/* mapped file or memory image (shared with the snapshot's
	 * backing); mapped read-only */
	uint8_t *map;
	size_t map_len;
	struct toc_ent *toc;
	size_t n_toc;
};

/* What the snapshot's backing_free releases for a mapped index. */
struct idx_backing {
	void *map;        /* munmap()ed */
	size_t len;
	void *mem;        /* free()d: an in-memory index image */
	void **bufs;
	size_t n_bufs, cap_bufs;
};

/* Why an existing file was not usable. */
enum idx_why {
	IDX_OK,
	IDX_FOREIGN,   /* not written by us: never replace */
	IDX_STALE,     /* our index, other source or other version */
	IDX_CORRUPT    /* our magic, damaged */
};

/* Writer state of one index being written (idx_write.c): to a file
 * (fd >= 0) or to memory (mem). */
struct writer {
	int fd;
	struct snap_buf *mem;
	uint64_t off;
	int err; /* errno of the first failure */
	struct toc_ent *toc;
	size_t n_toc, cap_toc;
	/* progress over the write phase */
	const struct idx_opts *o;
	uint64_t src_size, cancelled;
	uint64_t at; /* where the writing is on the progress scale: the
			part before it is done (idx_span) */
	double parse_s, sections_s; /* set by idx_build_into() */
};


/* idx_map.c */
void idx_warnf(const struct idx_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Is name an extension section's (IDX_SEC_EXT_PREFIX)? */
int idx_sec_is_ext(const char *name);
/* Is ix's map a file's (not an index image in memory)? */
int idx_map_is_file(const struct sv_index *ix);
/* ix's extension section called name (registered or built), or NULL. */
struct idx_ext *idx_ext_find(const struct sv_index *ix, const char *name);
/* Walks the pieces of section t (comp IDX_COMP_LZ4P) of map: each
 * piece's stored bytes (its 8-byte head, then take - 8 bytes of LZ4
 * data) are hashed into the section's hash and handed to each(ctx, its
 * offset in the section, the bytes, take, its raw length). Each head is
 * copied out before it is read. With copy, so are the bytes, hashed and
 * handed over from the copy, so that whoever may write the mapped file
 * cannot change what each decodes between the check and the use;
 * without, each gets them in the map (for a caller that only hashes
 * them). With file, the file's pages are given back once read. each is
 * called only while the pieces are sound so far, and returns 0, or -1 to
 * fail the walk. Returns 0 when every piece was sound and taken, the raw
 * lengths add up to t->raw and the hash is t->hash; else -1, with
 * *why_hash 1 when the hash was wrong. */
int idx_sec_pieces(const uint8_t *map, int file, const struct toc_ent *t,
    int copy, int (*each)(void *ctx, uint64_t at, const uint8_t *piece,
	size_t take, uint32_t rl), void *ctx, int *why_hash);
/* Maps the index in fd (the file called name; or, with fd < 0, opens the
 * memory image mem of len bytes, taken over) and checks it against key
 * (NULL: no check). Returns IDX_OK with *out set, or the reason with why
 * filled. */
enum idx_why idx_map_index(int fd, const char *name, uint8_t *mem,
    size_t len, const struct src_key *key, int quick,
    const struct idx_opts *o, struct sv_index **out, char *why, size_t wl);
void idx_index_free(struct sv_index *ix);
/* One section of the index in fd (the file called name) whose prelude,
 * header and source key check out, without the rest: the stored bytes of
 * section (a TOC name), hashed and unpacked into a heap buffer the caller
 * frees, when not longer than max_len. IDX_OK, or why not (IDX_STALE
 * also when the index lacks the section). */
enum idx_why idx_peek_fd(int fd, const char *name, const struct src_key *key,
    const char *section, uint64_t max_len, uint8_t **data, size_t *len,
    char *why, size_t wl);
struct sv_index *idx_index_new(void);
/* Registered extension sections of o (names and bounds) into ix->ext. */
void idx_ext_register(struct sv_index *ix, const struct idx_opts *o);

/* idx_dec.c: binding devices to their stripes, and the timeline decoders */
int idx_bind_devices(struct sv_index *ix, const struct idx_devsrc *src,
    char *why, size_t wl);
void idx_unbind_devices(struct sv_index *ix);

/* idx_write.c */
int idx_w_raw(struct writer *w, const void *p, size_t n);
int idx_w_align(struct writer *w);
int idx_w_section(struct writer *w, const char *name, const void *data,
    uint64_t n, uint32_t comp);
int idx_w_snapshot(struct writer *w, const struct snapshot *s);
int idx_w_extensions(struct writer *w, const struct sv_index *ix);
/* Does every section of ix's file stay in its TOC when the extensions
 * ix->ext holds are added (none replaced, none of a name not asked
 * for)? Only then are they added in place: a rewrite leaves no dead
 * bytes behind. */
int idx_extend_keeps_all(const struct sv_index *ix);
int idx_extend_index(struct writer *w, const struct sv_index *ix);
int idx_w_finish(struct writer *w, const struct src_key *key,
    const char *src_path, const struct snapshot *s);
int idx_rewrite_index(struct writer *w, const struct sv_index *ix,
    const struct src_key *key, const char *src_path, struct sv_error *err);

/* idx_build.c */
/* Parses the snapshot at path and writes its index through w (a file or
 * memory; the prelude is written here). Returns 0, or -1 with err set. */
int idx_build_into(struct writer *w, const char *path,
    const struct src_key *key, const struct idx_opts *o,
    struct sv_error *err);
int idx_build_memory(const char *path, const struct idx_opts *o,
    struct sv_index **out, struct sv_error *err);
/* Frees a section's tape (and the struct); NULL is a no-op. */
void idx_free_tape(struct tape *t);
/* Where a part of a build lies on idx_opts.progress's scale (idx.h):
 * from .. to of total. */
struct idx_span {
	uint64_t from, to, total;
};
int idx_build_extensions(struct sv_index *ix, const struct snapshot *s,
    const struct idx_opts *o, const struct idx_span *span,
    struct sv_error *err);
/* What a parse's streams gathered for sections built later
 * (idx_opts.sections_later), with the source's key and the builders
 * they were made by (copied: their stream_free frees them). */
struct idx_streamed {
	struct src_key key;
	struct idx_section_builder *sections;
	size_t n;
	void **early;   /* early[i] for sections[i], or NULL */
};
/* Lends ix (an index of the source with key) the parts of o->streamed
 * that o's sections of the same names take, as ix->early, when the keys
 * are the same; idx_streamed_unlend() takes them back (the parts the
 * builds took stay taken). */
void idx_streamed_lend(struct sv_index *ix, const struct idx_opts *o,
    const struct src_key *key);
void idx_streamed_unlend(struct sv_index *ix);

/* idx_cache.c */
/* A temp file of a killed build is removed by a later build into the same
 * target (or by idx_cache_clear) once it is this old and its builder is
 * gone. */
#define IDX_TMP_STALE_S (10 * 60)
/* 1 when the temp file whose name continues with pid_part ("PID.N.RAND",
 * after IDX_TMP_INFIX) was left by a process that is gone, and is older
 * than IDX_TMP_STALE_S. */
int idx_temp_abandoned(const char *pid_part, time_t mtime, time_t now);

/* 1 when an extension section's name is one the writer may write and the
 * reader may look up: 1 to 40 characters of [A-Za-z0-9_.-]. */
int idx_section_name_ok(const char *name);

#endif
