#ifndef SNAPVIEW_INDEX_IDX_INT_H
#define SNAPVIEW_INDEX_IDX_INT_H
/*
 * Private to src/index: the index handle and what its four files share.
 *
 *   idx_locate.c  where indexes live (beside the snapshot, the cache), the
 *                 source key, which file may be replaced, temp files,
 *                 choosing between opening, building and memory
 *   idx_map.c     mapping an index file and validating every section
 *   idx_write.c   writing sections, the header and the prelude
 *   idx_build.c   building an index from a parsed snapshot
 *
 * Calls go locate -> build -> write, and locate/build -> map; never back.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "index/idx.h"
#include "index/idx_format.h"

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

struct idx_dev {
	struct idx_timeline tl;
	struct idx_lod lod;
};

struct idx_ext {
	char name[IDX_MAX_SECTION_NAME];
	uint8_t *data; /* heap, owned */
	size_t len;
};

struct sv_index {
	struct snapshot *snap;
	struct idx_dev *devs;
	uint32_t n_devs;
	struct idx_ext *ext;
	size_t n_ext;
	char *path;          /* index file, NULL in memory */
	uint64_t file_size;
	uint64_t source_size;
	int built;
	int in_memory;
	/* mapped file (shared with the snapshot's backing) */
	const uint8_t *map;
	size_t map_len;
	struct toc_ent *toc;
	size_t n_toc;
};

/* What the snapshot's backing_free releases for a mapped index. */
struct idx_backing {
	void *map;
	size_t len;
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

/* Per-device numbers of the header. */
struct hdr_trace {
	uint64_t n;
	uint32_t cols; /* HDR_COL_* */
};
#define HDR_COL_TIME 1u
#define HDR_COL_CTX 2u
#define HDR_COL_META 4u

struct hdr_tl {
	uint64_t n_events, n_elems, base_total, base_reserved, peak;
	int64_t peak_ev;
	uint64_t n_pre, n_ghost;
};


/* Writer state of one index file being written (idx_write.c). */
struct writer {
	int fd;
	uint64_t off;
	int err; /* errno of the first failure */
	struct toc_ent *toc;
	size_t n_toc, cap_toc;
	/* progress over the write phase */
	const struct idx_opts *o;
	uint64_t src_size, est, cancelled;
};

static inline void
put_u32(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void
put_u64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t
get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static inline uint64_t
get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* idx_map.c */
void idx_warnf(const struct idx_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int idx_read_full(int fd, uint8_t *buf, size_t n, uint64_t off);
enum idx_why idx_map_index(int fd, const char *name,
    const struct src_key *key, int quick, struct sv_index **out, char *why,
    size_t wl);
void idx_index_free(struct sv_index *ix);

/* idx_write.c */
int idx_w_raw(struct writer *w, const void *p, size_t n);
int idx_w_snapshot(struct writer *w, const struct snapshot *s);
int idx_w_trace(struct writer *w, uint32_t d, const struct snap_trace *t);
int idx_w_timeline(struct writer *w, uint32_t d,
    const struct idx_timeline *tl, const struct idx_lod_bucket *lod);
int idx_w_extensions(struct writer *w, const struct sv_index *ix);
int idx_w_finish(struct writer *w, const struct src_key *key,
    const char *src_path, const struct snapshot *s,
    const struct hdr_trace *tr, const struct hdr_tl *tl, uint32_t n_tl);
void idx_hdr_from_tl(struct hdr_tl *h, const struct idx_timeline *tl);
uint32_t idx_trace_cols(const struct snap_trace *t);
uint64_t idx_estimate_size(const struct snapshot *s);
int idx_rewrite_index(struct writer *w, const struct sv_index *ix,
    const struct src_key *key, const char *src_path, struct sv_error *err);

/* idx_build.c */
int idx_build_into(int fd, const char *path, const struct src_key *key,
    const struct idx_opts *o, struct sv_error *err);
int idx_build_memory(const char *path, const struct idx_opts *o,
    struct sv_index **out, struct sv_error *err);
int idx_build_extensions(struct sv_index *ix, const struct snapshot *s,
    const struct idx_opts *o, struct sv_error *err);
int idx_missing_extensions(const struct sv_index *ix,
    const struct idx_opts *o);

/* idx_cache.c */
/* A temp file of a killed build is removed by a later build into the same
 * target (or by idx_cache_clear) once it is this old and its builder is
 * gone. */
#define IDX_TMP_STALE_S (10 * 60)
/* 1 when the temp file whose name continues with pid_part ("PID.N.RAND",
 * after IDX_TMP_INFIX) was left by a process that is gone, and is older
 * than IDX_TMP_STALE_S. */
int idx_temp_abandoned(const char *pid_part, time_t mtime, time_t now);

#endif
