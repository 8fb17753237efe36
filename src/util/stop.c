/*
 * The per-thread stop flag (stop.h).
 */
#include "config.h"

#include "util/stop.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

__thread const atomic_int *sv_stop_flag;
__thread atomic_uint_fast64_t *sv_stop_meter;
__thread void (*sv_stop_tick)(void *ctx);
__thread void *sv_stop_tick_ctx;
/* when sv_stop_tick was last called, and with which function */
static __thread long long tick_us;
static __thread void (*tick_fn)(void *ctx);

void
sv_stop_tick_due(void)
{
	long long now = sv_mono_us();

	if (tick_fn == sv_stop_tick && now - tick_us < SV_STOP_TICK_US)
		return;
	tick_fn = sv_stop_tick;
	tick_us = now;
	sv_stop_tick(sv_stop_tick_ctx);
}

void
sv_stop_wait_file(const char *path)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	int i;

	for (i = 0; i < 6000 && access(path, F_OK) != 0 &&
	    !sv_stop_requested(); i++)
		nanosleep(&ts, NULL);
}

void
sv_stop_wait_env(const char *name)
{
	const char *f = getenv(name);

	if (f != NULL && *f != '\0')
		sv_stop_wait_file(f);
}
