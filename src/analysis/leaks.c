/*
 * Leak ranking: surviving allocations of a window grouped by call site,
 * with per-step periodicity. See leaks.h.
 */
#include "config.h"

#include "analysis/leaks.h"

#include <stdlib.h>
#include <string.h>

#include "util/search.h"
#include "util/xalloc.h"

uint64_t
an_round_size(uint64_t n)
{
	if (n < 512)
		return 512;
	return (n + 511) / 512 * 512;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t *
an_step_starts(const struct snapshot *s, uint32_t d, uint64_t *n)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	int64_t *out = NULL;
	uint64_t m = 0, i, k;
	size_t cap = 0;

	*n = 0;
	if (t == NULL || t->n == 0 || !snap_trace_has_time(t))
		return NULL;
	for (i = 0; i < s->n_annotations; i++) {
		const struct snap_annotation *a = &s->annotations[i];

		if (a->stage != SNAP_STAGE_START || a->device != d ||
		    strncmp(snap_str(s, a->name), "ProfilerStep", 12) != 0)
			continue;
		/* First event at or after the step's start. */
		XGROW(out, cap, m + 1);
		out[m++] = (int64_t)snap_ev_at_time(t, 0, t->n, a->time_us);
	}
	if (m == 0)
		return NULL;
	qsort(out, m, sizeof *out, cmp_i64);
	for (i = 1, k = 1; i < m; i++)
		if (out[i] != out[k - 1])
			out[k++] = out[i];
	*n = k;
	return out;
}

int
an_periodic(const int64_t *ev, uint64_t n, uint64_t window, uint64_t *bursts,
    uint64_t *period)
{
	uint64_t i, maxgap = 0, mingap = UINT64_MAX, big = 0, sum = 0;
	uint64_t span;

	*bursts = n > 0;
	*period = 0;
	if (n < 2)
		return 0;
	for (i = 1; i < n; i++)
		if ((uint64_t)(ev[i] - ev[i - 1]) > maxgap)
			maxgap = (uint64_t)(ev[i] - ev[i - 1]);
	if (maxgap == 0)
		return 0;
	for (i = 1; i < n; i++) {
		uint64_t g = (uint64_t)(ev[i] - ev[i - 1]);

		if (g * 2 > maxgap) {
			big++;
			sum += g;
			if (g < mingap)
				mingap = g;
		}
	}
	*bursts = big + 1;
	*period = sum / big;
	span = (uint64_t)(ev[n - 1] - ev[0]);
	/* At least three bursts; between two bursts at least one other
	 * allocation with its free (3 events), else it is one burst. */
	return big >= 2 && mingap > 3 && maxgap <= 2 * mingap &&
	    span * 4 >= window;
}

static int
cmp_site(const void *a, const void *b)
{
	const struct an_leak_site *x = a, *y = b;

	if (x->periodic != y->periodic)
		return x->periodic ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

static int
leaked(const struct idx_elem *e, int64_t from, int64_t to)
{
	return e->alloc_ev >= from && e->alloc_ev <= to &&
	    (e->free_ev < 0 || e->free_ev > to);
}

/* Fills the steps or periodicity of each site from its events. */
static void
rank_sites(struct an_leaks *out, const int64_t *evs, const uint64_t *off,
    const uint32_t *slot_site, const int64_t *steps, uint64_t n_steps)
{
	int64_t from = out->from < 0 ? 0 : out->from;
	uint64_t window = (uint64_t)(out->to - from + 1), i, j;
	uint64_t best = 0;

	if (n_steps >= 2) {
		out->steps_source = AN_STEPS_ANNOTATIONS;
		out->n_steps = sv_count_le_i64(steps, n_steps, out->to) -
		    sv_count_le_i64(steps, n_steps, from) + 1;
	}
	for (i = 0; i < out->n_sites; i++) {
		struct an_leak_site *ls = &out->sites[i];
		const int64_t *e = evs + off[slot_site[i]];
		uint64_t n = off[slot_site[i] + 1] - off[slot_site[i]];

		if (out->steps_source == AN_STEPS_ANNOTATIONS) {
			uint64_t last = UINT64_MAX, st;

			ls->steps_hit = 0;
			for (j = 0; j < n; j++) {
				/* step starts <= e[j]: the step holding it
				 * (0 = before the first step) */
				st = sv_count_le_i64(steps, n_steps, e[j]);
				if (st != last)
					ls->steps_hit++;
				last = st;
			}
			ls->periodic = ls->steps_hit >= 2 &&
			    ls->steps_hit * 2 >= out->n_steps;
		} else {
			ls->periodic = an_periodic(e, n, window,
			    &ls->steps_hit, &ls->period);
			if (ls->periodic && ls->steps_hit > best) {
				best = ls->steps_hit;
				out->period = ls->period;
			}
		}
	}
	if (out->steps_source != AN_STEPS_ANNOTATIONS && out->period > 0) {
		out->steps_source = AN_STEPS_PERIODICITY;
		out->n_steps = (window + out->period - 1) / out->period;
	}
}

int
an_leaks(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, int64_t from, int64_t to, struct an_leaks *out,
    struct sv_error *err)
{
	uint64_t i, n_steps = 0, *cnt, *off, *pos;
	uint32_t *slot_of, *slot_site, n_slots = 0;
	int64_t *evs, *steps;

	(void)err;
	memset(out, 0, sizeof *out);
	out->device = tl->device;
	if (from < -1)
		from = -1;
	if (to < 0 || (uint64_t)to >= tl->n_events)
		to = (int64_t)tl->n_events - 1;
	out->from = from;
	out->to = to;
	if (tl->n_events == 0 || from > to)
		return 0;
	/* Pass 1: a slot per site that leaks, counts per slot. */
	slot_of = NULL;
	cnt = NULL;
	slot_site = NULL;
	{
		size_t cap_of = 0, cap_cnt = 0, cap_ss = 0, cap_ls = 0;

		for (i = 0; i < tl->n_elems; i++) {
			const struct idx_elem e_v = idx_tl_elem(tl, i);
			const struct idx_elem *e = &e_v;
			uint32_t site;
			uint64_t k;

			if (!leaked(e, from, to)) {
				if (e->alloc_ev < from &&
				    (e->free_ev < 0 || e->free_ev > to)) {
					out->alive_before++;
					out->alive_before_bytes += e->size;
				}
				continue;
			}
			site = an_site_of(sites, e->stack);
			if (site >= cap_of) {
				size_t old = cap_of;

				XGROW(slot_of, cap_of, (size_t)site + 1);
				memset(slot_of + old, 0xff,
				    (cap_of - old) * sizeof *slot_of);
			}
			if (slot_of[site] == UINT32_MAX) {
				XGROW(cnt, cap_cnt, (size_t)n_slots + 1);
				XGROW(slot_site, cap_ss, (size_t)n_slots + 1);
				XGROW(out->sites, cap_ls, (size_t)n_slots + 1);
				slot_site[n_slots] = site;
				cnt[n_slots] = 0;
				memset(&out->sites[n_slots], 0,
				    sizeof out->sites[n_slots]);
				out->sites[n_slots].site = site;
				out->sites[n_slots].stack = e->stack;
				out->sites[n_slots].first_ev = e->alloc_ev;
				out->sites[n_slots].last_ev = e->alloc_ev;
				slot_of[site] = n_slots++;
			}
			k = slot_of[site];
			if (e->alloc_ev < 0) {
				out->sites[k].before_trace++;
				out->before_trace++;
			} else {
				cnt[k]++;
			}
			out->sites[k].count++;
			out->sites[k].bytes += e->size;
			out->sites[k].rounded += an_round_size(e->size);
			if (e->alloc_ev >= 0 && (out->sites[k].first_ev < 0 ||
						     e->alloc_ev <
							 out->sites[k].first_ev))
				out->sites[k].first_ev = e->alloc_ev;
			if (e->alloc_ev > out->sites[k].last_ev)
				out->sites[k].last_ev = e->alloc_ev;
			out->count++;
			out->bytes += e->size;
			out->rounded += an_round_size(e->size);
		}
	}
	out->n_sites = n_slots;
	if (n_slots == 0) {
		free(slot_of);
		free(cnt);
		free(slot_site);
		return 0;
	}
	/* Pass 2: events per slot (slot i's events at off[i]..off[i+1]);
	 * slot_site is reused as the identity map slot -> slot. */
	off = xmalloc((n_slots + 1) * sizeof *off);
	pos = xmalloc(n_slots * sizeof *pos);
	off[0] = 0;
	for (i = 0; i < n_slots; i++)
		off[i + 1] = off[i] + cnt[i];
	memcpy(pos, off, n_slots * sizeof *pos);
	evs = xmalloc((off[n_slots] + 1) * sizeof *evs);
	for (i = 0; i < tl->n_elems; i++) {
		const struct idx_elem e_v = idx_tl_elem(tl, i);
		const struct idx_elem *e = &e_v;

		if (e->alloc_ev >= 0 && leaked(e, from, to))
			evs[pos[slot_of[an_site_of(sites, e->stack)]]++] =
			    e->alloc_ev;
	}
	for (i = 0; i < n_slots; i++) {
		qsort(evs + off[i], off[i + 1] - off[i], sizeof *evs,
		    cmp_i64);
		slot_site[i] = (uint32_t)i;
	}
	steps = an_step_starts(s, tl->device, &n_steps);
	rank_sites(out, evs, off, slot_site, steps, n_steps);
	qsort(out->sites, out->n_sites, sizeof *out->sites, cmp_site);
	free(steps);
	free(evs);
	free(pos);
	free(off);
	free(slot_of);
	free(cnt);
	free(slot_site);
	return 0;
}

void
an_leaks_destroy(struct an_leaks *l)
{
	free(l->sites);
	memset(l, 0, sizeof *l);
}

static const struct idx_timeline *cmp_tl;

static int
cmp_elem_alloc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	int64_t ex = idx_tl_elem(cmp_tl, x).alloc_ev, ey = idx_tl_elem(cmp_tl, y).alloc_ev;

	if (ex != ey)
		return ex < ey ? -1 : 1;
	return x < y ? -1 : x > y;
}

void
an_leak_elems(const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_leaks *l, struct an_leak_elems *out)
{
	uint32_t *rank = NULL, max_site = 0;
	uint64_t i, k, *pos;

	memset(out, 0, sizeof *out);
	out->n_sites = l->n_sites;
	out->off = xcalloc(l->n_sites + 2, sizeof *out->off);
	for (k = 0; k < l->n_sites; k++)
		if (l->sites[k].site + 1 > max_site)
			max_site = l->sites[k].site + 1;
	rank = xmalloc(((size_t)max_site + 1) * sizeof *rank);
	memset(rank, 0xff, ((size_t)max_site + 1) * sizeof *rank);
	for (k = 0; k < l->n_sites; k++)
		rank[l->sites[k].site] = (uint32_t)k;
	for (i = 0; i < tl->n_elems; i++) {
		const struct idx_elem e_v = idx_tl_elem(tl, i);
		const struct idx_elem *e = &e_v;
		uint32_t site;

		if (!leaked(e, l->from, l->to))
			continue;
		site = an_site_of(sites, e->stack);
		if (site < max_site && rank[site] != UINT32_MAX)
			out->off[rank[site] + 1]++;
	}
	for (k = 0; k < l->n_sites; k++)
		out->off[k + 1] += out->off[k];
	out->elems = xmalloc((out->off[l->n_sites] + 1) * sizeof *out->elems);
	pos = xmalloc((l->n_sites + 1) * sizeof *pos);
	memcpy(pos, out->off, (l->n_sites + 1) * sizeof *pos);
	for (i = 0; i < tl->n_elems; i++) {
		uint32_t site;

		struct idx_elem e = idx_tl_elem(tl, i);

		if (!leaked(&e, l->from, l->to))
			continue;
		site = an_site_of(sites, e.stack);
		if (site < max_site && rank[site] != UINT32_MAX)
			out->elems[pos[rank[site]]++] = i;
	}
	cmp_tl = tl;
	for (k = 0; k < l->n_sites; k++)
		qsort(out->elems + out->off[k], out->off[k + 1] - out->off[k],
		    sizeof *out->elems, cmp_elem_alloc);
	cmp_tl = NULL;
	free(pos);
	free(rank);
}

void
an_leak_elems_destroy(struct an_leak_elems *le)
{
	free(le->elems);
	free(le->off);
	memset(le, 0, sizeof *le);
}
