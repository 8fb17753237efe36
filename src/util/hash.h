#ifndef SNAPVIEW_UTIL_HASH_H
#define SNAPVIEW_UTIL_HASH_H
/*
 * XXH3_64bits of a buffer, with the widest vector code the CPU runs. The
 * shared library's build may be a generic one (on the machine this was
 * measured on: 7 GB/s, against 12.6 GB/s inlined with SSE2 and 27.6 with
 * AVX2), and reopening an index hashes every section of its model: about
 * 90 MB for a 10 GB snapshot. The value is XXH3's whatever the path.
 */
#include <stddef.h>
#include <stdint.h>

uint64_t sv_xxh3(const void *p, size_t n);

/* The same hash of bytes handed over in pieces: the digest is what one
 * sv_xxh3() of them all gives. NULL when out of memory. */
struct sv_xxh3_stream;
struct sv_xxh3_stream *sv_xxh3_stream_new(void);
void sv_xxh3_stream_update(struct sv_xxh3_stream *s, const void *p,
    size_t n);
uint64_t sv_xxh3_stream_digest(const struct sv_xxh3_stream *s);
void sv_xxh3_stream_free(struct sv_xxh3_stream *s);

#endif
