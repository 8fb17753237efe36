#ifndef SNAPVIEW_UTIL_FOLLOW_H
#define SNAPVIEW_UTIL_FOLLOW_H
/*
 * A follower: a thread that does a reader's housekeeping behind or ahead
 * of it, so that the reader does not pay for it. The reader tells it
 * where it is (two values, say a position and a limit); the follower
 * calls fn(arg, a, b) with the last values told, once per tell at most
 * (tells it has not caught up with are merged into the last). For work
 * whose timing does not matter to what the reader reads: mapping pages
 * ahead, giving back those behind.
 *
 * fn runs on the follower's thread and must touch nothing the reader
 * changes, but what it is told; when the thread cannot start, tells call
 * fn on the reader's thread. follow_stop() makes the last tell's call,
 * if not yet made, and joins.
 */
#include <stddef.h>

struct follower;

/* Starts a follower (never NULL). A tell is passed on only when a moved
 * by at least every since the last one passed on, or went backward. */
struct follower *follow_start(void (*fn)(void *arg, size_t a, size_t b),
    void *arg, size_t every);
void follow_tell(struct follower *f, size_t a, size_t b);
void follow_stop(struct follower *f);

#endif
