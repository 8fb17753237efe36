/*
 * Building an index (format 2, doc/FORMAT.md) while the snapshot is
 * parsed. The parser hands every event to a second thread, in batches,
 * which pairs allocations with frees and encodes, compresses and writes
 * the stripes of events and elements as they fill (idx_enc.c): the parse,
 * the part that cannot be split, runs alone on its core. The events are
 * never all in memory, so neither is any per-event column. When the
 * parse is over, the last stripes are written with the ghosts, then the
 * extension sections are built from a view of what was written (the
 * same stripe decoders as any reader's), then the whole-snapshot sections,
 * the directories, the header, and last the prelude at offset 0. Where
 * the file goes, and when it replaces another, is idx_locate.c's
 * business; without a file the same bytes go to memory.
 */
#include "config.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/idx_enc.h"
#include "index/idx_int.h"
#include "util/clock.h"
#include "util/tape.h"
#include "util/stop.h"
#include "util/thread.h"
#include "util/xalloc.h"

struct load_progress {
	const struct idx_opts *o;
};

static int
load_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	const struct idx_opts *o = ((struct load_progress *)ctx)->o;

	return o->progress(o->progress_ctx, idx_progress_at(done,
	    IDX_PROGRESS_PARSE), total);
}

/* In memory up to this many bytes of a build_tape builder's section. */
#define TAPE_MEM (4u << 20)

/* The sections' threads as the calling thread watches them: how many
 * still run, and the stop flag they poll (util/stop.h); what it reports
 * to (o's progress, within span) and how far each job is (jobs[0, n),
 * the snapshot s's events); the stop flag of the calling thread's own
 * work (caller_stop). */
struct ext_watch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t running;
	atomic_int stop;
	struct ext_job *jobs;
	size_t n;
	const struct snapshot *s;
	const struct idx_opts *o;
	const struct idx_span *span;
	const atomic_int *caller_stop;
};

/* One extension section to build. */
struct ext_job {
	const struct idx_section_builder *sb;
	const struct sv_index *ix;
	const struct snapshot *s;
	uint8_t *data;
	size_t len;
	struct tape *tape; /* a build_tape builder's */
	void *early;       /* what its stream gathered, or NULL */
	struct sv_error err;
	int rc;
	pthread_t th;
	int threaded;
	struct ext_watch *watch;
	atomic_uint_fast64_t meter; /* items its loops went through */
};

static void *
ext_job_run(void *arg)
{
	struct ext_job *j = arg;
	const struct idx_section_builder *sb = j->sb;

	sv_error_clear(&j->err);
	if (sb->build_tape != NULL) {
		j->tape = xmalloc(sizeof *j->tape);
		tape_init(j->tape, TAPE_MEM);
		j->rc = sb->build_tape(j->s, sb->arg, j->early, j->tape,
		    &j->err);
		j->len = (size_t)tape_len(j->tape);
		if (j->rc == 0 && j->tape->err != 0)
			j->rc = sv_error_set(&j->err, SV_ERR_IO, SV_NO_OFFSET,
			    "section %s: %s", sb->name,
			    strerror(j->tape->err));
		return NULL;
	}
	j->rc = sb->build_index != NULL ? sb->build_index(j->ix, sb->arg,
	    &j->data, &j->len, &j->err) : sb->build(j->s, sb->arg, &j->data,
	    &j->len, &j->err);
	return NULL;
}

/* A section on a thread of its own, under the watch's stop flag and
 * with a meter of its own. */
static void *
ext_job_thread(void *arg)
{
	struct ext_job *j = arg;
	struct ext_watch *w = j->watch;

	sv_stop_flag = &w->stop;
	sv_stop_meter = &j->meter;
	if (j->sb->background)
		sv_thread_yield_cores(5);
	ext_job_run(j);
	pthread_mutex_lock(&w->mu);
	w->running--;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* How far the sections are, 0 to 999: the furthest meter of those
 * that tell (a builder's progress_passes, idx.h) against its passes
 * over every event. */
static uint64_t
ext_per_mille(struct ext_job *jobs, size_t n, const struct snapshot *s)
{
	uint64_t events = 0, best = 0, m, want;
	uint32_t d;
	size_t i;

	for (d = 0; d < s->n_traces; d++)
		events += s->traces[d].n;
	for (i = 0; i < n; i++) {
		if (jobs[i].sb->progress_passes == 0 || events == 0)
			continue;
		want = events * jobs[i].sb->progress_passes;
		m = atomic_load_explicit(&jobs[i].meter,
		    memory_order_relaxed);
		m = m >= want ? 999 : (uint64_t)((unsigned __int128)m * 1000 /
		    want);
		if (m > best)
			best = m;
	}
	return best > 999 ? 999 : best;
}

/* Tells o->progress how far the sections are (span: where they lie on
 * its scale) and sets the watch's stop flag when it cancels, or when the
 * calling thread's own work is asked to stop; nothing once it is set.
 * The tick of a section built on the calling thread (its thread did not
 * start): it is watched from its own polls (util/stop.h). */
static void
ext_report(void *ctx)
{
	struct ext_watch *w = ctx;
	const struct idx_span *span = w->span;
	const struct idx_opts *o = w->o;
	uint64_t at;

	if (atomic_load(&w->stop))
		return;
	at = span->from + (span->to - span->from) *
	    ext_per_mille(w->jobs, w->n, w->s) / 1000;
	if ((w->caller_stop != NULL && atomic_load(w->caller_stop)) ||
	    (o->progress != NULL &&
	    o->progress(o->progress_ctx, at, span->total) != 0))
		atomic_store(&w->stop, 1);
}

static void
ext_run_here(struct ext_watch *w, struct ext_job *j)
{
	sv_stop_flag = &w->stop;
	sv_stop_meter = &j->meter;
	sv_stop_tick_ctx = w;
	sv_stop_tick = ext_report;
	ext_job_run(j);
	sv_stop_tick = NULL;
	sv_stop_tick_ctx = NULL;
	sv_stop_meter = NULL;
	sv_stop_flag = w->caller_stop;
}

/* Waits for the sections' threads, reporting every tenth of a second
 * (ext_report). Returns 1 when they were stopped. */
static int
ext_wait(struct ext_watch *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->running > 0) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
		if (w->running == 0 || atomic_load(&w->stop))
			continue;
		pthread_mutex_unlock(&w->mu);
		ext_report(w);
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return atomic_load(&w->stop);
}

/* Builds the extension sections opts asks for and ix lacks (or has but
 * cannot read). They read the snapshot and the index and nothing else
 * (a thread's cache entries are its own), so each runs on a thread of
 * its own: the replay's checkpoints beside the summary on a second
 * core, while this thread tells o->progress how far they are (within
 * span) and stops them when it cancels (their loops poll util/stop.h:
 * the replay's passes at once, others where they do). A section whose
 * thread did not start (--threads 1) is built on this thread, which
 * reports and stops it from the section's own polls (ext_run_here). */
int
idx_build_extensions(struct sv_index *ix, const struct snapshot *s,
    const struct idx_opts *o, const struct idx_span *span,
    struct sv_error *err)
{
	struct ext_job *jobs = xcalloc(o->n_sections + 1, sizeof *jobs);
	struct ext_watch watch;
	pthread_condattr_t ca;
	size_t i, n = 0;
	int r = 0, stopped;

	for (i = 0; i < o->n_sections; i++) {
		const struct idx_section_builder *sb = &o->sections[i];
		struct idx_ext *e;

		if (!idx_section_name_ok(sb->name)) {
			free(jobs);
			return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
			    "bad section name '%s'", sb->name);
		}
		e = idx_ext_find(ix, sb->name);
		if (e != NULL && e->state >= 0)
			continue;
		jobs[n].sb = sb;
		jobs[n].ix = ix;
		jobs[n].s = s;
		jobs[n].early = ix->early != NULL ? ix->early[i] : NULL;
		n++;
	}
	pthread_mutex_init(&watch.mu, NULL);
	/* the waits' deadlines on the clock a change of the date leaves */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&watch.cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&watch.stop, 0);
	watch.running = 0;
	watch.jobs = jobs;
	watch.n = n;
	watch.s = s;
	watch.o = o;
	watch.span = span;
	watch.caller_stop = sv_stop_flag;
	for (i = 0; i < n; i++) {
		jobs[i].watch = &watch;
		atomic_init(&jobs[i].meter, 0);
		pthread_mutex_lock(&watch.mu);
		watch.running++;
		pthread_mutex_unlock(&watch.mu);
		jobs[i].threaded = sv_thread_start(&jobs[i].th,
		    ext_job_thread, &jobs[i]) == 0;
		if (!jobs[i].threaded) {
			pthread_mutex_lock(&watch.mu);
			watch.running--;
			pthread_mutex_unlock(&watch.mu);
		}
	}
	for (i = 0; i < n; i++)
		if (!jobs[i].threaded && !atomic_load(&watch.stop))
			ext_run_here(&watch, &jobs[i]);
	stopped = ext_wait(&watch);
	for (i = 0; i < n; i++)
		if (jobs[i].threaded)
			pthread_join(jobs[i].th, NULL);
	pthread_mutex_destroy(&watch.mu);
	pthread_cond_destroy(&watch.cv);
	if (stopped) {
		r = sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET,
		    "cancelled");
	}
	for (i = 0; i < n; i++) {
		struct idx_ext *e;

		if (r != 0 || jobs[i].rc != 0) {
			if (r == 0) {
				if (err != NULL)
					*err = jobs[i].err;
				r = -1;
			}
			free(jobs[i].data);
			idx_free_tape(jobs[i].tape);
			continue;
		}
		e = idx_ext_find(ix, jobs[i].sb->name);
		if (e == NULL) {
			ix->ext = xreallocarray(ix->ext, ix->n_ext + 1,
			    sizeof *ix->ext);
			e = &ix->ext[ix->n_ext++];
			e->data = NULL;
			e->pieces = NULL;
			e->tape = NULL;
		}
		free(e->data);
		free(e->pieces);
		idx_free_tape(e->tape);
		memset(e, 0, sizeof *e);
		snprintf(e->name, sizeof e->name, "%s", jobs[i].sb->name);
		e->tape = jobs[i].tape;
		e->data = jobs[i].data != NULL || e->tape != NULL
		    ? jobs[i].data : xmalloc(1);
		e->len = jobs[i].len;
		e->state = 1;
	}
	free(jobs);
	return r;
}

/* 1 when a section o registers has no entry in ix (none stored, or one
 * over its bound). Nothing is read. */
int
idx_missing_extensions(const struct sv_index *ix, const struct idx_opts *o)
{
	size_t i;

	for (i = 0; i < o->n_sections; i++)
		if (idx_ext_find(ix, o->sections[i].name) == NULL)
			return 1;
	return 0;
}

/* ---- the parser -> encoder pipe ------------------------------------------ */

#define BATCH 4096   /* events per batch */
#define N_BATCH 8    /* batches in flight */
#define WAKE 4       /* full batches that wake the encoder: it drains
			every full batch once awake, and the parser wakes
			it a quarter as often as at every batch (a wakeup
			is a system call, on a VM an interrupt between
			cores) */

struct pipe {
	pthread_t th;
	int threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct idx_enc_slot *buf; /* N_BATCH batches of BATCH slots */
	size_t len[N_BATCH];
	unsigned prod, cons;  /* slot being filled, slot to encode next */
	unsigned full;        /* published slots not yet encoded */
	int done;
	struct idx_enc *enc;
	/* the sections' streams (idx_section_builder.stream), on the
	 * encoder's thread only: early[i] for o->sections[i], or NULL */
	const struct idx_opts *o;
	void **early;
};

/* The batch at slots to the sections' streams, after the encoder. */
static void
pipe_stream(struct pipe *p, const struct idx_enc_slot *slots, size_t n)
{
	size_t i;

	if (p->early == NULL)
		return;
	for (i = 0; i < p->o->n_sections; i++)
		if (p->early[i] != NULL)
			p->o->sections[i].stream(p->early[i], &slots->r, n,
			    sizeof *slots);
}

static void *
pipe_run(void *arg)
{
	struct pipe *p = arg;

	for (;;) {
		unsigned k;

		pthread_mutex_lock(&p->mu);
		while (p->full == 0 && !p->done)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->full == 0) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		k = p->cons;
		pthread_mutex_unlock(&p->mu);
		idx_enc_events(p->enc, p->buf + (size_t)k * BATCH, p->len[k]);
		pipe_stream(p, p->buf + (size_t)k * BATCH, p->len[k]);
		pthread_mutex_lock(&p->mu);
		p->cons = (p->cons + 1) % N_BATCH;
		p->full--;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
}

/* Before the first event, on the parsing thread: the encoder's thread
 * has none of them yet. */
static void
pipe_events_begin(void *ctx, const struct snapshot *s)
{
	struct pipe *p = ctx;
	size_t i;

	if (p->early == NULL)
		return;
	for (i = 0; i < p->o->n_sections; i++)
		if (p->early[i] != NULL &&
		    p->o->sections[i].stream_begin != NULL)
			p->o->sections[i].stream_begin(p->early[i], s);
}

/* Frees what the streams of the n sections sb gathered (*early, by
 * section; NULL: nothing). */
static void
streams_free(const struct idx_section_builder *sb, size_t n, void ***early)
{
	size_t i;

	if (*early == NULL)
		return;
	for (i = 0; i < n; i++)
		if ((*early)[i] != NULL)
			sb[i].stream_free((*early)[i]);
	free(*early);
	*early = NULL;
}

/* What the sections' streams gathered (*early, o's sections, taken),
 * for the open that adds them. */
static struct idx_streamed *
streamed_new(const struct idx_opts *o, const struct src_key *key,
    void ***early)
{
	struct idx_streamed *st = xcalloc(1, sizeof *st);

	st->key = *key;
	st->n = o->n_sections;
	st->sections = xcalloc(st->n, sizeof *st->sections);
	memcpy(st->sections, o->sections, st->n * sizeof *st->sections);
	st->early = *early;
	*early = NULL;
	return st;
}

void
idx_streamed_free(struct idx_streamed *st)
{
	if (st == NULL)
		return;
	streams_free(st->sections, st->n, &st->early);
	free(st->sections);
	free(st);
}

void
idx_streamed_lend(struct sv_index *ix, const struct idx_opts *o,
    const struct src_key *key)
{
	const struct idx_streamed *st = o->streamed;
	size_t i, j;

	if (st == NULL || ix->early != NULL || st->key.size != key->size ||
	    st->key.mtime_ns != key->mtime_ns || st->key.hash != key->hash)
		return;
	ix->early = xcalloc(o->n_sections + 1, sizeof *ix->early);
	for (i = 0; i < o->n_sections; i++)
		for (j = 0; j < st->n; j++)
			if (st->early[j] != NULL &&
			    strcmp(st->sections[j].name,
			    o->sections[i].name) == 0 &&
			    st->sections[j].build_tape ==
			    o->sections[i].build_tape)
				ix->early[i] = st->early[j];
}

void
idx_streamed_unlend(struct sv_index *ix)
{
	free(ix->early);
	ix->early = NULL;
}

/* Frees what o's sections' streams gathered (*early). */
static void
early_free(const struct idx_opts *o, void ***early)
{
	streams_free(o->sections, o->n_sections, early);
}

/* Starts the encoder's thread, and the sections' streams when it has
 * one: with one thread they would be the same work as after the parse,
 * on the same core. */
static void
pipe_start(struct pipe *p, struct idx_enc *enc, const struct idx_opts *o)
{
	size_t i;

	p->enc = enc;
	p->o = o;
	/* cleared here, which touches every page before the parse: left to
	 * the streaming stores' faults, the parse took a tenth longer */
	p->buf = xaligned_calloc(64, (size_t)N_BATCH * BATCH, sizeof *p->buf);
	p->prod = p->cons = p->full = 0;
	p->len[0] = 0;
	p->done = 0;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (i = 0; i < o->n_sections; i++)
		if (o->sections[i].stream_new != NULL &&
		    o->sections[i].stream != NULL &&
		    o->sections[i].stream_free != NULL &&
		    o->sections[i].build_tape != NULL) {
			if (p->early == NULL)
				p->early = xcalloc(o->n_sections,
				    sizeof *p->early);
			p->early[i] = o->sections[i].stream_new(
			    o->sections[i].arg);
		}
	p->threaded = sv_thread_start(&p->th, pipe_run, p) == 0;
	if (!p->threaded)
		early_free(o, &p->early);
}

/* Hands the filled slot to the encoder and waits for a free one. */
static void
pipe_publish(struct pipe *p)
{
	if (!p->threaded) {
		idx_enc_events(p->enc, p->buf, p->len[0]);
		p->len[0] = 0;
		return;
	}
#ifdef __SSE2__
	_mm_sfence(); /* the slots' streaming stores before the handover */
#endif
	pthread_mutex_lock(&p->mu);
	p->full++;
	if (p->full >= WAKE)
		pthread_cond_broadcast(&p->cv);
	while (p->full == N_BATCH)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	p->prod = (p->prod + 1) % N_BATCH;
	p->len[p->prod] = 0;
}

/* Writes r into slot d, the whole cache line, past the cache: the line
 * was last read by the encoder on the other core, and an ordinary store
 * first fetched it back from there, an exchange between the cores for
 * every event (a twentieth of the parsing thread, perf). The encoder
 * then reads it from memory, in order, which the prefetcher hides. */
static inline void
slot_put(struct idx_enc_slot *d, const struct snap_evrec *r)
{
#ifdef __SSE2__
	__m128i *v = (__m128i *)(void *)d;
	const __m128i *q = (const __m128i *)(const void *)r;
	long long tail;

	_Static_assert(sizeof *r > 48 && sizeof *r <= 56 &&
	    sizeof *d == 64, "a record is 49 to 56 bytes");
	_mm_stream_si128(v, _mm_loadu_si128(q));
	_mm_stream_si128(v + 1, _mm_loadu_si128(q + 1));
	_mm_stream_si128(v + 2, _mm_loadu_si128(q + 2));
	tail = 0;
	memcpy(&tail, (const char *)r + 48, sizeof *r - 48);
	_mm_stream_si64((long long *)(void *)((char *)d + 48), tail);
	_mm_stream_si64((long long *)(void *)((char *)d + 56), 0);
#else
	d->r = *r;
#endif
}

static int
pipe_push(void *ctx, const struct snap_evrec *r)
{
	struct pipe *p = ctx;
	unsigned k = p->prod;
	struct idx_enc_slot *d = &p->buf[(size_t)k * BATCH + p->len[k]++];

	if (p->threaded)
		slot_put(d, r);
	else /* the same thread reads it next: from the cache */
		d->r = *r;
	if (p->len[k] == BATCH)
		pipe_publish(p);
	return 0;
}

/* Encodes what is left and stops the encoder thread. */
static void
pipe_finish(struct pipe *p)
{
	if (p->len[p->prod] > 0)
		pipe_publish(p);
	if (p->threaded) {
		sv_thread_stop(p->th, &p->mu, &p->cv, &p->done);
		p->threaded = 0;
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->buf);
	p->buf = NULL;
}

/* ---- parsing ---------------------------------------------------------- */

/* Feeds the events of a snapshot loaded with its columns (a test's own
 * loader) into the pipe, and drops the columns. */
static void
feed_loaded(struct pipe *p, struct snapshot *s)
{
	uint32_t d;
	uint64_t i;

	pipe_events_begin(p, s);
	for (d = 0; d < s->n_traces; d++) {
		struct snap_trace *t = &s->traces[d];
		int has_time = snap_trace_has_time(t);

		for (i = 0; i < t->n; i++) {
			struct snap_evrec r;

			r.addr = snap_ev_addr(t, i);
			r.size = snap_ev_size(t, i);
			r.stream = snap_ev_stream(t, i);
			r.time_us = snap_ev_time(t, i);
			r.device = d;
			r.stack = snap_ev_stack(t, i);
			r.ctx = snap_ev_ctx(t, i);
			r.meta = snap_ev_meta(t, i);
			r.pool = snap_ev_pool_str(t, i);
			r.action = (uint8_t)snap_ev_action(t, i);
			r.has_time = (uint8_t)has_time;
			pipe_push(p, &r);
		}
		snap_trace_free_columns(t);
	}
}

/* Parses path, every event going through p. */
static int
parse(const char *path, const struct idx_opts *o, struct pipe *p,
    struct snapshot **out, struct sv_error *err)
{
	struct snap_load_opts lo;
	struct load_progress lp = {o};

	memset(&lo, 0, sizeof lo);
	if (o->progress != NULL) {
		lo.progress = load_progress_cb;
		lo.progress_ctx = &lp;
	}
	if (o->load != NULL) {
		if (o->load(path, &lo, out, err) != 0)
			return -1;
		feed_loaded(p, *out);
		return 0;
	}
	lo.event = pipe_push;
	lo.events_begin = pipe_events_begin;
	lo.event_ctx = p;
	return snap_load_file(path, &lo, out, err);
}

/* ---- the view of what was written ------------------------------------- */

/* Builds the extension sections from s with its events bound to the
 * stripes and directories just written (src). The sections are left in
 * *view, whose devices are unbound again. */
static int
build_ext_view(struct sv_index *view, struct snapshot *s,
    const struct idx_devsrc *src, const struct idx_enc_out *eo,
    const struct idx_opts *o, uint64_t src_size, struct sv_error *err)
{
	struct idx_span span;
	char why[128];
	uint32_t i;
	int r;

	span.from = idx_progress_at(src_size, IDX_PROGRESS_PARSE);
	span.to = idx_progress_at(src_size, IDX_PROGRESS_SECTIONS);
	span.total = src_size;
	view->snap = s;
	if (idx_bind_devices(view, src, why, sizeof why) != 0)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "index just written does not read back: %s", why);
	/* the encoder's records are the devices bound, in their order (its
	 * records themselves went with it: the tallies are the caller's) */
	for (i = 0; i < view->n_devs && i < eo->n_recs; i++)
		if (eo->tally != NULL &&
		    eo->tally[i].device == view->devs[i].rec.device)
			view->devs[i].tally = &eo->tally[i];
	r = idx_build_extensions(view, s, o, &span, err);
	idx_unbind_devices(view);
	view->snap = NULL;
	return r;
}

/* Where the column data and the sections written after it lie in the
 * file (or the memory image): offsets, turned into a devsrc by
 * written_src(). */
struct written {
	uint64_t data_off, data_len;
	uint64_t off[5], n[5]; /* devices, evdir, eldir, late, pyramid */
	uint64_t strs_data, strs_off, annotations; /* snapshot sections */
};

/* Writes the column data's entry and the directories and pyramid that go
 * with it (used in place by readers), right after the column data: the
 * extension sections then read them from the file, and the encoder's
 * copies can go before those are built. */
static void
write_dirs(struct writer *w, const struct idx_enc_out *eo,
    struct written *wr)
{
	static const char *const name[5] = {IDX_SEC_DEVICES, IDX_SEC_EVDIR,
	    IDX_SEC_ELDIR, IDX_SEC_LATE, IDX_SEC_LOD};
	const void *p[5] = {eo->recs, eo->evdir, eo->eldir, eo->late, eo->lod};
	uint64_t len[5];
	struct toc_ent *t;
	int k;

	wr->data_off = eo->data_off;
	wr->data_len = eo->data_len;
	wr->n[0] = eo->n_recs;
	wr->n[1] = eo->n_evdir;
	wr->n[2] = eo->n_eldir;
	wr->n[3] = eo->n_late;
	wr->n[4] = eo->n_lod;
	len[0] = eo->n_recs * sizeof *eo->recs;
	len[1] = eo->n_evdir * sizeof *eo->evdir;
	len[2] = eo->n_eldir * sizeof *eo->eldir;
	len[3] = eo->n_late * 16;
	len[4] = eo->n_lod * sizeof *eo->lod;
	XGROW(w->toc, w->cap_toc, w->n_toc + 1);
	t = &w->toc[w->n_toc++];
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", IDX_SEC_COLDATA);
	t->off = eo->data_off;
	t->len = t->raw = eo->data_len;
	t->comp = IDX_COMP_NONE;
	t->hash = eo->data_hash;
	for (k = 0; k < 5; k++) {
		idx_w_section(w, name[k], p[k], len[k], IDX_COMP_NONE);
		wr->off[k] = w->toc[w->n_toc - 1].off;
	}
}

/* Where section name (the last of that name) starts. */
static uint64_t
toc_off(const struct writer *w, const char *name)
{
	size_t i;

	for (i = w->n_toc; i > 0; i--)
		if (strcmp(w->toc[i - 1].name, name) == 0)
			return w->toc[i - 1].off;
	return 0;
}

/* Writes the whole-snapshot sections, and notes where those that grow
 * with the file lie. */
static void
write_snapshot(struct writer *w, const struct snapshot *s,
    struct written *wr)
{
	idx_w_snapshot(w, s);
	wr->strs_data = toc_off(w, IDX_SEC_STRS_DATA);
	wr->strs_off = toc_off(w, IDX_SEC_STRS_OFF);
	wr->annotations = toc_off(w, IDX_SEC_ANNOTATIONS);
}

/* The string table and the annotations of s grow with the file (with
 * ProfilerStep annotations, two annotations and a name per step): once
 * written, their heap copies go, and the extension sections read them
 * from the index written so far (base), like a reader of the index, in
 * pages given back with the others. Only for a snapshot that owns its
 * arrays; returns 1 when lent. */
static int
lend_written(struct snapshot *s, const uint8_t *base,
    const struct written *wr)
{
	if (s->backing_free != NULL)
		return 0;
	free(s->strs.data);
	free(s->strs.off);
	snap_free_annotations(s);
	s->strs.data = (char *)(uintptr_t)(base + wr->strs_data);
	s->strs.off = (uint64_t *)(uintptr_t)(base + wr->strs_off);
	s->annotations = (struct snap_annotation *)(uintptr_t)(base +
	    wr->annotations);
	return 1;
}

/* Before the index written so far is unmapped: s has no strings and no
 * annotations left (only their counts), which is all that the rest of
 * the build reads of them. */
static void
end_lend(struct snapshot *s)
{
	s->strs.data = NULL;
	s->strs.off = NULL;
	s->annotations = NULL;
}

/* The index written so far: mapped from the file, or the memory image
 * (valid until the next write): *basep, and src from it; *map is NULL
 * for the memory image. Returns 0, or -1 when the file cannot be mapped. */
static int
written_src(struct writer *w, const struct written *wr,
    struct idx_devsrc *src, const uint8_t **basep, void **map,
    size_t *map_len)
{
	const uint8_t *base;

	*map = NULL;
	*map_len = 0;
	if (w->fd < 0) {
		base = w->mem->p;
	} else {
		*map_len = (size_t)w->off;
		*map = mmap(NULL, *map_len, PROT_READ, MAP_SHARED, w->fd, 0);
		if (*map == MAP_FAILED) {
			*map = NULL;
			return -1;
		}
		base = *map;
	}
	memset(src, 0, sizeof *src);
	src->recs = (const void *)(base + wr->off[0]);
	src->n_recs = wr->n[0];
	src->evdir = (const void *)(base + wr->off[1]);
	src->n_evdir = wr->n[1];
	src->eldir = (const void *)(base + wr->off[2]);
	src->n_eldir = wr->n[2];
	src->late = (const void *)(base + wr->off[3]);
	src->n_late = wr->n[3];
	src->lod = (const void *)(base + wr->off[4]);
	src->n_lod = wr->n[4];
	src->data = base + wr->data_off;
	src->data_len = wr->data_len;
	*basep = base;
	return 0;
}

static void
view_free(struct sv_index *view)
{
	size_t i;

	for (i = 0; i < view->n_ext; i++) {
		free(view->ext[i].data);
		free(view->ext[i].pieces);
		idx_free_tape(view->ext[i].tape);
	}
	free(view->ext);
	view->ext = NULL;
	view->n_ext = 0;
}

int
idx_build_into(struct writer *w, const char *path, const struct src_key *key,
    const struct idx_opts *o, struct sv_error *err)
{
	struct snapshot *s = NULL;
	struct idx_enc *enc;
	struct idx_enc_out eo;
	struct sv_index view;
	struct snap_stripedrop drop;
	struct written wr;
	struct idx_devsrc src;
	const uint8_t *base;
	struct pipe *p = xcalloc(1, sizeof *p);
	uint8_t pre[IDX_PRELUDE_LEN];
	void *map;
	size_t map_len;
	char *abs = NULL;
	int r = -1, rp, lent;
	long long t0 = sv_mono_us(), t1;

	memset(&view, 0, sizeof view);
	memset(&eo, 0, sizeof eo);
	/* a prelude that fails its checksum until the real one is written:
	 * the magic says the file is ours, the zero hash that it is not
	 * complete */
	memset(pre, 0, sizeof pre);
	memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
	idx_w_raw(w, pre, sizeof pre);
	idx_w_align(w);
	enc = idx_enc_new(w);
	pipe_start(p, enc, o);
	rp = parse(path, o, p, &s, err);
	pipe_finish(p);
	view.early = p->early;
	free(p);
	w->parse_s = (double)(sv_mono_us() - t0) / 1e6;
	w->at = idx_progress_at(w->src_size, IDX_PROGRESS_PARSE);
	if (rp != 0)
		goto out;
	if (idx_enc_finish(enc, s, &eo) != 0 || w->err != 0)
		goto io;
	write_dirs(w, &eo, &wr);
	idx_enc_free(enc);
	enc = NULL;
	write_snapshot(w, s, &wr);
	if (w->err != 0)
		goto io;
	if (o->n_sections > 0 && !o->sections_later) {
		if (written_src(w, &wr, &src, &base, &map, &map_len) != 0)
			goto io;
		/* the pages of the file the sections read go back as they
		 * read them */
		memset(&drop, 0, sizeof drop);
		drop.map = map;
		drop.len = map_len;
		src.drop = map != NULL ? &drop : NULL;
		lent = lend_written(s, base, &wr);
		view.mut = xcalloc(1, sizeof *view.mut);
		t1 = sv_mono_us();
		rp = build_ext_view(&view, s, &src, &eo, o, w->src_size, err);
		w->sections_s = (double)(sv_mono_us() - t1) / 1e6;
		w->at = idx_progress_at(w->src_size, IDX_PROGRESS_SECTIONS);
		if (lent)
			end_lend(s);
		free(view.mut);
		view.mut = NULL;
		if (map != NULL)
			munmap(map, map_len);
		if (rp != 0)
			goto out;
	}
	idx_w_extensions(w, &view);
	abs = realpath(path, NULL);
	if (idx_w_finish(w, key, abs != NULL ? abs : path, s) == 0)
		r = 0;
io:
	if (r != 0 && w->cancelled)
		sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET, "cancelled");
	else if (r != 0)
		sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(w->err ? w->err : EIO));
out:
	free(abs);
	if (r == 0 && o->sections_later && o->streamed_out != NULL &&
	    view.early != NULL)
		*o->streamed_out = streamed_new(o, key, &view.early);
	early_free(o, &view.early);
	view_free(&view);
	idx_enc_free(enc);
	free(eo.tally);
	snap_free(s);
	return r;
}

/* An index built into memory and opened from there (nothing is written:
 * --no-cache, or no place takes a file). */
int
idx_build_memory(const char *path, const struct idx_opts *o,
    struct sv_index **out, struct sv_error *err)
{
	struct snap_buf mem;
	struct writer w;
	struct src_key key;
	char why[256];

	memset(&mem, 0, sizeof mem);
	memset(&w, 0, sizeof w);
	memset(&key, 0, sizeof key);
	w.fd = -1;
	w.mem = &mem;
	w.o = o;
	if (idx_build_into(&w, path, &key, o, err) != 0) {
		free(w.toc);
		snap_buf_free(&mem);
		return -1;
	}
	free(w.toc);
	if (idx_map_index(-1, NULL, mem.p, mem.len, NULL, 1, o, out, why,
		sizeof why) != IDX_OK)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "index built in memory does not read back: %s", why);
	(*out)->in_memory = 1;
	(*out)->built = 1;
	(*out)->parse_s = w.parse_s;
	(*out)->sections_s = w.sections_s;
	return 0;
}
