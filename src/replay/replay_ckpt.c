/*
 * Replay checkpoints (replay_ckpt.h): every K events the full state,
 * encoded per segment into an append-only arena; unchanged segments share
 * their blob, so memory grows with what changes, not with the state size
 * times the number of checkpoints.
 *
 * Segment blob: addr, size, stream, zz(pool0), zz(pool1), stack, flags
 * (1 = large, 2 = expandable), zz(alloc_ev), zz(last_ev), n_blocks, then
 * per block: size, state, [requested, stack, zz(alloc_ev) if active],
 * zz(last_ev). Block addresses are implied (blocks tile the segment).
 *
 * A checkpoint's list of blobs (its segments in address order), in
 * varints. A key list: count times zz(id - the previous id, from 0). A
 * change from the previous checkpoint's list P: ops (n << 2 | op) until
 * the list's bytes end; op 0 copies the next n ids of P, op 1 skips the
 * next n, op 2 appends the next n new blobs (the blobs made for this
 * checkpoint are numbered from nb0 on, in address order: they need no
 * id). All of P must be copied or skipped. A segment that kept its blob
 * keeps its place among the others, so a change costs a few ops where a
 * few segments changed; a key list is written instead when the changes
 * since the last one would outgrow it, or after CKPT_CHAIN changes, so
 * that a restore decodes at most about twice a list before the blobs.
 */
#include "config.h"

#include "replay/replay_ckpt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "util/sat.h"
#include "util/search.h"
#include "util/xalloc.h"

/* Segments ahead of the one being decoded whose blob a restore asks the
 * cache for (its span twice as far ahead). */
#define CKPT_AHEAD 8

void
ckpt_init(struct ckpt *c, uint64_t k)
{
	memset(c, 0, sizeof *c);
	c->k = k;
}

/* The arena's bytes go to its tape this many at a time (at most). */
#define ARENA_FLUSH (1u << 20)

void
ckpt_use_tapes(struct ckpt *c, size_t mem)
{
	int i;

	c->tape = xcalloc(2, sizeof *c->tape);
	for (i = 0; i < 2; i++)
		tape_init(&c->tape[i], mem);
	c->flush = mem < ARENA_FLUSH ? mem : ARENA_FLUSH;
}

void
ckpt_destroy(struct ckpt *c)
{
	if (c->tape != NULL) {
		tape_free(&c->tape[0]);
		tape_free(&c->tape[1]);
		free(c->tape);
	}
	free(c->arena);
	free(c->lists);
	free(c->blob_off);
	free(c->blob_len);
	free(c->pos);
	free(c->loff);
	free(c->llen);
	free(c->count);
	free(c->nb0);
	free(c->key);
	free(c->prev);
	free(c->next);
	free(c->la);
	free(c->lb);
	free(c->dseg);
	free(c->dblk);
	ckpt_init(c, c->k);
}

uint64_t
ckpt_bytes(const struct ckpt *c)
{
	return c->arena_len + c->lists_len + c->n_blobs * 16 + c->n * 41;
}

/* Blob id's span in the arena. */
static uint64_t
span_off(const struct ckpt *c, uint64_t id)
{
	return c->blob_off[id];
}

static uint64_t
span_len(const struct ckpt *c, uint64_t id)
{
	return c->blob_len[id];
}

/* Blob id's bytes (*len of them): in the arena, or read from the saved
 * bytes (ckpt_load_src()), whose table is checked here, as it is used;
 * NULL when they cannot be read or the table's entry is out of the
 * arena. */
static const uint8_t *
blob_bytes(const struct ckpt *c, uint64_t id, uint64_t *len)
{
	const uint8_t *p;
	uint64_t off, n;

	if (c->src == NULL) {
		*len = span_len(c, id);
		return c->arena + span_off(c, id);
	}
	p = c->src->span(c->src->ctx, c->btab_at + 16 * id, 16);
	if (p == NULL)
		return NULL;
	off = sv_le64_get(p);
	n = sv_le64_get(p + 8);
	if (off > c->arena_len || n > c->arena_len - off)
		return NULL;
	*len = n;
	return c->src->span(c->src->ctx, c->arena_at + off, n);
}

/* ---- encoding ------------------------------------------------------------ */

static void
put_vb(uint8_t **p, uint64_t *len, size_t *cap, uint64_t v)
{
	if (*len + 10 > *cap)
		*p = xgrow(*p, cap, (size_t)*len + 10, 1);
	while (v >= 0x80) {
		(*p)[(*len)++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	(*p)[(*len)++] = (uint8_t)v;
}

/* The longest varint, and the values encode_seg() writes for a segment
 * and for each of its blocks at most. */
#define VB_MAX 10
#define ENC_SEG_FIELDS 10
#define ENC_BLK_FIELDS 6

/* v as a varint at w; returns the byte after it. */
static inline uint8_t *
w_var(uint8_t *w, uint64_t v)
{
	while (v >= 0x80) {
		*w++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*w++ = (uint8_t)v;
	return w;
}

static uint64_t
var_len(uint64_t v)
{
	uint64_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void
put_list(struct ckpt *c, uint64_t v)
{
	put_vb(&c->lists, &c->lists_len, &c->lists_cap, v);
}

static uint64_t
zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t
unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static uint32_t
encode_seg(struct ckpt *c, const struct rstate *st, const struct rseg *sg)
{
	const struct replay_segment *h = &sg->hdr;
	const struct rblk *b;
	uint64_t nb = 0, off = c->arena_len;
	uint8_t *w, *w0;
	size_t used;
	uint32_t id;

	if (c->tape == NULL && c->n_blobs == c->cap_blobs) {
		size_t cap = c->cap_blobs;

		c->blob_off = xgrow(c->blob_off, &cap, c->n_blobs + 1, 8);
		c->blob_len = xgrow(c->blob_len, &c->cap_blobs, c->n_blobs + 1,
		    8);
	}
	id = (uint32_t)c->n_blobs++;
	for (b = rblk_first(st, sg); b != NULL; b = rblk_next(sg, b))
		nb++;
	/* appended to the arena (its bytes before arena_base are on its
	 * tape): room for the longest encoding, then the values through a
	 * local pointer (a byte store may alias the arena's fields, so that
	 * a call per value loaded them all again) */
	used = (size_t)(c->arena_len - c->arena_base);
	if (used + VB_MAX * (ENC_SEG_FIELDS + ENC_BLK_FIELDS * nb) >
	    c->arena_cap)
		c->arena = xgrow(c->arena, &c->arena_cap, used + VB_MAX *
		    (ENC_SEG_FIELDS + ENC_BLK_FIELDS * nb), 1);
	w = w0 = c->arena + used;
	w = w_var(w, h->addr);
	w = w_var(w, h->size);
	w = w_var(w, h->stream);
	w = w_var(w, zz(h->pool_id[0]));
	w = w_var(w, zz(h->pool_id[1]));
	w = w_var(w, h->stack);
	w = w_var(w, (uint64_t)(h->is_large ? 1 : 0) |
	    (h->is_expandable ? 2 : 0));
	w = w_var(w, zz(h->alloc_ev));
	w = w_var(w, zz(h->last_ev));
	w = w_var(w, nb);
	for (b = rblk_first(st, sg); b != NULL; b = rblk_next(sg, b)) {
		w = w_var(w, b->b.size);
		w = w_var(w, b->b.state);
		if (b->b.state != SNAP_BLOCK_INACTIVE) {
			w = w_var(w, b->b.requested_size);
			w = w_var(w, b->b.stack);
			w = w_var(w, zz(b->b.alloc_ev));
		}
		w = w_var(w, zz(b->b.last_ev));
	}
	c->arena_len += (uint64_t)(w - w0);
	if (c->tape != NULL) {
		uint8_t e[16];

		sv_le64_put(e, off);
		sv_le64_put(e + 8, c->arena_len - off);
		tape_write(&c->tape[1], e, sizeof e);
	} else {
		c->blob_off[id] = off;
		c->blob_len[id] = c->arena_len - off;
	}
	return id;
}

enum { OP_COPY, OP_SKIP, OP_NEW };

static void
put_op(struct ckpt *c, unsigned op, uint64_t n)
{
	if (n > 0)
		put_list(c, n << 2 | op);
}

/* c->next (count ids, the blobs from nb0 on new) as the change from
 * c->prev. -1 when an old blob is not where the previous list has it
 * (then only a key list will do). */
static int
put_change(struct ckpt *c, size_t count, uint64_t nb0)
{
	const uint32_t *p = c->prev, *q = c->next;
	size_t i = 0, j = 0, m = c->n_prev, s;

	while (i < count) {
		if (q[i] >= nb0) {
			for (s = i; i < count && q[i] >= nb0; i++)
				;
			put_op(c, OP_NEW, i - s);
			continue;
		}
		for (s = j; j < m && p[j] != q[i]; j++)
			;
		if (j == m)
			return -1;
		put_op(c, OP_SKIP, j - s);
		for (s = i; i < count && j < m && q[i] < nb0 && p[j] == q[i];
		    i++, j++)
			;
		put_op(c, OP_COPY, i - s);
	}
	put_op(c, OP_SKIP, m - j);
	return 0;
}

static void
put_key(struct ckpt *c, size_t count)
{
	uint32_t last = 0;
	size_t i;

	for (i = 0; i < count; i++) {
		put_list(c, zz((int64_t)c->next[i] - (int64_t)last));
		last = c->next[i];
	}
}

void
ckpt_take(struct ckpt *c, struct rstate *st)
{
	struct rseg *sg;
	uint64_t nb0 = c->n_blobs, start = c->lists_len, full, j = c->n;
	size_t count = 0, i;
	uint32_t *t;
	int key;

	if (c->n == c->cap) {
		size_t cap = c->cap;

		c->pos = xgrow(c->pos, &cap, c->n + 1, 8);
		cap = c->cap;
		c->loff = xgrow(c->loff, &cap, c->n + 1, 8);
		cap = c->cap;
		c->llen = xgrow(c->llen, &cap, c->n + 1, 8);
		cap = c->cap;
		c->count = xgrow(c->count, &cap, c->n + 1, 8);
		cap = c->cap;
		c->nb0 = xgrow(c->nb0, &cap, c->n + 1, 8);
		c->key = xgrow(c->key, &c->cap, c->n + 1, 1);
	}
	if (st->seg.n > c->cap_next)
		c->next = xgrow(c->next, &c->cap_next, st->seg.n,
		    sizeof *c->next);
	for (sg = rseg_first(st); sg != NULL; sg = rseg_next(sg)) {
		if (sg->dirty || sg->blob == REPLAY_NO_BLOB) {
			sg->blob = encode_seg(c, st, sg);
			sg->dirty = 0;
		}
		c->next[count++] = sg->blob;
	}
	/* a key list's bytes, to weigh the changes against */
	for (full = 0, i = 0; i < count; i++)
		full += var_len(zz((int64_t)c->next[i] -
		    (int64_t)(i > 0 ? c->next[i - 1] : 0)));
	key = j == 0 || c->chain >= CKPT_CHAIN ||
	    put_change(c, count, nb0) != 0 ||
	    c->since_key + (c->lists_len - start) > full;
	if (key) {
		c->lists_len = start;
		put_key(c, count);
		c->since_key = 0;
		c->chain = 0;
	} else {
		c->since_key += c->lists_len - start;
		c->chain++;
	}
	c->pos[j] = (uint64_t)(st->at + 1);
	c->loff[j] = start;
	c->llen[j] = c->lists_len - start;
	c->count[j] = count;
	c->nb0[j] = nb0;
	c->key[j] = (uint8_t)key;
	c->n++;
	t = c->prev;
	c->prev = c->next;
	c->next = t;
	i = c->cap_prev;
	c->cap_prev = c->cap_next;
	c->cap_next = i;
	c->n_prev = count;
	if (c->tape != NULL && c->arena_len - c->arena_base >= c->flush) {
		tape_write(&c->tape[0], c->arena,
		    (size_t)(c->arena_len - c->arena_base));
		c->arena_base = c->arena_len;
	}
}

/* ---- decoding ------------------------------------------------------------ */

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t
get_var(struct rd *d)
{
	uint64_t v = 0;
	int shift = 0;

	while (d->p < d->end && shift < 64) {
		uint8_t x = *d->p++;

		v |= (uint64_t)(x & 0x7f) << shift;
		if (!(x & 0x80))
			return v;
		shift += 7;
	}
	d->bad = 1;
	return 0;
}

/* Decodes blob id after the segments decoded so far (they come in
 * address order and must not overlap) into the scratch arrays. */
static int
decode_seg(struct ckpt *c, uint32_t id)
{
	uint64_t prev_end = 0, nb, j, flags, off;
	struct replay_segment *h;
	struct rseg *sg;
	struct rd d;

	if (id >= c->n_blobs)
		return -1;
	if (c->n_dseg > 0)
		prev_end = rseg_end(&c->dseg[c->n_dseg - 1]);
	if (c->n_dseg == c->cap_dseg)
		c->dseg = xgrow(c->dseg, &c->cap_dseg, c->n_dseg + 1,
		    sizeof *c->dseg);
	sg = &c->dseg[c->n_dseg];
	memset(sg, 0, sizeof *sg);
	h = &sg->hdr;
	if ((d.p = blob_bytes(c, id, &off)) == NULL)
		return -1;
	d.end = d.p + off;
	d.bad = 0;
	h->addr = get_var(&d);
	h->size = get_var(&d);
	h->stream = get_var(&d);
	h->pool_id[0] = unzz(get_var(&d));
	h->pool_id[1] = unzz(get_var(&d));
	h->stack = (uint32_t)get_var(&d);
	flags = get_var(&d);
	h->is_large = flags & 1;
	h->is_expandable = (flags >> 1) & 1;
	h->alloc_ev = unzz(get_var(&d));
	h->last_ev = unzz(get_var(&d));
	nb = get_var(&d);
	if (d.bad || h->size == 0 || sv_span_wraps(h->addr, h->size) ||
	    (c->n_dseg > 0 && h->addr < prev_end) || nb == 0 ||
	    nb > (uint64_t)(d.end - d.p) / 3)
		return -1;
	sg->blob = id;
	c->n_dseg++;
	if (c->n_dblk + nb > c->cap_dblk)
		c->dblk = xgrow(c->dblk, &c->cap_dblk, c->n_dblk + nb,
		    sizeof *c->dblk);
	off = h->addr;
	for (j = 0; j < nb; j++) {
		struct replay_block *b = &c->dblk[c->n_dblk++];

		memset(b, 0, sizeof *b);
		b->addr = off;
		b->size = get_var(&d);
		b->state = (uint8_t)get_var(&d);
		b->alloc_ev = -1;
		if (b->state != SNAP_BLOCK_INACTIVE) {
			b->requested_size = get_var(&d);
			b->stack = (uint32_t)get_var(&d);
			b->alloc_ev = unzz(get_var(&d));
		}
		b->last_ev = unzz(get_var(&d));
		if (d.bad || b->size == 0 ||
		    b->size > h->addr + h->size - off ||
		    b->state > SNAP_BLOCK_ACTIVE_PENDING_FREE ||
		    b->requested_size > b->size)
			return -1;
		off += b->size;
	}
	return off == h->addr + h->size && d.p == d.end ? 0 : -1;
}

static int
fill_seg(void *el, size_t i, void *arg)
{
	const struct ckpt *c = arg;
	struct rseg *sg = el;

	sg->hdr = c->dseg[i].hdr;
	sg->blob = c->dseg[i].blob;
	avl_rekey(sg, sg->hdr.addr);
	return 0;
}

static int
fill_blk(void *el, size_t i, void *arg)
{
	const struct ckpt *c = arg;
	struct rblk *b = el;

	b->b = c->dblk[i];
	avl_rekey(b, b->b.addr);
	return 0;
}

struct by_pos {
	const uint64_t *pos;
	uint64_t want;
};

static int
pos_below(const void *ctx, uint64_t i)
{
	const struct by_pos *b = ctx;

	return b->pos[i] <= b->want;
}

uint64_t
ckpt_find(const struct ckpt *c, int64_t at)
{
	struct by_pos b = {c->pos, (uint64_t)(at + 1)};
	uint64_t i = sv_partition(0, c->n, pos_below, &b);

	return i > 0 ? i - 1 : 0;
}

/* Appends n ids to c->lb (of *len). */
static uint32_t *
lb_room(struct ckpt *c, size_t len, uint64_t n)
{
	if (n > SIZE_MAX / 8 - len - 1)
		return NULL;
	/* one more: never a null list, even an empty one */
	if (len + n + 1 > c->cap_lb)
		c->lb = xgrow(c->lb, &c->cap_lb, len + (size_t)n + 1,
		    sizeof *c->lb);
	return c->lb + len;
}

/* Decodes the list of checkpoint j into c->lb from the list of j - 1 in
 * c->la (n_la ids), or from nothing when j has a key list; *n its
 * length. Every id is checked against the blobs. */
static int
decode_list(struct ckpt *c, uint64_t j, size_t n_la, size_t *n)
{
	struct rd d;
	size_t len = 0, at = 0;
	uint32_t *o;
	uint64_t v, last = 0, k, made = 0;

	d.p = d.end = NULL; /* an empty list may have no bytes at all */
	if (c->llen[j] > 0) {
		d.p = c->lists + c->loff[j];
		d.end = d.p + c->llen[j];
	}
	d.bad = 0;
	while (d.p < d.end) {
		v = get_var(&d);
		if (d.bad)
			return -1;
		if (c->key[j]) {
			last += (uint64_t)unzz(v);
			if (last >= c->n_blobs ||
			    (o = lb_room(c, len, 1)) == NULL)
				return -1;
			*o = (uint32_t)last;
			len++;
			continue;
		}
		k = v >> 2;
		switch (v & 3) {
		case OP_COPY:
			if (k > n_la - at || (o = lb_room(c, len, k)) == NULL)
				return -1;
			if (k > 0)
				memcpy(o, c->la + at, (size_t)k * sizeof *o);
			at += (size_t)k;
			len += (size_t)k;
			break;
		case OP_SKIP:
			if (k > n_la - at)
				return -1;
			at += (size_t)k;
			break;
		case OP_NEW:
			if (c->nb0[j] > c->n_blobs ||
			    k > c->n_blobs - c->nb0[j] - made ||
			    (o = lb_room(c, len, k)) == NULL)
				return -1;
			for (v = 0; v < k; v++)
				o[v] = (uint32_t)(c->nb0[j] + made++);
			len += (size_t)k;
			break;
		default:
			return -1;
		}
	}
	if ((!c->key[j] && at != n_la) || len != c->count[j])
		return -1;
	*n = len;
	return 0;
}

int
ckpt_restore(struct ckpt *c, uint64_t j, struct rstate *st)
{
	uint64_t i, from;
	size_t n = 0;
	uint32_t *t;

	rstate_clear(st);
	if (j >= c->n || c->tape != NULL)
		return -1;
	/* back to the key list, then the changes up to j */
	for (from = j; !c->key[from]; from--)
		if (from == 0 || j - from >= CKPT_CHAIN)
			return -1;
	for (i = from; i <= j; i++) {
		size_t cap;

		if (decode_list(c, i, n, &n) != 0)
			return -1;
		t = c->la;
		c->la = c->lb;
		c->lb = t;
		cap = c->cap_la;
		c->cap_la = c->cap_lb;
		c->cap_lb = cap;
	}
	c->n_dseg = c->n_dblk = 0;
	for (i = 0; i < n; i++) {
		/* A checkpoint's blobs lie all over the arena (a segment that
		 * did not change keeps the blob of a checkpoint long before),
		 * so each is a cache miss, or three with its span: asked for
		 * ahead, the misses of the next blobs overlap this one's
		 * decoding. */
		if (c->src == NULL && i + 2 * CKPT_AHEAD < n &&
		    c->la[i + 2 * CKPT_AHEAD] < c->n_blobs) {
			uint32_t far = c->la[i + 2 * CKPT_AHEAD];

			__builtin_prefetch(&c->blob_off[far]);
			__builtin_prefetch(&c->blob_len[far]);
		}
		if (c->src == NULL && i + CKPT_AHEAD < n &&
		    c->la[i + CKPT_AHEAD] < c->n_blobs)
			__builtin_prefetch(c->arena +
			    span_off(c, c->la[i + CKPT_AHEAD]));
		if (decode_seg(c, c->la[i]) != 0)
			return -1;
	}
	/* decoded in address order and apart, so the loads cannot fail */
	if (avl_load(&st->seg, c->n_dseg, fill_seg, c) != 0 ||
	    avl_load(&st->blk, c->n_dblk, fill_blk, c) != 0) {
		rstate_clear(st);
		return -1;
	}
	rstate_reindex(st);
	st->at = (int64_t)c->pos[j] - 1;
	return 0;
}

/* ---- bytes --------------------------------------------------------------- */

void
wbuf_u64(struct wbuf *w, uint64_t v)
{
	if (w->count) {
		w->len += 8;
		return;
	}
	if (w->len + 8 > w->cap)
		w->p = xgrow(w->p, &w->cap, w->len + 8, 1);
	sv_le64_put(w->p + w->len, v);
	w->len += 8;
}

void
wbuf_bytes(struct wbuf *w, const void *p, size_t n)
{
	if (w->count) {
		w->len += n;
		return;
	}
	if (w->len + n > w->cap)
		w->p = xgrow(w->p, &w->cap, w->len + n, 1);
	if (n > 0)
		memcpy(w->p + w->len, p, n);
	w->len += n;
}

uint64_t
rbuf_u64(struct rbuf *b)
{
	uint64_t v;

	if (b->len - b->off < 8) {
		b->bad = 1;
		return 0;
	}
	v = sv_le64_get(b->p + b->off);
	b->off += 8;
	return v;
}

int
rbuf_fits(const struct rbuf *b, uint64_t n, uint64_t words)
{
	return !b->bad && words != 0 && n <= (b->len - b->off) / 8 / words;
}

void
ckpt_save_head(const struct ckpt *c, struct wbuf *w)
{
	uint64_t i;

	wbuf_u64(w, c->k);
	wbuf_u64(w, c->n);
	wbuf_u64(w, c->lists_len);
	wbuf_u64(w, c->n_blobs);
	wbuf_u64(w, c->arena_len);
	for (i = 0; i < c->n; i++) {
		wbuf_u64(w, c->pos[i]);
		wbuf_u64(w, c->loff[i]);
		wbuf_u64(w, c->llen[i]);
		wbuf_u64(w, c->count[i]);
		wbuf_u64(w, c->nb0[i]);
		wbuf_u64(w, c->key[i]);
	}
	wbuf_bytes(w, c->lists, c->lists_len);
}

/* Hands a tape's bytes to put, a piece at a time. */
static int
put_tape(struct tape *t, uint8_t *buf, size_t n,
    void (*put)(void *ctx, const void *p, size_t n), void *ctx)
{
	uint64_t off, len = tape_len(t);

	for (off = 0; off < len; off += n) {
		size_t k = len - off < n ? (size_t)(len - off) : n;

		if (tape_read(t, off, buf, k) != 0)
			return -1;
		put(ctx, buf, k);
	}
	return t->err != 0 ? -1 : 0;
}

int
ckpt_write_tail(struct ckpt *c,
    void (*put)(void *ctx, const void *p, size_t n), void *ctx, int *err)
{
	enum { PIECE = 1 << 20 };
	uint8_t *buf;
	uint64_t i;
	size_t k = 0;

	*err = 0;
	if (c->src != NULL || c->tape != NULL) {
		/* read where they are, never held: not written back; on
		 * tapes: ckpt_move_tail() */
		*err = EINVAL;
		return -1;
	}
	buf = xmalloc(PIECE);
	for (i = 0; i < c->n_blobs; i++) {
		sv_le64_put(buf + k, span_off(c, i));
		sv_le64_put(buf + k + 8, span_len(c, i));
		if ((k += 16) == PIECE) {
			put(ctx, buf, k);
			k = 0;
		}
	}
	put(ctx, buf, k);
	put(ctx, c->arena, (size_t)c->arena_len);
	free(buf);
	return 0;
}

int
ckpt_move_tail(struct ckpt *c, struct tape *out,
    void (*seen)(void *ctx, const void *p, size_t n), void *ctx, int *err)
{
	enum { PIECE = 1 << 20 };
	uint8_t *buf;
	size_t tail;
	int r;

	*err = 0;
	if (c->tape == NULL || c->src != NULL) {
		*err = EINVAL;
		return -1;
	}
	/* read once for seen(), from the page cache: not written again */
	buf = xmalloc(PIECE);
	r = put_tape(&c->tape[1], buf, PIECE, seen, ctx);
	if (r == 0)
		r = put_tape(&c->tape[0], buf, PIECE, seen, ctx);
	free(buf);
	*err = c->tape[0].err ? c->tape[0].err : c->tape[1].err;
	if (r != 0)
		return -1;
	tape_take(out, &c->tape[1]);
	tape_take(out, &c->tape[0]);
	tail = (size_t)(c->arena_len - c->arena_base);
	seen(ctx, c->arena, tail);
	tape_write(out, c->arena, tail);
	return 0;
}

/* The next n bytes of b, copied into a heap buffer (one byte more); or,
 * with *own (the heap buffer b's bytes are in), moved to the start of
 * that buffer, which is shrunk to them and taken over (*own NULL; b's
 * bytes are gone). Never NULL but on an overrun. */
static uint8_t *
rbuf_take(struct rbuf *b, uint64_t n, uint8_t **own)
{
	uint8_t *p;

	if (b->bad || n > b->len - b->off) {
		b->bad = 1;
		return NULL;
	}
	if (own != NULL && *own != NULL) {
		p = *own;
		memmove(p, b->p + b->off, (size_t)n);
		p = xreallocarray(p, (size_t)n + 1, 1);
		*own = NULL;
	} else {
		p = xmalloc((size_t)n + 1);
		memcpy(p, b->p + b->off, (size_t)n);
	}
	b->off += (size_t)n;
	return p;
}

static int
load_tables(struct ckpt *c, struct rbuf *b, uint64_t n_events,
    uint8_t **own)
{
	uint64_t i, n, llen, n_blobs, alen, chain = 0;

	c->k = rbuf_u64(b);
	n = rbuf_u64(b);
	llen = rbuf_u64(b);
	n_blobs = rbuf_u64(b);
	alen = rbuf_u64(b);
	if (b->bad || c->k == 0 || n == 0 || !rbuf_fits(b, n, 6))
		return -1;
	c->pos = xreallocarray(NULL, n, 8);
	c->loff = xreallocarray(NULL, n, 8);
	c->llen = xreallocarray(NULL, n, 8);
	c->count = xreallocarray(NULL, n, 8);
	c->nb0 = xreallocarray(NULL, n, 8);
	c->key = xreallocarray(NULL, n, 1);
	c->n = c->cap = n;
	for (i = 0; i < n; i++) {
		uint64_t key;

		c->pos[i] = rbuf_u64(b);
		c->loff[i] = rbuf_u64(b);
		c->llen[i] = rbuf_u64(b);
		c->count[i] = rbuf_u64(b);
		c->nb0[i] = rbuf_u64(b);
		key = rbuf_u64(b);
		c->key[i] = key != 0;
		chain = key != 0 ? 0 : chain + 1;
		if (key > 1 || chain > CKPT_CHAIN ||
		    (i == 0 ? c->pos[i] != 0 || !key
			    : c->pos[i] <= c->pos[i - 1] ||
			        c->pos[i] >= n_events) ||
		    c->loff[i] > llen || c->llen[i] > llen - c->loff[i] ||
		    c->nb0[i] > n_blobs || n_blobs > UINT32_MAX)
			return -1;
	}
	if ((c->lists = rbuf_take(b, llen, own)) == NULL)
		return -1;
	c->lists_len = llen;
	c->lists_cap = (size_t)llen + 1;
	c->n_blobs = n_blobs;
	c->arena_len = alen;
	if (c->src != NULL)
		return 0;
	if (!rbuf_fits(b, n_blobs, 2))
		return -1;
	c->blob_off = xreallocarray(NULL, n_blobs + 1, 8);
	c->blob_len = xreallocarray(NULL, n_blobs + 1, 8);
	c->n_blobs = c->cap_blobs = n_blobs;
	for (i = 0; i < n_blobs; i++) {
		uint64_t off = rbuf_u64(b), len = rbuf_u64(b);

		c->blob_off[i] = off;
		c->blob_len[i] = len;
		if (off > alen || len > alen - off)
			return -1;
	}
	if ((c->arena = rbuf_take(b, alen, NULL)) == NULL)
		return -1;
	c->arena_len = alen;
	c->arena_cap = (size_t)alen + 1;
	return 0;
}

int
ckpt_load(struct ckpt *c, struct rbuf *b, uint64_t n_events)
{
	ckpt_destroy(c);
	if (load_tables(c, b, n_events, NULL) != 0) {
		ckpt_destroy(c);
		return -1;
	}
	return 0;
}

int
ckpt_load_src(struct ckpt *c, struct rbuf *b, uint64_t n_events,
    const struct replay_src *src, uint64_t rest, uint8_t **own)
{
	ckpt_destroy(c);
	c->src = src;
	if (load_tables(c, b, n_events, own) != 0 || b->off != b->len ||
	    rest / 16 < c->n_blobs ||
	    rest - c->n_blobs * 16 != c->arena_len) {
		ckpt_destroy(c);
		return -1;
	}
	c->btab_at = b->len;
	c->arena_at = b->len + c->n_blobs * 16;
	return 0;
}
