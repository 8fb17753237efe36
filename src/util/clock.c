/*
 * The monotonic clock. See clock.h.
 */
#include "config.h"

#include "util/clock.h"

#include <time.h>

long long
sv_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
