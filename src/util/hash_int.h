#ifndef SNAPVIEW_UTIL_HASH_INT_H
#define SNAPVIEW_UTIL_HASH_INT_H
/*
 * Private to util/hash*.c: the AVX2 build of XXH3, on x86-64 with a
 * compiler that can target AVX2 in one file (GCC and clang).
 */
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define SV_XXH3_AVX2 1
uint64_t sv_xxh3_avx2(const void *p, size_t n);
/* XXH3_64bits_update() on an XXH3_state_t (xxHash's own state, whose
 * layout both files get from the one header) */
void sv_xxh3_avx2_update(void *state, const void *p, size_t n);
#endif

#endif
