/*
 * The per-thread stop flag (stop.h).
 */
#include "config.h"

#include "util/stop.h"

__thread const atomic_int *sv_stop_flag;
