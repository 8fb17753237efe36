/*
 * A built replay to bytes and back (format in replay.h): what the index
 * keeps so that a reopen seeks at once, with no backward pass. Loading
 * treats the bytes as untrusted: every count and offset is checked, and
 * checkpoint 0 must decode to a possible state.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "replay/replay_int.h"
#include "util/xalloc.h"

#define MAGIC "SVRPCK04"
#define N_INFO 12
/* bound on the forward pass's findings per event: it makes at most three
 * (an alloc's), the rest is room for more kinds */
#define MAX_FWD_PER_EV 8

static void
info_put(struct wbuf *w, const struct replay_info *in)
{
	wbuf_u64(w, in->n_pre_blocks);
	wbuf_u64(w, in->n_ghost);
	wbuf_u64(w, in->n_free_no_alloc);
	wbuf_u64(w, in->n_workspace);
	wbuf_u64(w, in->n_unknown);
	wbuf_u64(w, in->n_oom);
	wbuf_u64(w, in->n_snapshot);
	wbuf_u64(w, in->n_undo_anomalies);
	wbuf_u64(w, (uint64_t)in->npu_rounding);
	wbuf_u64(w, (uint64_t)in->legacy_no_trace);
	wbuf_u64(w, in->checkpoint_bytes);
	wbuf_u64(w, in->n_aligned);
}

static void
info_get(struct rbuf *b, struct replay_info *in)
{
	in->n_pre_blocks = rbuf_u64(b);
	in->n_ghost = rbuf_u64(b);
	in->n_free_no_alloc = rbuf_u64(b);
	in->n_workspace = rbuf_u64(b);
	in->n_unknown = rbuf_u64(b);
	in->n_oom = rbuf_u64(b);
	in->n_snapshot = rbuf_u64(b);
	in->n_undo_anomalies = rbuf_u64(b);
	in->npu_rounding = rbuf_u64(b) != 0;
	in->legacy_no_trace = rbuf_u64(b) != 0;
	in->checkpoint_bytes = rbuf_u64(b);
	in->n_aligned = rbuf_u64(b);
}

/* Everything replay_checkpoints_save() writes before the checkpoints'
 * arena. */
static void
save_head(const struct replay *r, struct wbuf *w0)
{
	struct wbuf w = *w0;
	uint64_t i;

	wbuf_bytes(&w, MAGIC, 8);
	wbuf_u64(&w, r->device);
	wbuf_u64(&w, r->n);
	info_put(&w, &r->info);
	wbuf_u64(&w, r->n_learned);
	for (i = 0; i < r->n_learned; i++) {
		wbuf_u64(&w, r->learned[i].ev);
		wbuf_u64(&w, r->learned[i].size);
	}
	wbuf_u64(&w, r->n_attrs);
	for (i = 0; i < r->n_attrs; i++) {
		const struct segattr *a = &r->attrs[i];

		wbuf_u64(&w, a->ev);
		wbuf_u64(&w, (uint64_t)a->pool[0]);
		wbuf_u64(&w, (uint64_t)a->pool[1]);
		wbuf_u64(&w, (uint64_t)a->stack | (uint64_t)a->is_large << 32 |
			(uint64_t)a->is_expandable << 33);
	}
	wbuf_u64(&w, r->n_fwd_issues);
	wbuf_u64(&w, r->n_fwd_kept);
	for (i = 0; i < r->n_fwd_kept; i++) {
		const struct replay_issue *is = &r->fwd_issues[i];
		size_t n = strnlen(is->msg, sizeof is->msg - 1);

		wbuf_u64(&w, (uint64_t)is->ev);
		wbuf_u64(&w, is->addr);
		wbuf_u64(&w, n);
		wbuf_bytes(&w, is->msg, n);
	}
	ckpt_save_head(&r->ck, &w);
	*w0 = w;
}

/* Appends to a wbuf (ckpt_write_tail()'s put). */
static void
put_wbuf(void *ctx, const void *p, size_t n)
{
	wbuf_bytes(ctx, p, n);
}

int
replay_checkpoints_save(const struct replay *r, uint8_t **buf, size_t *len)
{
	struct wbuf w = {NULL, 0, 0, 0};
	int e;

	if (r->ck.tape != NULL || r->ck.src != NULL)
		return -1;
	save_head(r, &w);
	/* from memory: nothing to fail */
	(void)ckpt_write_tail((struct ckpt *)&r->ck, put_wbuf, &w, &e);
	wbuf_u64(&w, XXH3_64bits(w.p, w.len));
	*buf = w.p;
	*len = w.len;
	return 0;
}

uint64_t
replay_checkpoints_len(const struct replay *r)
{
	struct wbuf w = {NULL, 0, 0, 1};

	save_head(r, &w);
	return w.len + r->ck.n_blobs * 16 + r->ck.arena_len + 8;
}

struct tape_put {
	struct tape *t;
	XXH3_state_t *h;
};

static void
put_tape(void *ctx, const void *p, size_t n)
{
	struct tape_put *x = ctx;

	XXH3_64bits_update(x->h, p, n);
	tape_write(x->t, p, n);
}

static void
hash_only(void *ctx, const void *p, size_t n)
{
	struct tape_put *x = ctx;

	XXH3_64bits_update(x->h, p, n);
}

/* The same bytes, one piece at a time, to a tape: with the checkpoints
 * on tapes of their own (replay_new_for_save()), the process never
 * holds them whole, and out takes those tapes over. */
int
replay_checkpoints_write(struct replay *r, struct tape *out, int *err)
{
	struct wbuf w = {NULL, 0, 0, 0};
	struct tape_put x;
	uint8_t hb[8];
	uint64_t h;
	int rc;

	x.t = out;
	x.h = XXH3_createState();
	if (x.h == NULL) {
		*err = ENOMEM;
		return -1;
	}
	XXH3_64bits_reset(x.h);
	save_head(r, &w);
	put_tape(&x, w.p, w.len);
	free(w.p);
	if (r->ck.tape != NULL)
		rc = ckpt_move_tail(&r->ck, out, hash_only, &x, err);
	else
		rc = ckpt_write_tail(&r->ck, put_tape, &x, err);
	h = XXH3_64bits_digest(x.h);
	XXH3_freeState(x.h);
	sv_le64_put(hb, h);
	tape_write(out, hb, sizeof hb);
	if (rc == 0 && out->err != 0) {
		*err = out->err;
		rc = -1;
	}
	return rc;
}

/* learned and attrs, each sorted by event (forward replay searches
 * them) and naming events of the trace. */
static int
load_learned(struct replay *r, struct rbuf *b)
{
	uint64_t i, n = rbuf_u64(b);

	if (!rbuf_fits(b, n, 2))
		return -1;
	r->learned = xreallocarray(NULL, n + 1, sizeof *r->learned);
	r->n_learned = r->cap_learned = n;
	for (i = 0; i < n; i++) {
		r->learned[i].ev = rbuf_u64(b);
		r->learned[i].size = rbuf_u64(b);
		if (r->learned[i].ev >= r->n ||
		    (i > 0 && r->learned[i].ev <= r->learned[i - 1].ev))
			return -1;
	}
	n = rbuf_u64(b);
	if (!rbuf_fits(b, n, 4))
		return -1;
	r->attrs = xcalloc(n + 1, sizeof *r->attrs);
	r->n_attrs = r->cap_attrs = n;
	for (i = 0; i < n; i++) {
		struct segattr *a = &r->attrs[i];
		uint64_t x;

		a->ev = rbuf_u64(b);
		a->pool[0] = (int64_t)rbuf_u64(b);
		a->pool[1] = (int64_t)rbuf_u64(b);
		x = rbuf_u64(b);
		a->stack = (uint32_t)x;
		a->is_large = (x >> 32) & 1;
		a->is_expandable = (x >> 33) & 1;
		if (a->ev >= r->n || (i > 0 && a->ev <= r->attrs[i - 1].ev))
			return -1;
	}
	return b->bad ? -1 : 0;
}

/* The forward pass's findings, for check: all of them counted, the first
 * REPLAY_MAX_ISSUES kept. Each names an event of the trace (the pass
 * gives no other), in order, with a message of printable ASCII that fits
 * the struct (it is printed as it is). */
static int
load_fwd(struct replay *r, struct rbuf *b)
{
	uint64_t i, n = rbuf_u64(b), kept = rbuf_u64(b);

	if (b->bad || n / MAX_FWD_PER_EV > r->n ||
	    kept != (n < REPLAY_MAX_ISSUES ? n : REPLAY_MAX_ISSUES) ||
	    !rbuf_fits(b, kept, 3))
		return -1;
	r->fwd_issues = kept > 0 ? xcalloc(kept, sizeof *r->fwd_issues)
				 : NULL;
	r->n_fwd_issues = n;
	r->n_fwd_kept = kept;
	for (i = 0; i < kept; i++) {
		struct replay_issue *is = &r->fwd_issues[i];
		uint64_t ev = rbuf_u64(b), len, k;

		is->addr = rbuf_u64(b);
		len = rbuf_u64(b);
		if (b->bad || ev >= r->n ||
		    (i > 0 && (int64_t)ev < is[-1].ev) ||
		    len >= sizeof is->msg || len > b->len - b->off)
			return -1;
		is->ev = (int64_t)ev;
		for (k = 0; k < len; k++) {
			uint8_t c = b->p[b->off + k];

			if (c < 0x20 || c > 0x7e)
				return -1;
			is->msg[k] = (char)c;
		}
		is->msg[len] = '\0';
		b->off += (size_t)len;
	}
	return 0;
}

/* The replay of device d with the checkpoints in b (from its magic on,
 * the trailing hash left out): the head, then ckpt_load(), or
 * ckpt_load_src() from src for the rest bytes after b's. */
static struct replay *
load_saved(const struct snapshot *s, uint32_t d, struct rbuf *b,
    const struct replay_src *src, uint64_t rest, uint8_t **own,
    struct sv_error *err)
{
	struct replay *r = replay_open(s, d);
	int bad;

	b->off = 8;
	if (src != NULL)
		r->src = *src;
	if (rbuf_u64(b) == d && rbuf_u64(b) == r->n)
		info_get(b, &r->info);
	else
		b->bad = 1;
	bad = b->bad || load_learned(r, b) != 0 || load_fwd(r, b) != 0;
	if (!bad && src == NULL)
		bad = ckpt_load(&r->ck, b, r->n) != 0 ||
		    b->off != b->len;
	else if (!bad)
		bad = ckpt_load_src(&r->ck, b, r->n, &r->src, rest, own) != 0;
	if (bad || ckpt_restore(&r->ck, 0, &r->cur) != 0) {
		replay_free(r);
		sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "replay checkpoints: stale or corrupt (device %u)", d);
		return NULL;
	}
	r->info.n_events = r->n;
	r->info.k = r->ck.k;
	r->info.n_checkpoints = r->ck.n;
	r->log.on = 1;
	ulog_reset(&r->log, r->cur.at);
	return r;
}

struct replay *
replay_new_saved(const struct snapshot *s, uint32_t d, const uint8_t *buf,
    size_t len, struct sv_error *err)
{
	struct rbuf b = {buf, len, 0, 0};
	uint64_t sum = 0;

	if (len >= 24) {
		b.off = len - 8;
		sum = rbuf_u64(&b);
	}
	if (len < 24 || memcmp(buf, MAGIC, 8) != 0 ||
	    XXH3_64bits(buf, len - 8) != sum) {
		sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "replay checkpoints: bad magic or checksum");
		return NULL;
	}
	b.len = len - 8;
	return load_saved(s, d, &b, NULL, 0, NULL, err);
}

/* ---- read as needed ------------------------------------------------------ */

/* The u64 at at of the len bytes of src, or 0 with *bad set. */
static uint64_t
src_u64(const struct replay_src *src, uint64_t len, uint64_t at, int *bad)
{
	const uint8_t *p = NULL;

	if (!*bad && at <= len && len - at >= 8)
		p = src->span(src->ctx, at, 8);
	if (p == NULL) {
		*bad = 1;
		return 0;
	}
	return sv_le64_get(p);
}

/* at moved past n records of size bytes, within len (else *bad). */
static uint64_t
src_skip(uint64_t at, uint64_t n, uint64_t size, uint64_t len, int *bad)
{
	if (*bad || at > len || n > (len - at) / size) {
		*bad = 1;
		return at;
	}
	return at + n * size;
}

/* How many of the len saved bytes come before the blobs' table (what
 * save_head() writes), reading only the counts; 0 when they do not fit. */
static uint64_t
head_len(const struct replay_src *src, uint64_t len)
{
	uint64_t at = 24 + 8 * N_INFO, n, i;
	int bad = 0;

	n = src_u64(src, len, at, &bad);        /* learned */
	at = src_skip(at + 8, n, 16, len, &bad);
	n = src_u64(src, len, at, &bad);        /* segments' attributes */
	at = src_skip(at + 8, n, 32, len, &bad);
	n = src_u64(src, len, at + 8, &bad);    /* findings kept */
	at += 16;
	if (n > REPLAY_MAX_ISSUES)
		bad = 1;
	for (i = 0; i < n && !bad; i++) {
		uint64_t ml = src_u64(src, len, at + 16, &bad);

		at = src_skip(at + 24, ml, 1, len, &bad);
	}
	n = src_u64(src, len, at + 8, &bad);    /* checkpoints */
	i = src_u64(src, len, at + 16, &bad);   /* their lists' bytes */
	at = src_skip(at + 40, n, 48, len, &bad);
	at = src_skip(at, i, 1, len, &bad);
	return bad ? 0 : at;
}

/* The n bytes at 0 of src in a heap buffer, copied a span of at most
 * 1 MiB at a time (a span's bytes last until the next call, and one
 * across many pieces of an index would be joined in a buffer of its
 * size); NULL when they cannot be read. */
static uint8_t *
src_copy(const struct replay_src *src, uint64_t n)
{
	uint8_t *out = n <= SIZE_MAX - 1 ? xmalloc((size_t)n + 1) : NULL;
	uint64_t at;

	for (at = 0; out != NULL && at < n; ) {
		uint64_t k = n - at < (1u << 20) ? n - at : (1u << 20);
		const uint8_t *p = src->span(src->ctx, at, k);

		if (p == NULL) {
			free(out);
			return NULL;
		}
		memcpy(out + at, p, (size_t)k);
		at += k;
	}
	return out;
}

struct replay *
replay_new_saved_src(const struct snapshot *s, uint32_t d,
    const struct replay_src *src, uint64_t len, struct sv_error *err)
{
	uint64_t hl = len >= 24 + 8 * N_INFO + 8 ? head_len(src, len - 8) : 0;
	uint8_t *head = hl > 0 ? src_copy(src, hl) : NULL;
	struct replay *r;
	struct rbuf b;

	if (head == NULL || memcmp(head, MAGIC, 8) != 0) {
		free(head);
		if (src->release != NULL)
			src->release(src->ctx);
		sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "replay checkpoints: bad magic or length");
		return NULL;
	}
	b.p = head;
	b.len = (size_t)hl;
	b.bad = 0;
	/* the lists end the head: the checkpoints take its buffer */
	r = load_saved(s, d, &b, src, len - 8 - hl, &head, err);
	free(head);
	return r;
}
