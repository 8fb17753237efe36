/*
 * snapview report FILE -o REPORT.html: one self-contained HTML page per
 * snapshot: for each device, the Active Memory Timeline by call site as
 * SVG (render/svg.h) with the peak, the OOMs and the steps marked, then
 * the answers: who held memory at the peak (sites and categories), the
 * leaks, the fragmentation, the OOMs. No script, no style sheet or image
 * from elsewhere, no link but to the page's own sections; every string
 * from the file escaped for a terminal first (control characters made
 * visible) and then for HTML.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/category.h"
#include "analysis/frag.h"
#include "analysis/leaks.h"
#include "analysis/oom.h"
#include "analysis/steps.h"
#include "analysis/top.h"
#include "cli/cli.h"
#include "cli/cli_an.h"
#include "cli/cli_out.h"
#include "render/svg.h"
#include "render/timeline.h"
#include "render/tl_modes.h"
#include "util/escape.h"
#include "util/units.h"
#include "util/xalloc.h"

#define REPORT_ROWS 10

struct report {
	struct cli_an_run run;
	FILE *f;
};

/* Untrusted text: escaped for a terminal (what every screen of snapview
 * shows), then for HTML. */
static void
html(FILE *f, const char *s)
{
	char buf[4096];

	sv_escape(buf, sizeof buf, s, strlen(s));
	svg_text(f, buf);
}

static const char *
size(char *buf, size_t n, uint64_t v)
{
	return sv_fmt_size(buf, n, v);
}

static void
site_cell(FILE *f, struct an_sites *t, uint32_t site)
{
	char buf[1024];

	fprintf(f, "<td class=\"site\">");
	html(f, an_site_label(t, site, buf, sizeof buf));
	fprintf(f, "</td>");
}

static void
peak_section(FILE *f, struct report *rp, const struct idx_timeline *tl,
    const struct an_categories *cats)
{
	struct an_top top;
	struct an_cat_totals ct;
	unsigned order[AN_CAT_COUNT], nc, i;
	uint32_t k;
	char a[32], b[32];

	fprintf(f, "<h3 id=\"peak%u\">The peak</h3>\n", tl->device);
	fprintf(f, "<p>%s live (requested bytes, as memory_viz counts them) "
	    "after event %" PRId64 ".</p>\n", size(a, sizeof a, tl->peak),
	    tl->peak_ev);
	if (an_top(tl, rp->run.sites, tl->peak_ev, 1, &top) == 0) {
		fprintf(f, "<table><tr><th>bytes</th><th>blocks</th>"
		    "<th>call site</th></tr>\n");
		for (k = 0; k < top.n_roots && k < REPORT_ROWS; k++) {
			const struct an_top_node *nd = &top.nodes[top.roots[k]];

			fprintf(f, "<tr><td class=\"n\">%s</td><td class=\"n\">"
			    "%" PRIu64 "</td>", size(a, sizeof a, nd->bytes),
			    nd->count);
			site_cell(f, rp->run.sites, nd->site);
			fprintf(f, "</tr>\n");
		}
		if (top.n_roots > REPORT_ROWS)
			fprintf(f, "<tr><td colspan=\"3\">and %" PRIu32 " more "
			    "call sites</td></tr>\n", top.n_roots -
			    REPORT_ROWS);
		fprintf(f, "</table>\n");
		an_top_destroy(&top);
	}
	an_categories_at(tl, cats, tl->peak_ev, &ct);
	nc = cli_an_rank_categories(ct.bytes, ct.count, order);
	fprintf(f, "<table><tr><th>bytes</th><th>blocks</th><th>category"
	    "</th></tr>\n");
	for (i = 0; i < nc; i++)
		fprintf(f, "<tr><td class=\"n\">%s</td><td class=\"n\">%" PRIu64
		    "</td><td>%s</td></tr>\n", size(b, sizeof b,
		    ct.bytes[order[i]]), ct.count[order[i]],
		    an_category_label(order[i]));
	fprintf(f, "</table>\n");
}

static void
leaks_section(FILE *f, struct report *rp, const struct an_leaks *l)
{
	uint64_t k;
	char a[32], b[32];

	fprintf(f, "<h3 id=\"leaks%u\">Leaks</h3>\n", l->device);
	fprintf(f, "<p>%" PRIu64 " blocks, %s, allocated in the trace and "
	    "alive at its end; %s</p>\n", l->count, size(a, sizeof a,
	    l->bytes), l->judged ? "ranked with the sites that grow every "
	    "step first." : "fewer than two complete steps: no per-step "
	    "leak can be judged.");
	if (l->n_sites == 0)
		return;
	fprintf(f, "<table><tr><th>bytes</th><th>blocks</th><th>per step"
	    "</th><th>call site</th></tr>\n");
	for (k = 0; k < l->n_sites && k < REPORT_ROWS; k++) {
		const struct an_leak_site *s = &l->sites[k];

		fprintf(f, "<tr%s><td class=\"n\">%s</td><td class=\"n\">%"
		    PRIu64 "</td><td class=\"n\">%s</td>", s->periodic ?
		    " class=\"grows\"" : "", size(a, sizeof a, s->bytes),
		    s->count, s->periodic && s->steps_hit > 0 ?
		    size(b, sizeof b, s->bytes / s->steps_hit) : "-");
		site_cell(f, rp->run.sites, s->site);
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n");
}

static void
frag_section(FILE *f, const struct an_frag *fr)
{
	const struct an_frag_state *st = &fr->state;
	char a[32], b[32], c[32], d[32];
	int i;

	fprintf(f, "<h3 id=\"frag%u\">Fragmentation</h3>\n", fr->device);
	fprintf(f, "<p>At the end: %s reserved, %s allocated (requested), "
	    "%s lost to rounding inside blocks, %s in free blocks (largest "
	    "%s).", size(a, sizeof a, st->reserved), size(b, sizeof b,
	    st->requested), size(c, sizeof c, st->internal), size(d,
	    sizeof d, st->external), size(a, sizeof a, st->largest_free));
	fprintf(f, " The most reserved: %s; at the timeline's peak: "
	    "%s.</p>\n", size(b, sizeof b, fr->reserved_max), size(c,
	    sizeof c, fr->reserved_at_peak));
	if (fr->n_hints == 0)
		return;
	fprintf(f, "<ul>\n");
	for (i = 0; i < fr->n_hints; i++) {
		fprintf(f, "<li>");
		html(f, fr->hints[i].text);
		fprintf(f, "</li>\n");
	}
	fprintf(f, "</ul>\n");
}

static void
oom_section(FILE *f, struct report *rp, const struct an_oom *o)
{
	uint64_t k;
	int i;
	char a[32], b[32];

	fprintf(f, "<h3 id=\"oom%u\">Out of memory</h3>\n", o->device);
	if (o->n_events == 0) {
		fprintf(f, "<p>No OOM in the trace.</p>\n");
		return;
	}
	fprintf(f, "<ul>\n");
	for (k = 0; k < o->n_events; k++) {
		const struct an_oom_event *e = &o->events[k];
		char buf[1024];

		fprintf(f, "<li>event %" PRId64 ": a request of %s with %s "
		    "free on the device, at ", e->ev, size(a, sizeof a,
		    e->request), size(b, sizeof b, e->device_free));
		html(f, an_site_label(rp->run.sites, e->site, buf,
		    sizeof buf));
		if (e->n_causes > 0) {
			fprintf(f, "<ul>\n");
			for (i = 0; i < e->n_causes; i++) {
				fprintf(f, "<li>");
				html(f, e->causes[i].text);
				fprintf(f, "</li>\n");
			}
			fprintf(f, "</ul>");
		}
		fprintf(f, "</li>\n");
	}
	fprintf(f, "</ul>\n");
}

/* The peak, each OOM and each step's start, over the chart. */
static struct svg_mark *
chart_marks(const struct idx_timeline *tl, const struct an_steps *st,
    const struct an_oom *o, size_t *n, char (**labels)[64])
{
	struct svg_mark *m;
	size_t cap = 1 + o->n_events + st->n, i = 0;
	uint64_t k;

	m = xcalloc(cap + 1, sizeof *m);
	*labels = xcalloc(cap + 1, sizeof **labels);
	for (k = 0; k < st->n; k++, i++) {
		m[i].ev = st->steps[k].first;
		m[i].kind = SVG_MARK_STEP;
		snprintf((*labels)[i], 64, "step %" PRIu64 " from event %"
		    PRId64, k + 1, st->steps[k].first);
		m[i].label = (*labels)[i];
	}
	for (k = 0; k < o->n_events; k++, i++) {
		m[i].ev = o->events[k].ev;
		m[i].kind = SVG_MARK_OOM;
		snprintf((*labels)[i], 64, "OOM at event %" PRId64,
		    o->events[k].ev);
		m[i].label = (*labels)[i];
	}
	if (tl->peak_ev >= 0) {
		m[i].ev = tl->peak_ev;
		m[i].kind = SVG_MARK_PEAK;
		snprintf((*labels)[i], 64, "peak at event %" PRId64,
		    tl->peak_ev);
		m[i].label = (*labels)[i];
		i++;
	}
	*n = i;
	return m;
}

static int
report_device(void *ctx, const struct cli_an_dev *dev, struct sv_error *err)
{
	struct report *rp = ctx;
	FILE *f = rp->f;
	const struct snapshot *s = rp->run.snap;
	const struct idx_timeline *tl = dev->tl;
	struct cli_an_classes cl;
	struct an_leaks_with with;
	struct an_leaks lk;
	struct an_frag fr;
	struct an_oom oo;
	struct tl_model m;
	struct svg_opts so;
	struct svg_mark *marks;
	char (*labels)[64];
	char why[128], a[32], title[64];
	size_t nm;

	if (cli_an_classes(rp->run.o, s, tl, &rp->run.rules, &cl, err) != 0)
		return -1;
	if (an_oom(s, tl, dev->replay, rp->run.sites, &oo, err) != 0) {
		cli_an_classes_destroy(&cl);
		return -1;
	}
	with.steps = &cl.steps;
	with.cats = &cl.cats;
	with.replay = dev->replay;
	if (an_leaks_using(s, tl, rp->run.sites, &with, -1, -1, &lk,
	    err) != 0) {
		an_oom_destroy(&oo);
		cli_an_classes_destroy(&cl);
		return -1;
	}
	if (an_frag_with_steps(s, tl, dev->replay, rp->run.sites, &cl.steps,
	    -2, &fr, err) != 0) {
		an_leaks_destroy(&lk);
		an_oom_destroy(&oo);
		cli_an_classes_destroy(&cl);
		return -1;
	}
	fprintf(f, "<section id=\"device%u\">\n<h2>Device %u</h2>\n",
	    dev->device, dev->device);
	fprintf(f, "<p>%" PRIu64 " events; peak %s after event %" PRId64
	    "; %" PRIu64 " step%s; %" PRIu64 " OOM%s. "
	    "<a href=\"#peak%u\">peak</a> &middot; "
	    "<a href=\"#leaks%u\">leaks</a> &middot; "
	    "<a href=\"#frag%u\">fragmentation</a> &middot; "
	    "<a href=\"#oom%u\">OOMs</a></p>\n", tl->n_events,
	    size(a, sizeof a, tl->peak), tl->peak_ev, cl.steps.n,
	    cl.steps.n == 1 ? "" : "s", oo.n_events,
	    oo.n_events == 1 ? "" : "s", dev->device, dev->device,
	    dev->device, dev->device);
	tl_model_init(&m, s, tl, TL_DEFAULT_DRAWN);
	tl_model_set_categories(&m, &cl.cats);
	marks = chart_marks(tl, &cl.steps, &oo, &nm, &labels);
	memset(&so, 0, sizeof so);
	so.width = 1100;
	so.height = 360;
	so.st = TL_STACK_SITE;
	so.bands = 12;
	so.marks = marks;
	so.n_marks = nm;
	snprintf(title, sizeof title, "Device %u: Active Memory Timeline by "
	    "call site", dev->device);
	so.title = title;
	fprintf(f, "<figure>\n");
	if (tl->n_events == 0)
		fprintf(f, "<p>No trace: the state at the end only.</p>\n");
	else if (svg_timeline(f, &m, &so, why, sizeof why) != 0) {
		fprintf(f, "<p>No timeline: ");
		html(f, why);
		fprintf(f, "</p>\n");
	}
	fprintf(f, "<figcaption>Active Memory Timeline by call site (the "
	    "viewer's call-site mode): the %u largest at the peak, the rest "
	    "as other; black: the peak, red: OOMs, grey dashes: steps."
	    "</figcaption>\n</figure>\n", so.bands);
	free(marks);
	free(labels);
	tl_model_set_categories(&m, NULL);
	tl_model_destroy(&m);
	peak_section(f, rp, tl, &cl.cats);
	leaks_section(f, rp, &lk);
	frag_section(f, &fr);
	oom_section(f, rp, &oo);
	fprintf(f, "</section>\n");
	an_frag_destroy(&fr);
	an_leaks_destroy(&lk);
	an_oom_destroy(&oo);
	cli_an_classes_destroy(&cl);
	return ferror(f) ? sv_error_set(err, SV_ERR_IO, 0, "writing the "
	    "report failed") : 0;
}

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1150px}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}"
    "td.n{text-align:right;white-space:nowrap}"
    "td.site{font-family:monospace;word-break:break-all}"
    "tr.grows td{background:#fde8e8}"
    "figure{margin:0}figcaption{font-size:90%;color:#555}";

int
cmd_report(const struct cli_opts *o)
{
	struct report rp;
	struct cli_out out;
	struct cli_opts q;
	int rc;

	if ((rc = cli_out_open(o, &out)) != 0)
		return rc;
	q = *o;
	q.json = 0;
	memset(&rp, 0, sizeof rp);
	rp.f = out.f;
	fprintf(rp.f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n<title>snapview report: ");
	html(rp.f, o->file);
	fprintf(rp.f, "</title>\n<style>%s</style>\n</head>\n<body>\n"
	    "<h1>Memory report: ", style);
	html(rp.f, o->file);
	fprintf(rp.f, "</h1>\n<p>Written by snapview %s.</p>\n",
	    PACKAGE_VERSION);
	rc = cli_an_run(&q, &q, CLI_AN_REPLAY | CLI_AN_RULES, &rp.run,
	    report_device, &rp);
	if (rc != 0) {
		cli_out_abort(&out);
		return rc;
	}
	fprintf(rp.f, "</body>\n</html>\n");
	if ((rc = cli_out_commit(&out)) != 0)
		return rc;
	if (!o->quiet)
		fprintf(stderr, "snapview: wrote %s\n", cli_shown(o->output));
	return CLI_EXIT_OK;
}
