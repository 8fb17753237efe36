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

uint64_t
tape_len(const struct tape *t)
{
	return t->flushed + t->len;
}

int
tape_in_file(const struct tape *t)
{
	return t->fd >= 0;
}

int
tape_read(struct tape *t, uint64_t off, void *p, size_t n)
{
	uint8_t *o = p;

	if (off > tape_len(t) || n > tape_len(t) - off) {
		t->err = t->err ? t->err : EINVAL;
		return -1;
	}
	if (n > 0 && off < t->flushed) {
		size_t want = t->flushed - off < n ? (size_t)(t->flushed - off)
		    : n;
		int e = sv_pread_all(t->fd, o, want, off);

		if (e != 0) {
			t->err = t->err ? t->err : e;
			return -1;
		}
		o += want;
		off += want;
		n -= want;
	}
	if (n > 0)
		memcpy(o, t->buf + (off - t->flushed), n);
	return 0;
}

void
tape_free(struct tape *t)
{
	if (t->fd >= 0)
		close(t->fd);
	free(t->buf);
	tape_init(t, 0);
}
