#ifndef SNAPVIEW_TESTS_UNIT_IDX_FORGE_H
#define SNAPVIEW_TESTS_UNIT_IDX_FORGE_H
/*
 * Forging index files for the hostile-index tests and the fuzz seeds: an
 * index is read into memory with its table of contents as an array; a
 * test changes bytes, entries of the TOC or directory records, then
 * writes it back with every checksum the reader checks made right again
 * (each section's XXH3, the header's and the prelude's), so that what
 * reaches the reader is what an owner who knows the format could write.
 * The header's other keys are kept as they were. Test code only: every
 * failure aborts.
 */
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

struct forge_sec {
	char name[64];
	uint64_t off, len, raw, comp, hash;
};

struct forge {
	uint8_t *f;      /* the file's bytes */
	size_t n;
	struct forge_sec *sec;
	size_t n_sec;
	uint8_t *hdr;    /* a copy of the header the keys point into */
	msgpack_unpacked res;
	size_t pad;      /* bytes of a "pad" key added to the header */
};

/* Reads the index at path into fg. */
void forge_load(struct forge *fg, const char *path);

/* The TOC entry called name, or NULL. */
struct forge_sec *forge_find(struct forge *fg, const char *name);

/* A new TOC entry called name (all fields 0 but the name). */
struct forge_sec *forge_add(struct forge *fg, const char *name);

/* Writes fg to path: section hashes recomputed over the bytes now in fg
 * (those inside the file), the header packed again (after the last byte
 * of the file, with fg->pad bytes of padding when set), its hash and the
 * prelude's made right. */
void forge_write(struct forge *fg, const char *path);

void forge_free(struct forge *fg);

#endif
