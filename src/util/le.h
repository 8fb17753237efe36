#ifndef SNAPVIEW_UTIL_LE_H
#define SNAPVIEW_UTIL_LE_H
/*
 * Little-endian integers in bytes, whatever the host's order: what the
 * index and the replay's saved checkpoints are written in.
 */
#include <stdint.h>

static inline void
sv_le32_put(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void
sv_le64_put(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t
sv_le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static inline uint64_t
sv_le64_get(const uint8_t *p)
{
	return (uint64_t)sv_le32_get(p) | (uint64_t)sv_le32_get(p + 4) << 32;
}

#endif
