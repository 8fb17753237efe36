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
 */
#include "config.h"

#include "replay/replay_ckpt.h"

#include <stdlib.h>
#include <string.h>

#include "util/sat.h"
#include "util/search.h"
#include "util/xalloc.h"

void
ckpt_init(struct ckpt *c, uint64_t k)
{
	memset(c, 0, sizeof *c);
	c->k = k;
}

void
ckpt_destroy(struct ckpt *c)
{
	free(c->arena);
	free(c->pos);
	free(c->blob_off);
	free(c->blob_len);
	free(c->first);
	free(c->count);
	free(c->ids);
	free(c->dseg);
	free(c->dblk);
	ckpt_init(c, c->k);
}

uint64_t
ckpt_bytes(const struct ckpt *c)
{
	return c->arena_len + c->n_ids * sizeof *c->ids + c->n_blobs * 16 +
	    c->n * 24;
}

/* ---- encoding ------------------------------------------------------------ */

static void
put_var(struct ckpt *c, uint64_t v)
{
	if (c->arena_len + 10 > c->arena_cap)
		c->arena = xgrow(c->arena, &c->arena_cap, c->arena_len + 10, 1);
	while (v >= 0x80) {
		c->arena[c->arena_len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	c->arena[c->arena_len++] = (uint8_t)v;
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
	uint64_t nb = 0;
	uint32_t id;

	if (c->n_blobs == c->cap_blobs) {
		size_t cap = c->cap_blobs;

		c->blob_off = xgrow(c->blob_off, &cap, c->n_blobs + 1, 8);
		c->blob_len = xgrow(c->blob_len, &c->cap_blobs, c->n_blobs + 1,
		    8);
	}
	id = (uint32_t)c->n_blobs++;
	c->blob_off[id] = c->arena_len;
	for (b = rblk_first(st, sg); b != NULL; b = rblk_next(sg, b))
		nb++;
	put_var(c, h->addr);
	put_var(c, h->size);
	put_var(c, h->stream);
	put_var(c, zz(h->pool_id[0]));
	put_var(c, zz(h->pool_id[1]));
	put_var(c, h->stack);
	put_var(c, (uint64_t)(h->is_large ? 1 : 0) |
	    (h->is_expandable ? 2 : 0));
	put_var(c, zz(h->alloc_ev));
	put_var(c, zz(h->last_ev));
	put_var(c, nb);
	for (b = rblk_first(st, sg); b != NULL; b = rblk_next(sg, b)) {
		put_var(c, b->b.size);
		put_var(c, b->b.state);
		if (b->b.state != SNAP_BLOCK_INACTIVE) {
			put_var(c, b->b.requested_size);
			put_var(c, b->b.stack);
			put_var(c, zz(b->b.alloc_ev));
		}
		put_var(c, zz(b->b.last_ev));
	}
	c->blob_len[id] = c->arena_len - c->blob_off[id];
	return id;
}

void
ckpt_take(struct ckpt *c, struct rstate *st)
{
	struct rseg *sg;

	if (c->n == c->cap) {
		size_t cap = c->cap;

		c->pos = xgrow(c->pos, &cap, c->n + 1, 8);
		cap = c->cap;
		c->first = xgrow(c->first, &cap, c->n + 1, 8);
		c->count = xgrow(c->count, &c->cap, c->n + 1, 8);
	}
	c->pos[c->n] = (uint64_t)(st->at + 1);
	c->first[c->n] = c->n_ids;
	c->count[c->n] = st->seg.n;
	for (sg = rseg_first(st); sg != NULL; sg = rseg_next(sg)) {
		if (sg->dirty || sg->blob == REPLAY_NO_BLOB) {
			sg->blob = encode_seg(c, st, sg);
			sg->dirty = 0;
		}
		if (c->n_ids == c->cap_ids)
			c->ids = xgrow(c->ids, &c->cap_ids, c->n_ids + 1,
			    sizeof *c->ids);
		c->ids[c->n_ids++] = sg->blob;
	}
	c->n++;
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
	d.p = c->arena + c->blob_off[id];
	d.end = d.p + c->blob_len[id];
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

int
ckpt_restore(struct ckpt *c, uint64_t j, struct rstate *st)
{
	uint64_t i;

	rstate_clear(st);
	if (j >= c->n)
		return -1;
	c->n_dseg = c->n_dblk = 0;
	for (i = 0; i < c->count[j]; i++)
		if (decode_seg(c, c->ids[c->first[j] + i]) != 0)
			return -1;
	/* decoded in address order and apart, so the loads cannot fail */
	if (avl_load(&st->seg, c->n_dseg, fill_seg, c) != 0 ||
	    avl_load(&st->blk, c->n_dblk, fill_blk, c) != 0) {
		rstate_clear(st);
		return -1;
	}
	st->at = (int64_t)c->pos[j] - 1;
	return 0;
}

/* ---- bytes --------------------------------------------------------------- */

void
wbuf_u64(struct wbuf *w, uint64_t v)
{
	int i;

	if (w->len + 8 > w->cap)
		w->p = xgrow(w->p, &w->cap, w->len + 8, 1);
	for (i = 0; i < 8; i++)
		w->p[w->len++] = (uint8_t)(v >> (8 * i));
}

void
wbuf_bytes(struct wbuf *w, const void *p, size_t n)
{
	if (w->len + n > w->cap)
		w->p = xgrow(w->p, &w->cap, w->len + n, 1);
	if (n > 0)
		memcpy(w->p + w->len, p, n);
	w->len += n;
}

uint64_t
rbuf_u64(struct rbuf *b)
{
	uint64_t v = 0;
	int i;

	if (b->len - b->off < 8) {
		b->bad = 1;
		return 0;
	}
	for (i = 0; i < 8; i++)
		v |= (uint64_t)b->p[b->off++] << (8 * i);
	return v;
}

int
rbuf_fits(const struct rbuf *b, uint64_t n, uint64_t words)
{
	return !b->bad && words != 0 && n <= (b->len - b->off) / 8 / words;
}

void
ckpt_save(const struct ckpt *c, struct wbuf *w)
{
	uint64_t i;

	wbuf_u64(w, c->k);
	wbuf_u64(w, c->n);
	wbuf_u64(w, c->n_ids);
	wbuf_u64(w, c->n_blobs);
	wbuf_u64(w, c->arena_len);
	for (i = 0; i < c->n; i++) {
		wbuf_u64(w, c->pos[i]);
		wbuf_u64(w, c->first[i]);
		wbuf_u64(w, c->count[i]);
	}
	for (i = 0; i < c->n_ids; i++)
		wbuf_u64(w, c->ids[i]);
	for (i = 0; i < c->n_blobs; i++) {
		wbuf_u64(w, c->blob_off[i]);
		wbuf_u64(w, c->blob_len[i]);
	}
	wbuf_bytes(w, c->arena, c->arena_len);
}

static int
load_tables(struct ckpt *c, struct rbuf *b, uint64_t n_events)
{
	uint64_t i, n, n_ids, n_blobs, alen;

	c->k = rbuf_u64(b);
	n = rbuf_u64(b);
	n_ids = rbuf_u64(b);
	n_blobs = rbuf_u64(b);
	alen = rbuf_u64(b);
	if (b->bad || c->k == 0 || n == 0 || !rbuf_fits(b, n, 3))
		return -1;
	c->pos = xreallocarray(NULL, n, 8);
	c->first = xreallocarray(NULL, n, 8);
	c->count = xreallocarray(NULL, n, 8);
	c->n = c->cap = n;
	for (i = 0; i < n; i++) {
		c->pos[i] = rbuf_u64(b);
		c->first[i] = rbuf_u64(b);
		c->count[i] = rbuf_u64(b);
		if (i == 0 ? c->pos[i] != 0
			   : c->pos[i] <= c->pos[i - 1] ||
			       c->pos[i] >= n_events)
			return -1;
	}
	if (!rbuf_fits(b, n_ids, 1) || n_blobs > UINT32_MAX)
		return -1;
	c->ids = xreallocarray(NULL, n_ids + 1, sizeof *c->ids);
	c->n_ids = c->cap_ids = n_ids;
	for (i = 0; i < n_ids; i++) {
		uint64_t v = rbuf_u64(b);

		if (v >= n_blobs)
			return -1;
		c->ids[i] = (uint32_t)v;
	}
	for (i = 0; i < n; i++)
		if (c->first[i] > n_ids || c->count[i] > n_ids - c->first[i])
			return -1;
	if (!rbuf_fits(b, n_blobs, 2))
		return -1;
	c->blob_off = xreallocarray(NULL, n_blobs + 1, 8);
	c->blob_len = xreallocarray(NULL, n_blobs + 1, 8);
	c->n_blobs = c->cap_blobs = n_blobs;
	for (i = 0; i < n_blobs; i++) {
		c->blob_off[i] = rbuf_u64(b);
		c->blob_len[i] = rbuf_u64(b);
		if (c->blob_off[i] > alen ||
		    c->blob_len[i] > alen - c->blob_off[i])
			return -1;
	}
	if (b->bad || alen > b->len - b->off)
		return -1;
	c->arena = xmalloc(alen + 1);
	memcpy(c->arena, b->p + b->off, alen);
	c->arena_len = alen;
	c->arena_cap = alen + 1;
	b->off += alen;
	return 0;
}

int
ckpt_load(struct ckpt *c, struct rbuf *b, uint64_t n_events)
{
	ckpt_destroy(c);
	if (load_tables(c, b, n_events) != 0) {
		ckpt_destroy(c);
		return -1;
	}
	return 0;
}
