#ifndef SNAPVIEW_UTIL_CLOCK_H
#define SNAPVIEW_UTIL_CLOCK_H
/*
 * The monotonic clock, for what measures itself: a time budget, when
 * something came, the latency log.
 */

/* Microseconds of CLOCK_MONOTONIC. */
long long sv_mono_us(void);

#endif
