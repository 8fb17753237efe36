#ifndef SNAPVIEW_UTIL_ERR_H
#define SNAPVIEW_UTIL_ERR_H
/*
 * Errors returned by library layers. Library code never prints or exits:
 * a fallible function returns -1 and fills a caller-owned struct sv_error
 * with a code, the byte offset in the input (or SV_NO_OFFSET) and a
 * message. Only cli/ and tui/ turn it into output.
 *
 * That is for a failure of what the caller asked for, which the user must
 * hear of and which decides the exit status. A failure the caller gets
 * over on its own (an index not usable, so rebuilt; a stored summary that
 * does not decode, so computed again; a stacking mode without data, so
 * passed over) instead fills "char *why, size_t wl": a caller-owned buffer
 * that gets one sentence when the function fails, which the caller shows
 * as a warning or a status message, or drops. It carries no code or
 * offset and never becomes an exit status.
 * ARCHITECTURE.md, "Errors", lists both.
 */
#include <stdarg.h>
#include <stdint.h>

#define SV_NO_OFFSET UINT64_MAX

/* X-macro: code, process exit status, short name. */
#define SV_ERRCODE_INFO(_)                                                     \
	_(SV_OK, 0, "ok")                                                      \
	_(SV_ERR_USAGE, 1, "usage")                                            \
	_(SV_ERR_FORMAT, 2, "bad input")                                       \
	_(SV_ERR_UNSUPPORTED, 2, "unsupported")                                \
	_(SV_ERR_LIMIT, 2, "limit exceeded")                                   \
	_(SV_ERR_IO, 3, "I/O error")                                           \
	_(SV_ERR_INCONSISTENT, 4, "inconsistent")                              \
	_(SV_ERR_CANCELLED, 130, "cancelled")

enum sv_errcode {
#define SV_ERR_ENUM(id, status, name) id,
	SV_ERRCODE_INFO(SV_ERR_ENUM)
#undef SV_ERR_ENUM
};

struct sv_error {
	enum sv_errcode code;
	uint64_t offset; /* byte offset in the input, or SV_NO_OFFSET */
	char msg[256];
};

/* Resets err to SV_OK with no offset and an empty message. */
void sv_error_clear(struct sv_error *err);

/* Fills err and returns -1, so callers can write `return sv_error_set(..)`.
 * err may be NULL, in which case only -1 is returned. */
int sv_error_set(struct sv_error *err, enum sv_errcode code, uint64_t offset,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int sv_error_vset(struct sv_error *err, enum sv_errcode code, uint64_t offset,
    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/* Exit status a command should use for code (snapview(1), EXIT STATUS). */
int sv_errcode_status(enum sv_errcode code);

#endif
