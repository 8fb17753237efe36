/*
 * Clocks in microseconds. See clock.h.
 */
#include "config.h"

#include "util/clock.h"

long long
sv_clock_us(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

long long
sv_mono_us(void)
{
	return sv_clock_us(CLOCK_MONOTONIC);
}
