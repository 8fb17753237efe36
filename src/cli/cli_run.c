/*
 * snapview ranks on a run directory (cli_run.h): the grid of each dump's
 * peak, one line per dump with its figures, one line per file that
 * could not be read, the call sites that grow from dump to dump on each
 * rank and those that make a rank heavier than the median rank of a
 * step; text, and the "run" object of --json.
 */
#include "config.h"

#include "cli/cli_run.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/escape.h"
#include "util/units.h"

#define GRID_STEPS 6            /* steps per block of the grid: 80 columns */

/* The path of a cell under the run's directory. */
static const char *
rel_path(const struct an_run *run, const char *path)
{
	size_t n = strlen(run->dir);

	if (strncmp(path, run->dir, n) == 0) {
		path += n;
		while (*path == '/')
			path++;
	}
	return path;
}

size_t
cli_run_unread(const struct an_run *run)
{
	return run->n_empty + run->n_failed;
}

static const char *
why_failed(const struct an_run_cell *c, const struct an_rankset *rs,
    char *buf, size_t size)
{
	const struct an_rs_member *m = &rs->m[c->member];

	if (c->state == AN_RUN_EMPTY)
		snprintf(buf, size, "%s", AN_RUN_EMPTY_TEXT);
	else if (m->state != AN_RS_OK)
		snprintf(buf, size, "%s", m->err.msg);
	else
		snprintf(buf, size, "no data for the device asked for");
	return buf;
}

/* ---- text ---------------------------------------------------------------- */

/* Prints line without its trailing blanks. */
static void
put_line(char *line)
{
	size_t n = strlen(line);

	while (n > 0 && line[n - 1] == ' ')
		line[--n] = '\0';
	printf("%s\n", line);
}

static void
text_grid(const struct an_run *run)
{
	size_t r, c, c0, at;
	char a[32], head[32], line[32 * (GRID_STEPS + 1)];

	printf("Peak of each dump (* an OOM dump):\n");
	for (c0 = 0; c0 < run->n_steps; c0 += GRID_STEPS) {
		at = (size_t)snprintf(line, sizeof line, " %5s", "rank");
		for (c = c0; c < run->n_steps && c < c0 + GRID_STEPS; c++) {
			snprintf(head, sizeof head, "step %" PRId64,
			    run->steps[c]);
			at += (size_t)snprintf(line + at, sizeof line - at,
			    " %10s ", head);
		}
		put_line(line);
		for (r = 0; r < run->n_ranks; r++) {
			at = (size_t)snprintf(line, sizeof line, " %5" PRId64,
			    run->ranks[r]);
			for (c = c0; c < run->n_steps && c < c0 + GRID_STEPS;
			    c++) {
				const struct an_run_cell *cell =
				    an_run_cell(run, r, c);

				if (cell->dev != NULL)
					sv_fmt_size(a, sizeof a,
					    cell->dev->peak);
				else
					snprintf(a, sizeof a, "%s",
					    cell->state == AN_RUN_MISSING ? "-"
					    : an_run_state_name(cell->state));
				at += (size_t)snprintf(line + at,
				    sizeof line - at, " %10s%c", a,
				    cell->state == AN_RUN_OOM ? '*' : ' ');
			}
			put_line(line);
		}
	}
}

static void
text_dumps(const struct cli_opts *o, const struct an_run *run)
{
	size_t r, c, n = 0;
	uint64_t limit = o->limit > 0 ? (uint64_t)o->limit : UINT64_MAX;
	char a[32], b[32], d[32], ev[32], t[32];

	printf("\nEach dump (peak and when, reserved and allocated at the "
	    "dump):\n");
	printf(" %5s %5s %10s %10s %9s %10s %10s %4s  %s\n", "rank", "step",
	    "peak", "at event", "time", "reserved", "allocated", "OOM",
	    "file");
	for (r = 0; r < run->n_ranks; r++)
		for (c = 0; c < run->n_steps; c++) {
			const struct an_run_cell *cell = an_run_cell(run, r, c);
			const struct an_sum_dev *dv = cell->dev;

			if (dv == NULL)
				continue;
			if (n++ >= limit)
				continue;
			if (dv->peak_ev < 0)
				snprintf(ev, sizeof ev, "start");
			else
				snprintf(ev, sizeof ev, "#%" PRId64,
				    dv->peak_ev);
			if (dv->flags & AN_SUM_F_TIME)
				snprintf(t, sizeof t, "+%.3fs",
				    (double)dv->peak_time / 1e6);
			else
				snprintf(t, sizeof t, "-");
			printf(" %5" PRId64 " %5" PRId64 " %10s %10s %9s %10s "
			    "%10s %4" PRIu64 "  %s\n", run->ranks[r],
			    run->steps[c], sv_fmt_size(a, sizeof a, dv->peak),
			    ev, t, sv_fmt_size(b, sizeof b, cell->reserved),
			    sv_fmt_size(d, sizeof d, cell->allocated),
			    dv->ooms, cli_shown(rel_path(run, cell->path)));
		}
	if (n > limit)
		printf("  ... %zu more dumps (--limit)\n", n - (size_t)limit);
}

static void
text_unread(const struct an_run *run, const struct an_rankset *rs)
{
	size_t k;
	char why[300];

	if (cli_run_unread(run) == 0)
		return;
	printf("\nFiles not read:\n");
	for (k = 0; k < run->n_ranks * run->n_steps; k++) {
		const struct an_run_cell *c = &run->cells[k];
		const struct an_rs_member *m;

		if (c->state != AN_RUN_EMPTY && c->state != AN_RUN_FAILED)
			continue;
		printf("  rank %" PRId64 " step %" PRId64 ": %s: ",
		    run->ranks[k / run->n_steps], run->steps[k % run->n_steps],
		    cli_shown(rel_path(run, c->path)));
		m = c->state == AN_RUN_FAILED ? &rs->m[c->member] : NULL;
		if (m != NULL && m->state != AN_RS_OK &&
		    m->err.offset != SV_NO_OFFSET)
			printf("byte %" PRIu64 ": ", m->err.offset);
		sv_escape_fputs(stdout, why_failed(c, rs, why, sizeof why));
		printf("\n");
	}
}

static void
text_growth(const struct an_run *run)
{
	size_t i;
	char a[32], b[32], c[32], d[32];

	printf("\nGrowth between dumps (live bytes at the end of each step, "
	    "by call site):\n");
	if (run->n_judged == 0) {
		printf("  not judged: no rank has three dumps taken at the end "
		    "of a step\n");
		return;
	}
	if (run->n_growth == 0) {
		printf("  none: no call site grows from each dump to the next "
		    "(%zu rank%s with three dumps or more)\n", run->n_judged,
		    run->n_judged == 1 ? "" : "s");
		return;
	}
	for (i = 0; i < run->n_growth; i++) {
		const struct an_run_growth *g = &run->growth[i];
		const struct an_run_point *p0 = &g->pts[0];
		const struct an_run_point *p1 = &g->pts[g->n_pts - 1];

		printf("  rank %" PRId64 " grows %s a step at ",
		    run->ranks[g->row], sv_fmt_size(a, sizeof a,
		    (uint64_t)g->per_step));
		sv_escape_fputs(stdout, run->sites[g->site]);
		printf("\n    steps %" PRId64 "-%" PRId64 ": %s -> %s in %zu "
		    "dumps, %" PRIu64 " block%s at step %" PRId64 "; %" PRIu64
		    " of them (%s) in the dump before, the oldest live since "
		    "step %" PRId64 "\n", p0->step, p1->step,
		    sv_fmt_size(b, sizeof b, p0->bytes),
		    sv_fmt_size(c, sizeof c, p1->bytes), g->n_pts, p1->blocks,
		    p1->blocks == 1 ? "" : "s", p1->step, g->kept_blocks,
		    sv_fmt_size(d, sizeof d, g->kept_bytes), g->oldest_step);
	}
}

static void
text_skew(const struct an_run *run)
{
	size_t i, k, e, n = 0;
	char a[32], b[32], c[32];

	printf("\nSkew (live bytes at each dump against the median rank of "
	    "its step):\n");
	for (i = 0; i < run->n_skew; i++) {
		const struct an_run_skew *sk = &run->skew[i];

		for (k = 0; k < sk->n_heavy; k++) {
			const struct an_run_heavy *h = &sk->heavy[k];

			n++;
			printf("  step %" PRId64 ": rank %" PRId64 " %s, %s "
			    "(+%.1f%%) above the median %s of %zu ranks\n",
			    run->steps[sk->col], run->ranks[h->row],
			    sv_fmt_size(a, sizeof a, h->bytes),
			    sv_fmt_size(b, sizeof b, h->excess),
			    sk->median ? 100.0 * (double)h->excess /
			    (double)sk->median : 0.0,
			    sv_fmt_size(c, sizeof c, sk->median), sk->n_ranks);
			for (e = 0; e < h->n_top; e++) {
				printf("    +%s ", sv_fmt_size(a, sizeof a,
				    h->top[e].bytes));
				sv_escape_fputs(stdout,
				    run->sites[h->top[e].site]);
				printf("\n");
			}
		}
	}
	if (run->n_skew == 0)
		printf("  not judged: no step has two dumps to compare\n");
	else if (n == 0)
		printf("  none: no rank is more than 5%% above the median rank "
		    "of a step\n");
}

void
cli_run_text(const struct cli_opts *o, const struct an_run *run,
    const struct an_rankset *rs)
{
	printf("Run in %s: ", cli_shown(run->dir));
	if (strcmp(run->layout, run->pattern) == 0)
		printf("layout %s", cli_shown(run->pattern));
	else
		printf("%s layout (%s)", cli_shown(run->layout),
		    cli_shown(run->pattern));
	printf(", %zu rank%s x %zu step%s\n", run->n_ranks,
	    run->n_ranks == 1 ? "" : "s", run->n_steps,
	    run->n_steps == 1 ? "" : "s");
	printf("%zu dump%s at the end of a step, %zu OOM dump%s, %zu empty "
	    "file%s, %zu unreadable, %zu missing\n\n", run->n_dumps,
	    run->n_dumps == 1 ? "" : "s", run->n_oom,
	    run->n_oom == 1 ? "" : "s", run->n_empty,
	    run->n_empty == 1 ? "" : "s", run->n_failed,
	    run->n_ranks * run->n_steps - run->n_dumps - run->n_oom -
	    run->n_empty - run->n_failed);
	text_grid(run);
	text_dumps(o, run);
	text_unread(run, rs);
	text_growth(run);
	text_skew(run);
}

/* ---- JSON ---------------------------------------------------------------- */

static void
json_cell(struct json *j, const struct an_run *run, size_t k,
    const struct an_rankset *rs)
{
	const struct an_run_cell *c = &run->cells[k];
	const struct an_sum_dev *dv = c->dev;
	const struct an_rs_member *m;
	char why[300];

	json_obj_begin(j);
	json_kv_i64(j, "rank", run->ranks[k / run->n_steps]);
	json_kv_i64(j, "step", run->steps[k % run->n_steps]);
	json_kv_str(j, "file", rel_path(run, c->path));
	json_kv_str(j, "state", an_run_state_name(c->state));
	json_kv_bool(j, "oom_name", c->oom_name);
	if (dv == NULL) {
		m = c->state == AN_RUN_FAILED ? &rs->m[c->member] : NULL;
		json_key(j, "offset");
		if (m != NULL && m->state != AN_RS_OK &&
		    m->err.offset != SV_NO_OFFSET)
			json_u64(j, m->err.offset);
		else
			json_null(j);
		json_kv_str(j, "error", why_failed(c, rs, why, sizeof why));
		json_obj_end(j);
		return;
	}
	json_kv_u64(j, "device", dv->device);
	json_kv_u64(j, "events", dv->events);
	json_kv_u64(j, "peak", dv->peak);
	json_kv_i64(j, "peak_event", dv->peak_ev);
	json_key(j, "peak_time_us");
	if (dv->flags & AN_SUM_F_TIME)
		json_i64(j, dv->peak_time);
	else
		json_null(j);
	json_kv_u64(j, "reserved", c->reserved);
	json_kv_u64(j, "reserved_peak", dv->reserved_max);
	json_kv_u64(j, "allocated", c->allocated);
	json_kv_u64(j, "blocks", c->n_blocks);
	json_kv_bool(j, "blocks_read", c->has_blocks);
	json_kv_u64(j, "ooms", dv->ooms);
	json_obj_end(j);
}

static void
json_growth(struct json *j, const struct an_run *run,
    const struct an_run_growth *g)
{
	size_t k;

	json_obj_begin(j);
	json_kv_i64(j, "rank", run->ranks[g->row]);
	json_kv_str(j, "site", run->sites[g->site]);
	json_kv_i64(j, "per_step_bytes", g->per_step);
	json_kv_i64(j, "first_step", g->pts[0].step);
	json_kv_i64(j, "last_step", g->pts[g->n_pts - 1].step);
	json_kv_u64(j, "bytes_first", g->pts[0].bytes);
	json_kv_u64(j, "bytes_last", g->pts[g->n_pts - 1].bytes);
	json_kv_u64(j, "blocks_last", g->pts[g->n_pts - 1].blocks);
	json_kv_u64(j, "kept_blocks", g->kept_blocks);
	json_kv_u64(j, "kept_bytes", g->kept_bytes);
	json_kv_i64(j, "oldest_step", g->oldest_step);
	json_key(j, "dumps");
	json_arr_begin(j);
	for (k = 0; k < g->n_pts; k++) {
		json_obj_begin(j);
		json_kv_i64(j, "step", g->pts[k].step);
		json_kv_u64(j, "bytes", g->pts[k].bytes);
		json_kv_u64(j, "blocks", g->pts[k].blocks);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void
json_skew(struct json *j, const struct an_run *run,
    const struct an_run_skew *sk)
{
	size_t k, e;

	json_obj_begin(j);
	json_kv_i64(j, "step", run->steps[sk->col]);
	json_kv_u64(j, "ranks", sk->n_ranks);
	json_kv_u64(j, "median_allocated", sk->median);
	json_key(j, "heavier");
	json_arr_begin(j);
	for (k = 0; k < sk->n_heavy; k++) {
		const struct an_run_heavy *h = &sk->heavy[k];

		json_obj_begin(j);
		json_kv_i64(j, "rank", run->ranks[h->row]);
		json_kv_u64(j, "allocated", h->bytes);
		json_kv_u64(j, "excess", h->excess);
		json_key(j, "sites");
		json_arr_begin(j);
		for (e = 0; e < h->n_top; e++) {
			json_obj_begin(j);
			json_kv_str(j, "site", run->sites[h->top[e].site]);
			json_kv_u64(j, "bytes", h->top[e].bytes);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

void
cli_run_json(struct json *j, const struct an_run *run,
    const struct an_rankset *rs)
{
	size_t k;

	json_obj_begin(j);
	json_kv_str(j, "layout", run->layout);
	json_kv_str(j, "pattern", run->pattern);
	json_key(j, "ranks");
	json_arr_begin(j);
	for (k = 0; k < run->n_ranks; k++)
		json_i64(j, run->ranks[k]);
	json_arr_end(j);
	json_key(j, "steps");
	json_arr_begin(j);
	for (k = 0; k < run->n_steps; k++)
		json_i64(j, run->steps[k]);
	json_arr_end(j);
	json_kv_u64(j, "dumps", run->n_dumps);
	json_kv_u64(j, "oom_dumps", run->n_oom);
	json_kv_u64(j, "empty_files", run->n_empty);
	json_kv_u64(j, "unreadable", run->n_failed);
	json_key(j, "cells");
	json_arr_begin(j);
	for (k = 0; k < run->n_ranks * run->n_steps; k++)
		if (run->cells[k].state != AN_RUN_MISSING)
			json_cell(j, run, k, rs);
	json_arr_end(j);
	json_kv_u64(j, "growth_judged_ranks", run->n_judged);
	json_key(j, "growth");
	json_arr_begin(j);
	for (k = 0; k < run->n_growth; k++)
		json_growth(j, run, &run->growth[k]);
	json_arr_end(j);
	json_key(j, "skew");
	json_arr_begin(j);
	for (k = 0; k < run->n_skew; k++)
		json_skew(j, run, &run->skew[k]);
	json_arr_end(j);
	json_obj_end(j);
}
