/*
 * The replay's checkpoints built behind the first screen (replay_bg.h).
 */
#include "config.h"

#include "tui/replay_bg.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot/snap_stripe.h"
#include "tui/app.h"
#include "util/escape.h"
#include "util/stop.h"
#include "util/thread.h"
#include "util/xalloc.h"

struct replay_bg {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;               /* under mu: the thread's work is over */
	int started;            /* the loop's: replay_bg_run() ran */
	int threaded;           /* the loop's: on a thread of its own */
	int taken;              /* the loop's: joined, result taken */
	int shown;              /* the loop's: the percent last drawn */
	atomic_int stop;        /* the thread's stop flag (util/stop.h) */
	atomic_int per_mille;   /* of the index's progress scale */
	/* the thread's until done, then the loop's */
	char *path;
	struct idx_opts o;
	struct idx_streamed *streamed; /* o.streamed, freed once built */
	struct sv_index *ix;
	struct sv_error err;
	char warn[256];
};

static int
bg_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct replay_bg *b = ctx;

	if (total > 0)
		atomic_store(&b->per_mille, (int)((unsigned __int128)
		    (done < total ? done : total) * 1000 / total));
	return 0;
}

/* The index's warnings (cannot write, ...): the last one, shown when
 * the thread is done. */
static void
bg_warn(void *ctx, const char *msg)
{
	struct replay_bg *b = ctx;

	sv_escape(b->warn, sizeof b->warn, msg, strlen(msg));
}

/* A test hook (tests/screen/replay_bg.test): with
 * SNAPVIEW_TEST_REPLAY_PAUSE=FILE the thread starts its build when FILE
 * exists (a minute at most, or until it is stopped), so that a test
 * sees the screen shown while the replay is being built. */
static void
test_replay_pause(void)
{
	sv_stop_wait_env("SNAPVIEW_TEST_REPLAY_PAUSE");
}

static void *
bg_run(void *arg)
{
	struct replay_bg *b = arg;
	const atomic_int *was = sv_stop_flag;
	int r = -1;

	sv_stop_flag = &b->stop;
	test_replay_pause();
	sv_error_clear(&b->err);
	if (!sv_stop_requested())
		r = idx_open(b->path, &b->o, &b->ix, &b->err);
	if (r != 0)
		b->ix = NULL;
	/* this thread's decoded stripes go with it; run on the loop's
	 * thread (no thread to be had), its flag is the loop's again */
	snap_stripe_cache_clear();
	sv_stop_flag = was;
	pthread_mutex_lock(&b->mu);
	b->done = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

void
replay_bg_start(struct app *a, const char *path, const struct idx_opts *o,
    struct idx_streamed *streamed)
{
	struct replay_bg *b = xcalloc(1, sizeof *b);

	replay_bg_stop(a);
	b->path = xstrdup(path);
	b->o = *o;
	b->o.sections_later = 0;
	b->o.streamed_out = NULL;
	b->o.streamed = streamed;
	b->streamed = streamed;
	b->o.progress = bg_progress;
	b->o.progress_ctx = b;
	b->o.warn = bg_warn;
	b->o.warn_ctx = b;
	b->shown = -1;
	atomic_init(&b->stop, 0);
	atomic_init(&b->per_mille, 0);
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	a->replay_bg = b;
}

void
replay_bg_run(struct app *a)
{
	struct replay_bg *b = a->replay_bg;

	if (b == NULL || b->started)
		return;
	b->started = 1;
	b->threaded = sv_thread_start(&b->th, bg_run, b) == 0;
	if (!b->threaded)
		bg_run(b); /* no thread to be had: here, the screen waiting */
}

int
replay_bg_pending(const struct app *a)
{
	return a->replay_bg != NULL && !a->replay_bg->taken;
}

int
replay_bg_percent(const struct app *a)
{
	return a->replay_bg != NULL ?
	    atomic_load(&a->replay_bg->per_mille) / 10 : 0;
}

void
replay_bg_say(struct app *a, const char *what)
{
	app_msg(a, "the replay is being built (%d%%): %s comes with it",
	    replay_bg_percent(a), what);
}

const struct sv_index *
replay_bg_index(const struct app *a)
{
	return a->replay_bg != NULL && a->replay_bg->taken ?
	    a->replay_bg->ix : NULL;
}

int
replay_bg_poll(struct app *a, int wait)
{
	struct replay_bg *b = a->replay_bg;
	int done, pct;

	if (b == NULL || b->taken || !b->started)
		return 0;
	pthread_mutex_lock(&b->mu);
	while (wait && !b->done)
		pthread_cond_wait(&b->cv, &b->mu);
	done = b->done;
	pthread_mutex_unlock(&b->mu);
	if (!done) {
		/* the state pane's title says how far it is */
		pct = replay_bg_percent(a);
		if (pct == b->shown)
			return 0;
		b->shown = pct;
		return 1;
	}
	if (b->threaded)
		pthread_join(b->th, NULL);
	b->taken = 1;
	/* the passes made beside the parse: taken, or of no use now */
	idx_streamed_free(b->streamed);
	b->streamed = NULL;
	if (b->warn[0] != '\0')
		app_msg(a, "%s", b->warn);
	if (b->ix == NULL && b->err.code != SV_ERR_CANCELLED)
		app_msg(a, "replay: %s", b->err.msg);
	if (b->ix != NULL) {
		struct idx_info info;

		/* an index parsed again is not the one the screen shows: the
		 * snapshot changed on disk (the one it extended matched the
		 * file's key) */
		idx_get_info(b->ix, &info);
		if (info.parse_s > 0) {
			idx_close(b->ix);
			b->ix = NULL;
			app_msg(a, "replay: snapshot changed; reopen it");
		}
	}
	return 2;
}

void
replay_bg_stop(struct app *a)
{
	struct replay_bg *b = a->replay_bg;

	if (b == NULL)
		return;
	if (b->threaded && !b->taken) {
		atomic_store(&b->stop, 1);
		pthread_join(b->th, NULL);
	}
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	if (b->ix != NULL)
		idx_close(b->ix);
	idx_streamed_free(b->streamed);
	free(b->path);
	free(b);
	a->replay_bg = NULL;
}
