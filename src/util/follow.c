/*
 * A reader's follower thread (follow.h).
 */
#include "config.h"

#include "util/follow.h"

#include <pthread.h>
#include <stdlib.h>

#include "util/thread.h"
#include "util/xalloc.h"

struct follower {
	void (*fn)(void *arg, size_t a, size_t b);
	void *arg;
	size_t every;
	size_t told;          /* the reader's side: the last a passed on */
	int any;              /* and whether any was */
	int threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t a, b;          /* under mu: the values to act on */
	int pending;          /* under mu: a, b not acted on yet */
	int stop;             /* under mu */
};

static void *
follow_run(void *arg)
{
	struct follower *f = arg;
	size_t a, b;

	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->pending && !f->stop)
			pthread_cond_wait(&f->cv, &f->mu);
		if (!f->pending) /* stopped, nothing left to do */
			break;
		a = f->a;
		b = f->b;
		f->pending = 0;
		pthread_mutex_unlock(&f->mu);
		f->fn(f->arg, a, b);
		pthread_mutex_lock(&f->mu);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

struct follower *
follow_start(void (*fn)(void *arg, size_t a, size_t b), void *arg,
    size_t every)
{
	struct follower *f = xcalloc(1, sizeof *f);

	f->fn = fn;
	f->arg = arg;
	f->every = every;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->threaded = sv_thread_start(&f->th, follow_run, f) == 0;
	return f;
}

void
follow_tell(struct follower *f, size_t a, size_t b)
{
	if (f->any && a >= f->told && a - f->told < f->every)
		return;
	f->any = 1;
	f->told = a;
	if (!f->threaded) {
		f->fn(f->arg, a, b);
		return;
	}
	pthread_mutex_lock(&f->mu);
	f->a = a;
	f->b = b;
	f->pending = 1;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

void
follow_stop(struct follower *f)
{
	if (f == NULL)
		return;
	if (f->threaded)
		sv_thread_stop(f->th, &f->mu, &f->cv, &f->stop);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
}
