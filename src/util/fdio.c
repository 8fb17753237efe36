/*
 * Whole reads and writes on a file descriptor. See fdio.h.
 */
#include "config.h"

#include "util/fdio.h"

#include <errno.h>
#include <sys/types.h>
#include <unistd.h>

/* The most one write() is asked for: Linux moves at most 2 GiB less a
 * page a call anyway. */
#define MAX_CALL ((size_t)1 << 30)

int
sv_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *c = p;

	while (n > 0) {
		ssize_t r = write(fd, c, n > MAX_CALL ? MAX_CALL : n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? errno : EIO;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int
sv_pread_all(int fd, void *p, size_t n, uint64_t off)
{
	uint8_t *c = p;

	while (n > 0) {
		ssize_t r = pread(fd, c, n > MAX_CALL ? MAX_CALL : n,
		    (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? errno : EIO;
		c += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}
