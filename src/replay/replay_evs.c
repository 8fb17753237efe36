/*
 * The events of a pass (replay_int.h): the build reads every event twice,
 * backward and forward, and decoding the index's stripes was a fifth of
 * it, on the one thread a pass runs on. Here a second thread reads the
 * events a few chunks ahead of the pass, a stripe's columns at a time
 * (its own cache entries: snap_stripe.h's caches are per thread), into a
 * ring of plain records; the pass waits only when it catches up.
 *
 * Chunk c of a pass holds its events c * EVS_CHUNK on, in the pass's
 * order (down: counted from the last event). The reader fills chunk c
 * once the pass is done with chunk c - EVS_RING; filled and done count
 * chunks, under the mutex. A reader that finds the ring full sleeps
 * until EVS_REFILL chunks are free, and the pass wakes it only then,
 * not at every chunk (2,800 times a pass on a 1 GB python-stack file;
 * each wakeup is a system call, and on a VM an interrupt between
 * cores). Without the thread (a short or heap-backed trace, or no
 * thread to be had) the pass reads each chunk itself when it gets there:
 * the same records either way.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "replay/replay_int.h"
#include "util/thread.h"
#include "util/xalloc.h"

size_t replay_read_ahead_min = 4 * EVS_CHUNK;

/* What a record holds beside its action and address, by action: one
 * rule for rev_read() and fill_stripe(). */
enum { REV_BARE, REV_BLOCK, REV_SEGMENT };

static inline int
rev_kind(unsigned action)
{
	switch (action) {
	case SNAP_ALLOC:
	case SNAP_FREE_COMPLETED:
		return REV_BLOCK;       /* size and stack */
	case SNAP_SEGMENT_ALLOC:
	case SNAP_SEGMENT_FREE:
	case SNAP_SEGMENT_MAP:
	case SNAP_SEGMENT_UNMAP:
		return REV_SEGMENT;     /* size and stream */
	default:
		return REV_BARE;
	}
}

void
rev_read(const struct snap_trace *t, uint64_t i, struct rev *e)
{
	unsigned a = (uint8_t)snap_ev_action(t, i);
	int k = rev_kind(a);

	/* only the columns the action has a use for are read */
	rev_make(e, a, snap_ev_addr(t, i), k != REV_BARE ? snap_ev_size(t, i)
	    : 0, k == REV_SEGMENT ? snap_ev_stream(t, i) : 0,
	    k == REV_BLOCK ? snap_ev_stack(t, i) : 0);
}

void
rev_make(struct rev *e, unsigned action, uint64_t addr, uint64_t size,
    uint64_t stream, uint32_t stack)
{
	memset(e, 0, sizeof *e);
	e->action = (uint8_t)action;
	e->addr = addr;
	switch (rev_kind(action)) {
	case REV_BLOCK:
		e->size = size;
		e->stack = stack;
		break;
	case REV_SEGMENT:
		e->size = size;
		e->stream = stream;
		break;
	default:
		break;
	}
}

/* Events [*lo, *hi) of chunk c. */
static void
chunk_span(const struct evs *es, uint64_t c, uint64_t *lo, uint64_t *hi)
{
	uint64_t a = c * EVS_CHUNK, b = a + EVS_CHUNK < es->n ? a + EVS_CHUNK
							       : es->n;

	if (es->down) {
		*lo = es->n - b;
		*hi = es->n - a;
	} else {
		*lo = a;
		*hi = b;
	}
}

/* Events [i, end) of stripe b of a stripe-coded trace into out[i - lo]:
 * the same records as rev_read(), from the stripe's decoded columns (the
 * stream only when a segment event needs it), where rev_read()'s lookup
 * of every value in the cache was a third of a read-ahead thread's
 * time. */
static void
fill_stripe(const struct snap_trace *t, uint64_t b, uint64_t i, uint64_t end,
    uint64_t lo, struct rev *out)
{
	const struct snap_stripeset *bs = t->stripes;
	uint64_t first = bs->dir[b].first, k;
	const uint8_t *act = snap_stripe_pin(bs, SNAP_COL_ACTION, b, 1);
	const uint64_t *addr = snap_stripe_pin(bs, SNAP_COL_ADDR, b, 8);
	const uint64_t *size = snap_stripe_pin(bs, SNAP_COL_SIZE, b, 8);
	const uint32_t *stack = snap_stripe_pin(bs, SNAP_COL_STACK, b, 4);
	const uint64_t *stream = NULL;

	for (; i < end; i++) {
		struct rev *e = &out[i - lo];

		k = i - first;
		memset(e, 0, sizeof *e);
		e->action = act[k];
		e->addr = addr[k];
		switch (rev_kind(e->action)) {
		case REV_BLOCK:
			e->size = size[k];
			e->stack = stack[k];
			break;
		case REV_SEGMENT:
			if (stream == NULL)
				stream = snap_stripe_pin(bs, SNAP_COL_STREAM, b,
				    8);
			e->size = size[k];
			e->stream = stream[k];
			break;
		default:
			break;
		}
	}
	if (stream != NULL)
		snap_stripe_unpin(stream);
	snap_stripe_unpin(stack);
	snap_stripe_unpin(size);
	snap_stripe_unpin(addr);
	snap_stripe_unpin(act);
}

/* Reads chunk c into its slot, in the pass's order. */
static void
fill(struct evs *es, uint64_t c)
{
	struct rev *slot = es->ring + (c % EVS_RING) * EVS_CHUNK;
	const struct snap_trace *t = es->t;
	uint64_t lo, hi, i, b, end;

	chunk_span(es, c, &lo, &hi);
	if (t->stripes == NULL) {
		for (i = lo; i < hi; i++)
			rev_read(t, i, &slot[i - lo]);
		return;
	}
	/* the slot is filled by event number: the order of reading does not
	 * matter, and by stripe it is each stripe once */
	for (i = lo; i < hi; i = end) {
		b = snap_stripe_find(t->stripes, i);
		end = t->stripes->dir[b].first + t->stripes->dir[b].n;
		if (i < t->stripes->dir[b].first || i >= end) {
			/* a directory that does not cover i: what the
			 * accessors read there */
			rev_read(t, i, &slot[i - lo]);
			end = i + 1;
			continue;
		}
		if (end > hi)
			end = hi;
		fill_stripe(t, b, i, end, lo, slot);
	}
}

static void *
read_ahead(void *arg)
{
	struct evs *es = arg;
	uint64_t c;

	for (c = 0; c < es->n_chunks; c++) {
		pthread_mutex_lock(&es->mu);
		if (!es->stop && c >= es->done + EVS_RING) {
			/* the ring is full: sleep until EVS_REFILL chunks
			 * are free, not one, so that the pass wakes this
			 * thread once every EVS_REFILL chunks (a wakeup costs
			 * the pass a system call, and more on a VM) */
			es->wake_at = c + EVS_REFILL - EVS_RING;
			while (!es->stop && es->done < es->wake_at)
				pthread_cond_wait(&es->cv, &es->mu);
			es->wake_at = UINT64_MAX;
		}
		if (es->stop) {
			pthread_mutex_unlock(&es->mu);
			break;
		}
		pthread_mutex_unlock(&es->mu);
		fill(es, c);
		pthread_mutex_lock(&es->mu);
		es->filled = c + 1;
		pthread_cond_broadcast(&es->cv);
		pthread_mutex_unlock(&es->mu);
	}
	return NULL;
}

void
evs_open(struct evs *es, const struct snap_trace *t, uint64_t n, int down)
{
	memset(es, 0, sizeof *es);
	es->t = t;
	es->n = n;
	es->n_chunks = (n + EVS_CHUNK - 1) / EVS_CHUNK;
	es->down = down;
	es->cur = UINT64_MAX;
	es->wake_at = UINT64_MAX;
	if (n == 0)
		return;
	es->ring = xreallocarray(NULL, EVS_RING * EVS_CHUNK,
	    sizeof *es->ring);
	/* heap columns read faster than a thread hands them over */
	if ((t->stripes == NULL && replay_read_ahead_min > 0) ||
	    n < replay_read_ahead_min)
		return;
	pthread_mutex_init(&es->mu, NULL);
	pthread_cond_init(&es->cv, NULL);
	es->threaded = sv_thread_start(&es->th, read_ahead, es) == 0;
	if (!es->threaded) {
		pthread_cond_destroy(&es->cv);
		pthread_mutex_destroy(&es->mu);
	}
}

const struct rev *
evs_next(struct evs *es, uint64_t i)
{
	uint64_t c = (es->down ? es->n - 1 - i : i) / EVS_CHUNK;

	if (c != es->cur) {
		if (!es->threaded)
			fill(es, c);
		else {
			pthread_mutex_lock(&es->mu);
			/* the chunks before c are used */
			es->done = c;
			if (c >= es->wake_at)
				pthread_cond_broadcast(&es->cv);
			while (es->filled <= c)
				pthread_cond_wait(&es->cv, &es->mu);
			pthread_mutex_unlock(&es->mu);
		}
		es->cur = c;
		chunk_span(es, c, &es->lo, &es->hi);
		es->at = es->ring + (c % EVS_RING) * EVS_CHUNK;
	}
	return &es->at[i - es->lo];
}

void
evs_close(struct evs *es)
{
	if (es->threaded) {
		sv_thread_stop(es->th, &es->mu, &es->cv, &es->stop);
		pthread_cond_destroy(&es->cv);
		pthread_mutex_destroy(&es->mu);
	}
	free(es->ring);
	memset(es, 0, sizeof *es);
}
