/*
 * Snapshot comparison by call site. See diff.h.
 */
#include "config.h"

#include "analysis/diff.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "analysis/top.h"
#include "util/u64map.h"
#include "util/xalloc.h"

char *
an_site_key(const struct an_sites *t, uint32_t site, char *buf, size_t size)
{
	uint32_t n, i;
	const uint32_t *f = an_site_frames(t, site, &n);
	size_t len;

	an_site_label(t, site, buf, size);
	for (i = 1; i < n; i++) {
		len = strlen(buf);
		if (len + 5 >= size)
			break;
		memcpy(buf + len, " <- ", 5);
		an_frame_label(t->s, f[i], buf + len + 4, size - len - 4);
	}
	return buf;
}

static uint64_t
str_hash(const char *p)
{
	uint64_t h = 1469598103934665603ull;

	for (; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 1099511628211ull;
	}
	return h;
}

struct rowset {
	struct an_diff *d;
	struct u64map by_hash;
	size_t cap;
	uint32_t *site_row; /* per site id: row + 1, current side */
	size_t site_cap;
};

static uint64_t
row_of(struct rowset *rs, const char *label)
{
	uint64_t h = str_hash(label), v;

	for (;; h++) {
		if (!u64map_get(&rs->by_hash, h, &v))
			break;
		if (strcmp(rs->d->rows[v].label, label) == 0)
			return v;
	}
	XGROW(rs->d->rows, rs->cap, (size_t)rs->d->n_rows + 1);
	memset(&rs->d->rows[rs->d->n_rows], 0, sizeof rs->d->rows[0]);
	rs->d->rows[rs->d->n_rows].label = xstrdup(label);
	u64map_put(&rs->by_hash, h, rs->d->n_rows);
	return rs->d->n_rows++;
}

static void
add_side(struct rowset *rs, const struct an_diff_input *in, int side)
{
	const struct idx_timeline *tl = in->tl;
	int64_t end = (int64_t)tl->n_events - 1;
	int64_t at = in->has_at ? in->at : end, peak = an_peak_ev(tl);
	uint64_t i;

	free(rs->site_row);
	rs->site_row = NULL;
	rs->site_cap = 0;
	for (i = 0; i < tl->n_elems; i++) {
		const struct idx_elem e_v = idx_tl_elem(tl, i);
		const struct idx_elem *e = &e_v;
		uint32_t site = an_site_of(in->sites, e->stack);
		struct an_diff_side *x;
		uint64_t row;
		char buf[8192];

		if (site >= in->sites->n)
			continue;
		if ((size_t)site >= rs->site_cap) {
			size_t old = rs->site_cap;

			XGROW(rs->site_row, rs->site_cap, (size_t)site + 1);
			memset(rs->site_row + old, 0,
			    (rs->site_cap - old) * sizeof *rs->site_row);
		}
		if (rs->site_row[site] == 0)
			rs->site_row[site] = (uint32_t)row_of(rs,
			    an_site_key(in->sites, site, buf, sizeof buf)) + 1;
		row = rs->site_row[site] - 1;
		x = side ? &rs->d->rows[row].b : &rs->d->rows[row].a;
		if (e->alloc_ev >= 0)
			x->allocs++;
		if (an_elem_alive(e, at)) {
			if (x->live_n == 0 || e->size > x->stack_size) {
				x->stack = e->stack;
				x->stack_size = e->size;
			}
			x->live += e->size;
			x->live_n++;
		}
		/* peak_ev -1 is the state before the first event (an
		 * element alive from the start is alive there) */
		if (an_elem_alive(e, peak))
			x->peak += e->size;
	}
	rs->d->events[side] = tl->n_events;
	rs->d->peak[side] = tl->peak;
	rs->d->peak_ev[side] = peak;
	rs->d->reserved_end[side] = tl->n_events ? idx_tl_reserved(tl, end)
						 : tl->base_reserved;
	rs->d->live_end[side] = tl->n_events ? idx_tl_total(tl, end)
					     : tl->base_total;
	rs->d->at[side] = at;
	rs->d->reserved_at[side] = idx_tl_reserved(tl, at);
	rs->d->live_at[side] = idx_tl_total(tl, at);
}

static uint64_t
absdiff(uint64_t x, uint64_t y)
{
	return x > y ? x - y : y - x;
}

static int
cmp_row(const void *p, const void *q)
{
	const struct an_diff_row *x = p, *y = q;
	uint64_t dx = absdiff(x->a.live, x->b.live);
	uint64_t dy = absdiff(y->a.live, y->b.live);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	dx = absdiff(x->a.peak, x->b.peak);
	dy = absdiff(y->a.peak, y->b.peak);
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->label, y->label);
}

static void
diff_settings(const struct snapshot *a, const struct snapshot *b,
    struct an_diff *d)
{
	uint32_t i;
	size_t cap = 0;

	for (i = 0; i < a->n_settings + b->n_settings; i++) {
		const struct snapshot *s = i < a->n_settings ? a : b;
		uint32_t k = i < a->n_settings ? i : i - a->n_settings;
		const char *key = snap_str(s, s->settings[k].key);
		const char *va = snap_setting(a, key);
		const char *vb = snap_setting(b, key);

		if (s == b && va != NULL)
			continue; /* already compared from a's side */
		if (va != NULL && vb != NULL && strcmp(va, vb) == 0)
			continue;
		XGROW(d->settings, cap, (size_t)d->n_settings + 1);
		d->settings[d->n_settings].key = key;
		d->settings[d->n_settings].a = va;
		d->settings[d->n_settings].b = vb;
		d->n_settings++;
	}
}

int
an_diff(const struct an_diff_input *a, const struct an_diff_input *b,
    struct an_diff *out)
{
	struct rowset rs;

	memset(out, 0, sizeof *out);
	memset(&rs, 0, sizeof rs);
	rs.d = out;
	u64map_init(&rs.by_hash);
	add_side(&rs, a, 0);
	add_side(&rs, b, 1);
	free(rs.site_row);
	u64map_destroy(&rs.by_hash);
	if (out->n_rows > 1)
		qsort(out->rows, out->n_rows, sizeof *out->rows, cmp_row);
	diff_settings(a->s, b->s, out);
	return 0;
}

void
an_diff_destroy(struct an_diff *d)
{
	uint64_t i;

	for (i = 0; i < d->n_rows; i++)
		free(d->rows[i].label);
	free(d->rows);
	free(d->settings);
	memset(d, 0, sizeof *d);
}

int64_t
an_diff_step_at(const struct idx_timeline *tl, const struct an_steps *st,
    uint64_t k)
{
	int64_t e, best;
	uint64_t hi;

	if (k >= st->n || st->steps[k].first < 0 ||
	    (uint64_t)st->steps[k].last >= tl->n_events)
		return -2;
	best = st->steps[k].first;
	hi = idx_tl_total(tl, best);
	for (e = best + 1; e <= st->steps[k].last; e++)
		if (idx_tl_total(tl, e) > hi) {
			hi = idx_tl_total(tl, e);
			best = e;
		}
	return best;
}
