#ifndef SNAPVIEW_UTIL_STOP_H
#define SNAPVIEW_UTIL_STOP_H
/*
 * Asking long work on another thread to give up: the viewer builds the
 * timeline's modes on a thread of their own, and quitting must not wait
 * for a pass over a hundred million events to end.
 *
 * The thread that runs the work points its sv_stop_flag at an atomic flag
 * the owner of the thread sets; loops that run for a time proportional
 * to the events or elements poll sv_stop_requested() now and then (every
 * SV_STOP_EVERY iterations) and end early: what they return is then
 * incomplete and the caller, who asked for the stop, throws it away.
 * Functions that can fail say so (SV_ERR_CANCELLED). On a thread that
 * never set the flag (every command, the viewer's own) nothing stops.
 *
 * The same polls meter the work: a thread that points sv_stop_meter at
 * a counter gets SV_STOP_EVERY added to it at each poll after a loop's
 * first, so that its owner can tell how far the work is (the viewer's
 * "building ... 40%"): a loop over n items adds n - 1 rounded down to
 * a multiple of SV_STOP_EVERY.
 *
 * Work with no thread of its own to watch it (--threads 1: it runs on
 * the thread that would have watched) can be watched from inside: a
 * thread that points sv_stop_tick at a function gets it called from its
 * polls, at most every SV_STOP_TICK_US microseconds, with
 * sv_stop_tick_ctx; it may tell how far the work is and set the flag.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SV_STOP_EVERY 4096

extern __thread const atomic_int *sv_stop_flag;
extern __thread atomic_uint_fast64_t *sv_stop_meter;
extern __thread void (*sv_stop_tick)(void *ctx);
extern __thread void *sv_stop_tick_ctx;

#define SV_STOP_TICK_US 100000

/* Calls sv_stop_tick when SV_STOP_TICK_US have passed since the last
 * call (the first poll after it is set: at once). */
void sv_stop_tick_due(void);

/* Has this thread's work been asked to stop? */
static inline int
sv_stop_requested(void)
{
	return sv_stop_flag != NULL &&
	    atomic_load_explicit(sv_stop_flag, memory_order_relaxed) != 0;
}

/* The tests' hooks that hold work until a file exists: returns once
 * path exists, after a minute, or when this thread's work is asked to
 * stop, whichever comes first. */
void sv_stop_wait_file(const char *path);

/* sv_stop_wait_file() on the file the environment variable name gives,
 * when it is set and not empty (a test's hook); else returns at once. */
void sv_stop_wait_env(const char *name);

/* sv_stop_requested(), checked at one iteration i in SV_STOP_EVERY
 * (and the meter moved on). */
static inline int
sv_stop_poll(uint64_t i)
{
	if (i % SV_STOP_EVERY != 0)
		return 0;
	if (sv_stop_meter != NULL && i > 0)
		atomic_fetch_add_explicit(sv_stop_meter, SV_STOP_EVERY,
		    memory_order_relaxed);
	if (sv_stop_tick != NULL)
		sv_stop_tick_due();
	return sv_stop_requested();
}

#endif
