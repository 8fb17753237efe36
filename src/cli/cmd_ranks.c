/*
 * snapview ranks FILE... | DIR: one row per rank (and device) of a job,
 * the highest peak first: when it peaked, reserved memory, what was
 * allocated at the end, OOMs, waste, the call site on top at the peak and
 * the leading leak suspect, with the skew in words. The figures come from
 * each index's summary section (analysis/summary.h); missing indexes are
 * built in parallel (analysis/rankset.h) under one progress line. The
 * table fits the terminal's width (COLUMNS, else the terminal's, else
 * 80): the file names and call sites are cut from the left, and a narrow
 * one puts the call site on a line of its own and leaves out the time,
 * at end and waste columns.
 */
#include "config.h"

#include <sys/ioctl.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/rankset.h"
#include "analysis/runs.h"
#include "analysis/steps.h"
#include "cli/cli.h"
#include "cli/cli_run.h"
#include "cli/progress.h"
#include "index/idx.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/units.h"

static const char *
base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b != NULL && b[1] != '\0' ? b + 1 : path;
}

/* ---- progress ------------------------------------------------------------ */

struct ranks_bar {
	struct cli_progress pb;
	char label[96];
};

static int
ranks_progress(void *ctx, const struct an_rankset_progress *p)
{
	struct ranks_bar *b = ctx;

	if (p->building == 0)
		return 0;
	/* the bar shows the label after its last '/': keep it without one */
	snprintf(b->label, sizeof b->label, "ranks %zu of %zu, %zu running",
	    p->done, p->total, p->building);
	return cli_progress_cb(&b->pb, p->bytes_done, p->bytes_total);
}

/* ---- text ---------------------------------------------------------------- */

static const char *
fmt_step(char *buf, size_t size, const struct an_sum_dev *d)
{
	if (d->peak_step < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%" PRId64, d->peak_step + 1);
	return buf;
}

static const char *
fmt_time(char *buf, size_t size, const struct an_sum_dev *d)
{
	if (!(d->flags & AN_SUM_F_TIME))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "+%.3fs", (double)d->peak_time / 1e6);
	return buf;
}

static const char *
fmt_leak(char *buf, size_t size, const struct an_sum_dev *d)
{
	if (d->leak_site[0] != '\0')
		return sv_fmt_size(buf, size, d->leak_per_step);
	snprintf(buf, size, "%s", d->flags & AN_SUM_F_JUDGED ? "-" : "?");
	return buf;
}

static void
print_leaks(const struct an_rankset *rs, const struct an_rs_report *rp)
{
	size_t i, n = 0, judged = 0;
	char a[32];

	for (i = 0; i < rp->n_rows; i++) {
		const struct an_sum_dev *d = rp->rows[i].dev;

		if (d->flags & AN_SUM_F_JUDGED)
			judged++;
		if (d->leak_site[0] == '\0')
			continue;
		if (n++ == 3)
			continue;
		printf("Leak suspect: rank %" PRId64 " device %u grows %s "
		    "every step (%" PRIu64 " step%s) at ",
		    rs->m[rp->rows[i].member].rank, d->device,
		    sv_fmt_size(a, sizeof a, d->leak_per_step), d->leak_steps,
		    d->leak_steps == 1 ? "" : "s");
		sv_escape_fputs(stdout, d->leak_site);
		printf("\n");
	}
	if (n > 3)
		printf("  ... and %zu more ranks with a leak suspect\n", n - 3);
	/* a file without steps (one forward pass: its layers are no steps)
	 * grows from nothing to nothing */
	if (n == 0 && judged == 0)
		printf("No leak judged: no file has two complete steps to "
		    "compare.\n");
	else if (n == 0)
		printf("No leak suspect: no call site grows every step.\n");
}

static void
print_ooms(const struct an_rankset *rs, const struct an_rs_report *rp)
{
	size_t i, n = 0;

	for (i = 0; i < rp->n_rows; i++) {
		const struct an_sum_dev *d = rp->rows[i].dev;

		if (d->ooms == 0)
			continue;
		printf("%s rank %" PRId64 " (%" PRIu64 ")", n++ ? "," : "OOM:",
		    rs->m[rp->rows[i].member].rank, d->ooms);
	}
	if (n > 0)
		printf("\n");
}

/* ---- the table's width --------------------------------------------------- */

/* The columns before the file name: all of them (WIDE_NUM), or without
 * time, at end and waste (NARROW_NUM); then two blanks, the file, two
 * blanks and the call site on a wide line. */
#define WIDE_NUM 95
#define NARROW_NUM 64

/* Columns to fit: COLUMNS, else the terminal's, else 80. */
static int
term_width(void)
{
	const char *c = getenv("COLUMNS");
	struct winsize ws;
	char *end;
	long v;

	if (c != NULL && *c != '\0') {
		v = strtol(c, &end, 10);
		if (*end == '\0' && v >= 20 && v <= 10000)
			return (int)v;
	}
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ,
	    &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* s (escaped text) in at most w cells: as it is, or its end after "...",
 * cut at a '/' when one leaves enough of it (a path loses its leading
 * directories first). Into buf; returns buf. */
static char *
cut_left(char *buf, size_t size, const char *s, int w)
{
	int cells = sv_utf8_cells(s), room = w - 3;
	const char *p = s, *q;

	if (cells <= w || w < 4) {
		snprintf(buf, size, "%s", cells <= w ? s : "");
		return buf;
	}
	/* drop cells - room cells from the left, at a character boundary */
	for (cells -= room; cells > 0; cells--)
		for (p++; ((unsigned char)*p & 0xc0) == 0x80; p++)
			;
	/* then the rest of a directory name, if a '/' is near enough */
	q = strchr(p, '/');
	if (q != NULL && q != p && sv_utf8_cells(q) * 2 >= room)
		p = q;
	snprintf(buf, size, "...%s", p);
	return buf;
}

/* The layout at width w: wide (one line a row) or narrow (the call site
 * on a line of its own, three columns left out); fw: the file column. */
struct layout {
	int w, wide, fw;
};

/* Cells a call site needs at the least: "...", from its last '/' on (the
 * file, line and function), and its bytes. */
static int
site_need(const struct an_sum_dev *d)
{
	const char *s = cli_shown(d->top_site), *t = strrchr(s, '/');
	char k[32];

	if (d->top_site[0] == '\0')
		return 1;
	sv_fmt_size(k, sizeof k, d->top_bytes);
	return 3 + sv_utf8_cells(t != NULL ? t : s) + 3 + (int)strlen(k);
}

static void
layout_of(const struct an_rankset *rs, const struct an_rs_report *rp,
    int w, struct layout *l)
{
	size_t i, n = 4;
	int need = 0;

	for (i = 0; i < rs->n; i++)
		if (sv_utf8_cells(cli_shown(base_name(rs->m[i].path))) >
		    (int)n)
			n = (size_t)sv_utf8_cells(cli_shown(base_name(
			    rs->m[i].path)));
	if (n > 32)
		n = 32;
	for (i = 0; i < rp->n_rows; i++)
		if (site_need(rp->rows[i].dev) > need)
			need = site_need(rp->rows[i].dev);
	l->w = w;
	/* wide when every call site keeps its file, line and function */
	l->wide = w >= WIDE_NUM + 2 + (int)n + 2 + need;
	/* a narrow line cuts the file name to fit, unless that leaves
	 * too little of it */
	l->fw = (int)n;
	if (!l->wide && (int)n > w - NARROW_NUM - 2 && w - NARROW_NUM - 2 >= 8)
		l->fw = w - NARROW_NUM - 2;
}

static void
print_head(const struct layout *l)
{
	if (l->wide)
		printf("\n %5s %3s %10s %10s %4s %8s %10s %10s %4s %10s %10s  "
		       "%-*s  %s\n", "rank", "dev", "peak", "at event", "step",
		    "time", "reserved", "at end", "OOM", "waste", "leak/step",
		    l->fw, "file", "top call site at the peak");
	else
		printf("\nEach row's second line: the top call site at the "
		       "peak. The time, at end and\nwaste columns: in a wider "
		       "terminal (COLUMNS) or with --json.\n"
		       " %5s %3s %10s %10s %4s %10s %4s %10s  %s\n", "rank",
		    "dev", "peak", "at event", "step", "reserved", "OOM",
		    "leak/step", "file");
}

static void
print_row(const struct an_rankset *rs, const struct an_rs_row *row,
    const struct layout *l)
{
	const struct an_sum_dev *d = row->dev;
	char a[32], b[32], c[32], e[32], f[32], g[32], h[32], k[32], ev[32];
	char site[1100], cut[1100];
	int used;

	if (d->peak_ev < 0)
		snprintf(ev, sizeof ev, "start");
	else
		snprintf(ev, sizeof ev, "#%" PRId64, d->peak_ev);
	cut_left(cut, sizeof cut, cli_shown(base_name(rs->m[row->member].path)),
	    l->fw);
	if (l->wide)
		printf(" %5" PRId64 " %3u %10s %10s %4s %8s %10s %10s %4"
		       PRIu64 " %10s %10s  %-*s  ", rs->m[row->member].rank,
		    d->device, sv_fmt_size(a, sizeof a, d->peak), ev,
		    fmt_step(b, sizeof b, d), fmt_time(c, sizeof c, d),
		    sv_fmt_size(e, sizeof e, d->reserved_max),
		    sv_fmt_size(f, sizeof f, d->allocated_end), d->ooms,
		    sv_fmt_size(g, sizeof g, d->waste),
		    fmt_leak(h, sizeof h, d), l->fw, cut);
	else
		printf(" %5" PRId64 " %3u %10s %10s %4s %10s %4" PRIu64
		       " %10s  %s\n        ", rs->m[row->member].rank,
		    d->device, sv_fmt_size(a, sizeof a, d->peak), ev,
		    fmt_step(b, sizeof b, d),
		    sv_fmt_size(e, sizeof e, d->reserved_max), d->ooms,
		    fmt_leak(h, sizeof h, d), cut);
	used = l->wide ? WIDE_NUM + 2 + l->fw + 2 : 8;
	if (d->top_site[0] == '\0') {
		printf("-\n");
		return;
	}
	sv_fmt_size(k, sizeof k, d->top_bytes);
	snprintf(site, sizeof site, "%s", cli_shown(d->top_site));
	/* the call site's end (its file, line and function) and its bytes */
	printf("%s (%s)\n", cut_left(cut, sizeof cut, site,
	    l->w - used - 3 - (int)strlen(k)), k);
}

/* A file that could not be read: its row, "FILE: [byte N: ]reason" as
 * every error says it. The file's name is never cut: a reason that does
 * not fit beside it goes on the next line, whole. */
static void
print_failed(const struct an_rs_member *m, const struct layout *l)
{
	char name[1100], why[1400];

	snprintf(name, sizeof name, "%s:", cli_shown(base_name(m->path)));
	if (m->err.offset != SV_NO_OFFSET)
		snprintf(why, sizeof why, "byte %" PRIu64 ": %s",
		    m->err.offset, cli_shown(m->err.msg));
	else
		snprintf(why, sizeof why, "%s", cli_shown(m->err.msg));
	if (sv_utf8_cells(name) + 1 + sv_utf8_cells(why) <= l->w - 11)
		printf(" %5" PRId64 " %3s  %s %s\n", m->rank, "-", name, why);
	else
		printf(" %5" PRId64 " %3s  %s\n            %s\n", m->rank,
		    "-", name, why);
}

static void
print_text(const struct cli_opts *o, const struct an_rankset *rs,
    const struct an_rs_report *rp)
{
	char words[512];
	size_t i;
	uint64_t limit = cli_limit(o, UINT64_MAX);
	struct layout l;

	layout_of(rs, rp, term_width(), &l);
	printf("%zu rank%s", rs->n, rs->n == 1 ? "" : "s");
	if (rs->dir != NULL)
		printf(" in %s", cli_shown(rs->dir));
	printf(" (%s)", rs->ranks_from_names ? "ranks from the file names"
					     : "ranks in the order given");
	if (rp->n_failed > 0)
		printf(", %zu could not be read", rp->n_failed);
	printf("\n");
	an_rankset_skew_text(rs, rp, words, sizeof words);
	printf("%s\n", words);
	if (rp->n_rows > 0) {
		print_leaks(rs, rp);
		print_ooms(rs, rp);
	}
	print_head(&l);
	for (i = 0; i < rp->n_rows && i < limit; i++)
		print_row(rs, &rp->rows[i], &l);
	if (rp->n_rows > limit)
		printf("  ... %zu more rows (--limit 0 for all)\n",
		    rp->n_rows - (size_t)limit);
	for (i = 0; i < rs->n; i++)
		if (rs->m[i].state != AN_RS_OK)
			print_failed(&rs->m[i], &l);
}

/* ---- JSON ---------------------------------------------------------------- */

static void
json_row(struct json *j, const struct an_rankset *rs,
    const struct an_rs_row *row)
{
	const struct an_sum_dev *d = row->dev;

	json_obj_begin(j);
	json_kv_i64(j, "rank", rs->m[row->member].rank);
	json_kv_str(j, "file", rs->m[row->member].path);
	json_kv_u64(j, "device", d->device);
	json_kv_u64(j, "events", d->events);
	json_kv_u64(j, "peak", d->peak);
	json_kv_i64(j, "peak_event", d->peak_ev);
	json_key(j, "peak_time_us");
	if (d->flags & AN_SUM_F_TIME)
		json_i64(j, d->peak_time);
	else
		json_null(j);
	json_key(j, "peak_step");
	if (d->peak_step >= 0)
		json_i64(j, d->peak_step + 1);
	else
		json_null(j);
	json_kv_u64(j, "reserved_peak", d->reserved_max);
	json_kv_i64(j, "reserved_peak_event", d->reserved_max_ev);
	json_kv_u64(j, "reserved_end", d->reserved_end);
	json_kv_u64(j, "allocated_end", d->allocated_end);
	json_kv_u64(j, "ooms", d->ooms);
	json_kv_u64(j, "waste", d->waste);
	json_kv_str(j, "steps_source", an_steps_source_name(
	    (int)d->steps_source));
	json_kv_u64(j, "steps", d->n_steps);
	json_kv_u64(j, "complete_steps", d->n_complete);
	json_key(j, "top_site");
	if (d->top_site[0] != '\0') {
		json_obj_begin(j);
		json_kv_str(j, "site", d->top_site);
		json_kv_u64(j, "bytes", d->top_bytes);
		json_obj_end(j);
	} else {
		json_null(j);
	}
	json_kv_bool(j, "leaks_judged", (d->flags & AN_SUM_F_JUDGED) != 0);
	json_key(j, "leak_suspect");
	if (d->leak_site[0] != '\0') {
		json_obj_begin(j);
		json_kv_str(j, "site", d->leak_site);
		json_kv_u64(j, "bytes", d->leak_bytes);
		json_kv_u64(j, "per_step_bytes", d->leak_per_step);
		json_kv_u64(j, "steps", d->leak_steps);
		json_obj_end(j);
	} else {
		json_null(j);
	}
	json_obj_end(j);
}

static void
json_failed(struct json *j, const struct an_rs_member *m)
{
	json_obj_begin(j);
	json_kv_i64(j, "rank", m->rank);
	json_kv_str(j, "file", m->path);
	json_key(j, "offset");
	if (m->err.offset != SV_NO_OFFSET)
		json_u64(j, m->err.offset);
	else
		json_null(j);
	json_kv_str(j, "error", m->err.msg);
	json_kv_u64(j, "status", (uint64_t)sv_errcode_status(m->err.code));
	json_obj_end(j);
}

static void
print_json(const struct an_rankset *rs, const struct an_rs_report *rp,
    const struct an_run *run, const struct an_rankset *all)
{
	struct json j;
	char words[512];
	size_t i;

	cli_json_init(&j);
	json_obj_begin(&j);
	json_key(&j, "dir");
	if (rs->dir != NULL)
		json_str(&j, rs->dir);
	else
		json_null(&j);
	json_kv_str(&j, "ranks_from", rs->ranks_from_names ? "names"
							   : "order");
	json_kv_u64(&j, "files", rs->n);
	json_kv_u64(&j, "failed", rp->n_failed);
	json_key(&j, "peak_rank");
	if (rp->n_rows > 0)
		json_i64(&j, rs->m[rp->rows[0].member].rank);
	else
		json_null(&j);
	json_key(&j, "peak_device");
	if (rp->n_rows > 0)
		json_u64(&j, rp->rows[0].dev->device);
	else
		json_null(&j);
	json_kv_u64(&j, "peak", rp->n_rows > 0 ? rp->rows[0].dev->peak : 0);
	json_kv_u64(&j, "median_peak", rp->median);
	json_kv_double(&j, "skew", rp->skew);
	an_rankset_skew_text(rs, rp, words, sizeof words);
	json_kv_str(&j, "skew_text", words);
	json_key(&j, "rows");
	json_arr_begin(&j);
	for (i = 0; i < rp->n_rows; i++)
		json_row(&j, rs, &rp->rows[i]);
	json_arr_end(&j);
	json_key(&j, "errors");
	json_arr_begin(&j);
	for (i = 0; i < rs->n; i++)
		if (rs->m[i].state != AN_RS_OK)
			json_failed(&j, &rs->m[i]);
	json_arr_end(&j);
	json_key(&j, "run");
	if (run != NULL)
		cli_run_json(&j, run, all);
	else
		json_null(&j);
	json_obj_end(&j);
	json_end(&j);
}

/* ---- the command --------------------------------------------------------- */

int
cmd_ranks(const struct cli_opts *o)
{
	struct an_rankset rs, view;
	struct an_rankset_opts ro;
	struct an_rs_report rp;
	struct idx_opts io;
	struct ranks_bar bar;
	struct sv_error err;
	struct an_run run;
	size_t i, unread;
	int r, status = 0, is_run = 0;

	sv_error_clear(&err);
	/* a directory of a run's dumps (analysis/runs.h), else a rank set */
	if (o->layout != NULL && o->n_args != 1) {
		fprintf(stderr, "snapview: --layout takes one directory\n");
		return CLI_EXIT_USAGE;
	}
	if (o->n_args == 1 && (is_run = an_run_collect(o->args[0], o->layout,
	    &rs, &run, &err)) < 0)
		return cli_report(o->file, &err);
	if (!is_run && an_rankset_collect(o->args, o->n_args, &rs, &err) != 0)
		return cli_report(o->file, &err);
	/* the bar and the warnings of cli_index_opts; the loader sets its
	 * own sections and progress on each open */
	cli_index_opts(o, &io, &bar.pb, "ranks");
	snprintf(bar.label, sizeof bar.label, "ranks");
	bar.pb.label = bar.label;
	memset(&ro, 0, sizeof ro);
	ro.io = &io;
	ro.jobs = (unsigned)o->jobs;
	ro.progress = ranks_progress;
	ro.progress_ctx = &bar;
	ro.child_exit = _exit;
	if (is_run) {
		ro.extra = &an_run_blocks_section;
		ro.n_extra = 1;
	}
	r = an_rankset_load(&rs, &ro, &err);
	cli_progress_end(&bar.pb);
	if (r != 0) {
		if (is_run)
			an_run_free(&run);
		an_rankset_free(&rs);
		return cli_report(o->file, &err);
	}
	/* with a run, the rank list is of the files outside its grid */
	view = rs;
	if (is_run) {
		an_run_analyse(&run, &rs, o->device);
		view.m = rs.m + run.n_members;
		view.n = rs.n - run.n_members;
	}
	an_rankset_report(&view, o->device, &rp);
	if (!is_run && o->device >= 0 && rp.n_rows == 0 &&
	    rp.n_failed < rs.n) {
		cli_error(NULL, SV_NO_OFFSET, "no rank has data for device %"
		    PRId64, o->device);
		an_rankset_report_free(&rp);
		an_rankset_free(&rs);
		return CLI_EXIT_USAGE;
	}
	if (o->json) {
		print_json(&view, &rp, is_run ? &run : NULL, &rs);
	} else if (is_run) {
		cli_run_text(o, &run, &rs);
		if (view.n > 0) {
			printf("\nOther files (no layout names them):\n");
			print_text(o, &view, &rp);
		}
	} else {
		print_text(o, &rs, &rp);
	}
	fflush(stdout);
	for (i = 0; i < rs.n; i++) {
		int st;

		if (rs.m[i].state == AN_RS_OK)
			continue;
		st = sv_errcode_status(rs.m[i].err.code);
		if (st > status)
			status = st;
	}
	unread = rp.n_failed;
	if (is_run) {
		unread += cli_run_unread(&run);
		if (run.n_empty > 0 && status < CLI_EXIT_INPUT)
			status = CLI_EXIT_INPUT;
	}
	if (unread > 0)
		cli_error(NULL, SV_NO_OFFSET, "%zu of %zu file%s could not be "
		    "read", unread, rs.n + (is_run ? run.n_empty : 0),
		    rs.n + (is_run ? run.n_empty : 0) == 1 ? "" : "s");
	if (is_run)
		an_run_free(&run);
	an_rankset_report_free(&rp);
	an_rankset_free(&rs);
	return status;
}
