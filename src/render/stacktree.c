/*
 * The call-stack tree of the top view. See stacktree.h.
 */
#include "config.h"

#include "render/stacktree.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/anlist.h"
#include "render/fmt.h"
#include "util/escape.h"
#include "util/xalloc.h"

#define KEY0 0x5f3759df5f3759dfull
#define LABEL_MAX 1024

static uint64_t
mix(uint64_t h, uint32_t f)
{
	h ^= (uint64_t)f + 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

void
stree_init(struct stree *t, const struct snapshot *s, struct an_sites *sites)
{
	memset(t, 0, sizeof *t);
	t->s = s;
	t->sites = sites;
	u64map_init(&t->toggled);
}

void
stree_destroy(struct stree *t)
{
	free(t->ents);
	free(t->off);
	free(t->frames);
	free(t->rows);
	u64map_destroy(&t->toggled);
	memset(t, 0, sizeof *t);
}

static uint64_t
plen(const struct stree *t, uint64_t i)
{
	return t->off[i + 1] - t->off[i];
}

static const uint32_t *
path(const struct stree *t, uint64_t i)
{
	return t->frames + t->off[i];
}

/* Can node id f carry STREE_FREED (a site or a frame id below it)? */
static int
can_flag(const struct stree *t, uint32_t f)
{
	if (t->s->n_frames > STREE_FREED)
		return 0;
	if (f >= STREE_SITE)
		return f < STREE_GROUP - STREE_FREED;
	return f < STREE_FREED;
}

/* Node id f without STREE_FREED. */
static uint32_t
unflag(const struct stree *t, uint32_t f)
{
	return stree_freed(t, f) ? f & ~STREE_FREED : f;
}

int
stree_freed(const struct stree *t, uint32_t frame)
{
	return frame < STREE_GROUP && (frame & STREE_FREED) &&
	    t->s->n_frames <= STREE_FREED;
}

/* The path of one entry into out (at most STREE_MAX_DEPTH frames). */
static uint32_t
resolve(const struct stree *t, const struct stree_entry *e, uint32_t *out)
{
	uint32_t n = 0, start, i, k, max;
	const uint32_t *fs;

	if (t->grouped)
		out[n++] = STREE_GROUP +
		    (e->group < 0xfffff ? e->group : 0xfffff);
	start = n;
	if (!t->framework) {
		/* the site, then the user frames that called it */
		max = STREE_MAX_DEPTH - n;
		k = an_site_path(t->sites, e->stack, out + n,
		    max < AN_SITE_MAX_FRAMES ? max : AN_SITE_MAX_FRAMES);
		if (k > 0 && t->s->n_frames < STREE_SITE)
			out[n] = STREE_SITE + an_site_of(t->sites, e->stack);
		n += k;
	} else {
		fs = snap_stack(t->s, e->stack, &k);
		for (i = 0; i < k && n < STREE_MAX_DEPTH; i++)
			if (fs[i] < t->s->n_frames &&
			    !an_frame_filtered(t->s, fs[i]) &&
			    (n > start || !an_frame_allocator(t->s, fs[i])))
				out[n++] = fs[i];
		/* every frame filtered: the first one */
		if (n == start && k > 0 && fs[0] < t->s->n_frames)
			out[n++] = fs[0];
	}
	if (n == start)
		out[n++] = STREE_NO_STACK;
	else if (e->free_stack && can_flag(t, out[start]))
		out[start] |= STREE_FREED;
	return n;
}

static const struct stree *sort_ctx;

static int
cmp_path(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	uint64_t nx = plen(sort_ctx, x), ny = plen(sort_ctx, y), i;
	const uint32_t *px = path(sort_ctx, x), *py = path(sort_ctx, y);

	for (i = 0; i < nx && i < ny; i++)
		if (px[i] != py[i])
			return px[i] < py[i] ? -1 : 1;
	if (nx != ny)
		return nx < ny ? -1 : 1;
	return x < y ? -1 : 1;
}

/* ---- rows ---------------------------------------------------------------- */

static struct stree_row *
push_row(struct stree *t)
{
	XGROW(t->rows, t->cap_rows, t->n_rows + 1);
	memset(&t->rows[t->n_rows], 0, sizeof t->rows[0]);
	return &t->rows[t->n_rows++];
}

static int
is_open(const struct stree *t, uint64_t key)
{
	uint64_t v;

	return t->expand_all ^ u64map_get(&t->toggled, key, &v);
}

/* Rows of equal bytes in the file's order: a call site by the frame that
 * names it (site ids follow the order sites were first looked up, which
 * depends on what was shown before), then by id; a STREE_FREED node after
 * the same node without it. */
static uint64_t
row_order(const struct stree *t, uint32_t f)
{
	const uint32_t *fs;
	uint32_t n;

	if (stree_freed(t, f))
		return row_order(t, unflag(t, f)) | 1;
	if (f < STREE_SITE || f >= STREE_GROUP ||
	    t->s->n_frames >= STREE_SITE)
		return (uint64_t)f << 32;
	fs = an_site_frames(t->sites, f - STREE_SITE, &n);
	return (uint64_t)(n > 0 ? fs[0] : 0) << 32 | (uint64_t)(f - STREE_SITE)
	    << 1;
}

static const struct stree *row_ctx;

static int
cmp_row(const void *a, const void *b)
{
	const struct stree_row *x = a, *y = b;
	uint64_t ox, oy;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	ox = row_order(row_ctx, x->frame);
	oy = row_order(row_ctx, y->frame);
	return ox < oy ? -1 : ox > oy;
}

/* Fills r with the node of path depth d over entries [lo, hi). */
static void
node(const struct stree *t, struct stree_row *r, uint32_t d, uint64_t lo,
    uint64_t hi, uint64_t key)
{
	uint64_t j;

	r->depth = d;
	r->frame = path(t, lo)[d];
	r->lo = lo;
	r->hi = hi;
	r->key = key;
	r->top = (uint32_t)lo;
	for (j = lo; j < hi; j++) {
		r->bytes += t->ents[j].bytes;
		r->count += t->ents[j].count;
		if (t->ents[j].bytes > t->ents[r->top].bytes)
			r->top = (uint32_t)j;
	}
	r->kids = plen(t, hi - 1) > d + 1;
	r->open = r->kids && is_open(t, key);
}

/* Rows of the children of the node whose entries [lo, hi) share the
 * first d frames (hash key), and of their open descendants. */
static void
children(struct stree *t, uint32_t d, uint64_t lo, uint64_t hi, uint64_t key)
{
	struct stree_row *kids = NULL;
	size_t n = 0, cap = 0, k;
	uint64_t i = lo, j;

	/* entries ending at the parent sort first */
	while (i < hi && plen(t, i) <= d)
		i++;
	for (; i < hi; i = j) {
		for (j = i + 1; j < hi && path(t, j)[d] == path(t, i)[d]; j++)
			;
		XGROW(kids, cap, n + 1);
		memset(&kids[n], 0, sizeof kids[0]);
		node(t, &kids[n], d, i, j, mix(key, path(t, i)[d]));
		n++;
	}
	row_ctx = t;
	qsort(kids, n, sizeof *kids, cmp_row);
	for (k = 0; k < n; k++) {
		*push_row(t) = kids[k];
		if (kids[k].open && d + 1 < STREE_MAX_DEPTH)
			children(t, d + 1, kids[k].lo, kids[k].hi, kids[k].key);
	}
	free(kids);
}

/* Entries [*lo, *hi) under the path p[0..n); 0 when there are none. */
static int
find_prefix(const struct stree *t, const uint32_t *p, uint32_t n,
    uint64_t *lo, uint64_t *hi)
{
	uint64_t i;

	for (i = 0; i < t->n_ents; i++)
		if (plen(t, i) >= n &&
		    memcmp(path(t, i), p, n * sizeof *p) == 0)
			break;
	*lo = i;
	for (; i < t->n_ents; i++)
		if (plen(t, i) < n || memcmp(path(t, i), p, n * sizeof *p) != 0)
			break;
	*hi = i;
	return *hi > *lo;
}

static uint64_t
path_key(const uint32_t *p, uint32_t n)
{
	uint64_t h = KEY0;
	uint32_t i;

	for (i = 0; i < n; i++)
		h = mix(h, p[i]);
	return h;
}

/* Path of row r (its first depth + 1 frames) into out; returns the
 * length. */
static uint32_t
row_path(const struct stree *t, const struct stree_row *r, uint32_t *out)
{
	uint32_t n = r->depth + 1;

	memcpy(out, path(t, r->lo), n * sizeof *out);
	return n;
}

/* Rebuilds the rows, keeping the selection on path sp[0..sn) or its
 * nearest ancestor shown. */
static void
rebuild(struct stree *t, const uint32_t *sp, uint32_t sn)
{
	uint64_t lo, hi, i, key;
	struct stree_row *r;
	uint32_t d;

	t->n_rows = 0;
	if (t->root_len > 0 && !find_prefix(t, t->root, t->root_len, &lo, &hi))
		t->root_len = 0;
	if (t->root_len > 0) {
		r = push_row(t);
		node(t, r, t->root_len - 1, lo, hi, path_key(t->root,
		    t->root_len));
		r->open = 1;
		children(t, t->root_len, lo, hi, r->key);
	} else if (t->n_ents > 0)
		children(t, 0, 0, t->n_ents, KEY0);
	t->sel = 0;
	for (d = sn; d > 0; d--) {
		key = path_key(sp, d);
		for (i = 0; i < t->n_rows; i++)
			if (t->rows[i].key == key &&
			    t->rows[i].depth == d - 1) {
				t->sel = i;
				return;
			}
	}
}

static void
rebuild_keep(struct stree *t)
{
	uint32_t sp[STREE_MAX_DEPTH], sn = 0;

	if (t->sel < t->n_rows)
		sn = row_path(t, &t->rows[t->sel], sp);
	rebuild(t, sp, sn);
}

/* Resolves the paths of the entries and sorts the entries by path. */
static void
sort_entries(struct stree *t, const uint32_t *sp, uint32_t sn)
{
	uint32_t p[STREE_MAX_DEPTH], n;
	uint64_t i, *idx, *off;
	uint32_t *fr;
	struct stree_entry *e;
	size_t cap = 0;

	t->n_frames = 0;
	t->off = xreallocarray(t->off, t->n_ents + 1, sizeof *t->off);
	t->off[0] = 0;
	for (i = 0; i < t->n_ents; i++) {
		n = resolve(t, &t->ents[i], p);
		XGROW(t->frames, t->cap_frames, t->n_frames + n);
		memcpy(t->frames + t->n_frames, p, n * sizeof *p);
		t->n_frames += n;
		t->off[i + 1] = t->n_frames;
	}
	idx = xcalloc(t->n_ents + 1, sizeof *idx);
	for (i = 0; i < t->n_ents; i++)
		idx[i] = i;
	sort_ctx = t;
	qsort(idx, t->n_ents, sizeof *idx, cmp_path);
	e = xcalloc(t->n_ents + 1, sizeof *e);
	off = xcalloc(t->n_ents + 1, sizeof *off);
	fr = NULL;
	XGROW(fr, cap, t->n_frames + 1);
	for (i = 0; i < t->n_ents; i++) {
		e[i] = t->ents[idx[i]];
		memcpy(fr + off[i], path(t, idx[i]), plen(t, idx[i]) *
		    sizeof *fr);
		off[i + 1] = off[i] + plen(t, idx[i]);
	}
	free(idx);
	free(t->ents);
	free(t->off);
	free(t->frames);
	t->ents = e;
	t->cap_ents = t->n_ents + 1;
	t->off = off;
	t->frames = fr;
	t->cap_frames = cap;
	rebuild(t, sp, sn);
}

void
stree_set(struct stree *t, const struct stree_entry *e, uint64_t n)
{
	uint32_t sp[STREE_MAX_DEPTH], sn = 0;
	uint64_t i;

	if (t->sel < t->n_rows)
		sn = row_path(t, &t->rows[t->sel], sp);
	XGROW(t->ents, t->cap_ents, n + 1);
	memcpy(t->ents, e, n * sizeof *e);
	t->n_ents = n;
	t->bytes = t->count = 0;
	for (i = 0; i < n; i++) {
		t->bytes += e[i].bytes;
		t->count += e[i].count;
	}
	sort_entries(t, sp, sn);
}

void
stree_refresh(struct stree *t)
{
	/* paths change meaning: the expansion and focus start over */
	u64map_destroy(&t->toggled);
	u64map_init(&t->toggled);
	t->root_len = 0;
	sort_entries(t, NULL, 0);
}

/* ---- operations ---------------------------------------------------------- */

static void
set_open(struct stree *t, const struct stree_row *r, int open)
{
	if (open == t->expand_all)
		u64map_del(&t->toggled, r->key);
	else
		u64map_put(&t->toggled, r->key, 1);
}

int
stree_open(struct stree *t, int how)
{
	struct stree_row *r;
	uint64_t i;

	if (t->sel >= t->n_rows)
		return 0;
	r = &t->rows[t->sel];
	if (how < 0)
		how = !r->open;
	if (how == 1 && r->open && t->sel + 1 < t->n_rows) {
		t->sel++;       /* already open: to its first child */
		return 1;
	}
	if (how == 1 && !r->kids)
		return 0;
	if (how == 0 && !r->open) {
		/* closed or a leaf: to the parent */
		for (i = t->sel; i > 0; i--)
			if (t->rows[i - 1].depth < r->depth) {
				t->sel = i - 1;
				return 1;
			}
		return 0;
	}
	set_open(t, r, how);
	rebuild_keep(t);
	return 1;
}

void
stree_expand_all(struct stree *t)
{
	int all = t->expand_all && t->toggled.n == 0;

	u64map_destroy(&t->toggled);
	u64map_init(&t->toggled);
	t->expand_all = !all;
	rebuild_keep(t);
}

void
stree_focus(struct stree *t)
{
	const struct stree_row *r = stree_selected(t);
	uint32_t sp[STREE_MAX_DEPTH], sn;

	if (r == NULL)
		return;
	sn = row_path(t, r, sp);
	if (t->root_len > 0 && t->sel == 0)
		t->root_len--;          /* on the focused node: back up */
	else {
		memcpy(t->root, sp, sn * sizeof *sp);
		t->root_len = sn;
	}
	rebuild(t, sp, sn);
}

const struct stree_row *
stree_selected(const struct stree *t)
{
	return t->sel < t->n_rows ? &t->rows[t->sel] : NULL;
}

uint32_t
stree_row_stack(const struct stree *t, const struct stree_row *r)
{
	return r->top < t->n_ents ? t->ents[r->top].stack : 0;
}

char *
stree_label(const struct stree *t, uint32_t frame, char *buf, size_t size)
{
	const char *g;

	frame = unflag(t, frame);
	if (frame == STREE_NO_STACK)
		snprintf(buf, size, "<no stack>");
	else if (frame >= STREE_SITE && frame < STREE_GROUP)
		an_site_label(t->sites, frame - STREE_SITE, buf, size);
	else if (frame >= STREE_GROUP) {
		g = t->group_name != NULL ? t->group_name(t->group_ctx,
		    frame - STREE_GROUP) : NULL;
		snprintf(buf, size, "[%s]", g != NULL ? g : "?");
	} else
		an_frame_label(t->s, frame, buf, size);
	return buf;
}

/* ---- drawing ------------------------------------------------------------- */

static const char *
header(const struct stree *t)
{
	if (t->grouped)
		return t->framework ? "   bytes  share blocks  category, then "
		    "the stack, innermost first" : "   bytes  share blocks  "
		    "category, call site, its callers";
	return t->framework ? "   bytes  share blocks  stack, innermost first"
	    : "   bytes  share blocks  call site, then its callers";
}

/* Columns of row r before its label, its indent at most maxindent cells.
 * Returns the length of the whole text (like snprintf); when it does not
 * fit, buf ends at a character. */
static size_t
row_text(const struct stree *t, const struct stree_row *r, char *buf,
    size_t size, int maxindent)
{
	char a[FMT_BUF], b[FMT_BUF];
	uint32_t base = t->root_len > 0 ? t->root_len - 1 : 0;
	int indent = 2 * (int)(r->depth - base);
	const char *mark = !r->kids ? " " : r->open ?
	    (t->utf8 ? "\xe2\x96\xbe" : "-") : (t->utf8 ? "\xe2\x96\xb8" : "+");

	int n;

	if (indent > maxindent)
		indent = maxindent;
	n = snprintf(buf, size, "%8s %5.1f%% %6s  %*s%s %s",
	    fmt_size_short(a, sizeof a, r->bytes),
	    t->bytes ? 100.0 * (double)r->bytes / (double)t->bytes : 0.0,
	    fmt_count(b, sizeof b, r->count), indent, "", mark,
	    stree_freed(t, r->frame) ? "freed at " : "");
	sv_utf8_mend(buf, size, n);
	return n > 0 ? (size_t)n : 0;
}

void
stree_render(struct stree *t, struct cellbuf *cb, int x, int y, int w, int h,
    int focused)
{
	char text[256], raw[LABEL_MAX], label[LABEL_MAX];
	int rows = h - 1, len, k;
	uint64_t i;

	cellbuf_fill(cb, x, y, w, h, ' ', UIC_DEFAULT, 0);
	if (h < 1)
		return;
	cellbuf_puts(cb, x + 1, y, header(t), w - 1, UIC_AXIS, CB_A_BOLD);
	if (t->n_rows == 0) {
		cellbuf_puts(cb, x + 1, y + 1, "(nothing alive at the cursor)",
		    w - 1, UIC_AXIS, 0);
		return;
	}
	if (t->sel >= t->n_rows)
		t->sel = t->n_rows - 1;
	if (rows < 1)
		return;
	if (t->sel < t->first)
		t->first = t->sel;
	if (t->sel >= t->first + (uint64_t)rows)
		t->first = t->sel - (uint64_t)rows + 1;
	for (i = t->first, k = 0; i < t->n_rows && k < rows; i++, k++) {
		const struct stree_row *r = &t->rows[i];
		int sel = i == t->sel;
		unsigned col = sel ? UIC_SELECT : UIC_DEFAULT;
		unsigned at = sel && focused ? CB_A_BOLD : 0;

		row_text(t, r, text, sizeof text, w / 3);
		if (sel)
			cellbuf_fill(cb, x, y + 1 + k, w, 1, ' ', col, at);
		len = cellbuf_puts(cb, x + 1, y + 1 + k, text, w - 1, col, at);
		stree_label(t, r->frame, raw, sizeof raw);
		anlist_cut_label(raw, w - 1 - len, t->utf8, label,
		    sizeof label);
		cellbuf_puts(cb, x + 1 + len, y + 1 + k, label, w - 1 - len,
		    unflag(t, r->frame) < STREE_SITE && an_frame_is_framework(
		    t->s, unflag(t, r->frame)) && !sel ? UIC_FRAMEWORK : col,
		    at);
	}
}

int
stree_write(const struct stree *t, FILE *f)
{
	char *text = xmalloc(256), raw[LABEL_MAX], esc[LABEL_MAX];
	size_t size = 256, n;
	uint64_t i;

	fprintf(f, "%s\n", header(t));
	for (i = 0; i < t->n_rows; i++) {
		/* the whole indent, however deep the row */
		while ((n = row_text(t, &t->rows[i], text, size, 1 << 20)) >=
		    size) {
			size = n + 1;
			text = xreallocarray(text, size, 1);
		}
		stree_label(t, t->rows[i].frame, raw, sizeof raw);
		sv_escape(esc, sizeof esc, raw, strlen(raw));
		fprintf(f, "%s%s\n", text, esc);
	}
	free(text);
	return ferror(f) ? -1 : 0;
}
