/*
 * The per-device summary of a snapshot and its index section. See
 * summary.h.
 */
#include "config.h"

#include "analysis/summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/leaks.h"
#include "analysis/site.h"
#include "analysis/steps.h"
#include "analysis/top.h"
#include "index/idx_lod.h"
#include "snapshot/snap_stripe.h"
#include "util/stop.h"
#include "util/thread.h"
#include "util/xalloc.h"

static const uint8_t sum_magic[8] = {'S', 'V', 'S', 'U', 'M', 0, 0, 2};

/* ---- computing ----------------------------------------------------------- */

/* Sample of event e when n events are cut into m samples. */
static uint32_t
sample_of(uint64_t e, uint64_t n, uint32_t m)
{
	return (uint32_t)((unsigned __int128)e * m / n);
}

static uint16_t
quantise(uint64_t v, uint64_t peak)
{
	if (peak == 0)
		return 0;
	if (v >= peak)
		return AN_SUM_Q;
	return (uint16_t)((unsigned __int128)v * AN_SUM_Q / peak);
}

/* The first event after which reserved is max (> tl->base_reserved),
 * found through the pyramid's first level: the first bucket reaching max,
 * then its events. -1 if none does (a pyramid that disagrees with the
 * events). */
static int64_t
first_reserved_at(const struct idx_lod *lod, const struct idx_timeline *tl,
    uint64_t max)
{
	uint64_t b, i, n = tl->n_events, w = 1ull << IDX_LOD_MIN_SHIFT;
	struct idx_lod_bucket bk;

	for (b = 0; b < lod->level_n[0]; b++) {
		idx_lod_get(lod, lod->level_off[0] + b, &bk);
		if (bk.max_reserved < max)
			continue;
		for (i = b * w; i < n && i < (b + 1) * w; i++)
			if (idx_tl_reserved(tl, (int64_t)i) == max)
				return (int64_t)i;
		return -1;
	}
	return -1;
}

/* Samples and reserved extremes through the pyramid: the samples are
 * spans of it (their whole buckets, and the events of at most two partial
 * ones, read in one pass over their blocks), the reserved maximum theirs.
 * The same values as the pass over every event in scan_events(). Returns
 * -1 when the pyramid does not cover the timeline, o then untouched (hi
 * perhaps written). */
static int
scan_lod(const struct idx_lod *lod, const struct idx_timeline *tl,
    uint64_t *hi, uint32_t m, struct an_sum_dev *o)
{
	uint64_t n = tl->n_events, *bound, max = 0;
	struct idx_lod_bucket *b;
	uint32_t k;
	int rc = 0;

	if (lod == NULL || lod->n_events != n || n == 0 || m == 0 ||
	    lod->n_levels == 0)
		return -1;
	/* sample k: the events e with sample_of(e, n, m) == k */
	bound = xreallocarray(NULL, (size_t)m + 1, sizeof *bound);
	for (k = 0; k <= m; k++)
		bound[k] = (uint64_t)(((unsigned __int128)k * n + m - 1) / m);
	b = xreallocarray(NULL, m, sizeof *b);
	idx_lod_spans(lod, tl, bound, m, b);
	for (k = 0; k < m; k++) {
		hi[k] = b[k].max_total;
		if (b[k].max_reserved > max)
			max = b[k].max_reserved;
	}
	if (max > o->reserved_max) {
		int64_t e = first_reserved_at(lod, tl, max);
		uint64_t tot;

		if (e < 0) {
			rc = -1;
		} else {
			tot = idx_tl_total(tl, e);
			o->reserved_max = max;
			o->reserved_max_ev = e;
			o->waste = max > tot ? max - tot : 0;
		}
	}
	free(bound);
	free(b);
	return rc;
}

/* Samples, reserved extremes, oom events: through the pyramid when there
 * is one (lod; NULL: none), else one pass over the events. */
static void
scan_events(const struct snapshot *s, const struct idx_timeline *tl,
    const struct idx_lod *lod, const struct an_ev_counts *counts,
    struct an_sum_dev *o)
{
	const struct snap_trace *t = snap_trace_of(s, tl->device);
	uint64_t i, n = tl->n_events, *hi;
	uint32_t m = n < AN_SUM_SPARK ? (uint32_t)n : AN_SUM_SPARK, k;
	int fast;

	o->reserved_max = tl->base_reserved;
	o->reserved_max_ev = -1;
	o->waste = tl->base_reserved > tl->base_total ?
	    tl->base_reserved - tl->base_total : 0;
	hi = m > 0 ? xcalloc(m, sizeof *hi) : NULL;
	fast = scan_lod(lod, tl, hi, m, o) == 0;
	if (!fast && hi != NULL) /* o is as it was; hi may be half done */
		memset(hi, 0, m * sizeof *hi);
	if (fast && t != NULL && t->n == n && counts->events == n) {
		o->ooms = counts->by_action[SNAP_OOM];
	} else {
		for (i = 0; i < n && !sv_stop_poll(i); i++) {
			uint64_t tot, res;

			if (t != NULL && i < t->n &&
			    snap_ev_action(t, i) == SNAP_OOM)
				o->ooms++;
			if (fast)
				continue;
			tot = idx_tl_total(tl, (int64_t)i);
			res = idx_tl_reserved(tl, (int64_t)i);
			k = sample_of(i, n, m);
			if (tot > hi[k])
				hi[k] = tot;
			if (res > o->reserved_max) {
				o->reserved_max = res;
				o->reserved_max_ev = (int64_t)i;
				o->waste = res > tot ? res - tot : 0;
			}
		}
	}
	o->n_spark = m;
	o->spark = xcalloc(m > 0 ? m : 1, sizeof *o->spark);
	for (k = 0; k < m; k++)
		o->spark[k] = quantise(hi[k], o->peak);
	free(hi);
	o->reserved_end = n ? idx_tl_reserved(tl, (int64_t)n - 1)
			    : tl->base_reserved;
	o->allocated_end = n ? idx_tl_total(tl, (int64_t)n - 1)
			     : tl->base_total;
}

static char *
label_dup(struct an_sites *sites, uint32_t site)
{
	char buf[AN_SUM_LABEL_MAX];

	if (site >= sites->n)
		return xstrdup("");
	return xstrdup(an_site_label(sites, site, buf, sizeof buf));
}

static void
top_at_peak(const struct idx_timeline *tl, struct an_sites *sites,
    struct an_sum_dev *o)
{
	struct an_top top;

	if (an_top(tl, sites, o->peak_ev, 1, &top) == 0 && top.n_roots > 0) {
		const struct an_top_node *nd = &top.nodes[top.roots[0]];

		o->top_bytes = nd->bytes;
		o->top_site = label_dup(sites, nd->site);
	}
	an_top_destroy(&top);
}

/* The decoded stripes each of the summary's threads keeps: their passes
 * read each element and event stripe once, and two threads' caches of
 * 64 MiB held 113 MiB of a 1 GB file's build at its peak, against 85
 * with one (bench/README.md) */
#define SUM_STRIPE_BYTES (4u << 20)
/* The samples and extremes (scan_events()) and the largest stack at the
 * peak, with sites of their own: on a thread of their own beside the
 * steps and the leak's suspect, or on the caller's after them (where it
 * did not start). They write fields of o that the others do not. */
struct top_job {
	const struct snapshot *s;
	const struct idx_timeline *tl;
	const struct idx_lod *lod;
	struct an_sum_dev *o;
	const atomic_int *stop;
	atomic_uint_fast64_t *meter;
	int rc;
	struct sv_error err;
};

static void
top_run(struct top_job *j)
{
	struct an_sites sites;

	sv_error_clear(&j->err);
	scan_events(j->s, j->tl, j->lod, &j->o->counts, j->o);
	j->rc = an_sites_init(&sites, j->s, 1, NULL, &j->err);
	if (j->rc != 0)
		return;
	top_at_peak(j->tl, &sites, j->o);
	an_sites_destroy(&sites);
}

static void *
top_thread(void *arg)
{
	struct top_job *j = arg;

	sv_stop_flag = j->stop;
	sv_stop_meter = j->meter;
	snap_stripe_cache_budget(SUM_STRIPE_BYTES);
	top_run(j);
	/* this thread's decoded stripes go with it */
	snap_stripe_cache_clear();
	return NULL;
}

static int
leak_suspect(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, const struct an_steps *st, struct an_sum_dev *o,
    struct sv_error *err)
{
	struct an_leaks_with with;
	struct an_leaks l;
	const struct an_leak_site *ls;

	memset(&with, 0, sizeof with);
	with.steps = st;
	if (an_leaks_using(s, tl, sites, &with, -1, -1, &l, err) != 0)
		return -1;
	if (l.judged)
		o->flags |= AN_SUM_F_JUDGED;
	ls = l.n_sites > 0 ? &l.sites[0] : NULL;
	if (ls != NULL && ls->periodic) {
		o->leak_bytes = ls->bytes;
		o->leak_steps = ls->steps_hit;
		o->leak_per_step = ls->steps_hit ? ls->bytes / ls->steps_hit
						 : ls->bytes;
		o->leak_site = label_dup(sites, ls->site);
	}
	an_leaks_destroy(&l);
	return 0;
}

static void
keep_steps(const struct an_steps *st, struct an_sum_dev *o)
{
	uint64_t i, n = st->n;

	o->steps_source = (uint32_t)st->source;
	o->n_steps = st->n;
	o->n_complete = st->n_complete;
	if (n > AN_SUM_MAX_STEPS) {
		n = AN_SUM_MAX_STEPS;
		o->flags |= AN_SUM_F_STEPS_CUT;
	}
	o->n_kept = (uint32_t)n;
	o->steps = xcalloc(n > 0 ? n : 1, sizeof *o->steps);
	for (i = 0; i < n; i++) {
		o->steps[i].first = st->steps[i].first;
		o->steps[i].last = st->steps[i].last;
	}
}

static void
peak_when(const struct snapshot *s, const struct an_steps *st,
    struct an_sum_dev *o)
{
	const struct snap_trace *t = snap_trace_of(s, o->device);

	o->peak_step = o->peak_ev >= 0 ? an_step_at(st, o->peak_ev) : -1;
	if (t == NULL || !snap_trace_has_time(t) || t->n == 0 ||
	    o->peak_ev < 0 || (uint64_t)o->peak_ev >= t->n)
		return;
	if (snap_ev_time(t, 0) == SNAP_NO_TIME ||
	    snap_ev_time(t, (uint64_t)o->peak_ev) == SNAP_NO_TIME)
		return;
	o->peak_time = snap_ev_time(t, (uint64_t)o->peak_ev) -
	    snap_ev_time(t, 0);
	o->flags |= AN_SUM_F_TIME;
}

int
an_summary_device(const struct snapshot *s, const struct idx_timeline *tl,
    const struct idx_lod *lod, const struct idx_ev_tally *tally,
    struct an_sum_dev *o, struct sv_error *err)
{
	struct an_sites sites;
	struct an_steps st;
	struct top_job top;
	pthread_t th;
	size_t budget;
	int r = -1, two;

	memset(o, 0, sizeof *o);
	o->device = tl->device;
	o->events = tl->n_events;
	o->peak = tl->peak;
	o->peak_ev = an_peak_ev(tl);
	o->peak_step = -1;
	an_ev_counts_from(s, tl->device, tally, &o->counts);
	/* the samples and the peak's stack beside the steps and the
	 * leak's suspect: half of a 1 GB file's summary each */
	memset(&top, 0, sizeof top);
	top.s = s;
	top.tl = tl;
	top.lod = lod;
	top.o = o;
	top.stop = sv_stop_flag;
	top.meter = sv_stop_meter;
	two = sv_thread_start(&th, top_thread, &top) == 0;
	budget = snap_stripe_cache_budget(SUM_STRIPE_BYTES);
	if (an_steps_find(s, tl->device, &st, err) != 0)
		goto out;
	keep_steps(&st, o);
	peak_when(s, &st, o);
	if (an_sites_init(&sites, s, 1, NULL, err) != 0) {
		an_steps_destroy(&st);
		goto out;
	}
	r = leak_suspect(s, tl, &sites, &st, o, err);
	an_sites_destroy(&sites);
	an_steps_destroy(&st);
out:
	if (two)
		pthread_join(th, NULL);
	else if (r == 0)
		top_run(&top);
	snap_stripe_cache_budget(budget);
	if (r == 0 && top.rc != 0) {
		if (err != NULL)
			*err = top.err;
		r = -1;
	}
	if (o->top_site == NULL)
		o->top_site = xstrdup("");
	if (o->leak_site == NULL)
		o->leak_site = xstrdup("");
	return r;
}

int
an_summary_build(const struct snapshot *s, struct an_summary *out,
    struct sv_error *err)
{
	uint32_t d, n = snap_device_count(s);

	memset(out, 0, sizeof *out);
	for (d = 0; d < n; d++) {
		struct idx_timeline tl;
		int r;

		if (!snap_device_has_data(s, d))
			continue;
		if (idx_timeline_build(s, d, &tl, err) != 0) {
			an_summary_destroy(out);
			return -1;
		}
		out->dev = xreallocarray(out->dev, out->n_dev + 1,
		    sizeof *out->dev);
		r = an_summary_device(s, &tl, NULL, NULL,
		    &out->dev[out->n_dev++], err);
		idx_timeline_destroy(&tl);
		if (r != 0) {
			an_summary_destroy(out);
			return -1;
		}
	}
	return 0;
}

static void
dev_free(struct an_sum_dev *d)
{
	free(d->top_site);
	free(d->leak_site);
	free(d->spark);
	free(d->steps);
	memset(d, 0, sizeof *d);
}

void
an_summary_destroy(struct an_summary *sum)
{
	uint32_t i;

	for (i = 0; i < sum->n_dev; i++)
		dev_free(&sum->dev[i]);
	free(sum->dev);
	memset(sum, 0, sizeof *sum);
}

const struct an_sum_dev *
an_summary_dev(const struct an_summary *sum, uint32_t d)
{
	uint32_t i;

	for (i = 0; i < sum->n_dev; i++)
		if (sum->dev[i].device == d)
			return &sum->dev[i];
	return NULL;
}

uint64_t
an_sum_spark_value(const struct an_sum_dev *dev, uint32_t k)
{
	if (k >= dev->n_spark)
		return 0;
	if (dev->spark[k] == AN_SUM_Q)
		return dev->peak;
	return (uint64_t)((unsigned __int128)dev->spark[k] * dev->peak /
	    AN_SUM_Q);
}

uint64_t
an_sum_spark_range(const struct an_sum_dev *dev, int64_t e0, int64_t e1)
{
	uint32_t k, k1;
	uint64_t best = 0, v;

	if (dev->n_spark == 0 || e1 < e0 || e1 < 0 ||
	    (uint64_t)e0 >= dev->events)
		return 0;
	if (e0 < 0)
		e0 = 0;
	if ((uint64_t)e1 >= dev->events)
		e1 = (int64_t)dev->events - 1;
	k1 = sample_of((uint64_t)e1, dev->events, dev->n_spark);
	for (k = sample_of((uint64_t)e0, dev->events, dev->n_spark); k <= k1;
	     k++)
		if ((v = an_sum_spark_value(dev, k)) > best)
			best = v;
	return best;
}

void
an_sum_sample_events(const struct an_sum_dev *dev, uint32_t k, int64_t *e0,
    int64_t *e1)
{
	uint64_t n = dev->events, m = dev->n_spark;

	/* the events e with e * m / n == k */
	*e0 = (int64_t)(((unsigned __int128)k * n + m - 1) / m);
	*e1 = (int64_t)(((unsigned __int128)(k + 1) * n + m - 1) / m) - 1;
}

/* ---- encoding ------------------------------------------------------------ */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
};

static void
w_bytes(struct wbuf *w, const void *p, size_t n)
{
	w->p = xgrow(w->p, &w->cap, w->len + n, 1);
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

static void
w_u64(struct wbuf *w, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	w_bytes(w, b, 8);
}

static void
w_u32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4];
	int i;

	for (i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	w_bytes(w, b, 4);
}

static void
w_str(struct wbuf *w, const char *s)
{
	size_t n = strlen(s);

	if (n > AN_SUM_LABEL_MAX)
		n = AN_SUM_LABEL_MAX;
	w_u32(w, (uint32_t)n);
	w_bytes(w, s, n);
}

static void
encode_dev(struct wbuf *w, const struct an_sum_dev *d)
{
	uint32_t k;

	w_u32(w, d->device);
	w_u32(w, d->flags);
	w_u64(w, d->events);
	w_u64(w, d->peak);
	w_u64(w, (uint64_t)d->peak_ev);
	w_u64(w, (uint64_t)d->peak_time);
	w_u64(w, (uint64_t)d->peak_step);
	w_u64(w, d->reserved_max);
	w_u64(w, (uint64_t)d->reserved_max_ev);
	w_u64(w, d->reserved_end);
	w_u64(w, d->allocated_end);
	w_u64(w, d->ooms);
	w_u64(w, d->waste);
	w_u64(w, d->top_bytes);
	w_str(w, d->top_site);
	w_u32(w, d->steps_source);
	w_u64(w, d->n_steps);
	w_u64(w, d->n_complete);
	w_u64(w, d->leak_bytes);
	w_u64(w, d->leak_per_step);
	w_u64(w, d->leak_steps);
	w_str(w, d->leak_site);
	w_u32(w, d->n_spark);
	for (k = 0; k < d->n_spark; k++) {
		uint8_t b[2] = {(uint8_t)d->spark[k],
		    (uint8_t)(d->spark[k] >> 8)};

		w_bytes(w, b, 2);
	}
	w_u32(w, d->n_kept);
	for (k = 0; k < d->n_kept; k++) {
		w_u64(w, (uint64_t)d->steps[k].first);
		w_u64(w, (uint64_t)d->steps[k].last);
	}
	w_u32(w, SNAP_ACTION_COUNT + 1);
	for (k = 0; k <= SNAP_ACTION_COUNT; k++)
		w_u64(w, d->counts.by_action[k]);
	w_u64(w, d->counts.streams);
	w_u32(w, (uint32_t)d->counts.has_time);
	w_u64(w, (uint64_t)d->counts.time_first);
	w_u64(w, (uint64_t)d->counts.time_last);
}

void
an_summary_encode(const struct an_summary *sum, uint8_t **data, size_t *len)
{
	struct wbuf w;
	uint32_t i;

	memset(&w, 0, sizeof w);
	w_bytes(&w, sum_magic, sizeof sum_magic);
	w_u32(&w, sum->n_dev);
	for (i = 0; i < sum->n_dev; i++)
		encode_dev(&w, &sum->dev[i]);
	*data = w.p;
	*len = w.len;
}

/* ---- decoding: every value is checked ------------------------------------ */

struct rbuf {
	const uint8_t *p;
	size_t len, off;
	const char *bad;	/* first failure */
};

static int
r_need(struct rbuf *r, size_t n, const char *what)
{
	if (r->bad != NULL)
		return -1;
	if (n > r->len - r->off) {
		r->bad = what;
		return -1;
	}
	return 0;
}

static uint64_t
r_u64(struct rbuf *r, const char *what)
{
	uint64_t v = 0;
	int i;

	if (r_need(r, 8, what) != 0)
		return 0;
	for (i = 7; i >= 0; i--)
		v = v << 8 | r->p[r->off + (size_t)i];
	r->off += 8;
	return v;
}

static uint32_t
r_u32(struct rbuf *r, const char *what)
{
	uint32_t v = 0;
	int i;

	if (r_need(r, 4, what) != 0)
		return 0;
	for (i = 3; i >= 0; i--)
		v = v << 8 | r->p[r->off + (size_t)i];
	r->off += 4;
	return v;
}

static char *
r_str(struct rbuf *r, const char *what)
{
	uint32_t n = r_u32(r, what);
	char *s;

	if (r->bad == NULL && n > AN_SUM_LABEL_MAX)
		r->bad = what;
	if (r_need(r, n, what) != 0)
		return xstrdup("");
	s = xmalloc((size_t)n + 1);
	memcpy(s, r->p + r->off, n);
	s[n] = '\0';
	r->off += n;
	/* a NUL inside would cut the label short: refuse it */
	if (strlen(s) != n && r->bad == NULL)
		r->bad = what;
	return s;
}

/* An event number of a device with n events: -1 .. n - 1. */
static int
ev_ok(int64_t e, uint64_t n)
{
	return e >= -1 && (e < 0 || (uint64_t)e < n);
}

static void
check_dev(struct rbuf *r, const struct an_sum_dev *d)
{
	if (r->bad != NULL)
		return;
	if (!ev_ok(d->peak_ev, d->events) || !ev_ok(d->reserved_max_ev,
	    d->events))
		r->bad = "event number out of range";
	else if (d->peak_step < -1 || (d->peak_step >= 0 &&
	    (uint64_t)d->peak_step >= d->n_steps))
		r->bad = "step out of range";
	else if (d->n_complete > d->n_steps || d->n_kept > d->n_steps ||
	    d->ooms > d->events || d->steps_source > 3)
		r->bad = "counts do not agree";
	else if (d->waste > d->reserved_max || d->top_bytes > d->peak)
		r->bad = "bytes do not agree";
	else if (d->n_spark > AN_SUM_SPARK || d->n_spark > d->events ||
	    (d->events > 0 && d->n_spark == 0))
		r->bad = "bad sample count";
}

static void
decode_steps(struct rbuf *r, struct an_sum_dev *d)
{
	uint32_t k;
	int64_t prev = -1;

	d->n_kept = r_u32(r, "steps");
	if (r->bad == NULL && (d->n_kept > AN_SUM_MAX_STEPS ||
	    (uint64_t)d->n_kept * 16 > r->len - r->off))
		r->bad = "bad step count";
	if (r->bad != NULL) {
		d->n_kept = 0;
		return;
	}
	d->steps = xcalloc(d->n_kept > 0 ? d->n_kept : 1, sizeof *d->steps);
	for (k = 0; k < d->n_kept; k++) {
		d->steps[k].first = (int64_t)r_u64(r, "step");
		d->steps[k].last = (int64_t)r_u64(r, "step");
		if (r->bad == NULL && (d->steps[k].first <= prev ||
		    d->steps[k].last < d->steps[k].first ||
		    (uint64_t)d->steps[k].last >= d->events))
			r->bad = "steps out of order or range";
		prev = d->steps[k].last;
	}
}

/* The event counts: one per action as this program knows them, adding
 * up to the events. */
static void
decode_counts(struct rbuf *r, struct an_sum_dev *d)
{
	struct an_ev_counts *c = &d->counts;
	uint64_t sum = 0;
	uint32_t k;

	if (r_u32(r, "counts") != SNAP_ACTION_COUNT + 1 && r->bad == NULL)
		r->bad = "counts for other actions";
	for (k = 0; k <= SNAP_ACTION_COUNT && r->bad == NULL; k++) {
		c->by_action[k] = r_u64(r, "counts");
		if (c->by_action[k] > d->events - sum)
			r->bad = "counts do not add up";
		sum += c->by_action[k];
	}
	c->events = d->events;
	c->streams = r_u64(r, "streams");
	c->has_time = r_u32(r, "time") != 0;
	c->time_first = (int64_t)r_u64(r, "time");
	c->time_last = (int64_t)r_u64(r, "time");
	if (r->bad == NULL && (sum != d->events ||
	    (c->has_time && c->time_first > c->time_last)))
		r->bad = "counts do not agree";
}

static void
decode_dev(struct rbuf *r, struct an_sum_dev *d)
{
	uint32_t k;

	d->device = r_u32(r, "device");
	d->flags = r_u32(r, "flags");
	d->events = r_u64(r, "events");
	d->peak = r_u64(r, "peak");
	d->peak_ev = (int64_t)r_u64(r, "peak");
	d->peak_time = (int64_t)r_u64(r, "peak");
	d->peak_step = (int64_t)r_u64(r, "peak");
	d->reserved_max = r_u64(r, "reserved");
	d->reserved_max_ev = (int64_t)r_u64(r, "reserved");
	d->reserved_end = r_u64(r, "reserved");
	d->allocated_end = r_u64(r, "allocated");
	d->ooms = r_u64(r, "ooms");
	d->waste = r_u64(r, "waste");
	d->top_bytes = r_u64(r, "top");
	d->top_site = r_str(r, "top site");
	d->steps_source = r_u32(r, "steps");
	d->n_steps = r_u64(r, "steps");
	d->n_complete = r_u64(r, "steps");
	d->leak_bytes = r_u64(r, "leak");
	d->leak_per_step = r_u64(r, "leak");
	d->leak_steps = r_u64(r, "leak");
	d->leak_site = r_str(r, "leak site");
	d->n_spark = r_u32(r, "samples");
	if (r->bad == NULL && (d->n_spark > AN_SUM_SPARK ||
	    (uint64_t)d->n_spark * 2 > r->len - r->off))
		r->bad = "bad sample count";
	if (r->bad != NULL)
		d->n_spark = 0;
	d->spark = xcalloc(d->n_spark > 0 ? d->n_spark : 1, sizeof *d->spark);
	for (k = 0; k < d->n_spark; k++) {
		d->spark[k] = (uint16_t)(r->p[r->off] | r->p[r->off + 1] << 8);
		r->off += 2;
	}
	decode_steps(r, d);
	decode_counts(r, d);
	check_dev(r, d);
}

int
an_summary_decode(const uint8_t *data, size_t len, struct an_summary *out,
    char *why, size_t wl)
{
	struct rbuf r;
	uint32_t n, i;

	memset(out, 0, sizeof *out);
	memset(&r, 0, sizeof r);
	r.p = data;
	r.len = len;
	if (len < sizeof sum_magic || memcmp(data, sum_magic,
	    sizeof sum_magic) != 0) {
		snprintf(why, wl, "summary: not a summary of this version");
		return -1;
	}
	r.off = sizeof sum_magic;
	n = r_u32(&r, "devices");
	if (r.bad == NULL && n > AN_SUM_MAX_DEVICES)
		r.bad = "too many devices";
	for (i = 0; i < n && r.bad == NULL; i++) {
		out->dev = xreallocarray(out->dev, out->n_dev + 1,
		    sizeof *out->dev);
		memset(&out->dev[out->n_dev], 0, sizeof out->dev[0]);
		decode_dev(&r, &out->dev[out->n_dev++]);
		if (r.bad == NULL && i > 0 &&
		    out->dev[i].device <= out->dev[i - 1].device)
			r.bad = "devices out of order";
	}
	if (r.bad == NULL && r.off != r.len)
		r.bad = "trailing bytes";
	if (r.bad != NULL) {
		snprintf(why, wl, "summary: byte %zu: %s", r.off, r.bad);
		an_summary_destroy(out);
		return -1;
	}
	return 0;
}

/* ---- the index section --------------------------------------------------- */

/* From the index being written: its timelines, not a pairing of our own
 * (which held every event's total and element in memory). */
static int
build_index(const struct sv_index *ix, void *arg, uint8_t **data,
    size_t *len, struct sv_error *err)
{
	const struct snapshot *s = idx_snapshot(ix);
	uint32_t d, n = snap_device_count(s);
	struct an_summary sum;

	(void)arg;
	memset(&sum, 0, sizeof sum);
	for (d = 0; d < n; d++) {
		const struct idx_timeline *tl = idx_timeline(ix, d);

		if (tl == NULL || !snap_device_has_data(s, d))
			continue;
		sum.dev = xreallocarray(sum.dev, sum.n_dev + 1,
		    sizeof *sum.dev);
		if (an_summary_device(s, tl, idx_lod(ix, d),
		    idx_ev_tally(ix, d), &sum.dev[sum.n_dev++], err) != 0) {
			an_summary_destroy(&sum);
			return -1;
		}
	}
	an_summary_encode(&sum, data, len);
	an_summary_destroy(&sum);
	return 0;
}

/* Without an index (the builder API's snapshot-only form). */
static int
build(const struct snapshot *s, void *arg, uint8_t **data, size_t *len,
    struct sv_error *err)
{
	struct an_summary sum;

	(void)arg;
	if (an_summary_build(s, &sum, err) != 0)
		return -1;
	an_summary_encode(&sum, data, len);
	an_summary_destroy(&sum);
	return 0;
}

const struct idx_section_builder an_summary_section = {
	.name = AN_SUM_SECTION,
	.build = build,
	.build_index = build_index,
	.background = 1,
};

int
an_summary_from_index(const struct sv_index *ix, struct an_summary *out,
    struct sv_error *err)
{
	const struct snapshot *s = idx_snapshot(ix);
	uint32_t d, n = snap_device_count(s);

	memset(out, 0, sizeof *out);
	for (d = 0; d < n; d++) {
		const struct idx_timeline *tl;

		if (!snap_device_has_data(s, d))
			continue;
		if ((tl = idx_timeline(ix, d)) == NULL) {
			an_summary_destroy(out);
			return sv_error_set(err, SV_ERR_INCONSISTENT,
			    SV_NO_OFFSET, "device %u has no timeline", d);
		}
		out->dev = xreallocarray(out->dev, out->n_dev + 1,
		    sizeof *out->dev);
		if (an_summary_device(s, tl, idx_lod(ix, d),
		    idx_ev_tally(ix, d), &out->dev[out->n_dev++], err) != 0) {
			an_summary_destroy(out);
			return -1;
		}
	}
	return 0;
}

int
an_summary_section_of(const struct sv_index *ix, struct an_summary *out)
{
	const uint8_t *data;
	size_t len;
	char why[128];

	memset(out, 0, sizeof *out);
	if (idx_section(ix, AN_SUM_SECTION, &data, &len) != 0)
		return -1;
	return an_summary_decode(data, len, out, why, sizeof why);
}

int
an_summary_of_index(const struct sv_index *ix, struct an_summary *out,
    struct sv_error *err)
{
	const uint8_t *data;
	size_t len;
	char why[128];

	if (idx_section(ix, AN_SUM_SECTION, &data, &len) == 0 &&
	    an_summary_decode(data, len, out, why, sizeof why) == 0)
		return 0;
	/* no section (an index in memory, or one that could not be
	 * extended): from the index's own timelines */
	return an_summary_from_index(ix, out, err);
}
