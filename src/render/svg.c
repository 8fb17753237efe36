/*
 * The timeline as SVG (svg.h): one column per few pixels, each at the
 * event of its range with the highest total (so the peak is drawn at its
 * height), the bands stacked largest at the peak first, "other" on top;
 * in the pool mode each (pool, stream)'s envelope, the free part of its
 * reserved memory, right above its blocks, in its colour, lighter, as
 * the terminal draws it (tl_envelope_bytes()).
 */
#include "config.h"

#include "render/svg.h"

#include <stdlib.h>
#include <string.h>

#include "render/tl_groups.h"
#include "render/tl_modes.h"
#include "util/units.h"
#include "util/xalloc.h"

#define SVG_MAX_BANDS 16
#define SVG_LEFT 76
#define SVG_TOP 24
#define SVG_BOTTOM 40
#define SVG_RIGHT 16
#define SVG_COL_PX 2
#define SVG_LEGEND_ROW 18

static const char *palette[SVG_MAX_BANDS + 1] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#8cd17d", "#86bcb6", "#d4a6c8",
	"#a0cbe8", "#ffbe7d", "#f1ce63", "#d37295", "#bab0ac"
};

void
svg_text(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: putc(*s, f);
		}
	}
}

/* The event of [lo, hi) with the highest total, the first of them. */
static int64_t
column_event(const struct idx_timeline *tl, uint64_t lo, uint64_t hi)
{
	uint64_t i, best = lo, v, max = 0;

	for (i = lo; i < hi; i++) {
		v = idx_tl_total(tl, (int64_t)i);
		if (i == lo || v > max) {
			max = v;
			best = i;
		}
	}
	return (int64_t)best;
}

static double
xof(const struct svg_opts *o, uint64_t n, double ev)
{
	double pw = o->width - SVG_LEFT - SVG_RIGHT;

	return SVG_LEFT + (n > 0 ? pw * ev / (double)n : 0);
}

static void
axes(FILE *f, const struct svg_opts *o, uint64_t n, uint64_t ymax)
{
	double ph = o->height - SVG_TOP - SVG_BOTTOM;
	char buf[32];
	int k;

	fprintf(f, "<g class=\"axes\" font-size=\"11\" fill=\"#333\">\n");
	for (k = 0; k <= 4; k++) {
		double y = SVG_TOP + ph - ph * k / 4;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		    "stroke=\"#ddd\"/>\n", SVG_LEFT, y, o->width - SVG_RIGHT,
		    y);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s"
		    "</text>\n", SVG_LEFT - 6, y + 4, sv_fmt_size(buf,
		    sizeof buf, ymax / 4 * (uint64_t)k));
	}
	for (k = 0; k <= 4; k++) {
		uint64_t ev = n > 0 ? (n - 1) * (uint64_t)k / 4 : 0;

		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">"
		    "#%llu</text>\n", xof(o, n, (double)ev + 0.5),
		    o->height - SVG_BOTTOM + 16,
		    k == 0 ? "start" : k == 4 ? "end" : "middle",
		    (unsigned long long)ev);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">event"
	    "</text>\n", xof(o, n, (double)n / 2), o->height - SVG_BOTTOM + 32);
	fprintf(f, "</g>\n");
}

static void
marks(FILE *f, const struct svg_opts *o, uint64_t n)
{
	static const char *colour[] = {"#000", "#d00", "#888", "#5a5"};
	static const char *dash[] = {"", "", " stroke-dasharray=\"4 3\"",
		" stroke-dasharray=\"1 3\""};
	static const char *cls[] = {"peak", "oom", "step", "annotation"};
	size_t i;

	for (i = 0; i < o->n_marks; i++) {
		const struct svg_mark *mk = &o->marks[i];
		int k = mk->kind >= 0 && mk->kind <= SVG_MARK_ANNOTATION ?
		    mk->kind : SVG_MARK_ANNOTATION;
		double x;

		if (mk->ev < 0 || (uint64_t)mk->ev >= n)
			continue;
		x = xof(o, n, (double)mk->ev + 0.5);
		fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" "
		    "x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
		    "stroke-width=\"%s\"%s>",
		    cls[k], x, SVG_TOP, x, o->height - SVG_BOTTOM, colour[k],
		    k == SVG_MARK_OOM || k == SVG_MARK_PEAK ? "1.5" : "1",
		    dash[k]);
		if (mk->label != NULL) {
			fprintf(f, "<title>");
			svg_text(f, mk->label);
			fprintf(f, "</title>");
		}
		fprintf(f, "</line>\n");
		if (k == SVG_MARK_PEAK || k == SVG_MARK_OOM) {
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" "
			    "fill=\"%s\" text-anchor=\"middle\">%s</text>\n", x,
			    SVG_TOP - 6, colour[k], k == SVG_MARK_PEAK ? "peak"
			    : "OOM");
		}
	}
}

/* The layers of a column, bottom to top: each group's blocks, and in
 * the pool mode its envelope above them; "other" last. */
static uint32_t
layer_group(uint32_t l, int env)
{
	return env ? l / 2 : l;
}

static int
layer_is_env(uint32_t l, int env)
{
	return env && l % 2 == 1;
}

/* The legend: two columns under the axis, the nb groups at the peak,
 * then the rest, then (pool mode) the envelopes. */
static void
legend(FILE *f, struct tl_model *m, const struct svg_opts *o,
    const uint32_t *ids, uint32_t nb, uint64_t env_peak)
{
	const struct idx_timeline *tl = m->tl;
	const struct tl_groups *g = &m->groups[o->st];
	int entries = (int)nb + 1 + (o->st == TL_STACK_POOL);
	char label[256], buf[32];
	uint32_t b, k;

	fprintf(f, "<g class=\"legend\" font-size=\"11\" fill=\"#222\">\n");
	for (b = 0; b < (uint32_t)entries; b++) {
		int col = (int)b % 2, row = (int)b / 2;
		int x = SVG_LEFT + col * (o->width - SVG_LEFT) / 2;
		int y = o->height + row * SVG_LEGEND_ROW;
		uint64_t at = b < nb ? tl_groups_bytes(g, ids[b],
		    tl->peak_ev) : 0;

		if (b < nb)
			tl_group_label(m, o->st, ids[b], -80, 1, label,
			    sizeof label);
		else if (b == nb) {
			uint64_t sum = 0;

			for (k = 0; k < nb; k++)
				sum += tl_groups_bytes(g, ids[k], tl->peak_ev);
			at = tl->peak > sum ? tl->peak - sum : 0;
			snprintf(label, sizeof label, "other %s",
			    tl_modes[o->st].nouns);
		} else {
			at = env_peak;
			snprintf(label, sizeof label, "free reserved memory "
			    "of each (pool, stream), lighter, above its "
			    "blocks");
		}
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
		    "fill=\"%s\"%s/>", x, y, palette[b < nb ? b :
		    b == nb ? SVG_MAX_BANDS : 0], b > nb ?
		    " fill-opacity=\"0.35\"" : "");
		fprintf(f, "<text x=\"%d\" y=\"%d\">%s  ", x + 14, y + 9,
		    sv_fmt_size(buf, sizeof buf, at));
		svg_text(f, label);
		fprintf(f, "</text>\n");
	}
}

int
svg_timeline(FILE *f, struct tl_model *m, const struct svg_opts *o,
    char *why, size_t size)
{
	const struct idx_timeline *tl = m->tl;
	const struct tl_groups *g;
	uint64_t n = tl->n_events, ymax, c, *tops, env_peak = 0;
	uint32_t ids[SVG_MAX_BANDS], nb, want, b, nl, l, k;
	int64_t *evs;
	double ph, dx;
	uint64_t ncol;
	int legend_rows, height, env, entries;
	char label[256];

	if (!tl_stack_grouped(o->st)) {
		snprintf(why, size, "%s: not a grouped mode",
		    tl_stack_name(o->st));
		return -1;
	}
	if (tl_model_prepare(m, o->st, why, size) != 0)
		return -1;
	g = &m->groups[o->st];
	env = o->st == TL_STACK_POOL;
	want = o->bands > 0 && o->bands < SVG_MAX_BANDS ? o->bands :
	    SVG_MAX_BANDS;
	nb = tl_groups_top(g, tl->peak_ev, want, ids);
	nl = nb * (env ? 2 : 1) + 1;
	ncol = (uint64_t)(o->width - SVG_LEFT - SVG_RIGHT) / SVG_COL_PX;
	if (ncol > n)
		ncol = n;
	evs = xcalloc(ncol + 1, sizeof *evs);
	tops = xcalloc((ncol + 1) * (nl + 1), sizeof *tops);
	ymax = tl->peak > 0 ? tl->peak : 1;
	for (c = 0; c < ncol; c++)
		evs[c] = column_event(tl, n * c / ncol, n * (c + 1) / ncol);
	/* per column the cumulated top of each layer: tops[c][l + 1]; the
	 * envelopes stand above the total */
	for (c = 0; c < ncol; c++) {
		uint64_t *t = &tops[c * (nl + 1)], sum = 0, blocks = 0, total;

		total = idx_tl_total(tl, evs[c]);
		t[0] = 0;
		for (l = 0; l + 1 < nl; l++) {
			b = layer_group(l, env);
			if (layer_is_env(l, env))
				sum += tl_envelope_bytes(m, o->st, ids[b],
				    evs[c]);
			else {
				uint64_t x = tl_groups_bytes(g, ids[b],
				    evs[c]);

				sum += x;
				blocks += x;
			}
			t[l + 1] = sum;
		}
		t[nl] = sum + (total > blocks ? total - blocks : 0);
		if (t[nl] > ymax)
			ymax = t[nl];
	}
	ymax += ymax / 20;
	for (k = 0; env && k < nb; k++)
		env_peak += tl_envelope_bytes(m, o->st, ids[k], tl->peak_ev);
	entries = (int)nb + 1 + env;
	legend_rows = (entries + 1) / 2;
	height = o->height + legend_rows * SVG_LEGEND_ROW + 8;
	ph = o->height - SVG_TOP - SVG_BOTTOM;
	dx = ncol > 0 ? (double)(o->width - SVG_LEFT - SVG_RIGHT) /
	    (double)ncol : 0;
	if (o->xml_decl)
		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	/* the namespace only in a file of its own: HTML needs none, and a
	 * report holds no address at all */
	fprintf(f, "<svg%s width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	    "font-family=\"sans-serif\" role=\"img\">\n", o->xml_decl ?
	    " xmlns=\"http://www.w3.org/2000/svg\"" : "", o->width, height,
	    o->width, height);
	fprintf(f, "<title>");
	svg_text(f, o->title != NULL ? o->title : "Active Memory Timeline");
	fprintf(f, "</title>\n<rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"#fff\"/>\n");
	axes(f, o, n, ymax);
	for (l = 0; l < nl; l++) {
		int is_env = layer_is_env(l, env), other = l + 1 == nl;

		b = layer_group(l, env);
		fprintf(f, "<path class=\"%s\" fill=\"%s\"%s d=\"",
		    is_env ? "envelope" : "band",
		    palette[!other ? b : SVG_MAX_BANDS],
		    is_env ? " fill-opacity=\"0.35\"" : "");
		for (c = 0; c < ncol; c++) {
			double y = SVG_TOP + ph - ph *
			    (double)tops[c * (nl + 1) + l + 1] / (double)ymax;

			fprintf(f, "%s%.1f,%.1f L%.1f,%.1f",
			    c == 0 ? "M" : " L",
			    SVG_LEFT + dx * (double)c, y,
			    SVG_LEFT + dx * (double)(c + 1), y);
		}
		for (c = ncol; c-- > 0;) {
			double y = SVG_TOP + ph - ph *
			    (double)tops[c * (nl + 1) + l] / (double)ymax;

			fprintf(f, " L%.1f,%.1f L%.1f,%.1f",
			    SVG_LEFT + dx * (double)(c + 1), y,
			    SVG_LEFT + dx * (double)c, y);
		}
		fprintf(f, "%s\"><title>", ncol > 0 ? " Z" : "M0,0");
		if (is_env)
			fprintf(f, "free reserved memory of ");
		if (!other)
			tl_group_label(m, o->st, ids[b], 0, 1, label,
			    sizeof label);
		else
			snprintf(label, sizeof label, "other %s",
			    tl_modes[o->st].nouns);
		svg_text(f, label);
		fprintf(f, "</title></path>\n");
	}
	marks(f, o, n);
	legend(f, m, o, ids, nb, env_peak);
	fprintf(f, "</g>\n</svg>\n");
	free(evs);
	free(tops);
	return 0;
}
