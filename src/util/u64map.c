/*
 * uint64 -> uint64 hash map, keyed against flooding (u64map.h).
 *
 * The slot of a key is multiply-shift hashing: the top bits of (key ^ a)
 * times b, with a and b drawn once per process (b odd). For two keys
 * fixed before b is drawn, the chance that they share a slot is at most
 * 2 / (slots), whatever keys a file picks (Dietzfelbinger et al.,
 * "A reliable randomized algorithm for the closest-pair problem", 1997);
 * a file cannot know b, so it cannot aim its addresses at one slot.
 */
#include "config.h"

#include "util/u64map.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "util/xalloc.h"

static uint64_t seed_a, seed_b;
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

/* The kernel's randomness; should it be unavailable (an old kernel, a
 * seccomp filter), the clock, the process id and where the stack and
 * this library were placed, which a file cannot know either. */
static void
seed_init(void)
{
	struct timespec ts;
	uint64_t v[5];

	if (getrandom(v, 2 * sizeof v[0], GRND_NONBLOCK) !=
	    (ssize_t)(2 * sizeof v[0])) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		v[2] = (uint64_t)ts.tv_sec << 32 ^ (uint64_t)ts.tv_nsec;
		v[3] = (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&ts;
		v[4] = (uint64_t)(uintptr_t)&seed_a;
		v[0] = XXH3_64bits(v + 2, 3 * sizeof v[0]);
		v[1] = XXH3_64bits_withSeed(v + 2, 3 * sizeof v[0], v[0]);
	}
	seed_a = v[0];
	seed_b = v[1] | 1;
}

static size_t
slot_of(const struct u64map *m, uint64_t key)
{
	return (size_t)(((key ^ m->seed) * m->mult) >> m->shift);
}

void
u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof *m);
}

void
u64map_destroy(struct u64map *m)
{
	free(m->slots);
	free(m->used);
	m->slots = NULL;
	m->used = NULL;
	m->cap = m->n = 0;
}

static void
grow(struct u64map *m)
{
	struct u64map g;
	size_t i;

	g.cap = m->cap ? m->cap * 2 : 64;
	g.n = 0;
	g.slots = xmalloc(g.cap * sizeof *g.slots);
	g.used = xcalloc(g.cap, 1);
	/* the seed is taken when the first slots are (a map may also start
	 * zeroed, without u64map_init) and kept while the map grows */
	if (m->cap == 0) {
		pthread_once(&seed_once, seed_init);
		g.seed = seed_a;
		g.mult = seed_b;
	} else {
		g.seed = m->seed;
		g.mult = m->mult;
	}
	g.shift = 64 - (unsigned)__builtin_ctzll((unsigned long long)g.cap);
	for (i = 0; i < m->cap; i++)
		if (m->used[i])
			u64map_put(&g, m->slots[i].key, m->slots[i].val);
	u64map_destroy(m);
	*m = g;
}

void
u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	/* at most half full: a lookup then probes 1.5 slots when the key
	 * is there and 2.5 when not (Knuth's estimates for linear probing),
	 * against 2.5 and 8.5 three quarters full; the replay's passes,
	 * which look up a block by its address at nearly every event, took
	 * a tenth less time (bench/index.sh: the sections after the parse,
	 * 0.99 -> 0.90 s at 1 GB, 10.9 -> 10.3 s at 10 GB) for the same
	 * peak memory of the build */
	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	for (i = slot_of(m, key); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return;
		}
	m->used[i] = 1;
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->n++;
}

int
u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (m->cap == 0)
		return 0;
	for (i = slot_of(m, key); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->slots[i].key == key) {
			*val = m->slots[i].val;
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
		if (m->slots[i].key == key)
			break;
	if (!m->used[i])
		return 0;
	/* backward-shift the cluster after i */
	m->used[i] = 0;
	m->n--;
	for (j = (i + 1) & (m->cap - 1); m->used[j];
	    j = (j + 1) & (m->cap - 1)) {
		k = slot_of(m, m->slots[j].key);
		/* move j to i if its home k is not in (i, j] cyclically */
		if ((j > i && (k <= i || k > j)) ||
		    (j < i && (k <= i && k > j))) {
			m->slots[i] = m->slots[j];
			m->used[i] = 1;
			m->used[j] = 0;
			i = j;
		}
	}
	return 1;
}
