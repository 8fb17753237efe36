/*
 * Analysis lists for the TUI views. See anlist.h.
 */
#include "config.h"

#include "render/anlist.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/fmt.h"
#include "render/frames.h"
#include "util/escape.h"

#define LABEL_MAX 1024

uint64_t
anlist_rows(const struct anlist *l)
{
	switch (l->kind) {
	case ANLIST_LEAKS: return l->leaks != NULL ? l->leaks->n_sites : 0;
	case ANLIST_FRAG: return l->frag != NULL ? l->frag->n_allocs : 0;
	case ANLIST_TOP: return l->top != NULL ? l->top->n_roots : 0;
	}
	return 0;
}

/* A C++ name too long for its column keeps its name rather than its
 * parameters: "f(unsigned long, CUstream_st*) [clone .x]" becomes
 * "f(...)" in place (the name part is after the first space, past
 * "file:line"). Returns the new number of cells. */
static int
shorten_cxx(char *s, int utf8)
{
	char *name = strchr(s, ' '), *end, *p, *clone;
	int depth = 0;
	const char *dots = utf8 ? "(\xe2\x80\xa6)" : "(...)";

	if (name == NULL)
		return sv_utf8_cells(s);
	if ((clone = strstr(name, " [clone ")) != NULL)
		*clone = '\0';
	end = name + strlen(name);
	if (end == name || end[-1] != ')')
		return sv_utf8_cells(s);
	for (p = end - 1; p > name; p--) {
		if (*p == ')')
			depth++;
		else if (*p == '(' && --depth == 0)
			break;
	}
	if (*p == '(' && depth == 0 && (size_t)(end - p) > strlen(dots))
		memcpy(p, dots, strlen(dots) + 1);
	return sv_utf8_cells(s);
}

char *
anlist_cut_label(const char *raw, int w, int utf8, char *buf, size_t size)
{
	char esc[LABEL_MAX];
	const char *p = esc, *dots = utf8 ? "\xe2\x80\xa6" : "...";
	int n, nd = utf8 ? 1 : 3;

	sv_escape(esc, sizeof esc, raw, strlen(raw));
	n = sv_utf8_cells(esc);
	if (n > w)
		n = shorten_cxx(esc, utf8);
	if (w <= nd || n <= w) {
		snprintf(buf, size, "%s", esc);
		return buf;
	}
	/* a path loses its directories first, never its file and line */
	if (strchr(esc, '/') != NULL || strchr(esc, '\\') != NULL)
		return frames_shorten(buf, size, esc, w, utf8);
	/* skip n - (w - nd) code points */
	for (n -= w - nd; n > 0; n--)
		for (p++; ((unsigned char)*p & 0xc0) == 0x80; p++)
			;
	snprintf(buf, size, "%s%s", dots, p);
	return buf;
}

const char *
anlist_category(int c)
{
	if (c < 0)
		return "-";
	/* "optimizer state" does not fit a column of ANLIST_CAT_W */
	return c == AN_CAT_OPTIMIZER_STATE ? "optimizer" :
	    an_category_label((unsigned)c);
}

char *
anlist_site_label(struct an_sites *sites, uint32_t site, int w, int utf8,
    char *buf, size_t size)
{
	char raw[LABEL_MAX];

	an_site_label(sites, site, raw, sizeof raw);
	return anlist_cut_label(raw, w, utf8, buf, size);
}

static const char *
header(const struct anlist *l)
{
	switch (l->kind) {
	case ANLIST_LEAKS:
		return "  #   bytes blocks per step  category   call site";
	case ANLIST_FRAG:
		return "event     kind   size    gap request largest  "
		    "call site";
	default: return "   bytes  share blocks  call site";
	}
}

/* Text of row i before the call site; *site receives the site id. */
static void
row_text(const struct anlist *l, uint64_t i, char *buf, size_t size,
    uint32_t *site)
{
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF];

	if (l->kind == ANLIST_LEAKS) {
		const struct an_leak_site *s = &l->leaks->sites[i];

		*site = s->site;
		if (s->periodic)
			fmt_size_short(c, sizeof c, s->steps_hit ?
			    s->bytes / s->steps_hit : s->bytes);
		/* "optimizer" for optimizer state, as the block table; blocks
		 * allocated before the trace are named where they are freed */
		snprintf(buf, size, "%3" PRIu64 " %7s %6s %8s  %-*s %s",
		    i + 1, fmt_size_short(a, sizeof a, s->bytes),
		    fmt_count(b, sizeof b, s->count), s->periodic ? c : "-",
		    ANLIST_CAT_W, anlist_category(s->category),
		    s->free_stack ? "freed at " : "");
	} else if (l->kind == ANLIST_FRAG) {
		const struct an_frag_alloc *x = &l->frag->allocs[i];
		/* measured in the pool the request needed (frag.h) */
		int unusable = x->has_state && x->req_ev >= 0 &&
		    x->pool_free >= x->request &&
		    x->pool_largest < x->request;

		*site = x->site;
		snprintf(buf, size, "%-9s %-4s %6s %6s %7s %6s%c  ",
		    fmt_event(a, sizeof a, x->ev), x->is_map ? "map" : "seg",
		    fmt_size_short(b, sizeof b, x->size),
		    fmt_size_short(c, sizeof c, x->gap),
		    x->req_ev >= 0 ? fmt_size_short(d, sizeof d, x->request)
				   : "-",
		    x->has_state ? fmt_size_short(e, sizeof e, x->req_ev >= 0 ?
		    x->pool_largest : x->stream_largest) : "-",
		    unusable ? '!' : ' ');
	} else {
		const struct an_top *t = l->top;
		const struct an_top_node *n = &t->nodes[t->roots[i]];

		*site = n->site;
		snprintf(buf, size, "%8s %5.1f%% %6s  ",
		    fmt_size_short(a, sizeof a, n->bytes),
		    t->bytes ? 100.0 * (double)n->bytes / (double)t->bytes :
		    0.0,
		    fmt_count(b, sizeof b, n->count));
	}
}

void
anlist_render(struct anlist *l, struct cellbuf *cb, int x, int y, int w,
    int h, int focused)
{
	uint64_t n = anlist_rows(l), i;
	int rows = h - 1, r, len;
	char text[256], label[LABEL_MAX];
	uint32_t site;

	cellbuf_fill(cb, x, y, w, h, ' ', UIC_DEFAULT, 0);
	if (h < 1)
		return;
	cellbuf_puts(cb, x + 1, y, header(l), w - 1, UIC_AXIS, CB_A_BOLD);
	if (n == 0) {
		cellbuf_puts(cb, x + 1, y + 1, l->kind == ANLIST_LEAKS ?
		    "(no block allocated in the trace is alive at its end)" :
		    l->kind == ANLIST_FRAG ? "(no segment_alloc in the trace)" :
		    "(nothing alive at the cursor)", w - 1, UIC_AXIS, 0);
		return;
	}
	if (l->sel >= n)
		l->sel = n - 1;
	if (rows < 1)
		return;
	if (l->sel < l->first)
		l->first = l->sel;
	if (l->sel >= l->first + (uint64_t)rows)
		l->first = l->sel - (uint64_t)rows + 1;
	for (i = l->first, r = 0; i < n && r < rows; i++, r++) {
		int sel = i == l->sel;
		unsigned col = sel ? UIC_SELECT : UIC_DEFAULT;
		unsigned at = sel && focused ? CB_A_BOLD : 0;

		row_text(l, i, text, sizeof text, &site);
		if (sel)
			cellbuf_fill(cb, x, y + 1 + r, w, 1, ' ', col, at);
		len = cellbuf_puts(cb, x + 1, y + 1 + r, text, w - 1, col, at);
		anlist_site_label(l->sites, site, w - 1 - len, l->utf8, label,
		    sizeof label);
		cellbuf_puts(cb, x + 1 + len, y + 1 + r, label, w - 1 - len,
		    col, at);
	}
}

int
anlist_write(const struct anlist *l, FILE *f)
{
	uint64_t n = anlist_rows(l), i;
	char text[256], raw[LABEL_MAX], esc[LABEL_MAX];
	uint32_t site;

	fprintf(f, "%s\n", header(l));
	for (i = 0; i < n; i++) {
		row_text(l, i, text, sizeof text, &site);
		an_site_label(l->sites, site, raw, sizeof raw);
		sv_escape(esc, sizeof esc, raw, strlen(raw));
		fprintf(f, "%s%s\n", text, esc);
	}
	return ferror(f) ? -1 : 0;
}
