/*
 * XXH3_64bits compiled for AVX2 (see hash.c), called only where the CPU
 * has it. The target is set for this file alone, before xxHash's header
 * (and the intrinsics it includes) are read.
 */
#include "config.h"

#include "util/hash_int.h"

#ifdef SV_XXH3_AVX2
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx2"))), \
    apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

/* xxHash's header includes the AVX2 intrinsics only where the whole
 * build targets AVX2 (__AVX2__) */
#include <immintrin.h>

#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

uint64_t
sv_xxh3_avx2(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

void
sv_xxh3_avx2_update(void *state, const void *p, size_t n)
{
	(void)XXH3_64bits_update(state, p, n);
}

#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
