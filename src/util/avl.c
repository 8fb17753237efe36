/*
 * AVL tree over a node pool. See avl.h.
 */
#include "config.h"

#include "util/avl.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define CHUNK_MIN 64
#define CHUNK_GROWTHS 10 /* chunks stop growing at 64 << 10 elements */

void
avl_init(struct avl *t, size_t elsize)
{
	memset(t, 0, sizeof *t);
	t->elsize = elsize < sizeof(struct avl_node) ? sizeof(struct avl_node)
						     : elsize;
}

void
avl_destroy(struct avl *t)
{
	size_t i, elsize = t->elsize;

	for (i = 0; i < t->n_chunks; i++)
		free(t->chunk[i]);
	free(t->chunk);
	free(t->load);
	avl_init(t, elsize);
}

void
avl_clear(struct avl *t)
{
	t->root = NULL;
	t->n = 0;
	t->cur = 0;
	t->used = 0;
	t->free = NULL;
}

static size_t
chunk_len(size_t i)
{
	return (size_t)CHUNK_MIN << (i < CHUNK_GROWTHS ? i : CHUNK_GROWTHS);
}

static struct avl_node *
node_new(struct avl *t)
{
	struct avl_node *x;

	if (t->free != NULL) {
		x = t->free;
		t->free = x->p;
	} else {
		if (t->n_chunks > 0 && t->used == chunk_len(t->cur)) {
			t->cur++;
			t->used = 0;
		}
		if (t->cur == t->n_chunks) {
			if (t->n_chunks == t->cap_chunks)
				t->chunk = xgrow(t->chunk, &t->cap_chunks,
				    t->n_chunks + 1, sizeof *t->chunk);
			t->chunk[t->n_chunks++] =
			    xreallocarray(NULL, chunk_len(t->cur), t->elsize);
		}
		x = (struct avl_node *)(t->chunk[t->cur] +
		    t->used++ * t->elsize);
	}
	memset(x, 0, t->elsize);
	x->h = 1;
	return x;
}

static int32_t
height(const struct avl_node *x)
{
	return x != NULL ? x->h : 0;
}

static void
fix_height(struct avl_node *x)
{
	int32_t a = height(x->l), b = height(x->r);

	x->h = (a > b ? a : b) + 1;
}

/* Puts y where x was under x's parent. */
static void
replace_child(struct avl *t, struct avl_node *x, struct avl_node *y)
{
	struct avl_node *p = x->p;

	if (p == NULL)
		t->root = y;
	else if (p->l == x)
		p->l = y;
	else
		p->r = y;
	if (y != NULL)
		y->p = p;
}

static struct avl_node *
rotate_left(struct avl *t, struct avl_node *x)
{
	struct avl_node *y = x->r;

	replace_child(t, x, y);
	x->r = y->l;
	if (x->r != NULL)
		x->r->p = x;
	y->l = x;
	x->p = y;
	fix_height(x);
	fix_height(y);
	return y;
}

static struct avl_node *
rotate_right(struct avl *t, struct avl_node *x)
{
	struct avl_node *y = x->l;

	replace_child(t, x, y);
	x->l = y->r;
	if (x->l != NULL)
		x->l->p = x;
	y->r = x;
	x->p = y;
	fix_height(x);
	fix_height(y);
	return y;
}

/* Restores balance from x up to the root. x->h is the height before the
 * change below it; where a subtree's height comes out unchanged, nothing
 * above it changed either. */
static void
rebalance(struct avl *t, struct avl_node *x)
{
	while (x != NULL) {
		int32_t bal = height(x->l) - height(x->r), old = x->h;

		if (bal > 1) {
			if (height(x->l->l) < height(x->l->r))
				rotate_left(t, x->l);
			x = rotate_right(t, x);
		} else if (bal < -1) {
			if (height(x->r->r) < height(x->r->l))
				rotate_right(t, x->r);
			x = rotate_left(t, x);
		} else
			fix_height(x);
		if (x->h == old)
			break;
		x = x->p;
	}
}

/* Puts x, a new leaf under p, in the list: a left child comes just
 * before its parent, a right child just after it. */
static void
list_link(struct avl_node *x, struct avl_node *p)
{
	if (p == NULL)
		x->prev = x->next = NULL;
	else if (p->l == x) {
		x->next = p;
		x->prev = p->prev;
	} else {
		x->prev = p;
		x->next = p->next;
	}
	if (x->prev != NULL)
		x->prev->next = x;
	if (x->next != NULL)
		x->next->prev = x;
}

void *
avl_insert(struct avl *t, uint64_t key)
{
	struct avl_node *p = NULL, **link = &t->root, *x;

	while (*link != NULL) {
		p = *link;
		if (key == p->key)
			return NULL;
		link = key < p->key ? &p->l : &p->r;
	}
	x = node_new(t);
	x->key = key;
	x->p = p;
	*link = x;
	list_link(x, p);
	t->n++;
	rebalance(t, p);
	return x;
}

static struct avl_node *
leftmost(struct avl_node *x)
{
	if (x != NULL)
		while (x->l != NULL)
			x = x->l;
	return x;
}

void *
avl_insert_after(struct avl *t, void *el, uint64_t key)
{
	struct avl_node *e = el, *p, *x;

	if (key <= e->key || (e->next != NULL && key >= e->next->key))
		return avl_insert(t, key);
	/* the new node becomes e's right child, or the left child of e's
	 * successor, the leftmost node of e's right subtree */
	p = e->r != NULL ? e->next : e;
	x = node_new(t);
	x->key = key;
	x->p = p;
	if (p == e)
		p->r = x;
	else
		p->l = x;
	list_link(x, p);
	t->n++;
	rebalance(t, p);
	return x;
}

static struct avl_node *
rightmost(struct avl_node *x)
{
	if (x != NULL)
		while (x->r != NULL)
			x = x->r;
	return x;
}

void
avl_remove(struct avl *t, void *el)
{
	struct avl_node *x = el, *from;

	if (x->prev != NULL)
		x->prev->next = x->next;
	if (x->next != NULL)
		x->next->prev = x->prev;
	if (x->l != NULL && x->r != NULL) {
		/* swap x with its successor s (the leftmost node of its
		 * right subtree) in the tree's shape */
		struct avl_node *s = x->next, *sp = s->p;

		replace_child(t, s, s->r);
		from = sp == x ? s : sp;
		replace_child(t, x, s);
		s->l = x->l;
		s->l->p = s;
		s->r = x->r;
		if (s->r != NULL)
			s->r->p = s;
		s->h = x->h;
	} else {
		from = x->p;
		replace_child(t, x, x->l != NULL ? x->l : x->r);
	}
	rebalance(t, from);
	t->n--;
	x->l = x->r = x->next = x->prev = NULL;
	x->p = t->free;
	x->h = 0;
	t->free = x;
}

/* Links v[lo, hi) into a balanced subtree under parent; returns its root. */
static struct avl_node *
link_sorted(struct avl_node **v, size_t lo, size_t hi, struct avl_node *parent)
{
	size_t mid = lo + (hi - lo) / 2;
	struct avl_node *x;

	if (lo >= hi)
		return NULL;
	x = v[mid];
	x->p = parent;
	x->l = link_sorted(v, lo, mid, x);
	x->r = link_sorted(v, mid + 1, hi, x);
	fix_height(x);
	return x;
}

int
avl_load(struct avl *t, size_t n, int (*fill)(void *el, size_t i, void *arg),
    void *arg)
{
	size_t i;

	avl_clear(t);
	if (n > t->cap_load)
		t->load = xgrow(t->load, &t->cap_load, n, sizeof *t->load);
	for (i = 0; i < n; i++) {
		t->load[i] = node_new(t);
		if (fill(t->load[i], i, arg) != 0 ||
		    (i > 0 && t->load[i]->key <= t->load[i - 1]->key)) {
			avl_clear(t);
			return -1;
		}
	}
	t->root = link_sorted(t->load, 0, n, NULL);
	for (i = 0; i < n; i++) {
		t->load[i]->prev = i > 0 ? t->load[i - 1] : NULL;
		t->load[i]->next = i + 1 < n ? t->load[i + 1] : NULL;
	}
	t->n = n;
	return 0;
}

void *
avl_find(const struct avl *t, uint64_t key)
{
	struct avl_node *x = t->root;

	while (x != NULL && x->key != key)
		x = key < x->key ? x->l : x->r;
	return x;
}

void *
avl_le(const struct avl *t, uint64_t key)
{
	struct avl_node *x = t->root, *best = NULL;

	while (x != NULL) {
		if (x->key <= key) {
			best = x;
			x = x->r;
		} else
			x = x->l;
	}
	return best;
}

void *
avl_ge(const struct avl *t, uint64_t key)
{
	struct avl_node *x = t->root, *best = NULL;

	while (x != NULL) {
		if (x->key >= key) {
			best = x;
			x = x->l;
		} else
			x = x->r;
	}
	return best;
}

void *
avl_first(const struct avl *t)
{
	return leftmost(t->root);
}

void *
avl_last(const struct avl *t)
{
	return rightmost(t->root);
}

void *
avl_next(const void *el)
{
	return ((const struct avl_node *)el)->next;
}

void *
avl_prev(const void *el)
{
	return ((const struct avl_node *)el)->prev;
}
