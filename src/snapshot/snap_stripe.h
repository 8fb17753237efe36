#ifndef SNAPVIEW_SNAPSHOT_SNAP_STRIPE_H
#define SNAPVIEW_SNAPSHOT_SNAP_STRIPE_H
/*
 * The stripe codec of index format 2 (doc/FORMAT.md): per-event and
 * per-element data stored in stripes of at most SNAP_STRIPE_MAX values,
 * each column of a stripe encoded for its data (varints, zig-zag deltas,
 * small dictionaries) into one chunk, LZ4-compressed when that is
 * smaller, with a directory entry per stripe. Readers get values through
 * the accessors of snap_model.h and index/idx_timeline.h, which decode a
 * stripe's column on first use into a small cache.
 *
 * The words, here and in src/index: a *block* is only ever the
 * allocator's (struct snap_block); a *stripe* is up to SNAP_STRIPE_MAX
 * consecutive events (an event stripe) or timeline elements (an element
 * stripe) coded together; a *chunk* is one column of one stripe as
 * stored; a *stripe set* is one device's stripes of one kind, sharing a
 * directory; a cache *entry* holds one decoded column of one stripe.
 *
 * The cache is per thread: each thread that reads has its own entries,
 * so readers on several threads never share or lock anything, and a
 * stripe's column is decoded at most once per thread while it stays
 * cached. A stripe set has a process-unique id (never reused), so an
 * entry of a closed index can never be mistaken for one of another.
 *
 * Everything here is bounds-checked: a damaged or hostile stripe (bad
 * lengths, a varint that runs off, decompression that does not give the
 * exact length, a value out of range) fails to decode; the reader then
 * sees zeros for that stripe and the stripe set is marked damaged.
 */
#include <stddef.h>
#include <stdint.h>

/* The stripe size: values per stripe, at most. A stripe may hold fewer (a
 * trace's last, or one cut where the file switched to another device).
 * Event and element stripes both follow it (idx_enc.c). It is part of
 * the format: changing it changes every index's bytes (bump IDX_VERSION)
 * and the size of a cache entry (ARCHITECTURE.md, "Where to make a
 * change"). */
#define SNAP_STRIPE_SHIFT 14
#define SNAP_STRIPE_MAX (1u << SNAP_STRIPE_SHIFT)

/* Columns, for the cache and the hot slots below. The first nine are the
 * trace's; the rest belong to the timeline (src/index). */
enum snap_col {
	SNAP_COL_ACTION,   /* uint8_t */
	SNAP_COL_ADDR,     /* uint64_t */
	SNAP_COL_SIZE,     /* uint64_t */
	SNAP_COL_STREAM,   /* uint64_t */
	SNAP_COL_STACK,    /* uint32_t */
	SNAP_COL_TIME,     /* int64_t */
	SNAP_COL_CTX,      /* uint32_t */
	SNAP_COL_META,     /* uint32_t */
	SNAP_COL_POOL,     /* uint32_t, a string id */
	SNAP_COL_EV_ELEM,  /* uint64_t, timeline */
	SNAP_COL_TOTAL,    /* uint64_t, timeline */
	SNAP_COL_RESERVED, /* uint64_t, timeline */
	SNAP_COL_ELEM,     /* struct idx_elem, timeline */
	SNAP_NCOL
};

/* Chunks stored per event stripe, in this order (doc/FORMAT.md). */
enum snap_evchunk {
	SNAP_EVC_ACTION,  /* u8 per event */
	SNAP_EVC_ADDR,    /* zig-zag varint delta from the previous event */
	SNAP_EVC_SIZE,    /* varint */
	SNAP_EVC_STREAM,  /* dictionary: varint k, k varints, u8 per event */
	SNAP_EVC_STACK,   /* varint */
	SNAP_EVC_TIME,    /* zig-zag varint delta; absent: no time */
	SNAP_EVC_CTX,     /* varint; absent: all 0 */
	SNAP_EVC_META,    /* varint; absent: all 0 */
	SNAP_EVC_POOL,    /* varint string id; absent: all 0 */
	SNAP_EVC_LINK,    /* varint per free_completed (timeline pairing) */
	SNAP_EVC_TEXC,    /* total deltas that are not the default */
	SNAP_EVC_N
};

/* Chunks stored per element stripe. */
enum snap_elchunk {
	SNAP_ELC_FLAGS,   /* u8 per element */
	SNAP_ELC_EV,      /* zig-zag varint delta: creation event */
	SNAP_ELC_FREE,    /* varint: 0 = not freed here, else free - creation
			     + 1 */
	SNAP_ELC_ADDR,    /* zig-zag varint delta */
	SNAP_ELC_SIZE,    /* varint */
	SNAP_ELC_STREAM,  /* dictionary */
	SNAP_ELC_STACK,   /* varint */
	SNAP_ELC_N
};

#define SNAP_STRIPE_NCHUNK SNAP_EVC_N /* the larger of the two */

/* One stripe's directory entry, stored as is (little-endian, its size
 * checked through the index's abi list). A chunk is stored raw when
 * clen == rlen, LZ4-compressed when clen < rlen; clen == 0 with rlen == 0
 * means absent. Chunks follow each other from off. Each chunk carries the
 * low 32 bits of the XXH3_64bits of its stored bytes, checked before it
 * is decoded. */
struct snap_stripedir {
	uint64_t first;   /* first value (event or element) of the stripe */
	uint64_t off;     /* payload offset in the column data */
	uint64_t base[3]; /* event stripes: running total and reserved
			     deltas before the stripe (mod 2^64), elements
			     created before it; element stripes: 0 */
	uint32_t n;       /* values in the stripe, 1..SNAP_STRIPE_MAX */
	uint32_t len;     /* payload bytes: the sum of clen */
	uint32_t clen[SNAP_STRIPE_NCHUNK];
	uint32_t rlen[SNAP_STRIPE_NCHUNK];
	uint32_t chash[SNAP_STRIPE_NCHUNK];
};

/* Limits a decoded value is checked against (a value out of range makes
 * the stripe fail). */
struct snap_stripelim {
	uint32_t n_actions;  /* actions below this */
	uint32_t n_stacks;
	uint32_t n_strs;
	uint64_t n_events;   /* event numbers below this */
};

struct snap_stripeset;

/* Column data read through a file mapping whose pages are given back as
 * the chunks are read (the index being built: its extension sections
 * read every stripe once, and the pages they touched would otherwise
 * stay in the resident set until the end of the build): all of them every
 * SNAP_STRIPE_DROP_EVERY bytes read. Shared by the stripe sets of that
 * mapping, on any thread. */
#define SNAP_STRIPE_DROP_EVERY (16u << 20)

struct snap_stripedrop {
	const uint8_t *map;  /* the mapping (page-aligned) */
	size_t len;
	uint64_t read;       /* chunk bytes read (atomic) */
};

/* Decodes column col of stripe b of bs into out (dir[b].n values of the
 * column's width). Returns 0, or -1 when the stripe is damaged. */
typedef int (*snap_stripe_decode_fn)(const struct snap_stripeset *bs,
    unsigned col, uint64_t b, void *out);

/* A stripe set: stripes sharing one directory, one device's events
 * (trace and timeline columns) or its timeline elements. Read-only once
 * set up; the decoded columns live in the per-thread caches. */
struct snap_stripeset {
	uint64_t id;                      /* snap_stripe_new_id() */
	const struct snap_stripedir *dir; /* by ascending first */
	uint64_t n_stripe;                /* entries of dir */
	uint64_t n;                       /* values in all stripes */
	const uint8_t *data;              /* column data (payloads) */
	uint64_t data_len;
	struct snap_stripelim lim;
	snap_stripe_decode_fn decode;
	const void *owner;                /* for decode */
	int *damaged;                     /* set to 1 when a stripe fails */
	struct snap_stripedrop *drop;     /* NULL, or how data's pages go
					     back */
};

/* A new stripe set id. */
uint64_t snap_stripe_new_id(void);

/* The stripe of bs holding value i (< bs->n), by binary search. */
uint64_t snap_stripe_find(const struct snap_stripeset *bs, uint64_t i);

/* ---- reading through the per-thread cache ------------------------------ */

/* The last stripe each column was read from, per thread: the accessors'
 * fast path. */
struct snap_hot {
	uint64_t id;
	uint64_t lo, n;
	const void *data;
};
extern __thread struct snap_hot snap_hot[SNAP_NCOL];

/* Slow path of the accessors: pointer to value i of column col (width w
 * bytes), decoding it into an entry of this thread's cache if needed.
 * Never NULL: a damaged stripe reads as zeros. */
const void *snap_stripe_miss(const struct snap_stripeset *bs, unsigned col,
    uint64_t i, size_t w);

static inline const void *
snap_stripe_at(const struct snap_stripeset *bs, unsigned col, uint64_t i,
    size_t w)
{
	const struct snap_hot *h = &snap_hot[col];

	if (h->id == bs->id && i - h->lo < h->n)
		return (const uint8_t *)h->data + (i - h->lo) * w;
	return snap_stripe_miss(bs, col, i, w);
}

/* Value i of column col (width w) when this thread's cache holds its
 * stripe decoded, else NULL: nothing is decoded. */
const void *snap_stripe_peek(const struct snap_stripeset *bs, unsigned col,
    uint64_t i, size_t w);

/* For decoders of derived columns: the decoded column col (width w) of
 * stripe b of bs, pinned in this thread's cache until snap_stripe_unpin().
 * Never NULL. */
const void *snap_stripe_pin(const struct snap_stripeset *bs, unsigned col,
    uint64_t b, size_t w);
void snap_stripe_unpin(const void *data);

/* Drops this thread's cache entries (all of them; cheap to refill). */
void snap_stripe_cache_clear(void);

/* How many decoded columns this thread's cache keeps, at most (64 by
 * default, clamped to 64 .. 1024; the bytes stay within the same budget
 * of 64 MiB). A pass over a trace reads each stripe once and needs few;
 * the viewer's loop, which goes back and forth over the trace at every
 * key (the segment pane's replay to the cursor, the cursor's element),
 * keeps more. Drops the entries when the number changes, as
 * snap_stripe_cache_clear() does: never while a decoder holds a pin. */
void snap_stripe_cache_slots(unsigned n);
/* The bytes this thread's cache keeps decoded, at most (0 or 64 MiB and
 * more: 64 MiB), from its next decode on; returns the budget before.
 * For a pass that reads each stripe once beside another that reads
 * many: the stripes it has read are no use to it, and each thread's
 * cache is its own. */
size_t snap_stripe_cache_budget(size_t bytes);

/* ---- encoding ----------------------------------------------------------- */

/* Growable byte buffer. */
struct snap_buf {
	uint8_t *p;
	size_t len, cap;
};

void snap_buf_reserve(struct snap_buf *b, size_t more);
void snap_buf_free(struct snap_buf *b);

static inline void
snap_put_uv(struct snap_buf *b, uint64_t v)
{
	uint8_t *p;

	if (b->cap - b->len < 10)
		snap_buf_reserve(b, 10);
	p = b->p + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->p);
}

static inline uint64_t
snap_zz(uint64_t delta)
{
	return delta << 1 ^ (uint64_t)((int64_t)delta >> 63);
}

static inline uint64_t
snap_unzz(uint64_t v)
{
	return v >> 1 ^ (0 - (v & 1));
}

/* Column encoders: append n values to out. */
void snap_enc_u8(struct snap_buf *out, const uint8_t *v, uint32_t n);
void snap_enc_uv(struct snap_buf *out, const uint64_t *v, uint32_t n);
void snap_enc_uv32(struct snap_buf *out, const uint32_t *v, uint32_t n);
void snap_enc_zd(struct snap_buf *out, const uint64_t *v, uint32_t n);
/* A dictionary of up to 255 distinct values; more falls back to a
 * dictionary size of 0 followed by n varints. */
void snap_enc_dict(struct snap_buf *out, const uint64_t *v, uint32_t n);

/* Compresses the raw chunk raw[0, rlen) into out (appended): LZ4 when that
 * is smaller, else as is. Returns the stored length (clen); *hash gets the
 * chunk's check value. */
uint32_t snap_chunk_store(struct snap_buf *out, const uint8_t *raw,
    uint32_t rlen, uint32_t *hash);

/* The check value of a stored chunk. */
uint32_t snap_chunk_hash(const uint8_t *p, uint32_t clen);

/* ---- decoding (the fuzz target drives these) ---------------------------- */

/* Largest raw chunk for n values (the varint worst case plus a
 * dictionary); larger rlen values in a directory are refused. */
#define SNAP_CHUNK_MAX(n) ((uint64_t)(n) * 10 + 256 * 10 + 16)

/* Unpacks a stored chunk (clen bytes at src) into its raw bytes: returns
 * a pointer to rlen bytes (src itself when stored raw, else scratch, which
 * holds at least rlen bytes), or NULL when malformed. */
const uint8_t *snap_chunk_raw(const uint8_t *src, uint32_t clen,
    uint32_t rlen, uint8_t *scratch);

/* One varint from [*p, end); -1 when it runs off or is longer than 10
 * bytes (or its 10th byte holds more than bit 63). */
static inline int
snap_get_uv(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	unsigned s = 0;

	/* most values fit in one byte (deltas, stacks, string ids) */
	if (__builtin_expect(p != end && *p < 0x80, 1)) {
		*v = *p;
		*pp = p + 1;
		return 0;
	}
	for (;;) {
		uint8_t c;

		if (p == end)
			return -1;
		c = *p++;
		if (s == 63 && c > 1)
			return -1;
		r |= (uint64_t)(c & 0x7f) << s;
		if (c < 0x80)
			break;
		s += 7;
		if (s > 63)
			return -1;
	}
	*v = r;
	*pp = p;
	return 0;
}

/* Decoders of raw chunks: exactly n values, exactly rlen bytes consumed.
 * Return 0, or -1 when malformed (out is then partly written). */
int snap_dec_u8(const uint8_t *p, uint32_t rlen, uint32_t n, uint8_t *out);
int snap_dec_uv(const uint8_t *p, uint32_t rlen, uint32_t n, uint64_t *out);
int snap_dec_uv32(const uint8_t *p, uint32_t rlen, uint32_t n,
    uint32_t *out, uint32_t limit);
int snap_dec_zd(const uint8_t *p, uint32_t rlen, uint32_t n, uint64_t *out);
int snap_dec_dict(const uint8_t *p, uint32_t rlen, uint32_t n,
    uint64_t *out);

/* Checks a directory entry's chunk lengths against its payload and value
 * count (no payload read). 0 or -1. */
int snap_stripedir_check(const struct snap_stripedir *d, unsigned nchunk,
    uint64_t data_len);

/* Decodes trace column col (SNAP_COL_ACTION .. SNAP_COL_POOL) of event
 * stripe b of bs into out. The decoder of every event stripe set; derived
 * columns are the owner's. 0 or -1. */
int snap_stripe_decode_trace(const struct snap_stripeset *bs, unsigned col,
    uint64_t b, void *out);

/* The raw bytes of chunk c of stripe b (NULL when malformed; *rlen set),
 * in this thread's scratch buffer number slot (0..3), valid until the
 * next call with that slot. The stored bytes are copied out of bs->data
 * first and only the copy is hashed and decoded, so a chunk is checked
 * and used as one set of bytes even when bs->data is a shared file
 * mapping that another process rewrites. */
const uint8_t *snap_stripe_chunk(const struct snap_stripeset *bs, uint64_t b,
    unsigned c, uint32_t *rlen, unsigned slot);

#endif
