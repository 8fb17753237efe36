/*
 * A run directory (runs.h): its layout recognised and its files set out
 * as a grid of rank by step, the blocks section that keeps what each dump
 * held, and from it the growth between dumps and the skew between ranks.
 */
#include "config.h"

#include "analysis/runs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/site.h"
#include "analysis/summary.h"
#include "util/hash.h"
#include "util/u64map.h"
#include "util/xalloc.h"

/* ---- layouts ------------------------------------------------------------- */

static const struct {
	const char *name, *pattern, *oom;
} builtins[] = {
	{"verl", "step{step}/torch_memory_rank{rank}_pid{pid}.pickle", NULL},
	{"torchtitan", "iteration_{step}/rank{rank}_memory_snapshot.pickle",
	    "iteration_{step}_exit/rank{rank}_memory_snapshot.pickle"},
};
#define N_BUILTINS (sizeof builtins / sizeof builtins[0])

#define PATTERN_MAX 512
#define STARS_MAX 8

const char *
an_run_builtin_pattern(const char *name, int oom)
{
	size_t i;

	for (i = 0; i < N_BUILTINS; i++)
		if (strcmp(name, builtins[i].name) == 0)
			return oom ? builtins[i].oom : builtins[i].pattern;
	return NULL;
}

/* The token at p ("{rank}", "{step}", "{pid}"): its length, and which. */
static size_t
token(const char *p, int *which)
{
	static const char *const names[] = {"{rank}", "{step}", "{pid}"};
	size_t i;

	for (i = 0; i < 3; i++)
		if (strncmp(p, names[i], strlen(names[i])) == 0) {
			*which = (int)i;
			return strlen(names[i]);
		}
	return 0;
}

static int
match_at(const char *p, const char *s, int64_t *v)
{
	const char *t;
	size_t tl, n;
	int which;
	int64_t x;

	for (;;) {
		if (*p == '\0')
			return *s == '\0';
		if (*p == '*') {
			for (t = s;; t++) {
				if (match_at(p + 1, t, v))
					return 1;
				if (*t == '\0' || *t == '/')
					return 0;
			}
		}
		if (*p == '{' && (tl = token(p, &which)) > 0) {
			/* one to nine digits, the shortest that lets the rest
			 * match first */
			for (n = 1, x = 0; n <= 9 && isdigit((unsigned char)
			    s[n - 1]); n++) {
				x = x * 10 + (s[n - 1] - '0');
				if (match_at(p + tl, s + n, v)) {
					v[which] = x;
					return 1;
				}
			}
			return 0;
		}
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
}

int
an_run_match(const char *pattern, const char *path, int whole, int64_t *rank,
    int64_t *step)
{
	const char *s;
	int64_t v[3] = {-1, -1, -1};

	for (s = path; s != NULL; s = strchr(s, '/')) {
		if (*s == '/')
			s++;
		if (match_at(pattern, s, v)) {
			*rank = v[0];
			*step = v[1];
			return 1;
		}
		if (whole)
			break;
	}
	return 0;
}

/* A pattern of the caller's: {rank} and {step} once each, few stars, a
 * relative path. */
static int
check_pattern(const char *p, struct sv_error *err)
{
	size_t i, stars = 0;
	int seen[3] = {0, 0, 0}, which;

	if (strlen(p) > PATTERN_MAX || p[0] == '/')
		return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
		    "--layout: a relative path under the directory, at most "
		    "%d characters", PATTERN_MAX);
	for (i = 0; p[i] != '\0'; i++) {
		if (p[i] == '*')
			stars++;
		if (p[i] == '{' && token(p + i, &which) > 0)
			seen[which]++;
	}
	if (seen[0] != 1 || seen[1] != 1)
		return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
		    "--layout: a pattern names {rank} and {step} once each "
		    "(e.g. 'dumps/s{step}/r{rank}.pickle')");
	if (stars > STARS_MAX || seen[2] > 1)
		return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
		    "--layout: at most %d '*' and one {pid}", STARS_MAX);
	return 0;
}

/* ---- the files under the directory --------------------------------------- */

struct found {
	char *rel;              /* under the directory */
	uint64_t size;
};

struct walk {
	struct found *f;
	size_t n, cap;
	size_t entries;         /* directory entries looked at */
	int truncated;
};

static int
snapshot_name(const char *name)
{
	size_t n = strlen(name);

	return (n > 7 && strcmp(name + n - 7, ".pickle") == 0) ||
	    (n > 4 && strcmp(name + n - 4, ".pkl") == 0);
}

static void
walk_dir(struct walk *w, const char *root, const char *rel, int depth)
{
	DIR *d;
	struct dirent *de;
	struct stat st;
	char *path, *sub;

	xasprintf(&path, "%s%s%s", root, rel[0] != '\0' ? "/" : "", rel);
	d = opendir(path);
	free(path);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL && !w->truncated) {
		if (de->d_name[0] == '.')
			continue;
		if (++w->entries > AN_RUN_MAX_ENTRIES) {
			w->truncated = 1;
			break;
		}
		xasprintf(&sub, "%s%s%s", rel, rel[0] != '\0' ? "/" : "",
		    de->d_name);
		xasprintf(&path, "%s/%s", root, sub);
		if (lstat(path, &st) != 0) {
			free(path);
			free(sub);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if (depth < AN_RUN_DEPTH)
				walk_dir(w, root, sub, depth + 1);
			free(sub);
		} else if (snapshot_name(de->d_name) && (S_ISREG(st.st_mode) ||
		    (S_ISLNK(st.st_mode) && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode)))) {
			if (w->n == AN_RUN_MAX_FILES) {
				w->truncated = 1;
				free(sub);
			} else {
				XGROW(w->f, w->cap, w->n + 1);
				w->f[w->n].rel = sub;
				w->f[w->n++].size = (uint64_t)st.st_size;
			}
		} else {
			free(sub);
		}
		free(path);
	}
	closedir(d);
}

static int
cmp_found(const void *a, const void *b)
{
	return strcmp(((const struct found *)a)->rel,
	    ((const struct found *)b)->rel);
}

/* ---- the grid ------------------------------------------------------------ */

struct hit {
	size_t file;            /* in the walk */
	int64_t rank, step;
	int oom_name;
};

/* Which of the layouts' patterns file rel matches: 1 with h set. */
static int
match_layout(const char *pat, const char *oom, int whole, const char *rel,
    struct hit *h)
{
	if (an_run_match(pat, rel, whole, &h->rank, &h->step)) {
		h->oom_name = 0;
		return 1;
	}
	if (oom != NULL && an_run_match(oom, rel, whole, &h->rank, &h->step)) {
		h->oom_name = 1;
		return 1;
	}
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted distinct values of v[0..n) in place; returns their count. */
static size_t
uniq(int64_t *v, size_t n)
{
	size_t i, k = 0;

	if (n > 0)
		qsort(v, n, sizeof *v, cmp_i64);
	for (i = 0; i < n; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

static size_t
index_of(const int64_t *v, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct an_run_cell *
an_run_cell(const struct an_run *run, size_t row, size_t col)
{
	return &run->cells[row * run->n_steps + col];
}

/* The other files' ranks, as a plain directory's: the rank<N> in their
 * names when each has its own, else their positions. */
static int
rank_others(char **paths, int64_t *ranks, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		ranks[i] = an_rankset_rank_of(paths[i]);
		for (j = 0; j < i && ranks[i] >= 0; j++)
			if (ranks[j] == ranks[i])
				ranks[i] = -1;
		if (ranks[i] < 0)
			break;
	}
	if (i == n)
		return 1;
	for (i = 0; i < n; i++)
		ranks[i] = (int64_t)i;
	return 0;
}

static char *
join(const char *dir, const char *rel)
{
	char *p;

	xasprintf(&p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
	    rel);
	return p;
}

/* Sets out the run from the files its layout matched. */
static void
make_grid(struct an_run *run, struct an_rankset *rs, struct walk *w,
    struct hit *hits, size_t nh, const char *dir)
{
	uint8_t *in_grid = xcalloc(w->n + 1, 1);
	char **paths;
	int64_t *ranks;
	size_t i, k, np = 0, n_other = 0, r, c;
	int names;

	run->ranks = xcalloc(nh + 1, sizeof *run->ranks);
	run->steps = xcalloc(nh + 1, sizeof *run->steps);
	for (i = 0; i < nh; i++) {
		run->ranks[i] = hits[i].rank;
		run->steps[i] = hits[i].step;
	}
	run->n_ranks = uniq(run->ranks, nh);
	run->n_steps = uniq(run->steps, nh);
	run->cells = xcalloc(run->n_ranks * run->n_steps,
	    sizeof *run->cells);
	for (i = 0; i < nh; i++) {
		struct an_run_cell *cell;
		struct hit *old;

		r = index_of(run->ranks, run->n_ranks, hits[i].rank);
		c = index_of(run->steps, run->n_steps, hits[i].step);
		cell = an_run_cell(run, r, c);
		if (cell->path != NULL) {
			/* one file a cell: an OOM dump before another */
			old = &hits[cell->member];
			if (!hits[i].oom_name || old->oom_name)
				continue;
			in_grid[old->file] = 0;
			free(cell->path);
		}
		cell->path = join(dir, w->f[hits[i].file].rel);
		cell->member = i;       /* the hit, for now */
		cell->oom_name = hits[i].oom_name;
		cell->state = w->f[hits[i].file].size == 0 ? AN_RUN_EMPTY
							   : AN_RUN_DUMP;
		in_grid[hits[i].file] = 1;
	}
	paths = xcalloc(w->n + 1, sizeof *paths);
	ranks = xcalloc(w->n + 1, sizeof *ranks);
	for (k = 0; k < run->n_ranks * run->n_steps; k++) {
		struct an_run_cell *cell = &run->cells[k];

		if (cell->state == AN_RUN_EMPTY)
			run->n_empty++;
		if (cell->state != AN_RUN_DUMP) {
			cell->member = SIZE_MAX;
			continue;
		}
		cell->member = np;
		ranks[np] = run->ranks[k / run->n_steps];
		paths[np++] = cell->path;
	}
	run->n_members = np;
	for (i = 0; i < w->n; i++)
		if (!in_grid[i])
			paths[np + n_other++] = join(dir, w->f[i].rel);
	names = rank_others(paths + np, ranks + np, n_other);
	an_rankset_from_paths(paths, ranks, np + n_other, rs);
	rs->ranks_from_names = names;
	rs->dir = xstrdup(dir);
	for (i = np; i < np + n_other; i++)
		free(paths[i]);
	free(paths);
	free(ranks);
	free(in_grid);
}

int
an_run_collect(const char *dir, const char *layout, struct an_rankset *rs,
    struct an_run *run, struct sv_error *err)
{
	struct walk w;
	struct hit *hits, *best = NULL;
	const char *pat[N_BUILTINS + 1], *oom[N_BUILTINS + 1];
	const char *names[N_BUILTINS + 1];
	size_t n_pat = 0, i, k, nh, n_best = 0, which = 0;
	struct stat st;

	memset(run, 0, sizeof *run);
	if (layout != NULL && an_run_builtin_pattern(layout, 0) == NULL &&
	    check_pattern(layout, err) != 0)
		return -1;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return layout != NULL ? sv_error_set(err, SV_ERR_USAGE,
		    SV_NO_OFFSET, "--layout takes a directory") : 0;
	for (i = 0; i < N_BUILTINS; i++) {
		if (layout != NULL && strcmp(layout, builtins[i].name) != 0)
			continue;
		names[n_pat] = builtins[i].name;
		oom[n_pat] = builtins[i].oom;
		pat[n_pat++] = builtins[i].pattern;
	}
	if (layout != NULL && n_pat == 0) {
		names[n_pat] = layout;
		oom[n_pat] = NULL;
		pat[n_pat++] = layout;
	}
	memset(&w, 0, sizeof w);
	walk_dir(&w, dir, "", 0);
	if (w.n > 0)
		qsort(w.f, w.n, sizeof *w.f, cmp_found);
	hits = xcalloc(w.n + 1, sizeof *hits);
	for (k = 0; k < n_pat; k++) {
		/* a pattern of the caller's is the whole path under dir */
		int whole = layout != NULL && pat[k] == layout;

		for (i = 0, nh = 0; i < w.n; i++)
			if (match_layout(pat[k], oom[k], whole, w.f[i].rel,
			    &hits[nh])) {
				hits[nh++].file = i;
			}
		if (nh > n_best) {
			free(best);
			best = xcalloc(nh, sizeof *best);
			memcpy(best, hits, nh * sizeof *best);
			n_best = nh;
			which = k;
		}
	}
	free(hits);
	if (n_best > 0) {
		run->dir = xstrdup(dir);
		run->layout = xstrdup(names[which]);
		run->pattern = pat[which] == layout ? run->layout : pat[which];
		make_grid(run, rs, &w, best, n_best, dir);
	}
	free(best);
	for (i = 0; i < w.n; i++)
		free(w.f[i].rel);
	free(w.f);
	if (n_best == 0 && layout != NULL)
		return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
		    "no snapshot file under the directory matches the layout "
		    "'%s'", layout);
	return n_best > 0;
}

const char *
an_run_state_name(int state)
{
	switch (state) {
	case AN_RUN_DUMP: return "dump";
	case AN_RUN_OOM: return "OOM";
	case AN_RUN_EMPTY: return "empty";
	case AN_RUN_FAILED: return "failed";
	default: return "missing";
	}
}

/* ---- the blocks section -------------------------------------------------- */

/*
 * "SVBLK" 0 0 1, u32 labels, each u32 length + bytes (at most
 * AN_SUM_LABEL_MAX), u32 devices, each: u32 device, u64 reserved bytes,
 * u32 blocks, each: u64 address, u64 size, u64 requested size, u64 stack
 * hash, u32 label. Only allocated blocks; little-endian.
 */
static const uint8_t blk_magic[8] = {'S', 'V', 'B', 'L', 'K', 0, 0, 1};
#define BLK_REC 36              /* bytes of one block */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
};

static void
w_bytes(struct wbuf *w, const void *p, size_t n)
{
	w->p = xgrow(w->p, &w->cap, w->len + n, 1);
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

static void
w_uint(struct wbuf *w, uint64_t v, int n)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	w_bytes(w, b, (size_t)n);
}

/* A hash of stack st's frames (file, function, line), the same in every
 * file that holds that stack. */
static uint64_t
stack_hash(const struct snapshot *s, uint32_t st, struct wbuf *tmp)
{
	uint64_t i, a, b;

	tmp->len = 0;
	if (st >= s->n_stacks)
		return sv_xxh3("", 0);
	a = s->stack_off[st];
	b = s->stack_off[st + 1];
	for (i = a; i < b; i++) {
		const struct snap_frame *f = &s->frames[s->stack_frames[i]];
		const char *fn = snap_str(s, f->filename);
		const char *nm = snap_str(s, f->name);

		w_bytes(tmp, fn, strlen(fn) + 1);
		w_bytes(tmp, nm, strlen(nm) + 1);
		w_uint(tmp, f->line, 8);
	}
	return sv_xxh3(tmp->p, tmp->len);
}

static int
blocks_build(const struct snapshot *s, void *arg, uint8_t **data, size_t *len,
    struct sv_error *err)
{
	struct an_sites t;
	struct wbuf w, lab, tmp;
	struct u64map site_lab, hashes;
	uint32_t i, n_lab = 0, n_dev = 0, dev;
	size_t n_dev_at;
	char buf[AN_SUM_LABEL_MAX + 1];

	(void)arg;
	if (an_sites_init(&t, s, 1, NULL, err) != 0)
		return -1;
	memset(&w, 0, sizeof w);
	memset(&lab, 0, sizeof lab);
	memset(&tmp, 0, sizeof tmp);
	u64map_init(&site_lab);
	u64map_init(&hashes);
	w_bytes(&w, blk_magic, sizeof blk_magic);
	w_uint(&w, 0, 4);                       /* labels: patched below */
	n_dev_at = w.len;
	w_uint(&w, 0, 4);
	for (i = 0; i < s->n_segments;) {
		uint32_t j, end;
		uint64_t reserved = 0, nb = 0;
		size_t nb_at;

		dev = s->segments[i].device;
		for (end = i; end < s->n_segments &&
		    s->segments[end].device == dev; end++)
			reserved += s->segments[end].total_size;
		w_uint(&w, dev, 4);
		w_uint(&w, reserved, 8);
		nb_at = w.len;
		w_uint(&w, 0, 4);
		for (j = i; j < end; j++) {
			const struct snap_segment *sg = &s->segments[j];
			uint32_t k;

			for (k = 0; k < sg->n_blocks; k++) {
				const struct snap_block *b =
				    &s->blocks[sg->first_block + k];
				uint64_t h, l;
				uint32_t site;

				if (b->state != SNAP_BLOCK_ACTIVE_ALLOCATED)
					continue;
				if (!u64map_get(&hashes, b->stack, &h)) {
					h = stack_hash(s, b->stack, &tmp);
					u64map_put(&hashes, b->stack, h);
				}
				site = an_site_of(&t, b->stack);
				if (!u64map_get(&site_lab, site, &l)) {
					size_t n;

					an_site_label(&t, site, buf,
					    sizeof buf);
					n = strlen(buf);
					if (n > AN_SUM_LABEL_MAX)
						n = AN_SUM_LABEL_MAX;
					w_uint(&lab, n, 4);
					w_bytes(&lab, buf, n);
					l = n_lab++;
					u64map_put(&site_lab, site, l);
				}
				w_uint(&w, b->addr, 8);
				w_uint(&w, b->size, 8);
				w_uint(&w, b->requested_size, 8);
				w_uint(&w, h, 8);
				w_uint(&w, l, 4);
				nb++;
			}
		}
		for (j = 0; j < 4; j++)
			w.p[nb_at + j] = (uint8_t)(nb >> (8 * j));
		n_dev++;
		i = end;
	}
	for (i = 0; i < 4; i++) {
		w.p[sizeof blk_magic + i] = (uint8_t)(n_lab >> (8 * i));
		w.p[n_dev_at + i] = (uint8_t)(n_dev >> (8 * i));
	}
	/* the labels go between the count and the devices */
	w.p = xgrow(w.p, &w.cap, w.len + lab.len, 1);
	memmove(w.p + n_dev_at + lab.len, w.p + n_dev_at, w.len - n_dev_at);
	if (lab.len > 0)
		memcpy(w.p + n_dev_at, lab.p, lab.len);
	w.len += lab.len;
	free(lab.p);
	free(tmp.p);
	u64map_destroy(&site_lab);
	u64map_destroy(&hashes);
	an_sites_destroy(&t);
	*data = w.p;
	*len = w.len;
	return 0;
}

const struct idx_section_builder an_run_blocks_section = {
	.name = AN_RUN_BLOCKS_SECTION,
	.build = blocks_build,
};

/* ---- decoding: every count is checked ------------------------------------ */

struct run_blk {
	uint64_t addr, size, req, stack;
	uint32_t site;
};

struct run_site {
	uint32_t site;
	uint64_t bytes, blocks;
};

struct an_run_dump {
	struct run_blk *b;      /* by address, size, stack */
	size_t nb;
	struct run_site *s;     /* by site */
	size_t ns;
};

struct run_priv {
	struct u64map ids;      /* label hash -> site id */
	size_t cap_sites;
};

struct rbuf {
	const uint8_t *p;
	size_t len, off;
	int bad;
};

static uint64_t
r_uint(struct rbuf *r, int n)
{
	uint64_t v = 0;
	int i;

	if (r->bad || (size_t)n > r->len - r->off) {
		r->bad = 1;
		return 0;
	}
	for (i = n - 1; i >= 0; i--)
		v = v << 8 | r->p[r->off + (size_t)i];
	r->off += (size_t)n;
	return v;
}

static uint32_t
intern(struct an_run *run, const char *s, size_t n)
{
	struct run_priv *pv = run->priv;
	uint64_t h = sv_xxh3(s, n), id;

	/* a label whose hash another one has (never seen) is a site of its
	 * own each time */
	if (u64map_get(&pv->ids, h, &id) && strlen(run->sites[id]) == n &&
	    memcmp(run->sites[id], s, n) == 0)
		return (uint32_t)id;
	XGROW(run->sites, pv->cap_sites, run->n_sites + 1);
	run->sites[run->n_sites] = xstrndup(s, n);
	u64map_put(&pv->ids, h, run->n_sites);
	return run->n_sites++;
}

static int
cmp_blk(const void *a, const void *b)
{
	const struct run_blk *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return 0;
}

static int
cmp_site(const void *a, const void *b)
{
	const struct run_site *x = a, *y = b;

	return x->site < y->site ? -1 : x->site > y->site;
}

/* Device dev of a blocks section into a dump: 0, or -1 when the bytes
 * do not decode or the device is not there. */
static int
decode_blocks(struct an_run *run, const uint8_t *p, size_t len, uint32_t dev,
    struct an_run_dump *out, uint64_t *reserved)
{
	struct rbuf r = {p, len, 0, 0};
	uint32_t *ids = NULL, n_lab, n_dev, i, d;
	int found = 0;

	memset(out, 0, sizeof *out);
	if (len < sizeof blk_magic || memcmp(p, blk_magic,
	    sizeof blk_magic) != 0)
		return -1;
	r.off = sizeof blk_magic;
	n_lab = (uint32_t)r_uint(&r, 4);
	if (n_lab > (len - r.off) / 4)
		return -1;
	ids = xcalloc((size_t)n_lab + 1, sizeof *ids);
	for (i = 0; i < n_lab && !r.bad; i++) {
		uint32_t n = (uint32_t)r_uint(&r, 4);

		if (n > AN_SUM_LABEL_MAX || n > r.len - r.off ||
		    memchr(r.p + r.off, '\0', n) != NULL) {
			r.bad = 1;
			break;
		}
		ids[i] = intern(run, (const char *)r.p + r.off, n);
		r.off += n;
	}
	n_dev = (uint32_t)r_uint(&r, 4);
	for (d = 0; d < n_dev && !r.bad && !found; d++) {
		uint32_t dv = (uint32_t)r_uint(&r, 4);
		uint64_t res = r_uint(&r, 8);
		uint32_t nb = (uint32_t)r_uint(&r, 4);

		if (r.bad || nb > (r.len - r.off) / BLK_REC) {
			r.bad = 1;
			break;
		}
		if (dv != dev) {
			r.off += (size_t)nb * BLK_REC;
			continue;
		}
		found = 1;
		*reserved = res;
		out->b = xcalloc((size_t)nb + 1, sizeof *out->b);
		for (i = 0; i < nb; i++) {
			struct run_blk *b = &out->b[i];
			uint32_t l;

			b->addr = r_uint(&r, 8);
			b->size = r_uint(&r, 8);
			b->req = r_uint(&r, 8);
			b->stack = r_uint(&r, 8);
			l = (uint32_t)r_uint(&r, 4);
			if (l >= n_lab) {
				r.bad = 1;
				break;
			}
			b->site = ids[l];
		}
		out->nb = nb;
	}
	free(ids);
	if (r.bad || !found) {
		free(out->b);
		memset(out, 0, sizeof *out);
		return -1;
	}
	if (out->nb > 0)
		qsort(out->b, out->nb, sizeof *out->b, cmp_blk);
	return 0;
}

/* The dump's bytes and blocks by site. */
static void
dump_sites(struct an_run_dump *d)
{
	struct u64map at;
	size_t i;
	uint64_t k;

	u64map_init(&at);
	d->s = xcalloc(d->nb + 1, sizeof *d->s);
	for (i = 0; i < d->nb; i++) {
		if (!u64map_get(&at, d->b[i].site, &k)) {
			k = d->ns++;
			d->s[k].site = d->b[i].site;
			u64map_put(&at, d->b[i].site, k);
		}
		d->s[k].bytes += d->b[i].req;
		d->s[k].blocks++;
	}
	u64map_destroy(&at);
	if (d->ns > 0)
		qsort(d->s, d->ns, sizeof *d->s, cmp_site);
}

static const struct run_site *
site_in(const struct an_run_dump *d, uint32_t site)
{
	size_t lo = 0, hi = d->ns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->s[mid].site < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->ns && d->s[lo].site == site ? &d->s[lo] : NULL;
}

static int
blk_in(const struct an_run_dump *d, const struct run_blk *b)
{
	return d->nb > 0 && bsearch(b, d->b, d->nb, sizeof *d->b,
	    cmp_blk) != NULL;
}

static void
dump_free(struct an_run_dump *d)
{
	if (d == NULL)
		return;
	free(d->b);
	free(d->s);
	free(d);
}

/* ---- the analysis -------------------------------------------------------- */

static const struct an_sum_dev *
pick_device(const struct an_summary *sum, int64_t device)
{
	const struct an_sum_dev *best = NULL;
	uint32_t i;

	if (device >= 0)
		return device <= UINT32_MAX ? an_summary_dev(sum,
		    (uint32_t)device) : NULL;
	for (i = 0; i < sum->n_dev; i++)
		if (best == NULL || sum->dev[i].events > best->events)
			best = &sum->dev[i];
	return best;
}

static void
cell_figures(struct an_run *run, struct an_run_cell *cell,
    const struct an_rs_member *m, int64_t device)
{
	struct an_run_dump *d;
	uint64_t res = 0;
	size_t i;

	if (m->state != AN_RS_OK ||
	    (cell->dev = pick_device(&m->sum, device)) == NULL) {
		cell->state = AN_RUN_FAILED;
		return;
	}
	cell->state = cell->dev->ooms > 0 || cell->oom_name ? AN_RUN_OOM
							    : AN_RUN_DUMP;
	cell->reserved = cell->dev->reserved_end;
	cell->allocated = cell->dev->allocated_end;
	d = xcalloc(1, sizeof *d);
	if (m->extra[0] == NULL || decode_blocks(run, m->extra[0],
	    m->extra_len[0], cell->dev->device, d, &res) != 0) {
		free(d);
		return;
	}
	dump_sites(d);
	cell->dump = d;
	cell->has_blocks = 1;
	cell->reserved = res;
	cell->allocated = 0;
	for (i = 0; i < d->nb; i++)
		cell->allocated += d->b[i].req;
	cell->n_blocks = d->nb;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median as the rank overview takes it: the lower mean of the
 * middle two of an even count. Sorts v. */
static uint64_t
median(uint64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	if (n > 0)
		qsort(v, n, sizeof *v, cmp_u64);
	if (n % 2)
		return v[n / 2];
	return v[n / 2 - 1] / 2 + v[n / 2] / 2 +
	    (v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2;
}

/* Site s's growth over the dumps d[0..n) of row (cols c): 1 when its
 * bytes grow from each dump to the next, with g filled. */
static int
site_growth(const struct an_run *run, struct an_run_dump **d,
    const size_t *c, size_t n, size_t row, uint32_t s,
    struct an_run_growth *g)
{
	const struct an_run_dump *last = d[n - 1];
	const struct run_site *rs;
	uint64_t prev = 0;
	size_t k, i, j;

	for (k = 0; k < n; k++) {
		rs = site_in(d[k], s);
		if (k > 0 && (rs == NULL || rs->bytes <= prev))
			return 0;
		prev = rs != NULL ? rs->bytes : 0;
	}
	memset(g, 0, sizeof *g);
	g->row = row;
	g->site = s;
	g->pts = xcalloc(n, sizeof *g->pts);
	g->n_pts = n;
	for (k = 0; k < n; k++) {
		rs = site_in(d[k], s);
		g->pts[k].step = run->steps[c[k]];
		g->pts[k].bytes = rs != NULL ? rs->bytes : 0;
		g->pts[k].blocks = rs != NULL ? rs->blocks : 0;
	}
	g->per_step = (int64_t)(g->pts[n - 1].bytes - g->pts[0].bytes) /
	    (g->pts[n - 1].step - g->pts[0].step);
	g->oldest_step = g->pts[n - 1].step;
	for (i = 0; i < last->nb; i++) {
		const struct run_blk *b = &last->b[i];

		if (b->site != s)
			continue;
		for (j = n - 1; j > 0 && blk_in(d[j - 1], b); j--)
			;
		if (j < n - 1) {
			g->kept_blocks++;
			g->kept_bytes += b->req;
		}
		if (run->steps[c[j]] < g->oldest_step)
			g->oldest_step = run->steps[c[j]];
	}
	return 1;
}

static const struct an_run *sort_run;

static int
cmp_growth(const void *a, const void *b)
{
	const struct an_run_growth *x = a, *y = b;

	if (x->per_step != y->per_step)
		return x->per_step > y->per_step ? -1 : 1;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return strcmp(sort_run->sites[x->site], sort_run->sites[y->site]);
}

static void
find_growth(struct an_run *run)
{
	struct an_run_dump **d = xcalloc(run->n_steps + 1, sizeof *d);
	size_t *c = xcalloc(run->n_steps + 1, sizeof *c);
	size_t r, k, n, cap = 0;
	struct an_run_growth g;

	for (r = 0; r < run->n_ranks; r++) {
		for (k = 0, n = 0; k < run->n_steps; k++) {
			struct an_run_cell *cell = an_run_cell(run, r, k);

			if (cell->state == AN_RUN_DUMP && cell->has_blocks) {
				c[n] = k;
				d[n++] = cell->dump;
			}
		}
		if (n < 3)
			continue;
		run->n_judged++;
		for (k = 0; k < d[n - 1]->ns; k++) {
			if (!site_growth(run, d, c, n, r, d[n - 1]->s[k].site,
			    &g))
				continue;
			XGROW(run->growth, cap, run->n_growth + 1);
			run->growth[run->n_growth++] = g;
		}
	}
	sort_run = run;
	if (run->n_growth > 1)
		qsort(run->growth, run->n_growth, sizeof *run->growth,
		    cmp_growth);
	free(d);
	free(c);
}

static int
cmp_excess(const void *a, const void *b)
{
	const struct an_run_excess *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(sort_run->sites[x->site], sort_run->sites[y->site]);
}

static int
cmp_heavy(const void *a, const void *b)
{
	const struct an_run_heavy *x = a, *y = b;

	if (x->excess != y->excess)
		return x->excess > y->excess ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* The sites that make row r heavier at column col, against the dumps
 * d[0..n). */
static void
heavy_sites(const struct an_run *run, struct an_run_dump **d, size_t n,
    const struct an_run_dump *mine, struct an_run_heavy *h)
{
	struct an_run_excess *ex = xcalloc(mine->ns + 1, sizeof *ex);
	uint64_t *v = xcalloc(n + 1, sizeof *v);
	size_t i, k, ne = 0;

	for (i = 0; i < mine->ns; i++) {
		uint64_t med;

		for (k = 0; k < n; k++) {
			const struct run_site *s = site_in(d[k],
			    mine->s[i].site);

			v[k] = s != NULL ? s->bytes : 0;
		}
		med = median(v, n);
		if (mine->s[i].bytes > med) {
			ex[ne].site = mine->s[i].site;
			ex[ne++].bytes = mine->s[i].bytes - med;
		}
	}
	sort_run = run;
	if (ne > 0)
		qsort(ex, ne, sizeof *ex, cmp_excess);
	for (i = 0; i < ne && i < AN_RUN_TOP; i++)
		h->top[i] = ex[i];
	h->n_top = i;
	free(ex);
	free(v);
}

static void
find_skew(struct an_run *run)
{
	struct an_run_dump **d = xcalloc(run->n_ranks + 1, sizeof *d);
	size_t *rows = xcalloc(run->n_ranks + 1, sizeof *rows);
	uint64_t *v = xcalloc(run->n_ranks + 1, sizeof *v);
	size_t col, r, n, k;

	run->skew = xcalloc(run->n_steps + 1, sizeof *run->skew);
	for (col = 0; col < run->n_steps; col++) {
		struct an_run_skew *sk = &run->skew[run->n_skew];

		for (r = 0, n = 0; r < run->n_ranks; r++) {
			struct an_run_cell *cell = an_run_cell(run, r, col);

			if (cell->state == AN_RUN_DUMP && cell->has_blocks) {
				rows[n] = r;
				v[n] = cell->allocated;
				d[n++] = cell->dump;
			}
		}
		if (n < 2)
			continue;
		run->n_skew++;
		sk->col = col;
		sk->n_ranks = n;
		sk->median = median(v, n);
		sk->heavy = xcalloc(n, sizeof *sk->heavy);
		for (k = 0; k < n; k++) {
			const struct an_run_cell *cell =
			    an_run_cell(run, rows[k], col);
			struct an_run_heavy *h = &sk->heavy[sk->n_heavy];

			if (cell->allocated <= sk->median ||
			    cell->allocated - sk->median <= sk->median / 20)
				continue;
			h->row = rows[k];
			h->bytes = cell->allocated;
			h->excess = cell->allocated - sk->median;
			heavy_sites(run, d, n, cell->dump, h);
			sk->n_heavy++;
		}
		if (sk->n_heavy > 0)
			qsort(sk->heavy, sk->n_heavy, sizeof *sk->heavy,
			    cmp_heavy);
	}
	free(d);
	free(rows);
	free(v);
}

void
an_run_analyse(struct an_run *run, const struct an_rankset *rs,
    int64_t device)
{
	struct run_priv *pv = xcalloc(1, sizeof *pv);
	size_t k;

	u64map_init(&pv->ids);
	run->priv = pv;
	for (k = 0; k < run->n_ranks * run->n_steps; k++) {
		struct an_run_cell *cell = &run->cells[k];

		if (cell->state != AN_RUN_DUMP || cell->member >= rs->n)
			continue;
		cell_figures(run, cell, &rs->m[cell->member], device);
		if (cell->state == AN_RUN_FAILED)
			run->n_failed++;
		else if (cell->state == AN_RUN_OOM)
			run->n_oom++;
		else
			run->n_dumps++;
	}
	find_growth(run);
	find_skew(run);
}

void
an_run_free(struct an_run *run)
{
	struct run_priv *pv = run->priv;
	size_t k;
	uint32_t i;

	for (k = 0; k < run->n_ranks * run->n_steps; k++) {
		free(run->cells[k].path);
		dump_free(run->cells[k].dump);
	}
	for (k = 0; k < run->n_growth; k++)
		free(run->growth[k].pts);
	for (k = 0; k < run->n_skew; k++)
		free(run->skew[k].heavy);
	for (i = 0; i < run->n_sites; i++)
		free(run->sites[i]);
	if (pv != NULL) {
		u64map_destroy(&pv->ids);
		free(pv);
	}
	free(run->sites);
	free(run->growth);
	free(run->skew);
	free(run->cells);
	free(run->ranks);
	free(run->steps);
	free(run->layout);
	free(run->dir);
	memset(run, 0, sizeof *run);
}
