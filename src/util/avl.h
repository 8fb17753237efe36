#ifndef SNAPVIEW_UTIL_AVL_H
#define SNAPVIEW_UTIL_AVL_H
/*
 * An ordered map keyed by uint64_t (an address): an AVL tree whose nodes
 * come from a pool owned by the map. Insert, remove, exact / <= / >=
 * lookups are O(log n) whatever the order of the keys (a file chooses
 * them: a sorted array with memmove is quadratic on descending ones);
 * stepping to the next or previous element is O(1): the elements are
 * also a list in key order (a replay steps to a block's neighbours at
 * almost every event, and walking the tree for them was a tenth of it).
 *
 * An element is a caller struct whose first member is a struct avl_node;
 * the map allocates it (avl_insert) and never moves it, so pointers to
 * elements stay valid until they are removed or the map is cleared.
 */
#include <stddef.h>
#include <stdint.h>

struct avl_node {
	struct avl_node *l, *r, *p; /* p: free-list link while unused */
	struct avl_node *next, *prev; /* in key order */
	uint64_t key;
	int32_t h;                  /* height; 1 = leaf */
	uint32_t pad;
};

struct avl {
	struct avl_node *root;
	size_t n;                   /* elements in the map */
	size_t elsize;              /* bytes per element, node included */
	char **chunk;               /* pool: chunk i holds 64 << min(i, 10) */
	size_t n_chunks, cap_chunks;
	size_t cur, used;           /* chunk being carved, its elements used */
	struct avl_node *free;      /* removed elements, for reuse */
	struct avl_node **load;     /* avl_load()'s scratch */
	size_t cap_load;
};

void avl_init(struct avl *t, size_t elsize);
void avl_destroy(struct avl *t);
/* Empties the map; the pool is kept for the next elements. O(1). */
void avl_clear(struct avl *t);

/* New element with this key, zeroed past its node; NULL (nothing added)
 * when the key is there already. */
void *avl_insert(struct avl *t, uint64_t key);
void avl_remove(struct avl *t, void *el);
/* The same, next to el, which the key must follow (and the element after
 * el, if any, exceed): no search from the root, for the caller that
 * splits el's range and so holds the new element's neighbour. With the
 * keys out of that order it is a plain avl_insert(). */
void *avl_insert_after(struct avl *t, void *el, uint64_t key);

/* Replaces the content with n elements in O(n): fill(el, i, arg) sets
 * element i (zeroed; its key with avl_rekey()) and returns 0, keys
 * strictly ascending with i. -1 (and the map empty) when fill fails or
 * the keys do not ascend. The elements lie in key order in memory, which
 * makes walking them fast. */
int avl_load(struct avl *t, size_t n,
    int (*fill)(void *el, size_t i, void *arg), void *arg);

void *avl_find(const struct avl *t, uint64_t key);
void *avl_le(const struct avl *t, uint64_t key);   /* greatest key <= key */
void *avl_ge(const struct avl *t, uint64_t key);   /* least key >= key */
void *avl_first(const struct avl *t);
void *avl_last(const struct avl *t);
void *avl_next(const void *el);
void *avl_prev(const void *el);

static inline uint64_t
avl_key(const void *el)
{
	return ((const struct avl_node *)el)->key;
}

/* Changes an element's key in place. The caller guarantees that the new
 * key keeps the element between its neighbours. */
static inline void
avl_rekey(void *el, uint64_t key)
{
	((struct avl_node *)el)->key = key;
}

#endif
