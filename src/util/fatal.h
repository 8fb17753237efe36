#ifndef SNAPVIEW_UTIL_FATAL_H
#define SNAPVIEW_UTIL_FATAL_H
/*
 * Fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) and the files
 * mapped while they may arrive.
 *
 * A mapped file that another process truncates raises SIGBUS on the next
 * read of a page past its new end, anywhere in the program: in the index
 * columns, the strings, the LOD pyramid or the snapshot being parsed.
 * Every read cannot check for that, so whoever maps a file registers the
 * range here (sv_fatal_guard), and the handler that sv_fatal_install()
 * sets up turns such a SIGBUS into one line,
 *
 *     snapview: NAME: the file shrank while in use (truncated by another
 *     process)
 *
 * and exit status 3 (I/O error). Before that, and before any other fatal
 * signal, the restore hook runs (the TUI puts the terminal back). Every
 * other fatal signal then goes on to the action that was there before
 * (normally the default: the process dies of the signal, with a core dump
 * where the system keeps one, so the exit status and the core stay
 * honest; under ASan, ASan's report).
 *
 * Like xalloc's out-of-memory path, this is the one place outside cli/
 * and tui/ that prints and exits: a signal handler has nobody to return
 * an error to.
 */
#include <stddef.h>

/* Installs the handlers (and an alternate signal stack for the calling
 * thread, so a stack overflow still restores the terminal). Once, from
 * main(). */
void sv_fatal_install(void);

/* The hook run first in the handler; NULL for none. It must be
 * async-signal-safe (write(), tcsetattr(); no stdio, no malloc). */
void sv_fatal_set_restore(void (*hook)(void));

/* Registers [p, p + len) as a mapping of the file called name (shown
 * escaped). Returns 0, or -1 when every slot is taken (the mapping then
 * works as before, unguarded). p may be NULL (nothing to guard). */
int sv_fatal_guard(const void *p, size_t len, const char *name);
/* Forgets the range that starts at p (before it is unmapped). */
void sv_fatal_unguard(const void *p);

/* The name registered for the mapping that holds addr, or NULL.
 * Async-signal-safe; the handler's lookup, exposed for the tests. */
const char *sv_fatal_guarded(const void *addr);

#endif
