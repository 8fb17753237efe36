/*
 * A reader of an extension section too big to hold whole (idx.h): a
 * section stored in LZ4 pieces is decoded a piece at a time as its bytes
 * are asked for. The pieces' table is made once per index, the first
 * time a reader opens the section: each piece's head is copied out and
 * checked, its bytes are hashed where they are in the map, into the
 * section's hash (which must be the TOC's) and into a hash of their own,
 * kept. Nothing is decoded from the map: a piece is copied out when it
 * is needed and must hash as the map's bytes did, so a file written
 * meanwhile is refused (and the index marked damaged), and what decodes
 * is the copy.
 */
#include "config.h"

#include <lz4.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "index/idx_int.h"
#include "util/hash.h"
#include "util/search.h"
#include "util/xalloc.h"

/* Decoded pieces a reader keeps: a replay's seek reads a few pieces of
 * the blobs' table and of the arena each (one or two of each, 4 MiB
 * pieces, on the files measured; the writer's pieces are 256 KiB). */
#define SLOTS 32

struct slot {
	uint64_t piece;          /* UINT64_MAX: empty */
	uint64_t roff, rl;       /* its bytes in the section (0, 0: empty) */
	uint64_t used;           /* the reader's tick when last read */
	uint8_t *buf;
	size_t cap;
};

struct idx_reader {
	const struct sv_index *ix;
	uint64_t len;
	/* whole in memory (a section not stored in pieces, or one built in
	 * this process) */
	const uint8_t *data;
	/* or in pieces: the table, the stored section in the map */
	const struct idx_piece *pieces;
	uint64_t n_pieces;
	const uint8_t *stored;
	struct slot slot[SLOTS];
	struct slot *last;       /* the slot read last */
	uint64_t tick;
	uint8_t *copy;           /* a piece's stored bytes, copied out */
	size_t cap_copy;
	uint8_t *join;           /* a span across pieces */
	size_t cap_join;
};

struct table {
	struct idx_piece *p;
	uint64_t n;
	size_t cap;
	uint64_t roff;
};

/* idx_sec_pieces()'s each for the table. */
static int
add_piece(void *ctx, uint64_t at, const uint8_t *piece, size_t take,
    uint32_t rl)
{
	struct table *t = ctx;
	struct idx_piece *p;

	XGROW(t->p, t->cap, t->n + 1);
	p = &t->p[t->n++];
	p->soff = at;
	p->roff = t->roff;
	p->hash = sv_xxh3(piece, take);
	p->take = (uint32_t)take;
	p->rl = rl;
	t->roff += rl;
	return 0;
}

/* The table of e's pieces, made once (the caller holds ext_lock). */
static void
make_pieces(const struct sv_index *ix, struct idx_ext *e)
{
	struct table t = {NULL, 0, 0, 0};
	int bad_hash;

	/* the pieces are only hashed here, in the map: a piece is decoded
	 * later from a copy that must hash as the map's bytes did */
	if (idx_sec_pieces(ix->map, idx_map_is_file(ix), &e->toc, 0,
	    add_piece, &t, &bad_hash) != 0) {
		free(t.p);
		e->pieces_state = -1;
		__atomic_store_n(&ix->mut->damaged, 1, __ATOMIC_RELAXED);
		return;
	}
	e->pieces = t.p;
	e->n_pieces = t.n;
	e->pieces_state = 1;
}

struct idx_reader *
idx_reader_open(const struct sv_index *ix, const char *name, uint64_t *len)
{
	struct idx_ext *e = idx_ext_find(ix, name);
	struct idx_reader *r;
	const uint8_t *data;
	size_t n;
	int i, in_pieces = 0;

	*len = 0;
	if (e == NULL)
		return NULL;
	pthread_mutex_lock(&ix->mut->ext_lock);
	if (e->state == 0 && e->tape == NULL && ix->map != NULL &&
	    e->toc.comp == IDX_COMP_LZ4P) {
		if (e->pieces_state == 0)
			make_pieces(ix, e);
		in_pieces = e->pieces_state == 1;
	}
	pthread_mutex_unlock(&ix->mut->ext_lock);
	r = xcalloc(1, sizeof *r);
	r->ix = ix;
	if (in_pieces) {
		r->pieces = e->pieces;
		r->n_pieces = e->n_pieces;
		r->stored = ix->map + e->toc.off;
		r->len = e->toc.raw;
		for (i = 0; i < SLOTS; i++)
			r->slot[i].piece = UINT64_MAX;
	} else if (idx_section(ix, name, &data, &n) == 0) {
		r->data = data;
		r->len = n;
	} else {
		free(r);
		return NULL;
	}
	*len = r->len;
	return r;
}

void
idx_reader_free(struct idx_reader *r)
{
	int i;

	if (r == NULL)
		return;
	for (i = 0; i < SLOTS; i++)
		free(r->slot[i].buf);
	free(r->copy);
	free(r->join);
	free(r);
}

struct piece_at {
	const struct idx_piece *pieces;
	uint64_t off;
};

static int
starts_by(const void *ctx, uint64_t i)
{
	const struct piece_at *c = ctx;

	return c->pieces[i].roff <= c->off;
}

/* The piece holding byte off of the section (off < r->len): the last
 * that starts at or before it (the first starts at 0). */
static uint64_t
piece_of(const struct idx_reader *r, uint64_t off)
{
	struct piece_at c = {r->pieces, off};

	return sv_partition(1, r->n_pieces, starts_by, &c) - 1;
}

/* Piece k decoded, in a slot: copied out of the map again, it must hash
 * as it did when the table was made, and decode. NULL (the index marked
 * damaged) when it does not. */
static const uint8_t *
piece_get(struct idx_reader *r, uint64_t k)
{
	const struct idx_piece *p = &r->pieces[k];
	struct slot *s = &r->slot[0];
	int i;

	r->tick++;
	for (i = 0; i < SLOTS; i++) {
		if (r->slot[i].piece == k) {
			r->slot[i].used = r->tick;
			r->last = &r->slot[i];
			return r->slot[i].buf;
		}
		if (r->slot[i].used < s->used)
			s = &r->slot[i];
	}
	if (p->take > r->cap_copy)
		r->copy = xgrow(r->copy, &r->cap_copy, p->take, 1);
	memcpy(r->copy, r->stored + p->soff, p->take);
	s->piece = UINT64_MAX;
	s->roff = s->rl = 0;
	if (sv_xxh3(r->copy, p->take) != p->hash) {
		__atomic_store_n(&r->ix->mut->damaged, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (p->rl > s->cap)
		s->buf = xgrow(s->buf, &s->cap, p->rl, 1);
	if (LZ4_decompress_safe((const char *)r->copy + 8, (char *)s->buf,
	    (int)(p->take - 8), (int)p->rl) != (int)p->rl) {
		/* hashed right but not LZ4: made so */
		__atomic_store_n(&r->ix->mut->damaged, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	s->piece = k;
	s->roff = p->roff;
	s->rl = p->rl;
	s->used = r->tick;
	r->last = s;
	return s->buf;
}

const uint8_t *
idx_reader_span(struct idx_reader *r, uint64_t off, uint64_t n)
{
	uint64_t k, got = 0;
	int i;

	if (off > r->len || n > r->len - off)
		return NULL;
	if (r->data != NULL || n == 0)
		return r->data != NULL ? r->data + off : (const uint8_t *)"";
	/* most reads fall in the piece read last, or one kept: a seek
	 * alternates between the blobs' table and the arena */
	if (r->last != NULL && off >= r->last->roff &&
	    off + n <= r->last->roff + r->last->rl)
		return r->last->buf + (off - r->last->roff);
	for (i = 0; i < SLOTS; i++) {
		struct slot *s = &r->slot[i];

		if (off >= s->roff && off + n <= s->roff + s->rl) {
			s->used = ++r->tick;
			r->last = s;
			return s->buf + (off - s->roff);
		}
	}
	k = piece_of(r, off);
	if (off + n <= r->pieces[k].roff + r->pieces[k].rl) {
		const uint8_t *b = piece_get(r, k);

		return b != NULL ? b + (off - r->pieces[k].roff) : NULL;
	}
	/* across pieces: joined in a buffer of the reader's */
	if (n > SIZE_MAX - 1)
		return NULL;
	if (n > r->cap_join)
		r->join = xgrow(r->join, &r->cap_join, (size_t)n, 1);
	for (; got < n; k++) {
		const struct idx_piece *p = &r->pieces[k];
		uint64_t from = off + got - p->roff;
		uint64_t take = p->rl - from < n - got ? p->rl - from
						       : n - got;
		const uint8_t *b = piece_get(r, k);

		if (b == NULL)
			return NULL;
		memcpy(r->join + got, b + from, (size_t)take);
		got += take;
	}
	return r->join;
}
