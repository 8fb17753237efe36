/*
 * The timeline's modes built on a thread of their own (modeworker.h).
 *
 * One worker per device, started once the device's first screen is up,
 * on two threads where there are cores for them (threads_wanted). Its
 * jobs are made on the loop's thread when it starts (tl_prep_begin reads
 * the model there), one per mode still to build, in the order m cycles
 * from the mode shown, those drawn from samples meanwhile (a->sampling,
 * render/tl_sample.h) after the others; modes built in one pass (the
 * call-site, stream/pool and pool modes: tl_stack_pass_mates) share one
 * job. Each thread takes the mode the view waits for first (not one
 * drawn from samples), else the category mode when it is to be drawn
 * from samples (its job begins the table, hands the loop a probe of it,
 * an_cat_probe_new, and goes on to build the bands), else the segment
 * mode (the shortest), else the next in that order,
 * and builds it reading only the snapshot, the timeline and the category
 * table, none of which changes while it runs (each thread decodes
 * stripes into a cache of its own); a finished job waits under the lock
 * until the loop takes it and moves it into the model (tl_model_adopt).
 * Nothing half built is ever seen by the loop. A grouped mode's build
 * is a pass over the allocations and one over the events (at 10 GB on
 * one core, 4.1 s for the call-site, stream/pool and pool modes, 5.5 s
 * for the category mode): two threads make the modes come at the pace
 * of the longest instead of their sum. Each job's passes count the
 * items they go over (util/stop.h's meter) against tl_prep_work's
 * estimate: modeworker_progress.
 *
 * On a large snapshot's first open the replay is built behind the first
 * screen (replay_bg.c) while the worker would build every grouped mode:
 * on two cores each slowed the other. The worker is then held: it builds
 * the modes the view waits for, and the others once the replay is there,
 * which the segment pane, the state at the cursor and the modes' samples
 * wait for (it came 1.2 s sooner at 10 GB, 0.3 s at 1 GB; a view that
 * only takes the category table when ready gets it then too). The mode
 * the first screen goes to waits too when the replay will let it be
 * drawn from samples (a->sample_later): the view goes to it then.
 *
 * Stopping (another device, quitting) sets the stop flag the builds poll
 * (util/stop.h) and joins the threads: a pass over the trace gives up
 * within a few thousand events.
 */
#include "config.h"

#include "tui/modeworker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshot/snap_stripe.h"
#include "util/clock.h"
#include "util/stop.h"
#include "util/thread.h"
#include "util/xalloc.h"

enum job_state { JOB_TODO, JOB_RUNNING, JOB_DONE, JOB_TAKEN };

struct job {
	int st;                         /* the mode it builds */
	enum job_state state;
	int failed;                     /* stopped, or no categories */
	struct tl_prep prep;
	/* the category mode: the app's table, or one built here */
	const struct an_categories *cats;
	struct an_categories own;
	int own_ok;
	/* own's probe, once begun, until the loop takes it (under mu) */
	struct an_cat_probe *probe;
	int handed;                     /* the loop took it */
	char why[256];
	long long end_us;               /* when it ended (sv_mono_us()) */
	atomic_uint_fast64_t done;      /* items its passes went over
					   (util/stop.h's meter) */
	uint64_t work;                  /* and how many they will */
};

#define MW_THREADS 2

struct modeworker {
	pthread_t th[MW_THREADS];
	int n_th;                       /* threads to be joined */
	int started;                    /* n_th > 0 */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_int stop;
	uint32_t dev_gen;               /* the device it builds for */
	long long start_us;             /* when it started (sv_mono_us()) */
	/* the inputs (fixed while it runs) */
	const struct snapshot *snap;
	const struct idx_timeline *tl;
	const struct an_cat_rules *rules;
	int probe;                      /* the category mode is sampled
					   while built: hand the loop a
					   probe of its table */
	/* under mu: */
	struct job jobs[TL_STACK_COUNT];
	int n_jobs;
	int job_of[TL_STACK_COUNT];     /* the job that builds mode st, -1 */
	int want;                       /* the mode the view waits for, -1 */
	int hold;                       /* only that mode is built */
	int done;                       /* the worker has ended */
	/* the loop's only: modes taken and not yet told (modeworker_arrived) */
	unsigned arrived;
	char why[TL_STACK_COUNT][256];
	/* the loop's only: when each mode's bands were first drawn from
	 * samples in full, and how long that took (modeworker_sampled) */
	long long sampled_us[TL_STACK_COUNT], sampled_took[TL_STACK_COUNT];
};

/* Does job j begin the category table and hand the loop its probe? */
static int
makes_probe(const struct modeworker *b, const struct job *j)
{
	return b->probe && j->st == TL_STACK_CATEGORY && j->cats == NULL;
}

/* The next job to run (under mu): the one the view waits for, else
 * (none while held) the category mode's when it hands the loop a probe
 * (the mode is drawn from samples once it has: the sooner the better),
 * else the segment mode's (no pass over the trace: the segment events
 * the model listed, a few milliseconds), else the first in cycle
 * order. */
static struct job *
next_job(struct modeworker *b)
{
	int i, seg = b->job_of[TL_STACK_SEGMENT];
	int cat = b->job_of[TL_STACK_CATEGORY];

	if (b->want >= 0 && b->job_of[b->want] >= 0 &&
	    b->jobs[b->job_of[b->want]].state == JOB_TODO)
		return &b->jobs[b->job_of[b->want]];
	if (b->hold)
		return NULL;
	if (cat >= 0 && b->jobs[cat].state == JOB_TODO &&
	    makes_probe(b, &b->jobs[cat]))
		return &b->jobs[cat];
	if (seg >= 0 && b->jobs[seg].state == JOB_TODO)
		return &b->jobs[seg];
	for (i = 0; i < b->n_jobs; i++)
		if (b->jobs[i].state == JOB_TODO)
			return &b->jobs[i];
	return NULL;
}

static void
test_modes_pause(void);

static void
run_job(struct modeworker *b, struct job *j)
{
	struct sv_error err;
	int built;

	if (j->st == TL_STACK_CATEGORY && j->cats == NULL) {
		/* the table, this job's until the loop takes it, is
		 * classified in the bands' pass over the elements: one
		 * decode of them for both */
		sv_error_clear(&err);
		if (an_categories_begin(b->snap, b->tl, NULL, b->rules,
		    &j->own, &err) == 0) {
			if (makes_probe(b, j)) {
				struct an_cat_probe *p =
				    an_cat_probe_new(&j->own);

				pthread_mutex_lock(&b->mu);
				j->probe = p;
				pthread_cond_broadcast(&b->cv);
				pthread_mutex_unlock(&b->mu);
				test_modes_pause();
			}
			tl_prep_fill_categories(&j->prep, &j->own);
			built = tl_prep_build(&j->prep);
			if (an_categories_end(&j->own, &err) == 0) {
				j->own_ok = 1;
				j->failed = built != 0;
				return;
			}
		}
		j->failed = 1;
		snprintf(j->why, sizeof j->why, "%s", err.msg);
		return;
	}
	if (tl_prep_build(&j->prep) != 0)
		j->failed = 1;
}

/* A test hook (tests/screen/deferred.test, sampled.test): with
 * SNAPVIEW_TEST_MODES_PAUSE=FILE, each job, once it runs, starts
 * building when FILE exists (a minute at most), so that a test sees
 * the screens shown while a mode is being built (the one that runs at
 * 0%, the others waiting their turn), whatever the machine's pace; the
 * category job that hands the loop a probe waits once it has (its
 * bands are then drawn from samples). Stopping the worker ends the wait
 * (its stop flag is set). */
static void
test_modes_pause(void)
{
	sv_stop_wait_env("SNAPVIEW_TEST_MODES_PAUSE");
}

/* Is a job still to run (under mu)? */
static int
any_todo(const struct modeworker *b)
{
	int i;

	for (i = 0; i < b->n_jobs; i++)
		if (b->jobs[i].state == JOB_TODO)
			return 1;
	return 0;
}

static void *
worker(void *arg)
{
	struct modeworker *b = arg;
	struct job *j;

	/* the keys pressed while it builds must not wait for a core it
	 * holds */
	sv_thread_yield_cores(10);
	sv_stop_flag = &b->stop;
	pthread_mutex_lock(&b->mu);
	while (!atomic_load(&b->stop)) {
		if ((j = next_job(b)) == NULL) {
			if (!b->hold || !any_todo(b))
				break;
			pthread_cond_wait(&b->cv, &b->mu);
			continue;
		}
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&b->mu);
		if (!makes_probe(b, j))
			test_modes_pause();
		sv_stop_meter = &j->done;
		run_job(b, j);
		sv_stop_meter = NULL;
		j->end_us = sv_mono_us();
		pthread_mutex_lock(&b->mu);
		j->state = JOB_DONE;
		pthread_cond_broadcast(&b->cv);
	}
	b->done = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	/* this thread's decoded stripes go with it */
	snap_stripe_cache_clear();
	return NULL;
}

/* Adds the job for mode st (on the loop's thread, before the worker). */
static void
add_job(struct app *a, struct modeworker *b, int st)
{
	struct job *j;
	unsigned mates;
	int k;

	if (a->tm.groups_ok[st] != 0 || b->job_of[st] >= 0)
		return;
	if (st == TL_STACK_CATEGORY && a->cats_ok < 0)
		return; /* no categories: the mode is passed over */
	j = &b->jobs[b->n_jobs];
	memset(j, 0, sizeof *j);
	j->st = st;
	j->cats = st == TL_STACK_CATEGORY && a->cats_ok > 0 ? &a->cats : NULL;
	tl_prep_begin(&j->prep, &a->tm, st, j->cats);
	atomic_init(&j->done, 0);
	j->work = tl_prep_work(&j->prep, st == TL_STACK_CATEGORY &&
	    j->cats == NULL);
	b->job_of[st] = b->n_jobs++;
	/* one pass builds its mates too (tl_modes.h) */
	mates = tl_stack_pass_mates(st);
	for (k = 0; k < TL_STACK_COUNT; k++)
		if ((mates & 1u << k) && a->tm.groups_ok[k] == 0)
			b->job_of[k] = b->job_of[st];
}

/* Threads for n jobs: one per job, at most MW_THREADS (two builds at
 * once hold twice the memory of one), more than one only on a machine
 * of 4 CPUs or more, or where --threads allows 3 or more. On 2 cores the
 * second thread brought the last mode at 10 GB 10% sooner and made the
 * keys pressed meanwhile twice as slow (p50 2.8 -> 5.7 ms), niced as
 * they are (sv_thread_yield_cores()). */
static int
threads_wanted(int n)
{
	unsigned max = sv_thread_max();
	int t = max >= 3 || (max == 0 && sysconf(_SC_NPROCESSORS_ONLN) >= 4)
	    ? MW_THREADS : 1;

	return n < t ? n : t;
}

int
modeworker_enabled(void)
{
	const char *e = getenv("SNAPVIEW_BANDS_SYNC");

	return e == NULL || e[0] == '\0' || strcmp(e, "0") == 0;
}

void
modeworker_start(struct app *a, int hold)
{
	struct modeworker *b = a->modeworker;
	int k, st, sampling, round;

	if (b != NULL && b->dev_gen == a->dev_gen)
		return;
	modeworker_stop(a);
	if (!modeworker_enabled() || a->tl.n_events == 0)
		return;
	b = xcalloc(1, sizeof *b);
	b->dev_gen = a->dev_gen;
	b->snap = a->snap;
	b->tl = &a->tl;
	b->rules = a->cat_rules;
	b->probe = a->sampling;
	b->hold = hold;
	/* the mode the first screen goes to when it comes; none when it
	 * is drawn from samples meanwhile, or will be once the replay held
	 * for comes: built beside the replay's passes, it delayed them by
	 * a third (3 s at 10 GB, the two vCPUs sharing one core) */
	sampling = a->sampling;
	b->want = (sampling || (hold && a->sample_later)) &&
	    tl_model_sample_able(&a->tm, a->auto_stack) ? -1 : a->auto_stack;
	for (k = 0; k < TL_STACK_COUNT; k++)
		b->job_of[k] = -1;
	/* in the order m goes from the mode shown; with samples for those
	 * that can be sampled meanwhile, the others first (the category
	 * mode: nothing of it is drawn before its build) */
	for (round = sampling ? 0 : 1; round < 2; round++)
		for (k = 1; k < TL_STACK_COUNT; k++) {
			st = (a->view.stack + k) % TL_STACK_COUNT;
			if (st != TL_STACK_ALLOC && (round == 1 ||
			    !tl_model_sample_able(&a->tm, st)))
				add_job(a, b, st);
		}
	a->modeworker = b;
	if (b->n_jobs == 0)
		return;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	atomic_init(&b->stop, 0);
	b->start_us = sv_mono_us();
	/* the signals the loop waits for (a resize, ^C) stay with it: they
	 * cut its wait for a key short */
	for (k = 0; k < threads_wanted(b->n_jobs); k++)
		if (sv_thread_start(&b->th[b->n_th], worker, b) == 0)
			b->n_th++;
	if (b->n_th == 0) {
		/* no thread: the modes are built when first shown */
		for (k = 0; k < b->n_jobs; k++)
			tl_prep_destroy(&b->jobs[k].prep);
		pthread_cond_destroy(&b->cv);
		pthread_mutex_destroy(&b->mu);
		b->n_jobs = 0;
		for (k = 0; k < TL_STACK_COUNT; k++)
			b->job_of[k] = -1;
		return;
	}
	b->started = 1;
}

static void
job_free(struct job *j)
{
	an_cat_probe_free(j->probe);
	j->probe = NULL;
	tl_prep_destroy(&j->prep);
	if (j->own_ok)
		an_categories_destroy(&j->own);
	j->own_ok = 0;
}

void
modeworker_stop(struct app *a)
{
	struct modeworker *b = a->modeworker;
	int i;

	if (b == NULL)
		return;
	if (b->started) {
		pthread_mutex_lock(&b->mu);
		atomic_store(&b->stop, 1);
		pthread_cond_broadcast(&b->cv); /* a held thread waits */
		pthread_mutex_unlock(&b->mu);
		for (i = 0; i < b->n_th; i++)
			pthread_join(b->th[i], NULL);
		pthread_cond_destroy(&b->cv);
		pthread_mutex_destroy(&b->mu);
	}
	for (i = 0; i < b->n_jobs; i++)
		if (b->jobs[i].state != JOB_TAKEN)
			job_free(&b->jobs[i]);
	free(b);
	a->modeworker = NULL;
}

int
modeworker_pending(struct app *a, int st)
{
	struct modeworker *b = a->modeworker;
	int r;

	if (b == NULL || !b->started || st < 0 || st >= TL_STACK_COUNT ||
	    b->job_of[st] < 0)
		return 0;
	pthread_mutex_lock(&b->mu);
	r = b->jobs[b->job_of[st]].state != JOB_TAKEN &&
	    !(b->done && b->jobs[b->job_of[st]].state == JOB_TODO);
	pthread_mutex_unlock(&b->mu);
	return r;
}

void
modeworker_want(struct app *a, int st)
{
	struct modeworker *b = a->modeworker;

	if (b == NULL || !b->started)
		return;
	pthread_mutex_lock(&b->mu);
	b->want = st;
	pthread_cond_broadcast(&b->cv); /* a held thread waits for it */
	pthread_mutex_unlock(&b->mu);
}

void
modeworker_release(struct app *a)
{
	struct modeworker *b = a->modeworker;

	if (b == NULL || !b->started)
		return;
	pthread_mutex_lock(&b->mu);
	b->hold = 0;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* Moves job j's results into the app (the loop's thread). */
static void
adopt(struct app *a, struct job *j, char *why, size_t size)
{
	if (j->failed) {
		snprintf(why, size, "%s", j->why[0] != '\0' ? j->why :
		    "not built");
		/* the table could not be built: no category mode */
		if (j->st == TL_STACK_CATEGORY && j->why[0] != '\0' &&
		    a->cats_ok == 0)
			a->cats_ok = -1;
		return;
	}
	if (j->own_ok && a->cats_ok == 0) {
		/* the table the views use (tables_categories) is this one */
		a->cats = j->own;
		a->cats_ok = 1;
		j->own_ok = 0;
	}
	if (j->st == TL_STACK_CATEGORY && a->cats_ok > 0)
		tl_model_set_categories(&a->tm, &a->cats);
	(void)tl_model_adopt(&a->tm, &j->prep, why, size);
	if (a->view.hl != NULL)
		tl_hilite_update(a->view.hl, &a->tm);
}

int
modeworker_take(struct app *a)
{
	struct modeworker *b = a->modeworker;
	struct job *got[TL_STACK_COUNT];
	struct an_cat_probe *probe = NULL;
	int i, k, n = 0, n_probe = 0;

	if (b == NULL || !b->started)
		return 0;
	pthread_mutex_lock(&b->mu);
	for (i = 0; i < b->n_jobs; i++) {
		/* a probe of the category table being built: the mode is
		 * drawn from samples until the table comes (a finished
		 * job's goes with it) */
		if (b->jobs[i].probe != NULL &&
		    b->jobs[i].state == JOB_RUNNING) {
			probe = b->jobs[i].probe;
			b->jobs[i].probe = NULL;
			b->jobs[i].handed = 1;
		}
		if (b->jobs[i].state == JOB_DONE) {
			b->jobs[i].state = JOB_TAKEN;
			got[n++] = &b->jobs[i];
		}
	}
	pthread_mutex_unlock(&b->mu);
	if (probe != NULL && a->tm.groups_ok[TL_STACK_CATEGORY] == 0 &&
	    a->tm.cat_probe == NULL) {
		tl_model_set_cat_probe(&a->tm, probe);
		n_probe = 1;
	} else
		an_cat_probe_free(probe);
	for (i = 0; i < n; i++) {
		char w[256];

		adopt(a, got[i], w, sizeof w);
		for (k = 0; k < TL_STACK_COUNT; k++)
			if (b->job_of[k] == got[i] - b->jobs) {
				b->arrived |= 1u << k;
				snprintf(b->why[k], sizeof b->why[k], "%s", w);
			}
		job_free(got[i]);
	}
	return n + n_probe;
}

int
modeworker_arrived(struct app *a, int st, char *why, size_t size)
{
	struct modeworker *b = a->modeworker;

	why[0] = '\0';
	if (b == NULL || st < 0 || st >= TL_STACK_COUNT ||
	    !(b->arrived & 1u << st)) {
		if (b != NULL)
			b->arrived = 0;
		return 0;
	}
	/* the others are not on screen: nothing to tell */
	b->arrived = 0;
	snprintf(why, size, "%s", b->why[st]);
	return 1;
}

int
modeworker_running(struct app *a)
{
	struct modeworker *b = a->modeworker;
	int i, k, r = -1;

	if (b == NULL || !b->started)
		return -1;
	pthread_mutex_lock(&b->mu);
	for (i = 0; i < b->n_jobs && r < 0; i++)
		if (b->jobs[i].state == JOB_RUNNING)
			r = b->jobs[i].st;
	pthread_mutex_unlock(&b->mu);
	/* a job of several modes is named by the first m shows */
	for (k = 0; r >= 0 && k < TL_STACK_COUNT; k++)
		if (b->job_of[k] >= 0 && b->job_of[k] == b->job_of[r])
			return k;
	return r;
}

int
modeworker_progress(struct app *a, int st)
{
	struct modeworker *b = a->modeworker;
	struct job *j;
	uint64_t done;
	int r = -1;

	if (b == NULL || !b->started || st < 0 || st >= TL_STACK_COUNT ||
	    b->job_of[st] < 0)
		return -1;
	j = &b->jobs[b->job_of[st]];
	pthread_mutex_lock(&b->mu);
	if (j->state == JOB_RUNNING && j->work > 0) {
		done = atomic_load_explicit(&j->done, memory_order_relaxed);
		r = done >= j->work ? 99 : (int)(done * 100 / j->work);
	}
	pthread_mutex_unlock(&b->mu);
	return r;
}

long long
modeworker_ready_us(struct app *a, int st)
{
	struct modeworker *b = a->modeworker;
	long long r = -1;
	struct job *j;

	if (b == NULL || !b->started || st < 0 || st >= TL_STACK_COUNT ||
	    b->job_of[st] < 0)
		return -1;
	j = &b->jobs[b->job_of[st]];
	pthread_mutex_lock(&b->mu);
	if ((j->state == JOB_DONE || j->state == JOB_TAKEN) && !j->failed)
		r = j->end_us - b->start_us;
	pthread_mutex_unlock(&b->mu);
	return r;
}

void
modeworker_wait(struct app *a, int st)
{
	struct modeworker *b = a->modeworker;
	struct job *j;

	if (b == NULL || !b->started || st < 0 || st >= TL_STACK_COUNT ||
	    b->job_of[st] < 0)
		return;
	j = &b->jobs[b->job_of[st]];
	pthread_mutex_lock(&b->mu);
	b->want = st;
	pthread_cond_broadcast(&b->cv);
	while (j->state != JOB_DONE && j->state != JOB_TAKEN &&
	    !(b->done && j->state == JOB_TODO))
		pthread_cond_wait(&b->cv, &b->mu);
	pthread_mutex_unlock(&b->mu);
}

int
modeworker_makes_probe(struct app *a)
{
	struct modeworker *b = a->modeworker;

	/* fixed once the worker has started: no lock */
	return b != NULL && b->started && b->job_of[TL_STACK_CATEGORY] >= 0 &&
	    makes_probe(b, &b->jobs[b->job_of[TL_STACK_CATEGORY]]);
}

int
modeworker_wait_probe(struct app *a)
{
	struct modeworker *b = a->modeworker;
	struct job *j;
	int r;

	if (b == NULL || !b->started || b->job_of[TL_STACK_CATEGORY] < 0)
		return 0;
	j = &b->jobs[b->job_of[TL_STACK_CATEGORY]];
	if (!makes_probe(b, j))
		return 0; /* none asked, or the table was there */
	pthread_mutex_lock(&b->mu);
	b->want = TL_STACK_CATEGORY;
	pthread_cond_broadcast(&b->cv);
	while (j->probe == NULL && !j->handed &&
	    (j->state == JOB_RUNNING || (j->state == JOB_TODO && !b->done)))
		pthread_cond_wait(&b->cv, &b->mu);
	r = j->probe != NULL;
	pthread_mutex_unlock(&b->mu);
	return r;
}

void
modeworker_wait_all(struct app *a)
{
	struct modeworker *b = a->modeworker;
	int i;

	if (b == NULL || !b->started)
		return;
	pthread_mutex_lock(&b->mu);
	b->hold = 0;
	pthread_cond_broadcast(&b->cv);
	for (i = 0; i < b->n_jobs; i++)
		while (b->jobs[i].state != JOB_DONE &&
		    b->jobs[i].state != JOB_TAKEN &&
		    !(b->done && b->jobs[i].state == JOB_TODO))
			pthread_cond_wait(&b->cv, &b->mu);
	pthread_mutex_unlock(&b->mu);
}

void
modeworker_sampled(struct app *a, int st, long long took_us)
{
	struct modeworker *b = a->modeworker;

	if (b == NULL || !b->started || st < 0 || st >= TL_STACK_COUNT ||
	    b->sampled_us[st] > 0)
		return;
	b->sampled_us[st] = sv_mono_us() - b->start_us;
	b->sampled_took[st] = took_us;
}

long long
modeworker_sampled_us(struct app *a, int st, long long *took_us)
{
	struct modeworker *b = a->modeworker;

	if (b == NULL || !b->started || st < 0 || st >= TL_STACK_COUNT ||
	    b->sampled_us[st] <= 0)
		return -1;
	*took_us = b->sampled_took[st];
	return b->sampled_us[st];
}
