#ifndef SNAPVIEW_UTIL_THREAD_H
#define SNAPVIEW_UTIL_THREAD_H
/*
 * Starting a worker thread. Every thread snapview starts (the encoder,
 * the parser's followers, the sections, the replay's read-ahead and the
 * second compressor of a build, the timeline model's pass over the
 * elements, the viewer's modes) is born with the asynchronous signals
 * blocked: a resize or a ^C must reach the thread that waits for it (the
 * viewer's loop, the progress bar's), where it cuts a wait short, not a
 * worker that never looks. The synchronous ones (a fault, a file cut
 * short under a mapping, an abort) stay open: they go to the thread that
 * raised them, and the handlers of util/fatal.h must see them there.
 */
#include <pthread.h>

/* pthread_create() with the asynchronous signals blocked in the new
 * thread; the caller's own mask is as it was. Returns 0 or an errno. */
int sv_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);

/* Lowers the calling thread's priority by `steps` nice steps (to 19 at
 * most), so that a core it shares with threads of the default priority
 * goes to them first while they run, and to it when they wait: work
 * whose result comes later than theirs anyway (an index's summary
 * beside the replay's passes, 5), or that must not delay the viewer's
 * keys (the modes' worker, 10). Linux keeps a nice value per thread;
 * where the call would lower the whole process, nothing is done. */
void sv_thread_yield_cores(int steps);

/* Ends a worker that waits on cv under mu for *flag: sets *flag to 1
 * under mu, wakes every waiter, and joins th. mu and cv stay (the
 * caller destroys them). */
void sv_thread_stop(pthread_t th, pthread_mutex_t *mu, pthread_cond_t *cv,
    int *flag);

/* How many threads a process may run its work on (snapview --threads,
 * SNAPVIEW_THREADS). 1: sv_thread_start() starts none and returns
 * EAGAIN, so that every caller takes the path it has for a thread that
 * did not start and does the work itself, on the calling thread (an
 * index is byte-identical either way). 0 or more than 1 (the default):
 * no limit. Set it before any thread starts. */
void sv_thread_set_max(unsigned n);
unsigned sv_thread_max(void);

#endif
