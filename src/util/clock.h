#ifndef SNAPVIEW_UTIL_CLOCK_H
#define SNAPVIEW_UTIL_CLOCK_H
/*
 * Clocks in microseconds, for what measures itself: a time budget, when
 * something came, the latency log.
 */
#include <time.h>

/* Microseconds of clock c (CLOCK_PROCESS_CPUTIME_ID, ...). */
long long sv_clock_us(clockid_t c);

/* Microseconds of CLOCK_MONOTONIC. */
long long sv_mono_us(void);

#endif
