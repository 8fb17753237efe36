#ifndef SNAPVIEW_UTIL_FDIO_H
#define SNAPVIEW_UTIL_FDIO_H
/*
 * Whole reads and writes on a file descriptor: the one place that goes
 * on after EINTR and short counts (a loop for each of the two calls).
 */
#include <stddef.h>
#include <stdint.h>

/* Writes the n bytes at p to fd (at most 1 GiB a call). Returns 0, or
 * an errno: write()'s, or EIO when it wrote nothing. */
int sv_write_all(int fd, const void *p, size_t n);

/* Reads n bytes at offset off of fd into p. Returns 0, or an errno:
 * pread()'s, or EIO when the file ends first. */
int sv_pread_all(int fd, void *p, size_t n, uint64_t off);

#endif
