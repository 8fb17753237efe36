#ifndef SNAPVIEW_UTIL_TAPE_H
#define SNAPVIEW_UTIL_TAPE_H
/*
 * An append-only byte stream, written in order and read back at any
 * offset: in memory while it is small, then in an unlinked temporary
 * file (spill.h's), of which only a write buffer stays in the process.
 * For bytes made in one pass and copied out once, like the replay's
 * checkpoints for an index: hundreds of MB at 10 GB of snapshot, which
 * then cost the page cache, not the process's memory. Where no
 * temporary file can be made the bytes stay in memory. A tape can take
 * another over as its continuation (tape_take()).
 */
#include <stddef.h>
#include <stdint.h>

struct tape {
	uint8_t *buf;     /* in memory: the bytes; in a file: its tail */
	size_t len, cap;
	uint64_t flushed; /* bytes in the file */
	size_t limit;     /* bytes in memory before a file is tried */
	int fd;           /* -1: in memory */
	int err;          /* errno of the first failure, 0 if none */
	/* The bytes before those above, in parts (tape_take()): each a
	 * tape of no parts of its own, read in order. */
	struct tape *parts;
	size_t n_parts;
	uint64_t parts_len;
};

/* limit: bytes kept in memory before moving to a file (0: never). */
void tape_init(struct tape *t, size_t limit);
void tape_write(struct tape *t, const void *p, size_t n);
/* Bytes written. */
uint64_t tape_len(const struct tape *t);
/* Copies n bytes from off (off + n <= tape_len()); 0, or -1 on a read
 * error (noted in t->err). */
int tape_read(struct tape *t, uint64_t off, void *p, size_t n);
/* 1 when some of the bytes are in a file. */
int tape_in_file(const struct tape *t);
/* Appends src's bytes to dst without copying them: dst takes over src's
 * memory and file, and src is left empty (its limit kept). So a stream
 * made of others (the replay's checkpoints after their head) is not
 * written to a file again. */
void tape_take(struct tape *dst, struct tape *src);
void tape_free(struct tape *t);

#endif
