/*
 * Inflating a gzip-compressed snapshot into an unlinked temporary file
 * and mapping it (gunzip.h): zlib's stream, 1 MiB of output at a time.
 */
#include "config.h"

#include "util/gunzip.h"

#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "util/fdio.h"
#include "util/xalloc.h"

#define GZ_OUT (1u << 20)

int
mapfile_is_gzip(const struct mapfile *m)
{
	return m->len >= 2 && m->data[0] == 0x1f && m->data[1] == 0x8b;
}

/* A new file in $TMPDIR, unlinked at once: its descriptor, or -1. */
static int
temp_file(struct sv_error *err)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if ((size_t)snprintf(path, sizeof path, "%s/snapview-gz.XXXXXX",
	    dir) >= sizeof path)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "TMPDIR is too long");
	if ((fd = mkstemp(path)) < 0)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "a temporary file for the inflated snapshot: %s: %s",
		    path, strerror(errno));
	(void)unlink(path);
	return fd;
}

static int
write_all(int fd, const uint8_t *p, size_t n, struct sv_error *err)
{
	int e = sv_write_all(fd, p, n);

	if (e != 0)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "writing the inflated snapshot to $TMPDIR: %s",
		    strerror(e));
	return 0;
}

/* Inflates m's bytes into fd; the inflated length in *total. */
static int
inflate_to(const struct mapfile *m, int fd, uint64_t *total,
    struct sv_error *err)
{
	z_stream z;
	uint8_t *out = xmalloc(GZ_OUT);
	int rc = -1, zr = Z_OK;
	size_t in_off = 0;

	*total = 0;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK) {	/* gzip only */
		free(out);
		return sv_error_set(err, SV_ERR_FORMAT, 0, "gzip: %s",
		    "cannot start zlib");
	}
	while (in_off < m->len) {
		/* a member at in_off (gzip concatenates members) */
		uInt chunk = m->len - in_off > (1u << 30) ? (1u << 30) :
		    (uInt)(m->len - in_off);

		z.next_in = (Bytef *)(uintptr_t)(m->data + in_off);
		z.avail_in = chunk;
		do {
			if (z.avail_in == 0 && in_off + chunk < m->len) {
				in_off += chunk;
				chunk = m->len - in_off > (1u << 30) ?
				    (1u << 30) : (uInt)(m->len - in_off);
				z.next_in = (Bytef *)(uintptr_t)(m->data +
				    in_off);
				z.avail_in = chunk;
			}
			z.next_out = out;
			z.avail_out = GZ_OUT;
			zr = inflate(&z, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END &&
			    zr != Z_BUF_ERROR) {
				sv_error_set(err, SV_ERR_FORMAT, in_off +
				    (chunk - z.avail_in), "gzip: %s",
				    z.msg != NULL ? z.msg : "damaged data");
				goto out;
			}
			if (write_all(fd, out, GZ_OUT - z.avail_out, err) != 0)
				goto out;
			*total += GZ_OUT - z.avail_out;
			if (zr == Z_BUF_ERROR && z.avail_in == 0 &&
			    in_off + chunk >= m->len)
				break;	/* no input left mid-stream */
		} while (zr != Z_STREAM_END);
		in_off += chunk - z.avail_in;
		if (zr != Z_STREAM_END) {
			sv_error_set(err, SV_ERR_FORMAT, m->len,
			    "cut off (the dump did not finish?): the gzip "
			    "stream ends early");
			goto out;
		}
		/* trailing zeros (a padded tape or block) end the file */
		while (in_off < m->len && m->data[in_off] == 0)
			in_off++;
		if (in_off < m->len && inflateReset(&z) != Z_OK)
			break;
	}
	rc = 0;
out:
	inflateEnd(&z);
	free(out);
	return rc;
}

int
mapfile_gunzip(struct mapfile *m, struct sv_error *err)
{
	struct mapfile n;
	uint64_t total;
	void *p;
	int fd;

	if ((fd = temp_file(err)) < 0)
		return -1;
	if (inflate_to(m, fd, &total, err) != 0) {
		close(fd);
		return -1;
	}
	if (total > SIZE_MAX) {
		close(fd);
		return sv_error_set(err, SV_ERR_LIMIT, SV_NO_OFFSET,
		    "the inflated snapshot does not fit in memory");
	}
	n = *m;
	n.data = NULL;
	n.len = (size_t)total;
	n.released = n.populated = 0;
	n.follow = NULL;
	if (total > 0) {
		p = mmap(NULL, (size_t)total, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			close(fd);
			return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
			    "mmap of the inflated snapshot: %s",
			    strerror(errno));
		}
		madvise(p, (size_t)total, MADV_SEQUENTIAL);
		n.data = p;
	}
	close(fd);
	/* the compressed mapping goes; the inflated one takes its place */
	mapfile_close(m);
	*m = n;
	return 0;
}
