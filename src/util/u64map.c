/*
 * uint64 -> uint64 hash map.
 */
#include "config.h"

#include "util/u64map.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static size_t
slot_of(const struct u64map *m, uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (m->cap - 1);
}

void
u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof *m);
}

void
u64map_destroy(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof *m);
}

static void
grow(struct u64map *m)
{
	struct u64map g;
	size_t i;

	g.cap = m->cap ? m->cap * 2 : 64;
	g.n = 0;
	g.keys = xmalloc(g.cap * sizeof *g.keys);
	g.vals = xmalloc(g.cap * sizeof *g.vals);
	g.used = xcalloc(g.cap, 1);
	for (i = 0; i < m->cap; i++)
		if (m->used[i])
			u64map_put(&g, m->keys[i], m->vals[i]);
	u64map_destroy(m);
	*m = g;
}

void
u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3)
		grow(m);
	for (i = slot_of(m, key); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return;
		}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

int
u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (m->cap == 0)
		return 0;
	for (i = slot_of(m, key); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return 1;
		}
	return 0;
}

int
u64map_del(struct u64map *m, uint64_t key)
{
	size_t i, j, k;

	if (m->cap == 0)
		return 0;
	for (i = slot_of(m, key); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			break;
	if (!m->used[i])
		return 0;
	/* backward-shift the cluster after i */
	m->used[i] = 0;
	m->n--;
	for (j = (i + 1) & (m->cap - 1); m->used[j]; j = (j + 1) & (m->cap - 1)) {
		k = slot_of(m, m->keys[j]);
		/* move j to i if its home k is not in (i, j] cyclically */
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->used[i] = 1;
			m->used[j] = 0;
			i = j;
		}
	}
	return 1;
}
