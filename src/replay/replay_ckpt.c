/*
 * Replay checkpoints: the full allocator state every K events, encoded
 * one segment at a time into an append-only arena of varint blobs. A
 * segment that did not change since the previous checkpoint reuses its
 * blob, so memory grows with what changes, not with the state size times
 * the number of checkpoints. Also the save/load of all of it to one byte
 * buffer (format in replay.h); loading treats the buffer as untrusted.
 *
 * Segment blob: addr, size, stream, zz(pool0), zz(pool1), stack, flags
 * (1 = large, 2 = expandable), zz(alloc_ev), zz(last_ev), n_blocks, then
 * per block: size, state, [requested, stack, zz(alloc_ev) if active],
 * zz(last_ev). Block addresses are implied (blocks tile the segment).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "replay/replay_int.h"
#include "util/xalloc.h"

static void
put_var(struct replay *r, uint64_t v)
{
	if (r->arena_len + 10 > r->arena_cap) {
		size_t cap = r->arena_cap;

		r->arena = xgrow(r->arena, &cap, r->arena_len + 10, 1);
		r->arena_cap = cap;
	}
	while (v >= 0x80) {
		r->arena[r->arena_len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	r->arena[r->arena_len++] = (uint8_t)v;
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
		uint8_t c = *d->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
	}
	d->bad = 1;
	return 0;
}

static uint32_t
encode_seg(struct replay *r, const struct rseg *sg)
{
	const struct replay_segment *h = &sg->hdr;
	uint32_t j, id;

	if (r->n_refs == r->cap_refs) {
		size_t cap = r->cap_refs;

		r->ref_off = xgrow(r->ref_off, &cap, r->n_refs + 1, 8);
		cap = r->cap_refs;
		r->ref_len = xgrow(r->ref_len, &cap, r->n_refs + 1, 8);
		r->cap_refs = cap;
	}
	id = (uint32_t)r->n_refs++;
	r->ref_off[id] = r->arena_len;
	put_var(r, h->addr);
	put_var(r, h->size);
	put_var(r, h->stream);
	put_var(r, zz(h->pool_id[0]));
	put_var(r, zz(h->pool_id[1]));
	put_var(r, h->stack);
	put_var(r, (uint64_t)(h->is_large ? 1 : 0) |
		(h->is_expandable ? 2 : 0));
	put_var(r, zz(h->alloc_ev));
	put_var(r, zz(h->last_ev));
	put_var(r, sg->n);
	for (j = 0; j < sg->n; j++) {
		const struct replay_block *b = &sg->b[j];

		put_var(r, b->size);
		put_var(r, b->state);
		if (b->state != SNAP_BLOCK_INACTIVE) {
			put_var(r, b->requested_size);
			put_var(r, b->stack);
			put_var(r, zz(b->alloc_ev));
		}
		put_var(r, zz(b->last_ev));
	}
	r->ref_len[id] = r->arena_len - r->ref_off[id];
	return id;
}

void
ckpt_take(struct replay *r, const struct rstate *cst)
{
	struct rstate *st = (struct rstate *)cst; /* updates blob ids */
	uint32_t i;

	if (r->n_ck == r->cap_ck) {
		size_t cap = r->cap_ck;

		r->ck_first = xgrow(r->ck_first, &cap, r->n_ck + 1, 8);
		cap = r->cap_ck;
		r->ck_n = xgrow(r->ck_n, &cap, r->n_ck + 1, 8);
		r->cap_ck = cap;
	}
	r->ck_first[r->n_ck] = r->n_ck_refs;
	r->ck_n[r->n_ck] = st->n;
	for (i = 0; i < st->n; i++) {
		struct rseg *sg = &st->seg[i];

		if (sg->dirty || sg->blob == REPLAY_NO_BLOB) {
			sg->blob = encode_seg(r, sg);
			sg->dirty = 0;
		}
		if (r->n_ck_refs == r->cap_ck_refs) {
			size_t cap = r->cap_ck_refs;

			r->ck_refs = xgrow(r->ck_refs, &cap, r->n_ck_refs + 1,
			    sizeof *r->ck_refs);
			r->cap_ck_refs = cap;
		}
		r->ck_refs[r->n_ck_refs++] = sg->blob;
	}
	r->n_ck++;
}

static int
decode_seg(const struct replay *r, uint32_t id, struct rseg *sg)
{
	struct rd d;
	struct replay_segment *h = &sg->hdr;
	uint64_t nb, j, flags, off;

	if (id >= r->n_refs)
		return -1;
	d.p = r->arena + r->ref_off[id];
	d.end = d.p + r->ref_len[id];
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
	if (d.bad || nb > (uint64_t)(d.end - d.p) / 2 || nb > UINT32_MAX - 1)
		return -1;
	sg->n = 0;
	rseg_reserve(sg, (uint32_t)nb + 1);
	off = h->addr;
	for (j = 0; j < nb; j++) {
		struct replay_block *b = &sg->b[j];

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
		off += b->size;
	}
	sg->n = (uint32_t)nb;
	sg->blob = id;
	sg->dirty = 0;
	if (d.bad || off != h->addr + h->size)
		return -1;
	return 0;
}

int
ckpt_restore(struct replay *r, uint64_t j, struct rstate *st)
{
	uint64_t i;

	if (j >= r->n_ck)
		return -1;
	rstate_clear(st);
	for (i = 0; i < r->ck_n[j]; i++) {
		struct rseg *sg = rstate_insert_seg(st, (uint32_t)i);

		if (decode_seg(r, r->ck_refs[r->ck_first[j] + i], sg) != 0) {
			rstate_clear(st);
			return -1;
		}
	}
	st->at = (int64_t)(j * r->k) - 1;
	return 0;
}

void
ckpt_free(struct replay *r)
{
	free(r->arena);
	free(r->ref_off);
	free(r->ref_len);
	free(r->ck_first);
	free(r->ck_n);
	free(r->ck_refs);
}

/* ---- save / load ---------------------------------------------------------- */

#define MAGIC "SVRPCK01"
#define CK_VERSION 1
#define N_INFO 12

struct wb {
	uint8_t *p;
	size_t len, cap;
};

static void
wb_u64(struct wb *w, uint64_t v)
{
	int i;

	if (w->len + 8 > w->cap)
		w->p = xgrow(w->p, &w->cap, w->len + 8, 1);
	for (i = 0; i < 8; i++)
		w->p[w->len++] = (uint8_t)(v >> (8 * i));
}

static void
wb_bytes(struct wb *w, const void *p, size_t n)
{
	if (w->len + n > w->cap)
		w->p = xgrow(w->p, &w->cap, w->len + n, 1);
	if (n > 0)
		memcpy(w->p + w->len, p, n);
	w->len += n;
}

static void
info_put(struct wb *w, const struct replay_info *in)
{
	wb_u64(w, in->n_pre_blocks);
	wb_u64(w, in->n_ghost);
	wb_u64(w, in->n_free_no_alloc);
	wb_u64(w, in->n_workspace);
	wb_u64(w, in->n_unknown);
	wb_u64(w, in->n_oom);
	wb_u64(w, in->n_snapshot);
	wb_u64(w, in->n_undo_anomalies);
	wb_u64(w, (uint64_t)in->npu_rounding);
	wb_u64(w, (uint64_t)in->legacy_no_trace);
	wb_u64(w, in->checkpoint_bytes);
	wb_u64(w, in->n_aligned);
}

int
replay_checkpoints_save(const struct replay *r, uint8_t **buf, size_t *len)
{
	struct wb w = {NULL, 0, 0};
	uint64_t i;

	wb_bytes(&w, MAGIC, 8);
	wb_u64(&w, (uint64_t)CK_VERSION | (uint64_t)r->device << 32);
	wb_u64(&w, r->n);
	wb_u64(&w, r->k);
	wb_u64(&w, r->n_ck);
	wb_u64(&w, r->n_refs);
	wb_u64(&w, r->n_learned);
	wb_u64(&w, r->n_attrs);
	wb_u64(&w, r->arena_len);
	wb_u64(&w, r->n_ck_refs);
	info_put(&w, &r->info);
	for (i = 0; i < r->n_ck; i++) {
		wb_u64(&w, r->ck_first[i]);
		wb_u64(&w, r->ck_n[i]);
	}
	for (i = 0; i < r->n_ck_refs; i++)
		wb_u64(&w, r->ck_refs[i]);
	for (i = 0; i < r->n_refs; i++) {
		wb_u64(&w, r->ref_off[i]);
		wb_u64(&w, r->ref_len[i]);
	}
	for (i = 0; i < r->n_learned; i++) {
		wb_u64(&w, r->learned[i].ev);
		wb_u64(&w, r->learned[i].size);
	}
	for (i = 0; i < r->n_attrs; i++) {
		const struct segattr *a = &r->attrs[i];

		wb_u64(&w, a->ev);
		wb_u64(&w, (uint64_t)a->pool[0]);
		wb_u64(&w, (uint64_t)a->pool[1]);
		wb_u64(&w, (uint64_t)a->stack | (uint64_t)a->is_large << 32 |
			(uint64_t)a->is_expandable << 33);
	}
	wb_bytes(&w, r->arena, r->arena_len);
	wb_u64(&w, XXH3_64bits(w.p, w.len));
	*buf = w.p;
	*len = w.len;
	return 0;
}

struct rb {
	const uint8_t *p;
	size_t len, off;
	int bad;
};

static uint64_t
rb_u64(struct rb *b)
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

/* Count of 8-byte words left, to bound array sizes before allocating. */
static int
rb_fits(const struct rb *b, uint64_t n, uint64_t words)
{
	return !b->bad && words != 0 && n <= (b->len - b->off) / 8 / words;
}

static int
load_tables(struct replay *r, struct rb *b)
{
	uint64_t i, n_refs, n_ck_refs, n_ck;

	n_ck = rb_u64(b);
	n_refs = rb_u64(b);
	r->n_learned = rb_u64(b);
	r->n_attrs = rb_u64(b);
	r->arena_len = rb_u64(b);
	n_ck_refs = rb_u64(b);
	r->info.n_pre_blocks = rb_u64(b);
	r->info.n_ghost = rb_u64(b);
	r->info.n_free_no_alloc = rb_u64(b);
	r->info.n_workspace = rb_u64(b);
	r->info.n_unknown = rb_u64(b);
	r->info.n_oom = rb_u64(b);
	r->info.n_snapshot = rb_u64(b);
	r->info.n_undo_anomalies = rb_u64(b);
	r->info.npu_rounding = (int)rb_u64(b);
	r->info.legacy_no_trace = (int)rb_u64(b);
	r->info.checkpoint_bytes = rb_u64(b);
	r->info.n_aligned = rb_u64(b);
	if (!rb_fits(b, n_ck, 2) || n_ck == 0 ||
	    n_ck != (r->n ? (r->n - 1) / r->k + 1 : 1))
		return -1;
	r->n_ck = r->cap_ck = n_ck;
	r->ck_first = xreallocarray(NULL, n_ck, 8);
	r->ck_n = xreallocarray(NULL, n_ck, 8);
	for (i = 0; i < n_ck; i++) {
		r->ck_first[i] = rb_u64(b);
		r->ck_n[i] = rb_u64(b);
	}
	if (!rb_fits(b, n_ck_refs + 1, 1))
		return -1;
	r->n_ck_refs = r->cap_ck_refs = n_ck_refs;
	r->ck_refs = xreallocarray(NULL, n_ck_refs + 1, sizeof *r->ck_refs);
	for (i = 0; i < n_ck_refs; i++) {
		uint64_t v = rb_u64(b);

		if (v >= n_refs)
			return -1;
		r->ck_refs[i] = (uint32_t)v;
	}
	for (i = 0; i < n_ck; i++)
		if (r->ck_first[i] > n_ck_refs ||
		    r->ck_n[i] > n_ck_refs - r->ck_first[i])
			return -1;
	if (!rb_fits(b, n_refs + 1, 2) || n_refs > UINT32_MAX - 1)
		return -1;
	r->n_refs = r->cap_refs = n_refs;
	r->ref_off = xreallocarray(NULL, n_refs + 1, 8);
	r->ref_len = xreallocarray(NULL, n_refs + 1, 8);
	for (i = 0; i < n_refs; i++) {
		r->ref_off[i] = rb_u64(b);
		r->ref_len[i] = rb_u64(b);
		if (r->ref_off[i] > r->arena_len ||
		    r->ref_len[i] > r->arena_len - r->ref_off[i])
			return -1;
	}
	if (!rb_fits(b, r->n_learned + 1, 2))
		return -1;
	r->cap_learned = r->n_learned + 1;
	r->learned = xreallocarray(NULL, r->cap_learned, sizeof *r->learned);
	for (i = 0; i < r->n_learned; i++) {
		r->learned[i].ev = rb_u64(b);
		r->learned[i].size = rb_u64(b);
	}
	if (!rb_fits(b, r->n_attrs + 1, 4))
		return -1;
	r->cap_attrs = r->n_attrs + 1;
	r->attrs = xcalloc(r->cap_attrs, sizeof *r->attrs);
	for (i = 0; i < r->n_attrs; i++) {
		uint64_t x;

		r->attrs[i].ev = rb_u64(b);
		r->attrs[i].pool[0] = (int64_t)rb_u64(b);
		r->attrs[i].pool[1] = (int64_t)rb_u64(b);
		x = rb_u64(b);
		r->attrs[i].stack = (uint32_t)x;
		r->attrs[i].is_large = (x >> 32) & 1;
		r->attrs[i].is_expandable = (x >> 33) & 1;
	}
	if (b->bad || r->arena_len != b->len - b->off - 8)
		return -1;
	r->arena = xmalloc(r->arena_len + 1);
	memcpy(r->arena, b->p + b->off, r->arena_len);
	r->arena_cap = r->arena_len + 1;
	return 0;
}

struct replay *
replay_new_saved(const struct snapshot *s, uint32_t d, const uint8_t *buf,
    size_t len, struct sv_error *err)
{
	struct rb b = {buf, len, 0, 0};
	struct replay *r;
	uint64_t v, sum = 0;

	if (len >= 24) {
		b.off = len - 8;
		sum = rb_u64(&b);
	}
	if (len < 24 || memcmp(buf, MAGIC, 8) != 0 ||
	    XXH3_64bits(buf, len - 8) != sum) {
		sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "replay checkpoints: bad magic or checksum");
		return NULL;
	}
	b.off = 8;
	r = replay_alloc_for_load(s, d);
	v = rb_u64(&b);
	if ((v & 0xffffffff) != CK_VERSION || (v >> 32) != d ||
	    rb_u64(&b) != r->n || (r->k = rb_u64(&b)) == 0 ||
	    load_tables(r, &b) != 0 || ckpt_restore(r, 0, &r->cur) != 0) {
		replay_free(r);
		sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "replay checkpoints: stale or corrupt (device %u)", d);
		return NULL;
	}
	r->info.k = r->k;
	r->info.n_checkpoints = r->n_ck;
	return r;
}
