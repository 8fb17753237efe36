/*
 * The verdicts that snapview oom and frag (and the viewer's OOM view)
 * take from the simulation: whether an OOM was fragmentation, and how
 * much of the waste other settings remove. See whatif.h.
 */
#include "config.h"

#include "analysis/whatif.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/site.h"
#include "index/idx_timeline.h"
#include "util/u64map.h"
#include "util/units.h"
#include "util/xalloc.h"

static uint64_t
segment_size(uint64_t rounded)
{
	if (rounded <= (1ull << 20))
		return 2ull << 20;
	if (rounded < (10ull << 20))
		return 20ull << 20;
	if (rounded > UINT64_MAX - (2ull << 20))
		return rounded;
	return (rounded + (2ull << 20) - 1) / (2ull << 20) * (2ull << 20);
}

static void
verdict_text(struct an_whatif_oom_verdict *v, const char *cap_words)
{
	char a[32], b[32], c[32], d[32];

	switch (v->kind) {
	case AN_WI_V_NEVER:
		snprintf(v->text, sizeof v->text, "would not fit with any "
		    "setting: live memory alone exceeds the device (%s live + "
		    "%s requested > %s%s)", sv_fmt_size(a, sizeof a, v->live),
		    sv_fmt_size(b, sizeof b, v->request),
		    sv_fmt_size(c, sizeof c, v->capacity), cap_words);
		break;
	case AN_WI_V_EXPANDABLE:
		snprintf(v->text, sizeof v->text, "would fit with "
		    "expandable_segments (simulated: peak reserved %s)",
		    sv_fmt_size(a, sizeof a, v->sim_peak));
		break;
	case AN_WI_V_UNDECIDED:
		snprintf(v->text, sizeof v->text, "undecided: %s live + %s "
		    "requested exceed the %s this run held, and the device "
		    "may have had up to %s (give --capacity)",
		    sv_fmt_size(a, sizeof a, v->live),
		    sv_fmt_size(b, sizeof b, v->request),
		    sv_fmt_size(c, sizeof c, v->held),
		    sv_fmt_size(d, sizeof d, v->capacity));
		break;
	default:
		snprintf(v->text, sizeof v->text, "would fit if the free "
		    "memory were contiguous (%s live + %s requested <= %s%s); "
		    "simulated expandable segments still run out%s",
		    sv_fmt_size(a, sizeof a, v->live),
		    sv_fmt_size(b, sizeof b, v->request),
		    sv_fmt_size(c, sizeof c, v->held), cap_words,
		    v->sim_oom >= 0 ? "" : " (no OOM simulated)");
		break;
	}
}

int
an_whatif_oom_verdicts(const struct snapshot *s, uint32_t d,
    struct replay *r, uint64_t capacity,
    struct an_whatif_oom_verdict **out, uint64_t *n, struct sv_error *err)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	struct an_whatif_oom_verdict *v = NULL;
	struct an_whatif_opts wo;
	struct an_whatif w;
	struct replay_totals tt;
	struct sim_conf c;
	uint64_t i, k = 0, nt = t != NULL ? t->n : 0, peak = 0, held;
	const uint64_t *series;

	*out = NULL;
	*n = 0;
	for (i = 0; i < nt; i++)
		k += snap_ev_action(t, i) == SNAP_OOM;
	if (k == 0)
		return 0;
	simconf_from_snapshot(s, &c);
	c.expandable = 1;
	memset(&wo, 0, sizeof wo);
	wo.confs = &c;
	wo.n_confs = 1;
	wo.capacity = capacity;
	wo.series = 1;
	wo.no_steps = 1;
	if (an_whatif(s, d, r, &wo, &w, err) != 0)
		return -1;
	v = xcalloc(k, sizeof *v);
	series = w.cols[1].series;
	held = w.cols[0].series != NULL && nt > 0 ? 0 : w.capacity;
	for (i = 0, k = 0; i < nt; i++) {
		struct an_whatif_oom_verdict *x;
		uint64_t room, rec;
		char words[120], held_words[120];

		if (series != NULL && series[i] > peak)
			peak = series[i];
		if (w.cols[0].series != NULL && w.cols[0].series[i] > held)
			held = w.cols[0].series[i];
		if (snap_ev_action(t, i) != SNAP_OOM)
			continue;
		x = &v[k++];
		x->ev = (int64_t)i;
		x->request = snap_ev_size(t, i);
		x->sim_oom = w.cols[1].first_oom;
		x->sim_peak = peak;
		if (replay_seek(r, (int64_t)i, err) != 0) {
			free(v);
			an_whatif_destroy(&w);
			return -1;
		}
		replay_totals(replay_state(r), &tt);
		x->live = tt.active;
		x->held = capacity > 0 ? capacity : held;
		rec = w.cols[0].series != NULL ? w.cols[0].series[i] :
		    tt.reserved;
		room = snap_ev_addr(t, i);
		if (capacity == 0 && room < segment_size(x->request)) {
			/* the device was full: it had what was reserved
			 * plus what it reported free */
			x->held = x->capacity = rec + room;
			snprintf(words, sizeof words, ", the device's memory "
			    "at the OOM: reserved + free");
			snprintf(held_words, sizeof held_words, "%s", words);
		} else if (capacity > 0) {
			x->capacity = capacity;
			snprintf(words, sizeof words, ", --capacity");
			snprintf(held_words, sizeof held_words, ", --capacity");
		} else {
			/* a cap refused the segment: the device had less
			 * than what was reserved plus the segment */
			x->capacity = rec + segment_size(x->request) - 512;
			snprintf(words, sizeof words, ", the most the device "
			    "can have had");
			snprintf(held_words, sizeof held_words, ", the most "
			    "this run held");
		}
		if (x->live > x->capacity ||
		    x->request > x->capacity - x->live)
			x->kind = AN_WI_V_NEVER;
		else if (w.cols[1].first_oom < 0 ||
		    w.cols[1].first_oom > (int64_t)i)
			x->kind = AN_WI_V_EXPANDABLE;
		else if (x->live <= x->held &&
		    x->request <= x->held - x->live)
			x->kind = AN_WI_V_CONTIGUOUS;
		else
			x->kind = AN_WI_V_UNDECIDED;
		verdict_text(x, x->kind == AN_WI_V_CONTIGUOUS ? held_words :
		    words);
	}
	an_whatif_destroy(&w);
	*out = v;
	*n = k;
	return 0;
}

/* ---- frag --------------------------------------------------------------- */

struct site_sum {
	uint32_t site;
	uint64_t bytes, count;
};

/* The allocations live after event at that the window [lo, hi] both
 * allocates and frees, by call site, the largest first. */
static void
short_lived(const struct idx_timeline *tl, struct an_sites *sites,
    int64_t at, int64_t lo, int64_t hi, struct an_whatif_frag *f)
{
	struct site_sum *v = NULL, tmp;
	struct u64map by;
	size_t nv = 0, cap = 0, i, j;
	uint64_t k, slot;

	u64map_init(&by);
	for (k = 0; k < tl->n_elems; k++) {
		struct idx_elem e = idx_tl_elem(tl, k);
		uint32_t site;

		if (e.alloc_ev < lo || e.alloc_ev > at || e.free_ev <= at ||
		    e.free_ev > hi)
			continue;
		site = an_site_of(sites, e.stack);
		if (!u64map_get(&by, site, &slot)) {
			v = xgrow(v, &cap, nv + 1, sizeof *v);
			memset(&v[nv], 0, sizeof v[nv]);
			v[nv].site = site;
			slot = nv++;
			u64map_put(&by, site, slot);
		}
		v[slot].bytes += e.size;
		v[slot].count++;
		f->short_bytes += e.size;
	}
	for (i = 0; i < nv && (int)i < AN_WI_FRAG_SITES; i++) {
		for (j = i + 1; j < nv; j++)
			if (v[j].bytes > v[i].bytes || (v[j].bytes ==
			    v[i].bytes && v[j].site < v[i].site)) {
				tmp = v[i];
				v[i] = v[j];
				v[j] = tmp;
			}
		f->sites[i] = v[i].site;
		f->site_bytes[i] = v[i].bytes;
		f->site_count[i] = v[i].count;
		f->n_sites++;
	}
	free(v);
	u64map_destroy(&by);
}

static size_t
add(char *buf, size_t size, size_t used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t
add(char *buf, size_t size, size_t used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (used >= size)
		return used;
	va_start(ap, fmt);
	n = vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
	return n > 0 ? used + (size_t)n : used;
}

static void
frag_text(struct an_whatif_frag *f, struct an_sites *sites)
{
	const struct an_whatif_frag_setting *x = &f->set[0];
	char a[32], b[32], c[32], e[32], lab[160];
	size_t u = 0;
	int k;

	if (x->peak_reserved < f->rec_peak)
		u = add(f->text, sizeof f->text, u, "expandable segments lower "
		    "peak reserved from %s to %s",
		    sv_fmt_size(a, sizeof a, f->rec_peak),
		    sv_fmt_size(b, sizeof b, x->peak_reserved));
	else
		u = add(f->text, sizeof f->text, u, "expandable segments do "
		    "not lower peak reserved (%s, simulated %s)",
		    sv_fmt_size(a, sizeof a, f->rec_peak),
		    sv_fmt_size(b, sizeof b, x->peak_reserved));
	u = add(f->text, sizeof f->text, u, ", but %s allocated peak stays "
	    "at %s (event #%" PRId64 ")", f->step >= 0 ? "the step's" :
	    "the", sv_fmt_size(c, sizeof c, f->alloc_peak), f->alloc_peak_ev);
	if (f->step >= 0)
		u = add(f->text, sizeof f->text, u, " in step %" PRId64,
		    f->step + 1);
	if (f->n_sites == 0) {
		add(f->text, sizeof f->text, u, ".");
		return;
	}
	u = add(f->text, sizeof f->text, u, "; %s of it is short-lived "
	    "(allocated and freed %s), most from ",
	    sv_fmt_size(e, sizeof e, f->short_bytes), f->step >= 0 ?
	    "within the step" : "within the trace");
	for (k = 0; k < f->n_sites; k++)
		u = add(f->text, sizeof f->text, u, "%s%s (%s in %" PRIu64
		    ")", k ? ", " : "",
		    an_site_label(sites, f->sites[k], lab, sizeof lab),
		    sv_fmt_size(a, sizeof a, f->site_bytes[k]),
		    f->site_count[k]);
	add(f->text, sizeof f->text, u, ".");
}

int
an_whatif_frag(const struct snapshot *s, uint32_t d, struct replay *r,
    const struct idx_timeline *tl, struct an_sites *sites,
    uint64_t max_split_mb, struct an_whatif_frag *out, struct sv_error *err)
{
	struct an_whatif_frag *f = out;
	struct sim_conf c[2];
	struct an_whatif_opts wo;
	struct an_whatif w;
	const char *names[2] = {"expandable_segments:True", NULL};
	char name[64];
	int64_t lo = 0, hi = INT64_MAX, ev;
	uint32_t k, n = 1;

	memset(f, 0, sizeof *f);
	f->step = -1;
	f->alloc_peak_ev = -1;
	simconf_from_snapshot(s, &c[0]);
	c[1] = c[0];
	c[0].expandable = 1;
	if (max_split_mb > 0 && c[1].max_split == SIMCONF_NO_SPLIT_LIMIT &&
	    !c[1].expandable && max_split_mb <= UINT64_MAX / SIMCONF_MIB) {
		c[1].max_split = max_split_mb * SIMCONF_MIB;
		snprintf(name, sizeof name, "max_split_size_mb:%" PRIu64,
		    max_split_mb);
		names[1] = name;
		n = 2;
	}
	memset(&wo, 0, sizeof wo);
	wo.confs = c;
	wo.names = names;
	wo.n_confs = n;
	if (an_whatif(s, d, r, &wo, &w, err) != 0)
		return -1;
	f->agree_exact = w.agree.exact;
	f->rec_peak = w.cols[0].peak_reserved;
	f->rec_waste = w.cols[0].peak_internal + w.cols[0].peak_external;
	for (k = 0; k < n; k++) {
		const struct an_whatif_col *col = &w.cols[k + 1];

		snprintf(f->set[k].name, sizeof f->set[k].name, "%s",
		    col->name);
		f->set[k].peak_reserved = col->peak_reserved;
		f->set[k].waste = col->peak_internal + col->peak_external;
		f->set[k].first_oom = col->first_oom;
	}
	f->n_set = (int)n;
	ev = w.cols[1].peak_ev;
	for (k = 0; k < w.steps.n && ev >= 0; k++)
		if (w.step[k].first <= ev && ev <= w.step[k].last)
			f->step = k;
	if (f->step >= 0) {
		f->alloc_peak = w.step[f->step].allocated_peak;
		f->alloc_peak_ev = w.step[f->step].allocated_peak_ev;
		lo = w.step[f->step].first;
		hi = w.step[f->step].last;
	} else {
		f->alloc_peak = w.requested_peak;
		f->alloc_peak_ev = w.requested_peak_ev;
	}
	if (tl != NULL && sites != NULL && f->alloc_peak_ev >= 0)
		short_lived(tl, sites, f->alloc_peak_ev, lo, hi, f);
	frag_text(f, sites);
	an_whatif_destroy(&w);
	return 0;
}
