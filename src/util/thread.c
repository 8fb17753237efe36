/*
 * Worker threads born with the asynchronous signals blocked (thread.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#ifdef __linux__
#include <sys/resource.h>
#endif

#include "util/thread.h"

/* raised by the thread that runs into them: left unblocked */
static const int sync_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
    SIGTRAP, SIGSYS};

/* set once, before any thread starts (thread.h) */
static unsigned thread_max;

void
sv_thread_set_max(unsigned n)
{
	thread_max = n;
}

unsigned
sv_thread_max(void)
{
	return thread_max;
}

int
sv_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t mask, old;
	size_t k;
	int r;

	if (thread_max == 1)
		return EAGAIN;
	sigfillset(&mask);
	for (k = 0; k < sizeof sync_sigs / sizeof sync_sigs[0]; k++)
		sigdelset(&mask, sync_sigs[k]);
	/* a new thread inherits the mask of the thread that creates it */
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	r = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

void
sv_thread_stop(pthread_t th, pthread_mutex_t *mu, pthread_cond_t *cv,
    int *flag)
{
	pthread_mutex_lock(mu);
	*flag = 1;
	pthread_cond_broadcast(cv);
	pthread_mutex_unlock(mu);
	pthread_join(th, NULL);
}

void
sv_thread_yield_cores(int steps)
{
#ifdef __linux__
	int was;

	errno = 0;
	was = getpriority(PRIO_PROCESS, 0);
	/* 0: the calling thread alone (Linux's nice value is a thread's);
	 * nothing to undo: the thread ends with its work */
	if (was != -1 || errno == 0)
		(void)setpriority(PRIO_PROCESS, 0,
		    was + steps < 19 ? was + steps : 19);
#else
	(void)steps;
#endif
}
