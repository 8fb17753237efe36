/*
 * sv_xxh3(): xxHash's own code, inlined from its header (XXH_INLINE_ALL,
 * a mode the library provides) so that it is compiled here with the
 * vector code the build targets (SSE2 on x86-64), and once more for
 * AVX2 in hash_avx2.c, taken when the CPU has it.
 */
#include "config.h"

#include "util/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util/hash_int.h"

#ifdef SV_XXH3_AVX2
/* Does the CPU have AVX2? Threads may ask at once: each finds the same
 * answer. */
static int
have_avx2(void)
{
	static int avx2 = -1;
	int a = __atomic_load_n(&avx2, __ATOMIC_RELAXED);

	if (a < 0) {
		a = __builtin_cpu_supports("avx2") ? 1 : 0;
		__atomic_store_n(&avx2, a, __ATOMIC_RELAXED);
	}
	return a;
}
#endif

uint64_t
sv_xxh3(const void *p, size_t n)
{
#ifdef SV_XXH3_AVX2
	if (have_avx2())
		return sv_xxh3_avx2(p, n);
#endif
	return XXH3_64bits(p, n);
}

/* The stream is xxHash's state (aligned as XXH3_createState() makes
 * it), behind a name of ours. */
struct sv_xxh3_stream *
sv_xxh3_stream_new(void)
{
	XXH3_state_t *s = XXH3_createState();

	if (s != NULL)
		(void)XXH3_64bits_reset(s);
	return (struct sv_xxh3_stream *)s;
}

void
sv_xxh3_stream_update(struct sv_xxh3_stream *s, const void *p, size_t n)
{
#ifdef SV_XXH3_AVX2
	if (have_avx2()) {
		sv_xxh3_avx2_update(s, p, n);
		return;
	}
#endif
	(void)XXH3_64bits_update((XXH3_state_t *)s, p, n);
}

uint64_t
sv_xxh3_stream_digest(const struct sv_xxh3_stream *s)
{
	return XXH3_64bits_digest((const XXH3_state_t *)s);
}

void
sv_xxh3_stream_free(struct sv_xxh3_stream *s)
{
	XXH3_freeState((XXH3_state_t *)s);
}
