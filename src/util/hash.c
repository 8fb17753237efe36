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

uint64_t
sv_xxh3(const void *p, size_t n)
{
#ifdef SV_XXH3_AVX2
	/* threads may hash at once: each finds the same answer */
	static int avx2 = -1;
	int a = __atomic_load_n(&avx2, __ATOMIC_RELAXED);

	if (a < 0) {
		a = __builtin_cpu_supports("avx2") ? 1 : 0;
		__atomic_store_n(&avx2, a, __ATOMIC_RELAXED);
	}
	if (a)
		return sv_xxh3_avx2(p, n);
#endif
	return XXH3_64bits(p, n);
}
