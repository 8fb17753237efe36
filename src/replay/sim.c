/*
 * The caching allocator simulated: see sim.h. The functions follow
 * DeviceCachingAllocator's in c10/cuda/CUDACachingAllocator.cpp, named
 * after them; doc/snapshot-format.md §13.12 lists the rules.
 *
 * A pool's free blocks are a treap ordered by (stream, size, address),
 * its unmapped blocks (expandable segments) one ordered by (stream,
 * address): every lookup, insert and removal is O(log n) expected,
 * whatever order a file picks (the priorities are the treap's own).
 */
#include "config.h"

#include "replay/sim.h"
#include "replay/sim_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define KMIN_BLOCK 512ull
#define KSMALL_SIZE (1ull << 20)
#define KSMALL_BUFFER (2ull << 20)
#define KMIN_LARGE_ALLOC (10ull << 20)
#define KLARGE_BUFFER (20ull << 20)
#define KROUND_LARGE (2ull << 20)

/* Addresses of segments the recording did not give: above x86-64's
 * user space (it ends at 2^47), 2 MiB aligned, never reused; 12 hex
 * digits, as wide as recorded ones (the segment map's column), for
 * 16 TiB. A recorded address from here up (a 48-bit arm64 could have
 * one) is not taken as a hint: its segment gets one of these. */
#define SYNTH_BASE 0xf00000000000ull
/* The address space of an expandable segment with no capacity given:
 * 1.125 times an 80 GiB device. */
#define ES_UNBOUNDED (90ull << 30)

/* ---- blocks -------------------------------------------------------------- */

static struct sblk *
blk_new(struct sim *S, uint64_t addr, uint64_t size, uint64_t stream,
    struct spool *pool, struct ses *es)
{
	struct sblk *b;

	if (S->spare != NULL) {
		b = S->spare;
		S->spare = b->next;
	} else {
		if (S->n_slabs == 0 || S->slab_used == SLAB) {
			S->slabs = xgrow(S->slabs, &S->cap_slabs,
			    S->n_slabs + 1, sizeof *S->slabs);
			S->slabs[S->n_slabs] = xmalloc(SLAB * sizeof *b +
			    _Alignof(struct sblk));
			S->slab = slab_base(S->slabs[S->n_slabs++]);
			S->slab_used = 0;
		}
		b = &S->slab[S->slab_used++];
	}
	memset(b, 0, sizeof *b);
	b->addr = addr;
	b->size = size;
	b->stream = stream;
	b->pool = pool;
	b->es = es;
	b->mapped = 1;
	S->rnd ^= S->rnd << 13;
	S->rnd ^= S->rnd >> 17;
	S->rnd ^= S->rnd << 5;
	b->prio = S->rnd;
	return b;
}

static void
blk_drop(struct sim *S, struct sblk *b)
{
	b->pool = NULL;			/* sim_state(): not a block */
	b->next = S->spare;
	S->spare = b;
}

/* ---- the treaps ---------------------------------------------------------- */

/* Is b before the key (stream, size, addr)? Sets ordered by address
 * alone ignore size. */
static int
before(const struct sblk *b, int bysize, uint64_t stream, uint64_t size,
    uint64_t addr)
{
	if (b->stream != stream)
		return b->stream < stream;
	if (bysize && b->size != size)
		return b->size < size;
	return b->addr < addr;
}

/* Splits t into the elements before the key (*l) and the others (*r). */
static void
tsplit(struct sblk *t, int bysize, uint64_t stream, uint64_t size,
    uint64_t addr, struct sblk **l, struct sblk **r)
{
	struct sblk **lp = l, **rp = r;

	while (t != NULL) {
		if (before(t, bysize, stream, size, addr)) {
			*lp = t;
			lp = &t->r;
			t = t->r;
		} else {
			*rp = t;
			rp = &t->l;
			t = t->l;
		}
	}
	*lp = NULL;
	*rp = NULL;
}

/* All of a before all of b. */
static struct sblk *
tmerge(struct sblk *a, struct sblk *b)
{
	struct sblk *root = NULL, **p = &root;

	while (a != NULL && b != NULL) {
		if (a->prio >= b->prio) {
			*p = a;
			p = &a->r;
			a = a->r;
		} else {
			*p = b;
			p = &b->l;
			b = b->l;
		}
	}
	*p = a != NULL ? a : b;
	return root;
}

static struct sblk **
set_root(struct sblk *b, int set)
{
	return set == SET_FREE ? &b->pool->free_root : &b->pool->unmapped_root;
}

/* Inserts b: down the path of its key while the nodes' priorities are
 * higher, then the subtree there is split around it. */
static void
set_insert(struct sblk *b, int set)
{
	struct sblk **p = set_root(b, set);
	int bysize = set == SET_FREE;

	while (*p != NULL && (*p)->prio >= b->prio)
		p = before(*p, bysize, b->stream, b->size, b->addr) ?
		    &(*p)->r : &(*p)->l;
	tsplit(*p, bysize, b->stream, b->size, b->addr, &b->l, &b->r);
	*p = b;
	b->set = (uint8_t)set;
	if (set == SET_FREE)
		b->gc_base = b->pool->gc_calls;
}

/* Removes b: its place on the path of its key takes its two subtrees
 * merged. Keys are unique in a set (segments do not overlap). */
static void
set_remove(struct sblk *b)
{
	struct sblk **p;
	int bysize = b->set == SET_FREE;

	if (b->set == SET_NONE)
		return;
	p = set_root(b, b->set);
	while (*p != NULL && *p != b)
		p = before(*p, bysize, b->stream, b->size, b->addr) ?
		    &(*p)->r : &(*p)->l;
	if (*p == b)
		*p = tmerge(b->l, b->r);
	b->set = SET_NONE;
	b->l = b->r = NULL;
}

/* The first element at or after the key, or NULL. */
static struct sblk *
tge(struct sblk *t, int bysize, uint64_t stream, uint64_t size, uint64_t addr)
{
	struct sblk *best = NULL;

	while (t != NULL) {
		if (before(t, bysize, stream, size, addr))
			t = t->r;
		else {
			best = t;
			t = t->l;
		}
	}
	return best;
}

/* The link to the first element at or after the key (it is *link), or
 * NULL: for a lookup that may remove what it finds; *pred: the last
 * element before the key, *next: the one after what it finds (NULL:
 * none). */
static struct sblk **
tge_link(struct sblk **t, int bysize, uint64_t stream, uint64_t size,
    uint64_t addr, struct sblk **pred, struct sblk **next)
{
	struct sblk **best = NULL, *above = NULL;

	*pred = NULL;
	while (*t != NULL) {
		if (before(*t, bysize, stream, size, addr)) {
			*pred = *t;
			t = &(*t)->r;
		} else {
			/* the nearest ancestor best is in the left subtree
			 * of: its successor when it has no right subtree */
			above = best != NULL ? *best : NULL;
			best = t;
			t = &(*t)->l;
		}
	}
	*next = NULL;
	if (best != NULL) {
		if ((*next = (*best)->r) != NULL)
			while ((*next)->l != NULL)
				*next = (*next)->l;
		else
			*next = above;
	}
	return best;
}

/* The last element before the key, or NULL. */
static struct sblk *
tlt(struct sblk *t, int bysize, uint64_t stream, uint64_t size, uint64_t addr)
{
	struct sblk *best = NULL;

	while (t != NULL) {
		if (before(t, bysize, stream, size, addr)) {
			best = t;
			t = t->r;
		} else
			t = t->l;
	}
	return best;
}

static struct sblk *
free_next(const struct sblk *b)
{
	return tge(b->pool->free_root, 1, b->stream, b->size, b->addr + 1);
}

/* The elements of t in order, into S->vec; returns how many. */
static size_t
walk(struct sim *S, struct sblk *t)
{
	struct sblk *stack[128], *cur = t;
	size_t sp = 0, n = 0;

	for (;;) {
		while (cur != NULL && sp < 128) {
			stack[sp++] = cur;
			cur = cur->l;
		}
		if (cur != NULL) {
			/* deeper than 128: fall back on the successor walk */
			break;
		}
		if (sp == 0)
			return n;
		cur = stack[--sp];
		S->vec = xgrow(S->vec, &S->cap_vec, n + 1, sizeof *S->vec);
		S->vec[n++] = cur;
		cur = cur->r;
	}
	/* a treap this deep is astronomically unlikely; walk it the slow
	 * way from its first element */
	n = 0;
	for (cur = tge(t, 1, 0, 0, 0); cur != NULL; cur = free_next(cur)) {
		S->vec = xgrow(S->vec, &S->cap_vec, n + 1, sizeof *S->vec);
		S->vec[n++] = cur;
	}
	return n;
}

/* ---- addresses ----------------------------------------------------------- */

static int
va_free_at(const struct sim *S, uint64_t addr, uint64_t size)
{
	const struct va_range *v;

	if (addr == 0 || addr > UINT64_MAX - size || addr >= SYNTH_BASE)
		return 0;
	v = avl_le(&S->va, addr + size - 1);
	return v == NULL || avl_key(v) + v->size <= addr;
}

static uint64_t
va_take(struct sim *S, uint64_t size, int expandable)
{
	struct va_range *v;
	uint64_t a = 0;

	if (S->h.addr_hint != NULL)
		a = S->h.addr_hint(S->h.ctx, size, expandable);
	if (a == 0 || !va_free_at(S, a, size)) {
		a = S->synth;
		S->synth += (size + KROUND_LARGE - 1) / KROUND_LARGE *
		    KROUND_LARGE + KROUND_LARGE;
	}
	v = avl_insert(&S->va, a);
	if (v != NULL)
		v->size = size;
	return a;
}

static void
va_give(struct sim *S, uint64_t addr)
{
	void *v = avl_find(&S->va, addr);

	if (v != NULL)
		avl_remove(&S->va, v);
}

static void
dev_event(struct sim *S, int action, uint64_t addr, uint64_t size)
{
	if (S->h.dev != NULL)
		S->h.dev(S->h.ctx, action, addr, size);
}

/* ---- construction -------------------------------------------------------- */

static void
pool_init(struct spool *p, int small, struct spriv *owner)
{
	memset(p, 0, sizeof *p);
	p->small = small;
	p->owner = owner;
}

struct sim *
sim_new(const struct sim_conf *c, uint64_t capacity, const struct sim_hooks *h)
{
	struct sim *S = xcalloc(1, sizeof *S);
	size_t i;

	S->c = *c;
	S->capacity = capacity;
	S->plain_round = c->pad == 0;
	for (i = 0; i < SIMCONF_INTERVALS; i++)
		if (c->div[i] > 1)
			S->plain_round = 0;
	if (h != NULL)
		S->h = *h;
	pool_init(&S->small, 1, NULL);
	pool_init(&S->large, 0, NULL);
	u64map_init(&S->live);
	avl_init(&S->va, sizeof(struct va_range));
	S->synth = SYNTH_BASE;
	S->rnd = 0x9e3779b9u;
	return S;
}

void
sim_free(struct sim *S)
{
	size_t i;

	if (S == NULL)
		return;
	for (i = 0; i < S->n_slabs; i++)
		free(S->slabs[i]);
	free(S->slabs);
	for (i = 0; i < S->n_es; i++)
		free(S->es[i]);
	free(S->es);
	free(S->priv);
	free(S->vec);
	u64map_destroy(&S->live);
	avl_destroy(&S->va);
	free(S);
}

const struct sim_stats *
sim_stats(const struct sim *S)
{
	return &S->st;
}

void
sim_force_fail(struct sim *S, int how)
{
	S->force = how;
}

static int
default_pool(const int64_t pool[2])
{
	return pool == NULL || (pool[0] == 0 && pool[1] == 0);
}

static struct spriv *
priv_find(struct sim *S, const int64_t pool[2], int create)
{
	size_t i;
	struct spriv *p;

	for (i = 0; i < S->n_priv; i++)
		if (S->priv[i].id[0] == pool[0] && S->priv[i].id[1] == pool[1])
			return &S->priv[i];
	if (!create)
		return NULL;
	if (S->n_priv == S->cap_priv) {
		/* the pools' blocks point at them: grow by moving and
		 * fixing the pointers would cost a walk; pools are few, so
		 * keep them in chunks that never move instead */
		return NULL;
	}
	p = &S->priv[S->n_priv++];
	memset(p, 0, sizeof *p);
	p->id[0] = pool[0];
	p->id[1] = pool[1];
	pool_init(&p->small, 1, p);
	pool_init(&p->large, 0, p);
	return p;
}

/* The pools of a size class: the default ones, or a private pool's (up
 * to 64 private pools; more share the default ones). */
#define MAX_PRIV 64
static struct spool *
pool_of(struct sim *S, const int64_t pool[2], int small)
{
	struct spriv *p;

	if (default_pool(pool))
		return small ? &S->small : &S->large;
	if (S->priv == NULL) {
		S->priv = xcalloc(MAX_PRIV, sizeof *S->priv);
		S->cap_priv = MAX_PRIV;
	}
	p = priv_find(S, pool, 1);
	if (p == NULL)
		return small ? &S->small : &S->large;
	return small ? &p->small : &p->large;
}

void
sim_pool_freeable(struct sim *S, const int64_t pool[2])
{
	struct spriv *p;

	if (default_pool(pool) || S->priv == NULL)
		return;
	if ((p = priv_find(S, pool, 0)) != NULL)
		p->freeable = 1;
}

/* ---- live blocks --------------------------------------------------------- */

/* live maps a tag to the block it was given last, and keeps it when
 * the block is freed (a removal per free costs more than the check):
 * the block is the tag's while it still holds the tag, allocated or
 * pending. A dropped or reused block fails the check; its memory stays
 * in the slabs until sim_free(). */
static struct sblk *
live_get(struct sim *S, uint64_t tag)
{
	struct sblk *b;
	uint64_t v;

	if (S->near != NULL && S->near_tag == tag)
		return S->near;
	if (!u64map_get(&S->live, tag, &v))
		return NULL;
	b = (struct sblk *)(uintptr_t)v;
	if (b->pool == NULL || b->tag != tag ||
	    (!b->allocated && !b->pending))
		return NULL;
	S->near_tag = tag;
	S->near = b;
	return b;
}

static void
pending_add(struct sim *S, struct sblk *b)
{
	b->pending = 1;
	b->pprev = NULL;
	b->pnext = S->pending;
	if (S->pending != NULL)
		S->pending->pprev = b;
	S->pending = b;
}

static void
pending_del(struct sim *S, struct sblk *b)
{
	if (!b->pending)
		return;
	if (b->pprev != NULL)
		b->pprev->pnext = b->pnext;
	else
		S->pending = b->pnext;
	if (b->pnext != NULL)
		b->pnext->pprev = b->pprev;
	b->pending = 0;
	b->pprev = b->pnext = NULL;
}

/* try_merge_blocks(): src joins dst when it is free and mapped alike;
 * dst is in no set. */
static void
try_merge(struct sim *S, struct sblk *dst, struct sblk *src)
{
	if (src == NULL || src->allocated || src->pending ||
	    dst->mapped != src->mapped)
		return;
	set_remove(src);
	if (dst->prev == src) {
		dst->addr = src->addr;
		dst->prev = src->prev;
		if (dst->prev != NULL)
			dst->prev->next = dst;
	} else {
		dst->next = src->next;
		if (dst->next != NULL)
			dst->next->prev = dst;
	}
	dst->size += src->size;
	blk_drop(S, src);
}

static int
mergeable(const struct sblk *dst, const struct sblk *src)
{
	return src != NULL && !src->allocated && !src->pending &&
	    dst->mapped == src->mapped;
}

/* b, in the free set, becomes [addr, addr + size), its key only growing
 * (the same stream, a larger size): kept where it is when it still
 * sorts before its successor (found on the way down to it), else moved.
 * What a merge into a free neighbour does instead of removing it and
 * inserting the merged block. */
static void
set_grow(struct sblk *b, uint64_t addr, uint64_t size)
{
	struct sblk **p = &b->pool->free_root, *succ = NULL;

	while (*p != NULL && *p != b) {
		if (before(*p, 1, b->stream, b->size, b->addr))
			p = &(*p)->r;
		else {
			succ = *p;
			p = &(*p)->l;
		}
	}
	if (*p == b && b->r != NULL)
		for (succ = b->r; succ->l != NULL; succ = succ->l)
			;
	if (*p == b && (succ == NULL ||
	    !before(succ, 1, b->stream, size, addr))) {
		b->addr = addr;
		b->size = size;
		b->gc_base = b->pool->gc_calls;	/* as set_insert() would */
		return;
	}
	if (*p == b)
		*p = tmerge(b->l, b->r);
	b->l = b->r = NULL;
	b->set = SET_NONE;
	b->addr = addr;
	b->size = size;
	set_insert(b, SET_FREE);
}

/* free_block(): b (not allocated) goes back to its pool, merged with the
 * free blocks beside it: into the one before it where it is in the set,
 * else into the one after it, else inserted. */
static void
free_block(struct sim *S, struct sblk *b)
{
	struct sblk *pv, *nx;
	uint64_t size;

	pending_del(S, b);
	if (S->near == b)
		S->near = NULL;
	/* live keeps the tag: it no longer names a live block */
	S->st.active -= b->size;
	pv = mergeable(b, b->prev) ? b->prev : NULL;
	nx = mergeable(b, b->next) ? b->next : NULL;
	if (pv != NULL && pv->set == SET_FREE) {
		size = pv->size + b->size;
		pv->next = b->next;
		if (nx != NULL) {
			set_remove(nx);
			size += nx->size;
			pv->next = nx->next;
			blk_drop(S, nx);
		}
		if (pv->next != NULL)
			pv->next->prev = pv;
		blk_drop(S, b);
		set_grow(pv, pv->addr, size);
		return;
	}
	if (pv == NULL && nx != NULL && nx->set == SET_FREE) {
		uint64_t addr = b->addr;

		size = nx->size + b->size;
		nx->prev = b->prev;
		if (nx->prev != NULL)
			nx->prev->next = nx;
		blk_drop(S, b);
		set_grow(nx, addr, size);
		return;
	}
	try_merge(S, b, b->prev);
	try_merge(S, b, b->next);
	set_insert(b, SET_FREE);
}

int
sim_free_requested(struct sim *S, uint64_t tag)
{
	struct sblk *b = live_get(S, tag);

	if (b == NULL)
		return -1;
	if (!b->allocated)
		return 0;
	b->allocated = 0;
	S->st.allocated -= b->size;
	S->st.requested -= b->req;
	pending_add(S, b);
	return 0;
}

int
sim_free_completed(struct sim *S, uint64_t tag)
{
	struct sblk *b = live_get(S, tag);

	if (b == NULL)
		return -1;
	if (b->allocated)
		sim_free_requested(S, tag);
	free_block(S, b);
	return 0;
}

/* ---- release ------------------------------------------------------------- */

/* release_block(): a whole cudaMalloc'd segment goes back. */
static void
release_block(struct sim *S, struct sblk *b)
{
	set_remove(b);
	S->st.reserved -= b->size;
	S->st.segments--;
	S->st.device_frees++;
	va_give(S, b->addr);
	dev_event(S, SIM_DEV_FREE, b->addr, b->size);
	blk_drop(S, b);
}

static int
mapped_block(const struct sblk *b)
{
	return b != NULL && b->mapped;
}

/* unmap_block(): the whole pages inside the free block b are unmapped. */
static void
unmap_block(struct sim *S, struct sblk *b)
{
	struct ses *es = b->es;
	uint64_t rel = b->addr - es->base, end_rel = rel + b->size;
	uint64_t start = es->base + (rel + es->page - 1) / es->page * es->page;
	uint64_t end = es->base + end_rel / es->page * es->page;
	struct sblk *x;

	if (start >= end)
		return;
	set_remove(b);
	if (start > b->addr) {
		x = blk_new(S, b->addr, start - b->addr, b->stream, b->pool,
		    es);
		x->prev = b->prev;
		x->next = b;
		if (b->prev != NULL)
			b->prev->next = x;
		b->prev = x;
		set_insert(x, SET_FREE);
	}
	if (b->addr + b->size > end) {
		x = blk_new(S, end, b->addr + b->size - end, b->stream,
		    b->pool, es);
		x->prev = b;
		x->next = b->next;
		if (b->next != NULL)
			b->next->prev = x;
		b->next = x;
		set_insert(x, SET_FREE);
	}
	b->addr = start;
	b->size = end - start;
	b->mapped = 0;
	/* a run loses [start, end): split in two, shortened, or gone */
	S->st.segments += (uint64_t)mapped_block(b->prev) +
	    (uint64_t)mapped_block(b->next);
	S->st.segments--;
	try_merge(S, b, b->prev);
	try_merge(S, b, b->next);
	set_insert(b, SET_UNMAPPED);
	S->st.reserved -= end - start;
	S->st.device_frees++;
	dev_event(S, SIM_DEV_UNMAP, start, end - start);
}

static void
release_es(struct sim *S, struct sblk *b)
{
	size_t i;

	for (i = 0; i < S->n_es; i++)
		if (S->es[i] == b->es) {
			va_give(S, b->es->base);
			free(b->es);
			S->es[i] = S->es[--S->n_es];
			break;
		}
	set_remove(b);
	blk_drop(S, b);
}

/* release_blocks(): every free whole segment of the pool goes back;
 * expandable segments unmap their free pages. */
static void
release_blocks(struct sim *S, struct spool *p)
{
	size_t n = walk(S, p->free_root), i, k = 0;
	struct sblk **v = S->vec;

	/* S->vec is reused below only after this walk's list is done */
	for (i = 0; i < n; i++) {
		struct sblk *b = v[i];

		if (b->es != NULL)
			v[k++] = b;
		else if (b->prev == NULL && b->next == NULL)
			release_block(S, b);
	}
	for (i = 0; i < k; i++) {
		unmap_block(S, v[i]);
		if (!v[i]->mapped && v[i]->prev == NULL && v[i]->next == NULL)
			release_es(S, v[i]);
	}
}

/* release_cached_blocks(): pending frees complete, then every pool gives
 * back what it can; private pools only once freeable. */
static void
release_cached_blocks(struct sim *S)
{
	size_t i;

	while (S->pending != NULL) {
		S->st.early_frees++;
		free_block(S, S->pending);
	}
	release_blocks(S, &S->large);
	release_blocks(S, &S->small);
	for (i = 0; i < S->n_priv; i++)
		if (S->priv[i].freeable) {
			release_blocks(S, &S->priv[i].small);
			release_blocks(S, &S->priv[i].large);
		}
}

void
sim_empty_cache(struct sim *S)
{
	release_cached_blocks(S);
}

/* release_available_cached_blocks(): with max_split_size set, free the
 * smallest oversize block that covers the request, else the largest
 * oversize ones until they cover it. */
static int
release_available(struct sim *S, struct spool *p, uint64_t stream,
    uint64_t size)
{
	uint64_t key, total = 0;
	struct sblk *b, *cur;

	if (S->c.max_split == SIMCONF_NO_SPLIT_LIMIT)
		return 0;
	key = size < S->c.max_split ? S->c.max_split : size;
	b = tge(p->free_root, 1, stream, key, 0);
	if (b != NULL && b->stream == stream) {
		if (b->es != NULL || b->prev != NULL || b->next != NULL)
			return 0;
		release_block(S, b);
		return 1;
	}
	b = tlt(p->free_root, 1, stream, key, 0);
	while (b != NULL && total < key && b->size >= S->c.max_split &&
	    b->stream == stream) {
		cur = b;
		b = tlt(p->free_root, 1, cur->stream, cur->size, cur->addr);
		if (cur->es != NULL || cur->prev != NULL || cur->next != NULL)
			continue;
		total += cur->size;
		release_block(S, cur);
	}
	return total >= key;
}

/* garbage_collect_cached_blocks(): while reserved exceeds the threshold
 * share of the capacity, free whole cached large blocks at least as old
 * (in lookups since they were cached) as the average. */
static void
garbage_collect(struct sim *S)
{
	uint64_t limit = (uint64_t)(S->c.gc_threshold * (double)S->capacity);
	uint64_t target, reclaimed = 0, total_age = 0, count = 0, age;
	size_t n, i;
	int freed = 1;

	if (S->st.reserved <= limit)
		return;
	target = S->st.reserved - limit;
	n = walk(S, S->large.free_root);
	for (i = 0; i < n; i++) {
		struct sblk *b = S->vec[i];

		if (b->prev == NULL && b->next == NULL && b->es == NULL) {
			total_age += (uint64_t)(S->large.gc_calls - b->gc_base);
			count++;
		}
	}
	while (reclaimed < target && freed && count > 0) {
		double thr = (double)total_age / (double)count;

		freed = 0;
		n = walk(S, S->large.free_root);
		for (i = 0; i < n; i++) {
			struct sblk *b = S->vec[i];

			if (b->prev != NULL || b->next != NULL ||
			    b->es != NULL)
				continue;
			age = (uint64_t)(S->large.gc_calls - b->gc_base);
			if ((double)age < thr)
				continue;
			freed = 1;
			reclaimed += b->size;
			total_age -= age;
			count--;
			S->st.gc_frees++;
			release_block(S, b);
		}
	}
}

/* ---- malloc -------------------------------------------------------------- */

static uint64_t
allocation_size(uint64_t size)
{
	if (size <= KSMALL_SIZE)
		return KSMALL_BUFFER;
	if (size < KMIN_LARGE_ALLOC)
		return KLARGE_BUFFER;
	if (size > UINT64_MAX - KROUND_LARGE)
		return size;
	return (size + KROUND_LARGE - 1) / KROUND_LARGE * KROUND_LARGE;
}

static uint64_t
expandable_size(const struct sblk *b)
{
	return b->size + (b->next != NULL && !b->next->mapped ?
	    b->next->size : 0);
}

/* get_free_block(): the smallest free block of the stream that fits,
 * unless it is oversize for a small request or too large for an
 * oversize one. */
static int should_split(const struct sim *, const struct sblk *, uint64_t);

/* sim_malloc's split of the free block b for size bytes, made where b is
 * in its set: b becomes the rest (it sorts before b's successor, being
 * smaller than b was; it must still sort after pred, b's predecessor),
 * a new block the allocation before it. Returns the allocation's block,
 * or NULL (nothing done: no split, or the rest must move in the set). */
static struct sblk *
split_in_place(struct sim *S, struct spool *p, struct sblk *b,
    const struct sblk *pred, uint64_t size)
{
	struct sblk *n;

	if (b->size <= size || !should_split(S, b, size) ||
	    (pred != NULL && !before(pred, 1, b->stream, b->size - size,
	    b->addr + size)))
		return NULL;
	n = blk_new(S, b->addr, size, b->stream, p, b->es);
	n->prev = b->prev;
	if (n->prev != NULL)
		n->prev->next = n;
	n->next = b;
	b->prev = n;
	b->addr += size;
	b->size -= size;
	b->gc_base = p->gc_calls;	/* as set_insert() would */
	return n;
}

static struct sblk *
get_free_block(struct sim *S, struct spool *p, uint64_t stream,
    uint64_t size)
{
	struct sblk *b, *n, **link, *pred, *next;

	if (S->c.gc_threshold > 0 && S->capacity > 0)
		p->gc_calls++;
	link = tge_link(&p->free_root, 1, stream, size, 0, &pred, &next);
	if (link == NULL || (b = *link)->stream != stream)
		return NULL;
	if (b->es == NULL && size < S->c.max_split &&
	    S->c.max_split == SIMCONF_NO_SPLIT_LIMIT) {
		/* the common case: split where it is, else taken as
		 * found, unlinked where it is */
		if ((n = split_in_place(S, p, b, pred, size)) != NULL)
			return n;
		*link = tmerge(b->l, b->r);
		b->set = SET_NONE;
		b->l = b->r = NULL;
		return b;
	}
	if (b->es != NULL) {
		if (S->c.expandable) {
			/* best fit counts the unmapped space a block can
			 * grow into */
			n = next;
			while (b->es != NULL && n != NULL &&
			    n->stream == stream &&
			    expandable_size(n) < expandable_size(b)) {
				pred = b;
				b = n;
				n = free_next(b);
			}
		} else {
			pred = b;
			b = next;
			while (b != NULL && b->es != NULL &&
			    b->stream == stream) {
				pred = b;
				b = free_next(b);
			}
			if (b == NULL || b->stream != stream)
				return NULL;
		}
	}
	if (size < S->c.max_split && b->size >= S->c.max_split)
		return NULL;
	if (size >= S->c.max_split &&
	    b->size >= size + S->c.max_non_split_rounding)
		return NULL;
	if ((n = split_in_place(S, p, b, pred, size)) != NULL)
		return n;
	set_remove(b);
	return b;
}

static int
allocatable(const struct sblk *b)
{
	return b != NULL && !b->allocated && !b->pending;
}

/* find_expandable_block(): the lowest address of the stream's expandable
 * segments where free and unmapped space add up to size; else a new
 * expandable segment. */
static struct sblk *
find_expandable_block(struct sim *S, struct spool *p, uint64_t stream,
    uint64_t size)
{
	struct sblk *u, *c, *x;
	struct ses *es;
	uint64_t bytes, vsize;

	for (u = tge(p->unmapped_root, 0, stream, 0, 0);
	    u != NULL && u->stream == stream;
	    u = tge(p->unmapped_root, 0, stream, 0, u->addr + 1)) {
		c = allocatable(u->prev) ? u->prev : u;
		bytes = 0;
		for (x = c; x != NULL && bytes < size && allocatable(x);
		    x = x->next)
			bytes += x->size;
		if (bytes >= size)
			return c;
	}
	es = xcalloc(1, sizeof *es);
	es->page = p->small ? KSMALL_BUFFER : KLARGE_BUFFER;
	vsize = S->capacity > 0 ? S->capacity + S->capacity / 8 :
	    ES_UNBOUNDED;
	if (vsize < size)
		vsize = size;
	vsize = (vsize + es->page - 1) / es->page * es->page;
	es->size = vsize;
	es->stream = stream;
	es->pool = p;
	es->base = va_take(S, vsize, 1);
	S->es = xgrow(S->es, &S->cap_es, S->n_es + 1, sizeof *S->es);
	S->es[S->n_es++] = es;
	c = blk_new(S, es->base, vsize, stream, p, es);
	c->mapped = 0;
	set_insert(c, SET_UNMAPPED);
	return c;
}

/* map_block(): pages for [u, u + size) rounded up; u merges with the free
 * mapped blocks beside it. Returns the merged block or NULL. */
static struct sblk *
map_block(struct sim *S, struct sblk *u, uint64_t size)
{
	struct ses *es = u->es;
	uint64_t end_rel = u->addr - es->base + size;
	uint64_t msize, at = u->addr;
	struct sblk *rem;

	end_rel = (end_rel + es->page - 1) / es->page * es->page;
	msize = es->base + end_rel - u->addr;
	if (msize > u->size)
		msize = u->size;
	if (S->capacity > 0 && S->st.reserved + msize > S->capacity)
		return NULL;
	set_remove(u);
	u->mapped = 1;
	if (msize < u->size) {
		rem = blk_new(S, u->addr + msize, u->size - msize, u->stream,
		    u->pool, es);
		rem->mapped = 0;
		rem->prev = u;
		rem->next = u->next;
		if (u->next != NULL)
			u->next->prev = rem;
		u->next = rem;
		u->size = msize;
		set_insert(rem, SET_UNMAPPED);
	}
	S->st.segments++;
	S->st.segments -= (uint64_t)mapped_block(u->prev) +
	    (uint64_t)mapped_block(u->next);
	try_merge(S, u, u->prev);
	try_merge(S, u, u->next);
	set_insert(u, SET_FREE);
	S->st.reserved += msize;
	S->st.device_allocs++;
	dev_event(S, SIM_DEV_MAP, at, msize);
	return u;
}

static struct sblk *
try_allocate_expandable(struct sim *S, struct spool *p, uint64_t stream,
    uint64_t size)
{
	struct sblk *c = find_expandable_block(S, p, stream, size), *n;

	if (!c->mapped) {
		c = map_block(S, c, c->size < size ? c->size : size);
		if (c == NULL)
			return NULL;
	}
	while (c->size < size) {
		n = c->next;
		if (n == NULL || n->mapped)
			return NULL;
		n = map_block(S, n, size - c->size < n->size ?
		    size - c->size : n->size);
		if (n == NULL)
			return NULL;
		c = n;
	}
	set_remove(c);
	return c;
}

/* alloc_block(): a new segment (or pages of an expandable one). */
static struct sblk *
alloc_block(struct sim *S, struct spool *p, uint64_t stream, uint64_t size,
    uint64_t alloc_size)
{
	struct sblk *b;
	uint64_t a;

	if (S->force == SIM_FORCE_ALL || S->force == SIM_FORCE_ONCE ||
	    (S->force == SIM_FORCE_UNTIL_CACHED && !S->released)) {
		if (S->force == SIM_FORCE_ONCE)
			S->force = SIM_FORCE_NONE;
		return NULL;
	}
	if (S->c.expandable)
		return try_allocate_expandable(S, p, stream, size);
	if (S->capacity > 0 && (S->st.reserved > S->capacity ||
	    alloc_size > S->capacity - S->st.reserved))
		return NULL;
	a = va_take(S, alloc_size, 0);
	b = blk_new(S, a, alloc_size, stream, p, NULL);
	S->st.reserved += alloc_size;
	S->st.segments++;
	S->st.device_allocs++;
	dev_event(S, SIM_DEV_ALLOC, a, alloc_size);
	return b;
}

static int
should_split(const struct sim *S, const struct sblk *b, uint64_t size)
{
	uint64_t remaining = b->size - size;

	if (b->pool->small || S->c.expandable)
		return remaining >= KMIN_BLOCK;
	return size < S->c.max_split && remaining > KSMALL_SIZE;
}

int
sim_malloc(struct sim *S, uint64_t tag, uint64_t req, uint64_t stream,
    const int64_t pool[2], uint64_t *addr)
{
	uint64_t size, alloc_size;
	struct spool *p;
	struct sblk *b, *nb;

	if (S->plain_round && req >= KMIN_BLOCK && req <= UINT64_MAX >> 2)
		size = (req + KMIN_BLOCK - 1) & ~(KMIN_BLOCK - 1);
	else
		size = simconf_round(&S->c, req);
	if (live_get(S, tag) != NULL)
		sim_free_completed(S, tag);
	p = pool_of(S, pool, size <= KSMALL_SIZE);
	alloc_size = allocation_size(size);
	b = get_free_block(S, p, stream, size);
	if (b == NULL) {
		if (S->c.gc_threshold > 0 && S->capacity > 0)
			garbage_collect(S);
		b = alloc_block(S, p, stream, size, alloc_size);
		if (b == NULL && release_available(S, p, stream, size))
			b = alloc_block(S, p, stream, size, alloc_size);
		if (b == NULL) {
			release_cached_blocks(S);
			S->released = 1;
			b = alloc_block(S, p, stream, size, alloc_size);
		}
	}
	S->force = SIM_FORCE_NONE;
	S->released = 0;
	if (b == NULL) {
		S->st.ooms++;
		return -1;
	}
	if (b->size > size && should_split(S, b, size)) {
		/* the allocation takes the lowest addresses; the rest goes
		 * back to the pool */
		nb = blk_new(S, b->addr, size, stream, p, b->es);
		nb->prev = b->prev;
		if (nb->prev != NULL)
			nb->prev->next = nb;
		nb->next = b;
		b->prev = nb;
		b->addr += size;
		b->size -= size;
		set_insert(b, SET_FREE);
		b = nb;
	}
	b->allocated = 1;
	b->req = req;
	b->tag = tag;
	u64map_put(&S->live, tag, (uint64_t)(uintptr_t)b);
	S->st.allocated += b->size;
	S->st.requested += req;
	S->st.active += b->size;
	*addr = b->addr;
	return 0;
}

/* ---- seeding ------------------------------------------------------------- */

/* The expandable segment a seeded run of sg belongs to: the last one of
 * its stream and pool, when the run lies in the unmapped tail of its
 * reservation (*tail, cut where the run starts), else a new one whose
 * reservation starts at the run. Only the runs are kept from other
 * segments' addresses: the recording placed its segments around the
 * real reservation. */
static struct ses *
seed_es(struct sim *S, const struct replay_segment *sg, struct spool *p,
    struct sblk **tail)
{
	struct ses *es;
	struct sblk *u;
	size_t i;

	*tail = NULL;
	for (i = S->n_es; i-- > 0;) {
		es = S->es[i];
		if (es->stream != sg->stream || es->pool != p)
			continue;
		u = tlt(p->unmapped_root, 0, sg->stream, 0, UINT64_MAX);
		if (u != NULL && u->es == es && u->next == NULL &&
		    u->addr <= sg->addr &&
		    sg->addr + sg->size <= u->addr + u->size) {
			*tail = u;
			return es;
		}
		break;
	}
	es = xcalloc(1, sizeof *es);
	es->page = sg->is_large ? KLARGE_BUFFER : KSMALL_BUFFER;
	es->base = sg->addr;
	es->size = ES_UNBOUNDED > sg->size ? ES_UNBOUNDED : sg->size;
	if (es->base > UINT64_MAX - es->size - es->page)
		es->size = UINT64_MAX - es->page - es->base;
	else
		es->size = (es->size + es->page - 1) / es->page * es->page;
	es->stream = sg->stream;
	es->pool = p;
	S->es = xgrow(S->es, &S->cap_es, S->n_es + 1, sizeof *S->es);
	S->es[S->n_es++] = es;
	return es;
}

int
sim_seed_segment(struct sim *S, const struct replay_segment *sg,
    const struct replay_block *blocks)
{
	struct spool *p = pool_of(S, sg->pool_id, !sg->is_large);
	struct sblk *prev = NULL, *tail = NULL, *b, *u;
	struct ses *es = NULL;
	struct va_range *v;
	uint64_t at = sg->addr, i;

	if (sg->size == 0 || sg->addr > UINT64_MAX - sg->size ||
	    !va_free_at(S, sg->addr, sg->size))
		return -1;
	for (i = 0; i < sg->n_blocks; i++) {
		if (blocks[i].addr != at || blocks[i].size == 0 ||
		    blocks[i].size > sg->addr + sg->size - at)
			return -1;
		at += blocks[i].size;
	}
	if (at != sg->addr + sg->size)
		return -1;
	v = avl_insert(&S->va, sg->addr);
	v->size = sg->size;
	if (sg->is_expandable)
		es = seed_es(S, sg, p, &tail);
	if (tail != NULL) {
		/* the reservation's unmapped tail: a hole up to the run */
		set_remove(tail);
		prev = tail->prev;
		if (tail->addr < sg->addr) {
			u = blk_new(S, tail->addr, sg->addr - tail->addr,
			    sg->stream, p, es);
			u->mapped = 0;
			u->prev = prev;
			if (prev != NULL)
				prev->next = u;
			set_insert(u, SET_UNMAPPED);
			prev = u;
		}
	}
	for (i = 0; i < sg->n_blocks; i++) {
		const struct replay_block *rb = &blocks[i];

		b = blk_new(S, rb->addr, rb->size, sg->stream, p, es);
		b->prev = prev;
		if (prev != NULL)
			prev->next = b;
		prev = b;
		if (rb->state == SNAP_BLOCK_ACTIVE_ALLOCATED ||
		    rb->state == SNAP_BLOCK_ACTIVE_PENDING_FREE) {
			b->req = rb->requested_size <= rb->size ?
			    rb->requested_size : rb->size;
			b->tag = rb->addr;
			b->allocated = 1;
			u64map_put(&S->live, b->tag, (uint64_t)(uintptr_t)b);
			S->st.allocated += b->size;
			S->st.requested += b->req;
			S->st.active += b->size;
			if (rb->state == SNAP_BLOCK_ACTIVE_PENDING_FREE)
				sim_free_requested(S, b->tag);
		} else
			set_insert(b, SET_FREE);
	}
	if (es != NULL) {
		uint64_t end = sg->addr + sg->size;
		uint64_t top = tail != NULL ? tail->addr + tail->size :
		    es->base + es->size;

		if (top > end) {
			u = blk_new(S, end, top - end, sg->stream, p, es);
			u->mapped = 0;
			u->prev = prev;
			prev->next = u;
			set_insert(u, SET_UNMAPPED);
		}
		if (tail != NULL)
			blk_drop(S, tail);
	}
	S->st.reserved += sg->size;
	S->st.segments++;
	return 0;
}
