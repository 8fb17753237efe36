/*
 * The phases of the device shown (analysis/phases.h): their instances
 * are found when the device opens (annotation ranges, or the --phase
 * rules: no pass over the steps) and drawn as spans under the
 * timeline's axis when some are the program's own; they are measured
 * (peaks, what each leaves behind, what grows) the first time the phase
 * view needs them. ' and ` move the cursor from one instance to the
 * next.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/fmt.h"
#include "tui/app.h"
#include "util/escape.h"

/*
 * Are there phases of the program's own, beyond the profiler's steps and
 * the optimizer's ranges? Those already show as annotation ticks and
 * names on the axis, so the spans are drawn for the others (or for the
 * user's rules) only.
 */
static int
own_phases(const struct an_phases *ph)
{
	static const char *const theirs[] = {"ProfilerStep",
	    "Optimizer.step#", "Optimizer.zero_grad#"};
	uint32_t q;
	size_t i;

	if (ph->from_rules)
		return ph->n_inst > 0;
	for (q = 0; q < ph->n_phases; q++) {
		for (i = 0; i < sizeof theirs / sizeof theirs[0]; i++)
			if (strncmp(ph->phases[q].name, theirs[i],
			    strlen(theirs[i])) == 0)
				break;
		if (i == sizeof theirs / sizeof theirs[0])
			return 1;
	}
	return 0;
}

void
phaseset_open(struct app *a)
{
	struct sv_error err;

	phaseset_free(a);
	sv_error_clear(&err);
	if (an_phases_find(a->snap, a->device, a->phase_rules, NULL,
	    &a->phases, &err) != 0) {
		app_msg(a, "phases: %s", err.msg);
		return;
	}
	a->phases_ok = 1;
	a->view.phases = own_phases(&a->phases) ? &a->phases : NULL;
	a->view.phase_sel = 0;
}

void
phaseset_free(struct app *a)
{
	if (a->phases_ok)
		an_phases_destroy(&a->phases);
	a->phases_ok = 0;
	a->view.phases = NULL;
	a->view.phase_sel = 0;
}

const struct an_phases *
phaseset_measured(struct app *a)
{
	struct an_sites *sites;
	struct sv_error err;

	if (a->phases_ok == 0 || a->phases.n_inst == 0) {
		app_msg(a, "%s", a->phases.no_time ? "phases: the annotations "
		    "have no time_us" : a->phase_rules != NULL ? "phases: no "
		    "--phase rule matches this device" : "no phases: no "
		    "annotation range (name them with --phase NAME=REGEX)");
		return NULL;
	}
	if (a->phases_ok == 2)
		return &a->phases;
	if ((sites = tables_sites(a)) == NULL)
		return NULL;
	sv_error_clear(&err);
	if (an_phases_measure(a->snap, &a->tl, sites, NULL, &a->phases,
	    &err) != 0) {
		app_msg(a, "phases: %s", err.msg);
		return NULL;
	}
	a->phases_ok = 2;
	return &a->phases;
}

void
phaseset_jump(struct app *a, int dir)
{
	const struct an_phases *ph = &a->phases;
	const struct an_phase_inst *p;
	char e0[FMT_BUF], e1[FMT_BUF], name[64];
	int64_t cur = a->view.cursor;
	uint64_t i, k = UINT64_MAX;

	if (a->phases_ok == 0 || ph->n_inst == 0) {
		app_msg(a, "no phases: no annotation range (name them with "
		    "--phase NAME=REGEX)");
		return;
	}
	/* instances are in order of their first events */
	for (i = 0; i < ph->n_inst; i++) {
		if (dir > 0 && ph->inst[i].first > cur) {
			k = i;
			break;
		}
		if (dir < 0 && ph->inst[i].first < cur)
			k = i;
	}
	if (k == UINT64_MAX) {
		app_msg(a, "no %s phase instance", dir > 0 ? "later" :
		    "earlier");
		return;
	}
	p = &ph->inst[k];
	cursor_set(a, p->first);
	a->detail = DETAIL_EVENT;
	sv_escape(name, sizeof name, ph->phases[p->phase].name,
	    strlen(ph->phases[p->phase].name));
	app_msg(a, "%s #%" PRIu64 ": %s..%s (%" PRIu64 " of %" PRIu64 ")",
	    name, p->iteration, fmt_event(e0, sizeof e0, p->first),
	    fmt_event(e1, sizeof e1, p->last), k + 1, ph->n_inst);
}
