/*
 * Memory budgets: each limit set on the command line judged against one
 * device's timeline, steps and replayed state (budget.h says which
 * figure each one reads).
 */
#include "config.h"

#include "analysis/budget.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/frag.h"
#include "analysis/steps.h"

static const char *names[AN_BUDGET_COUNT] = {
	"peak", "reserved", "growth_per_step", "frag"
};
static const char *options[AN_BUDGET_COUNT] = {
	"--max-peak", "--max-reserved", "--max-growth-per-step", "--max-frag"
};

const char *
an_budget_name(int kind)
{
	return kind >= 0 && kind < AN_BUDGET_COUNT ? names[kind] : "?";
}

const char *
an_budget_option(int kind)
{
	return kind >= 0 && kind < AN_BUDGET_COUNT ? options[kind] : "?";
}

/* A plain decimal number, digits with at most one '.', at least one
 * digit; *end past it. */
static int
parse_decimal(const char *s, double *v, const char **end)
{
	const char *p = s;
	int digits = 0, dot = 0;
	char buf[64];

	for (; *p != '\0'; p++) {
		if (isdigit((unsigned char)*p))
			digits++;
		else if (*p == '.' && !dot)
			dot = 1;
		else
			break;
	}
	if (digits == 0 || (size_t)(p - s) >= sizeof buf)
		return -1;
	memcpy(buf, s, (size_t)(p - s));
	buf[p - s] = '\0';
	errno = 0;
	*v = strtod(buf, NULL);
	if (errno != 0)
		return -1;
	*end = p;
	return 0;
}

int
an_budget_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	const char *u, *k;
	double v, mul = 1;
	int i;

	if (parse_decimal(s, &v, &u) != 0)
		return -1;
	if (*u != '\0' && strcasecmp(u, "B") != 0) {
		k = strchr(units, toupper((unsigned char)*u));
		if (k == NULL)
			return -1;
		for (i = 0; i <= k - units; i++)
			mul *= 1024;
		if (u[1] != '\0' && strcasecmp(u + 1, "B") != 0 &&
		    strcasecmp(u + 1, "iB") != 0)
			return -1;
	}
	v *= mul;
	if (v >= 18446744073709551615.0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int
an_budget_parse_pct(const char *s, double *out)
{
	const char *u;
	double v;

	if (parse_decimal(s, &v, &u) != 0)
		return -1;
	if (*u != '\0' && strcmp(u, "%") != 0)
		return -1;
	if (v > 100)
		return -1;
	*out = v;
	return 0;
}

/* The first event after which reserved is highest (-1: before the
 * first event). */
static int64_t
reserved_max(const struct idx_timeline *tl, uint64_t *max)
{
	int64_t ev = -1;
	uint64_t i, v;

	*max = idx_tl_reserved(tl, -1);
	for (i = 0; i < tl->n_events; i++) {
		v = idx_tl_reserved(tl, (int64_t)i);
		if (v > *max) {
			*max = v;
			ev = (int64_t)i;
		}
	}
	return ev;
}

static int
eval_growth(const struct snapshot *s, uint32_t d,
    const struct idx_timeline *tl, struct an_budget *b, struct sv_error *err)
{
	struct an_steps st;
	uint64_t k, seen = 0;
	int64_t g;

	if (an_steps_find(s, d, &st, err) != 0)
		return -1;
	for (k = 0; k < st.n; k++) {
		const struct an_step *sp = &st.steps[k];

		if (!sp->complete || sp->last < sp->first ||
		    (uint64_t)sp->last >= tl->n_events)
			continue;
		/* the first complete step builds what lives on (optimizer
		 * state, gradients): not judged */
		if (seen++ == 0)
			continue;
		g = (int64_t)(idx_tl_total(tl, sp->last) -
		    idx_tl_total(tl, sp->first - 1));
		if (!b->judged || g > b->actual) {
			b->judged = 1;
			b->actual = g;
			b->step = (int64_t)k + 1;
			b->step_first = sp->first;
			b->step_last = sp->last;
			b->event = sp->last;
		}
	}
	an_steps_destroy(&st);
	b->ok = !b->judged || b->actual <= (int64_t)b->limit;
	return 0;
}

static int
eval_frag(const struct idx_timeline *tl, struct replay *r,
    struct an_budget *b, struct sv_error *err)
{
	struct an_frag_state fs;
	uint64_t max;

	b->event = reserved_max(tl, &max);
	if (r == NULL) {
		sv_error_set(err, SV_ERR_USAGE, 0, "frag budget: no replay");
		return -1;
	}
	if (replay_seek(r, b->event, err) != 0)
		return -1;
	memset(&fs, 0, sizeof fs);
	an_frag_state_of(replay_state(r), &fs);
	free(fs.segs);
	free(fs.groups);
	b->judged = 1;
	b->actual = (int64_t)(fs.internal + fs.external);
	b->actual_pct = fs.reserved ? 100.0 * (double)(fs.internal +
	    fs.external) / (double)fs.reserved : 0;
	b->ok = b->actual_pct <= b->limit_pct;
	return 0;
}

int
an_budget_eval(const struct snapshot *s, uint32_t d,
    const struct idx_timeline *tl, struct replay *r,
    const struct an_budget_limits *lim, struct an_budget *out,
    struct sv_error *err)
{
	int k, n = 0;
	uint64_t max;

	for (k = 0; k < AN_BUDGET_COUNT; k++) {
		struct an_budget *b = &out[n];

		if (!lim->set[k])
			continue;
		memset(b, 0, sizeof *b);
		b->kind = k;
		b->limit = lim->bytes[k];
		b->limit_pct = lim->pct;
		b->step = b->step_first = b->step_last = -1;
		b->event = -1;
		switch (k) {
		case AN_BUDGET_PEAK:
			b->judged = 1;
			b->actual = (int64_t)tl->peak;
			b->event = tl->peak_ev;
			b->ok = tl->peak <= b->limit;
			break;
		case AN_BUDGET_RESERVED:
			b->judged = 1;
			b->event = reserved_max(tl, &max);
			b->actual = (int64_t)max;
			b->ok = max <= b->limit;
			break;
		case AN_BUDGET_GROWTH:
			if (eval_growth(s, d, tl, b, err) != 0)
				return -1;
			break;
		case AN_BUDGET_FRAG:
			if (eval_frag(tl, r, b, err) != 0)
				return -1;
			break;
		}
		n++;
	}
	return n;
}
