/*
 * The per-thread stop flag (stop.h).
 */
#include "config.h"

#include "util/stop.h"

#include <time.h>
#include <unistd.h>

__thread const atomic_int *sv_stop_flag;
__thread atomic_uint_fast64_t *sv_stop_meter;

void
sv_stop_wait_file(const char *path)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	int i;

	for (i = 0; i < 6000 && access(path, F_OK) != 0 &&
	    !sv_stop_requested(); i++)
		nanosleep(&ts, NULL);
}
