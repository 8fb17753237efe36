/*
 * Append-only byte streams (tape.h). A file is written with write() at
 * its end and read with pread(), so the bytes pass through a buffer of
 * TAPE_BUF and are never mapped: what the kernel caches is not the
 * process's resident memory.
 */
#include "config.h"

#include "util/tape.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fdio.h"
#include "util/spill.h"
#include "util/xalloc.h"

#define TAPE_BUF (1u << 20)

void
tape_init(struct tape *t, size_t limit)
{
	memset(t, 0, sizeof *t);
	t->fd = -1;
	t->limit = limit;
}

static void
put_file(struct tape *t, const uint8_t *p, size_t n)
{
	if (t->err == 0 && (t->err = sv_write_all(t->fd, p, n)) == 0)
		t->flushed += n;
}

/* From memory to a file, when the limit is passed and a file can be
 * made (else the limit is dropped: memory it is). */
static void
to_file(struct tape *t)
{
	int fd = spill_tmp_fd();

	if (fd < 0) {
		t->limit = 0;
		return;
	}
	t->fd = fd;
	put_file(t, t->buf, t->len);
	t->len = 0;
	if (t->cap > TAPE_BUF) {
		free(t->buf);
		t->buf = NULL;
		t->cap = 0;
	}
}

void
tape_write(struct tape *t, const void *p, size_t n)
{
	if (t->err != 0 || n == 0)
		return;
	if (t->fd < 0 && t->limit > 0 && t->len + n > t->limit)
		to_file(t);
	if (t->fd >= 0) {
		if (t->len + n > TAPE_BUF) {
			put_file(t, t->buf, t->len);
			t->len = 0;
		}
		if (n >= TAPE_BUF) {
			put_file(t, p, n);
			return;
		}
		if (t->cap < TAPE_BUF)
			t->buf = xgrow(t->buf, &t->cap, TAPE_BUF, 1);
	} else if (t->cap - t->len < n) {
		t->buf = xgrow(t->buf, &t->cap, t->len + n, 1);
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

/* The bytes of t's own (not of its parts). */
static uint64_t
own_len(const struct tape *t)
{
	return t->flushed + t->len;
}

uint64_t
tape_len(const struct tape *t)
{
	return t->parts_len + own_len(t);
}

int
tape_in_file(const struct tape *t)
{
	size_t i;

	for (i = 0; i < t->n_parts; i++)
		if (t->parts[i].fd >= 0)
			return 1;
	return t->fd >= 0;
}

/* n of t's own bytes from off (within them) to o. */
static int
own_read(const struct tape *t, uint64_t off, uint8_t *o, size_t n)
{
	if (n > 0 && off < t->flushed) {
		size_t want = t->flushed - off < n ? (size_t)(t->flushed - off)
		    : n;
		int e = sv_pread_all(t->fd, o, want, off);

		if (e != 0)
			return e;
		o += want;
		off += want;
		n -= want;
	}
	if (n > 0)
		memcpy(o, t->buf + (off - t->flushed), n);
	return 0;
}

int
tape_read(struct tape *t, uint64_t off, void *p, size_t n)
{
	uint8_t *o = p;
	uint64_t at = 0, len;
	size_t i, k;
	int e = 0;

	if (off > tape_len(t) || n > tape_len(t) - off) {
		t->err = t->err ? t->err : EINVAL;
		return -1;
	}
	for (i = 0; i < t->n_parts && n > 0 && e == 0; i++, at += len) {
		len = own_len(&t->parts[i]);
		if (off >= at + len)
			continue;
		k = at + len - off < n ? (size_t)(at + len - off) : n;
		e = own_read(&t->parts[i], off - at, o, k);
		o += k;
		off += k;
		n -= k;
	}
	if (e == 0 && n > 0)
		e = own_read(t, off - t->parts_len, o, n);
	if (e != 0) {
		t->err = t->err ? t->err : e;
		return -1;
	}
	return 0;
}

/* t's own bytes, moved to the end of dst's parts (t's are then none). */
static void
seal(struct tape *dst, struct tape *t)
{
	struct tape *pt;

	if (t->fd >= 0 && t->len > 0) {
		/* a file's tail goes to the file: a part keeps no buffer */
		put_file(t, t->buf, t->len);
		t->len = 0;
		if (dst->err == 0)
			dst->err = t->err;
	}
	if (t->fd >= 0 || own_len(t) == 0) {
		free(t->buf);
		t->buf = NULL;
		t->cap = 0;
	}
	if (own_len(t) == 0) {
		if (t->fd >= 0)
			close(t->fd);
	} else {
		dst->parts = xreallocarray(dst->parts, dst->n_parts + 1,
		    sizeof *dst->parts);
		pt = &dst->parts[dst->n_parts++];
		tape_init(pt, 0);
		pt->buf = t->buf;
		pt->len = t->len;
		pt->cap = t->cap;
		pt->flushed = t->flushed;
		pt->fd = t->fd;
		dst->parts_len += own_len(t);
	}
	t->buf = NULL;
	t->len = t->cap = 0;
	t->flushed = 0;
	t->fd = -1;
}

void
tape_take(struct tape *dst, struct tape *src)
{
	size_t i, limit = src->limit;

	if (dst->err == 0)
		dst->err = src->err;
	seal(dst, dst);
	for (i = 0; i < src->n_parts; i++)
		seal(dst, &src->parts[i]);
	free(src->parts);
	src->parts = NULL;
	src->n_parts = 0;
	seal(dst, src);
	tape_init(src, limit);
}

void
tape_free(struct tape *t)
{
	size_t i;

	for (i = 0; i < t->n_parts; i++)
		tape_free(&t->parts[i]);
	free(t->parts);
	if (t->fd >= 0)
		close(t->fd);
	free(t->buf);
	tape_init(t, 0);
}
