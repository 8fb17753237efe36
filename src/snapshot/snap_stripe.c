/*
 * The stripe codec: the encoders and checked decoders of one chunk, and
 * the per-thread cache of decoded stripe columns behind the event
 * accessors (snap_stripe.h; the format is in doc/FORMAT.md).
 *
 * The cache holds at most CACHE_SLOTS entries (one column of one stripe
 * each; a thread may ask for up to CACHE_SLOTS_MAX,
 * snap_stripe_cache_slots()) and CACHE_BYTES bytes per thread (or fewer,
 * snap_stripe_cache_budget()), evicting
 * the least recently used entry that no decoder has pinned. A table of
 * hints, by a hash of (set, column, stripe), remembers the slot each
 * entry was found or loaded in, so that finding a cached entry is one
 * look there, not a search of every slot (a read that alternates between
 * stripes misses the hot slots every time); a hint is only a guess,
 * checked against the slot, and the search of the slots stays the
 * answer when it is wrong. The cache is created on a thread's first read
 * and freed when the thread exits (or by snap_stripe_cache_clear()).
 */
#include "config.h"

#include "snapshot/snap_stripe.h"

#include <lz4.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "snapshot/snap_model.h"
#include "util/xalloc.h"

#define CACHE_SLOTS 64
#define CACHE_SLOTS_MAX 1024
#define CACHE_HINTS 4096 /* a power of two, above CACHE_SLOTS_MAX */
#define CACHE_BYTES (64u << 20)
#define N_SCRATCH 5 /* the callers' 0..3, and the stored bytes' */
#define DROP_AROUND (64u << 10) /* what the kernel maps around a fault */

struct cache_ent {
	uint64_t id, stripe, lo, n;  /* id 0: holds nothing */
	unsigned col;
	int pin;
	void *data;   /* its buffer (kept when it holds nothing) */
	size_t bytes; /* the buffer's size */
	uint64_t used; /* clock of the last use */
};

struct stripe_cache {
	struct cache_ent *e;
	int n_slots;
	uint16_t hint[CACHE_HINTS]; /* a slot that may hold the entry */
	size_t bytes;
	uint64_t clock;
	uint8_t *scratch[N_SCRATCH];
	size_t scratch_cap[N_SCRATCH];
};

__thread struct snap_hot snap_hot[SNAP_NCOL];
static __thread struct stripe_cache *cache;
static __thread int cache_slots_wanted; /* 0: CACHE_SLOTS */
static __thread size_t cache_budget; /* 0: CACHE_BYTES */
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static uint64_t next_id = 1;

uint64_t
snap_stripe_new_id(void)
{
	return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

uint64_t
snap_stripe_find(const struct snap_stripeset *bs, uint64_t i)
{
	uint64_t lo = 0, hi = bs->n_stripe, mid;

	/* the last stripe whose first value is <= i */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (bs->dir[mid].first <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the per-thread cache ----------------------------------------------- */

static void
cache_free(void *p)
{
	struct stripe_cache *c = p;
	int k;

	if (c == NULL)
		return;
	for (k = 0; k < c->n_slots; k++)
		free(c->e[k].data);
	for (k = 0; k < N_SCRATCH; k++)
		free(c->scratch[k]);
	free(c->e);
	free(c);
}

static void
cache_key_init(void)
{
	(void)pthread_key_create(&cache_key, cache_free);
}

static struct stripe_cache *
cache_get(void)
{
	if (cache == NULL) {
		pthread_once(&cache_once, cache_key_init);
		cache = xcalloc(1, sizeof *cache);
		cache->n_slots = cache_slots_wanted > 0 ? cache_slots_wanted :
		    CACHE_SLOTS;
		cache->e = xcalloc((size_t)cache->n_slots, sizeof *cache->e);
		(void)pthread_setspecific(cache_key, cache);
	}
	return cache;
}

void
snap_stripe_cache_clear(void)
{
	struct stripe_cache *c = cache;

	memset(snap_hot, 0, sizeof snap_hot);
	if (c == NULL)
		return;
	cache = NULL;
	(void)pthread_setspecific(cache_key, NULL);
	cache_free(c);
}

size_t
snap_stripe_cache_budget(size_t bytes)
{
	size_t old = cache_budget;

	cache_budget = bytes < CACHE_BYTES ? bytes : 0;
	return old;
}

void
snap_stripe_cache_slots(unsigned n)
{
	if (n < CACHE_SLOTS)
		n = CACHE_SLOTS;
	if (n > CACHE_SLOTS_MAX)
		n = CACHE_SLOTS_MAX;
	if (cache != NULL && cache->n_slots == (int)n)
		return;
	snap_stripe_cache_clear();
	cache_slots_wanted = (int)n;
}

static unsigned
hint_of(uint64_t id, unsigned col, uint64_t b)
{
	uint64_t h = (id * 0x9e3779b97f4a7c15ull ^ b) * 0xff51afd7ed558ccdull;

	return (unsigned)((h >> 40) ^ col * 0x9e37u) & (CACHE_HINTS - 1);
}

/* Forgets what e holds (its buffer stays, for the next column). */
static void
ent_forget(struct cache_ent *e)
{
	if (e->data != NULL && snap_hot[e->col].data == e->data)
		memset(&snap_hot[e->col], 0, sizeof snap_hot[e->col]);
	e->id = 0;
}

static void
ent_drop(struct stripe_cache *c, struct cache_ent *e)
{
	ent_forget(e);
	c->bytes -= e->bytes;
	free(e->data);
	memset(e, 0, sizeof *e);
}

/* A slot with a buffer of at least bytes for a column being decoded,
 * claimed (pinned) until ent_load fills it in: the least recently used
 * unpinned slot, whose buffer is reused (a fresh buffer of a few hundred
 * KiB is a fresh mapping, zeroed by the kernel at every decode). Other
 * unpinned buffers are freed while the cache is over its budget. */
static struct cache_ent *
ent_claim(struct stripe_cache *c, size_t bytes)
{
	struct cache_ent *victim = NULL;
	int k;

	for (k = 0; k < c->n_slots; k++) {
		struct cache_ent *e = &c->e[k];

		if (e->pin > 0)
			continue;
		if (victim == NULL || (e->id == 0 && victim->id != 0) ||
		    (e->id != 0 && victim->id != 0 && e->used < victim->used))
			victim = e;
	}
	if (victim == NULL)
		return NULL;
	ent_forget(victim);
	if (victim->bytes < bytes) {
		c->bytes -= victim->bytes;
		free(victim->data);
		victim->data = xmalloc(bytes ? bytes : 1);
		victim->bytes = bytes;
		c->bytes += bytes;
	}
	victim->pin = 1;
	/* keep the total under the budget: free the oldest others */
	while (c->bytes > (cache_budget > 0 ? cache_budget : CACHE_BYTES)) {
		struct cache_ent *old = NULL;

		for (k = 0; k < c->n_slots; k++) {
			struct cache_ent *e = &c->e[k];

			if (e->pin == 0 && e->data != NULL &&
			    (old == NULL || e->used < old->used))
				old = e;
		}
		if (old == NULL)
			break;
		ent_drop(c, old);
	}
	return victim;
}

static struct cache_ent *
ent_find(struct stripe_cache *c, uint64_t id, unsigned col, uint64_t b)
{
	unsigned h = hint_of(id, col, b);
	struct cache_ent *e = &c->e[c->hint[h]];
	int k;

	if (e->id == id && e->col == col && e->stripe == b)
		return e;
	for (k = 0; k < c->n_slots; k++) {
		e = &c->e[k];
		if (e->id == id && e->col == col && e->stripe == b) {
			c->hint[h] = (uint16_t)k;
			return e;
		}
	}
	return NULL;
}

/* Column col of stripe b, decoded, in the cache. */
static struct cache_ent *
ent_load(const struct snap_stripeset *bs, unsigned col, uint64_t b, size_t w)
{
	struct stripe_cache *c = cache_get();
	struct cache_ent *e = ent_find(c, bs->id, col, b);
	size_t bytes;

	if (e != NULL) {
		e->used = ++c->clock;
		return e;
	}
	bytes = (size_t)bs->dir[b].n * w;
	e = ent_claim(c, bytes);
	if (e == NULL) {
		/* every slot pinned: cannot happen (a decoder pins at most
		 * a few); keep going with the first */
		e = &c->e[0];
		ent_forget(e);
		if (e->bytes < bytes) {
			c->bytes -= e->bytes;
			free(e->data);
			e->data = xmalloc(bytes ? bytes : 1);
			e->bytes = bytes;
			c->bytes += bytes;
		}
		e->pin++;
	}
	/* unfindable (id 0) and pinned while it is filled: the decode may
	 * load (and evict) other entries */
	if (bs->decode(bs, col, b, e->data) != 0) {
		memset(e->data, 0, bytes);
		if (bs->damaged != NULL)
			__atomic_store_n(bs->damaged, 1, __ATOMIC_RELAXED);
	}
	e->pin--;
	e->id = bs->id;
	e->col = col;
	e->stripe = b;
	e->lo = bs->dir[b].first;
	e->n = bs->dir[b].n;
	e->used = ++c->clock;
	c->hint[hint_of(bs->id, col, b)] = (uint16_t)(e - c->e);
	return e;
}

const void *
snap_stripe_miss(const struct snap_stripeset *bs, unsigned col, uint64_t i,
    size_t w)
{
	struct cache_ent *e = ent_load(bs, col, snap_stripe_find(bs, i), w);
	struct snap_hot *h = &snap_hot[col];

	h->id = bs->id;
	h->lo = e->lo;
	h->n = e->n;
	h->data = e->data;
	if (i - e->lo >= e->n) {
		/* i is past the directory's stripes (a damaged directory):
		 * read as zero */
		static const uint8_t zero[64];

		return zero;
	}
	return (const uint8_t *)e->data + (i - e->lo) * w;
}

const void *
snap_stripe_peek(const struct snap_stripeset *bs, unsigned col, uint64_t i,
    size_t w)
{
	const struct snap_hot *h = &snap_hot[col];
	const struct cache_ent *e;

	if (h->id == bs->id && i - h->lo < h->n)
		return (const uint8_t *)h->data + (i - h->lo) * w;
	if (cache == NULL || bs->n == 0 || i >= bs->n)
		return NULL;
	e = ent_find(cache, bs->id, col, snap_stripe_find(bs, i));
	if (e == NULL || i - e->lo >= e->n)
		return NULL;
	return (const uint8_t *)e->data + (i - e->lo) * w;
}

const void *
snap_stripe_pin(const struct snap_stripeset *bs, unsigned col, uint64_t b,
    size_t w)
{
	struct cache_ent *e = ent_load(bs, col, b, w);

	e->pin++;
	return e->data;
}

void
snap_stripe_unpin(const void *data)
{
	struct stripe_cache *c = cache;
	int k;

	if (c == NULL)
		return;
	for (k = 0; k < c->n_slots; k++)
		if (c->e[k].data == data && c->e[k].pin > 0) {
			c->e[k].pin--;
			return;
		}
}

static uint8_t *
scratch(unsigned slot, size_t need)
{
	struct stripe_cache *c = cache_get();

	if (c->scratch_cap[slot] < need) {
		free(c->scratch[slot]);
		c->scratch[slot] = xmalloc(need);
		c->scratch_cap[slot] = need;
	}
	return c->scratch[slot];
}

/* ---- encoding --------------------------------------------------------- */

void
snap_buf_reserve(struct snap_buf *b, size_t more)
{
	if (b->cap - b->len < more)
		b->p = xgrow(b->p, &b->cap, b->len + more, 1);
}

void
snap_buf_free(struct snap_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

void
snap_enc_u8(struct snap_buf *out, const uint8_t *v, uint32_t n)
{
	snap_buf_reserve(out, n);
	memcpy(out->p + out->len, v, n);
	out->len += n;
}

void
snap_enc_uv(struct snap_buf *out, const uint64_t *v, uint32_t n)
{
	uint32_t i;

	snap_buf_reserve(out, (size_t)n * 10);
	for (i = 0; i < n; i++)
		snap_put_uv(out, v[i]);
}

void
snap_enc_uv32(struct snap_buf *out, const uint32_t *v, uint32_t n)
{
	uint32_t i;

	snap_buf_reserve(out, (size_t)n * 5);
	for (i = 0; i < n; i++)
		snap_put_uv(out, v[i]);
}

void
snap_enc_zd(struct snap_buf *out, const uint64_t *v, uint32_t n)
{
	uint64_t prev = 0;
	uint32_t i;

	snap_buf_reserve(out, (size_t)n * 10);
	for (i = 0; i < n; i++) {
		snap_put_uv(out, snap_zz(v[i] - prev));
		prev = v[i];
	}
}

void
snap_enc_dict(struct snap_buf *out, const uint64_t *v, uint32_t n)
{
	uint64_t dict[255];
	uint32_t k = 0, i, j;
	uint8_t last = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < k && dict[j] != v[i]; j++)
			;
		if (j == k) {
			if (k == 255) {
				snap_put_uv(out, 0);
				snap_enc_uv(out, v, n);
				return;
			}
			dict[k++] = v[i];
		}
	}
	snap_put_uv(out, k);
	for (j = 0; j < k; j++)
		snap_put_uv(out, dict[j]);
	snap_buf_reserve(out, n);
	for (i = 0; i < n; i++) {
		/* the same value as the last event is the common case */
		if (dict[last] != v[i])
			for (last = 0; dict[last] != v[i]; last++)
				;
		out->p[out->len++] = last;
	}
}

uint32_t
snap_chunk_hash(const uint8_t *p, uint32_t clen)
{
	return (uint32_t)XXH3_64bits(p, clen);
}

uint32_t
snap_chunk_store(struct snap_buf *out, const uint8_t *raw, uint32_t rlen,
    uint32_t *hash)
{
	int bound, zl = 0;
	uint8_t *dst;

	if (rlen == 0) {
		*hash = 0;
		return 0;
	}
	bound = LZ4_compressBound((int)rlen);
	snap_buf_reserve(out, (size_t)bound + rlen);
	dst = out->p + out->len;
	/* only compressed data shorter than the raw bytes is kept: a
	 * reader tells the two apart by clen < rlen */
	if (rlen > 16)
		zl = LZ4_compress_default((const char *)raw, (char *)dst,
		    (int)rlen, (int)rlen - 1);
	if (zl <= 0 || (uint32_t)zl >= rlen) {
		memcpy(dst, raw, rlen);
		zl = (int)rlen;
	}
	*hash = snap_chunk_hash(dst, (uint32_t)zl);
	out->len += (size_t)zl;
	return (uint32_t)zl;
}

/* ---- decoding --------------------------------------------------------- */

const uint8_t *
snap_chunk_raw(const uint8_t *src, uint32_t clen, uint32_t rlen,
    uint8_t *scratch_buf)
{
	if (clen == rlen)
		return src;
	if (clen > rlen || rlen > (uint32_t)LZ4_MAX_INPUT_SIZE ||
	    clen > (uint32_t)LZ4_MAX_INPUT_SIZE)
		return NULL;
	if (LZ4_decompress_safe((const char *)src, (char *)scratch_buf,
		(int)clen, (int)rlen) != (int)rlen)
		return NULL;
	return scratch_buf;
}

int
snap_dec_u8(const uint8_t *p, uint32_t rlen, uint32_t n, uint8_t *out)
{
	if (rlen != n)
		return -1;
	memcpy(out, p, n);
	return 0;
}

int
snap_dec_uv(const uint8_t *p, uint32_t rlen, uint32_t n, uint64_t *out)
{
	const uint8_t *end = p + rlen;
	uint32_t i;

	for (i = 0; i < n; i++)
		if (snap_get_uv(&p, end, &out[i]) != 0)
			return -1;
	return p == end ? 0 : -1;
}

int
snap_dec_uv32(const uint8_t *p, uint32_t rlen, uint32_t n, uint32_t *out,
    uint32_t limit)
{
	const uint8_t *end = p + rlen;
	uint64_t v;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (snap_get_uv(&p, end, &v) != 0 || v >= limit)
			return -1;
		out[i] = (uint32_t)v;
	}
	return p == end ? 0 : -1;
}

int
snap_dec_zd(const uint8_t *p, uint32_t rlen, uint32_t n, uint64_t *out)
{
	const uint8_t *end = p + rlen;
	uint64_t prev = 0, v;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (snap_get_uv(&p, end, &v) != 0)
			return -1;
		prev += snap_unzz(v);
		out[i] = prev;
	}
	return p == end ? 0 : -1;
}

int
snap_dec_dict(const uint8_t *p, uint32_t rlen, uint32_t n, uint64_t *out)
{
	const uint8_t *end = p + rlen;
	uint64_t dict[255], k, j;
	uint32_t i;

	if (snap_get_uv(&p, end, &k) != 0 || k > 255)
		return -1;
	if (k == 0)
		return snap_dec_uv(p, (uint32_t)(end - p), n, out);
	for (j = 0; j < k; j++)
		if (snap_get_uv(&p, end, &dict[j]) != 0)
			return -1;
	if ((uint64_t)(end - p) != n)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] >= k)
			return -1;
		out[i] = dict[p[i]];
	}
	return 0;
}

int
snap_stripedir_check(const struct snap_stripedir *d, unsigned nchunk,
    uint64_t data_len)
{
	uint64_t sum = 0;
	unsigned c;

	if (d->n == 0 || d->n > SNAP_STRIPE_MAX || d->off > data_len ||
	    d->len > data_len - d->off)
		return -1;
	for (c = 0; c < SNAP_STRIPE_NCHUNK; c++) {
		if (c >= nchunk && (d->clen[c] != 0 || d->rlen[c] != 0))
			return -1;
		if (d->clen[c] > d->rlen[c] ||
		    d->rlen[c] > SNAP_CHUNK_MAX(d->n) ||
		    (d->rlen[c] != 0 && d->clen[c] == 0))
			return -1;
		sum += d->clen[c];
	}
	return sum == d->len ? 0 : -1;
}

/* Counts a chunk of n bytes read from dp's mapping, and every
 * SNAP_STRIPE_DROP_EVERY bytes gives back all its pages. A read fault on a
 * file mapping maps the pages around it too (up to 64 KiB on Linux), so a
 * chunk may bring in more than its own bytes: it counts for DROP_AROUND
 * more. A reader on another thread in the middle of a chunk faults its
 * pages back from the page cache: a file mapping loses nothing. */
static void
drop_read(struct snap_stripedrop *dp, uint32_t n)
{
	uint64_t add = (uint64_t)n + DROP_AROUND;
	uint64_t was = __atomic_fetch_add(&dp->read, add, __ATOMIC_RELAXED);

	if (was / SNAP_STRIPE_DROP_EVERY !=
	    (was + add) / SNAP_STRIPE_DROP_EVERY)
		(void)madvise((void *)(uintptr_t)dp->map, dp->len,
		    MADV_DONTNEED);
}

const uint8_t *
snap_stripe_chunk(const struct snap_stripeset *bs, uint64_t b, unsigned c,
    uint32_t *rlen, unsigned slot)
{
	const struct snap_stripedir *d = &bs->dir[b];
	uint64_t off = d->off;
	uint8_t *stored;
	unsigned k;

	if (slot >= N_SCRATCH - 1)
		return NULL;
	*rlen = d->rlen[c];
	for (k = 0; k < c; k++)
		off += d->clen[k];
	/* the directory was checked at open (snap_stripedir_check), so the
	 * chunk lies inside the data; its bytes are checked here */
	if (d->clen[c] == 0)
		return (const uint8_t *)"";
	if (bs->drop != NULL)
		drop_read(bs->drop, d->clen[c]);
	/* the data may be a file mapping its owner can rewrite at any
	 * time: copy the stored bytes once, then hash and decode the copy
	 * (a raw chunk is copied straight into the caller's slot) */
	if (d->clen[c] == d->rlen[c]) {
		stored = scratch(slot, d->clen[c]);
		memcpy(stored, bs->data + off, d->clen[c]);
		return snap_chunk_hash(stored, d->clen[c]) == d->chash[c]
		    ? stored : NULL;
	}
	stored = scratch(N_SCRATCH - 1, d->clen[c]);
	memcpy(stored, bs->data + off, d->clen[c]);
	if (snap_chunk_hash(stored, d->clen[c]) != d->chash[c])
		return NULL;
	return snap_chunk_raw(stored, d->clen[c], d->rlen[c],
	    scratch(slot, d->rlen[c]));
}

int
snap_stripe_decode_trace(const struct snap_stripeset *bs, unsigned col,
    uint64_t b, void *out)
{
	static const unsigned chunk[] = {SNAP_EVC_ACTION, SNAP_EVC_ADDR,
	    SNAP_EVC_SIZE, SNAP_EVC_STREAM, SNAP_EVC_STACK, SNAP_EVC_TIME,
	    SNAP_EVC_CTX, SNAP_EVC_META, SNAP_EVC_POOL};
	uint32_t n = bs->dir[b].n, rlen, i;
	const uint8_t *p;

	if (col > SNAP_COL_POOL)
		return -1;
	p = snap_stripe_chunk(bs, b, chunk[col], &rlen, 0);
	if (p == NULL)
		return -1;
	if (rlen == 0) {
		/* absent: no time, no context, no metadata in this stripe */
		if (col == SNAP_COL_TIME) {
			int64_t *t = out;

			for (i = 0; i < n; i++)
				t[i] = SNAP_NO_TIME;
			return 0;
		}
		if (col == SNAP_COL_CTX || col == SNAP_COL_META ||
		    col == SNAP_COL_POOL) {
			memset(out, 0, (size_t)n * 4);
			return 0;
		}
		return -1;
	}
	switch (col) {
	case SNAP_COL_ACTION:
		if (snap_dec_u8(p, rlen, n, out) != 0)
			return -1;
		for (i = 0; i < n; i++)
			if (((uint8_t *)out)[i] >= bs->lim.n_actions)
				return -1;
		return 0;
	case SNAP_COL_ADDR:
	case SNAP_COL_TIME:
		return snap_dec_zd(p, rlen, n, out);
	case SNAP_COL_SIZE:
		return snap_dec_uv(p, rlen, n, out);
	case SNAP_COL_STREAM:
		return snap_dec_dict(p, rlen, n, out);
	case SNAP_COL_STACK:
		return snap_dec_uv32(p, rlen, n, out, bs->lim.n_stacks);
	default:
		return snap_dec_uv32(p, rlen, n, out, bs->lim.n_strs);
	}
}
