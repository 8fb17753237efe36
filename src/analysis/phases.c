/*
 * Phases: instances from annotation ranges or from the user's rules on
 * the user frames, what each holds and leaves behind, and which of what
 * a phase leaves behind grows from iteration to iteration. See phases.h.
 */
#include "config.h"

#include "analysis/phases.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/frame.h"
#include "analysis/rulefile.h"
#include "util/escape.h"
#include "util/hash.h"
#include "util/stop.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define JUDGE_MIN 3		/* complete instances a verdict needs */

static const char *const source_names[] = {
#define AN_PHASE_SOURCE_NAME(id, name, text, dflt, fn) name,
	AN_PHASE_SOURCES(AN_PHASE_SOURCE_NAME)
#undef AN_PHASE_SOURCE_NAME
};
static const char *const source_texts[] = {
#define AN_PHASE_SOURCE_TEXT(id, name, text, dflt, fn) text,
	AN_PHASE_SOURCES(AN_PHASE_SOURCE_TEXT)
#undef AN_PHASE_SOURCE_TEXT
};

const char *
an_phase_source_name(int source)
{
	if (source < 0 || source >= AN_PH_SOURCE_COUNT)
		source = 0;
	return source_names[source];
}

const char *
an_phase_source_text(int source)
{
	if (source < 0 || source >= AN_PH_SOURCE_COUNT)
		source = 0;
	return source_texts[source];
}

/* ---- rules -------------------------------------------------------------- */

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Sets err for a bad rule: "line N: why" from a file, "why" from the
 * command line. */
static int
rule_error(struct sv_error *err, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
rule_error(struct sv_error *err, uint32_t line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (line == 0)
		return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET, "%s", msg);
	return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET, "line %u: %s",
	    line, msg);
}

/* Appends the rule NAME (n bytes) REGEX (rn bytes); the regex may start
 * with a source's name and ':'. */
static int
rule_push(struct an_phase_rules *rs, const char *name, size_t n,
    const char *re, size_t rn, uint32_t line, struct sv_error *err)
{
	struct an_phase_rule *r;
	char buf[RULE_LINE_MAX + 1], msg[128], shown[96];
	size_t i, len;
	int src = -1, k, rc;

	sv_escape(shown, sizeof shown, name, n > 40 ? 40 : n);
	if (n == 0)
		return rule_error(err, line, "a phase needs a name "
		    "(NAME=REGEX)");
	if (n > AN_PHASE_NAME_MAX)
		return rule_error(err, line, "phase name '%s...' longer than "
		    "%u bytes", shown, AN_PHASE_NAME_MAX);
	for (i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f ||
		    name[i] == ' ')
			return rule_error(err, line, "phase name '%s' holds a "
			    "space or a control character", shown);
	for (k = 0; k < AN_PH_SOURCE_COUNT; k++) {
		len = strlen(source_names[k]);
		if (rn > len && memcmp(re, source_names[k], len) == 0 &&
		    re[len] == ':') {
			src = k;
			re += len + 1;
			rn -= len + 1;
			break;
		}
	}
	if (rn == 0)
		return rule_error(err, line, "no regular expression for phase "
		    "'%s'", shown);
	if (rn > RULE_LINE_MAX)
		return rule_error(err, line, "regular expression longer than "
		    "%u bytes", RULE_LINE_MAX);
	if (rs->n >= AN_PHASE_RULES_MAX)
		return rule_error(err, line, "more than %u rules",
		    AN_PHASE_RULES_MAX);
	memcpy(buf, re, rn);
	buf[rn] = '\0';
	rs->r = xreallocarray(rs->r, (size_t)rs->n + 1, sizeof *rs->r);
	r = &rs->r[rs->n];
	memset(r, 0, sizeof *r);
	rc = regcomp(&r->re, buf, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &r->re, msg, sizeof msg);
		return rule_error(err, line, "bad regular expression: %s",
		    msg);
	}
	r->name = xmalloc(n + 1);
	memcpy(r->name, name, n);
	r->name[n] = '\0';
	r->source = src;
	r->line = line;
	rs->n++;
	return 0;
}

int
an_phase_rule_add(struct an_phase_rules *rs, const char *spec,
    struct sv_error *err)
{
	const char *eq = strchr(spec, '=');

	if (eq == NULL)
		return rule_error(err, 0, "expected NAME=REGEX");
	return rule_push(rs, spec, (size_t)(eq - spec), eq + 1, strlen(eq + 1),
	    0, err);
}

static int
parse_line(void *ctx, const char *p, size_t n, uint32_t line,
    struct sv_error *err)
{
	struct an_phase_rules *rs = ctx;
	size_t i = 0, w, v;

	while (i < n && is_space(p[i]))
		i++;
	while (n > i && is_space(p[n - 1]))
		n--;
	if (i == n || p[i] == '#')
		return 0;
	for (w = i; w < n && !is_space(p[w]); w++)
		;
	for (v = w; v < n && is_space(p[v]); v++)
		;
	return rule_push(rs, p + i, w - i, p + v, n - v, line, err);
}

int
an_phase_rules_parse(const char *text, size_t len, struct an_phase_rules *rs,
    struct sv_error *err)
{
	return an_rulefile_lines(text, len, parse_line, rs, err);
}

int
an_phase_rules_load(const char *path, struct an_phase_rules *rs,
    struct sv_error *err)
{
	return an_rulefile_load(path, parse_line, rs, err);
}

void
an_phase_rules_destroy(struct an_phase_rules *rs)
{
	uint32_t i;

	for (i = 0; i < rs->n; i++) {
		regfree(&rs->r[i].re);
		free(rs->r[i].name);
	}
	free(rs->r);
	memset(rs, 0, sizeof *rs);
}

/* ---- finding the instances ---------------------------------------------- */

struct finder {
	const struct snapshot *s;
	const struct snap_trace *t;
	uint32_t d;
	const struct an_phase_rules *rules;	/* NULL: none */
	int *src;			/* per rule: the source it uses */
	struct an_phases *out;
	size_t cap_inst, cap_ph;
	struct u64map by_name;		/* name hash -> phase index */
};

/* The phase named name (len bytes), made when new. */
static uint32_t
phase_of(struct finder *f, const char *name, size_t len, int source)
{
	struct an_phases *out = f->out;
	uint64_t h = sv_xxh3(name, len), v;
	uint32_t i;

	if (u64map_get(&f->by_name, h, &v) &&
	    strlen(out->phases[v].name) == len &&
	    memcmp(out->phases[v].name, name, len) == 0)
		return (uint32_t)v;
	for (i = 0; i < out->n_phases; i++)	/* a hash collision */
		if (strlen(out->phases[i].name) == len &&
		    memcmp(out->phases[i].name, name, len) == 0)
			return i;
	XGROW(out->phases, f->cap_ph, (size_t)out->n_phases + 1);
	i = out->n_phases++;
	memset(&out->phases[i], 0, sizeof out->phases[i]);
	out->phases[i].name = xmalloc(len + 1);
	memcpy(out->phases[i].name, name, len);
	out->phases[i].name[len] = '\0';
	out->phases[i].source = source;
	if (!u64map_get(&f->by_name, h, &v))
		u64map_put(&f->by_name, h, i);
	return i;
}

static void
push_inst(struct finder *f, uint32_t phase, int64_t first, int64_t last,
    int complete)
{
	struct an_phases *out = f->out;
	struct an_phase_inst *p;

	if (last < first)
		return;
	XGROW(out->inst, f->cap_inst, (size_t)out->n_inst + 1);
	p = &out->inst[out->n_inst++];
	memset(p, 0, sizeof *p);
	p->phase = phase;
	p->first = first;
	p->last = last;
	p->complete = complete;
	p->step = -1;
	p->peak_ev = -1;
	p->peak_site = UINT32_MAX;
}

/* The length of name without a trailing "#N". */
static size_t
stripped_len(const char *name, int *numbered)
{
	size_t n = strlen(name), i = n;

	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	*numbered = i < n && i > 0 && name[i - 1] == '#';
	return *numbered ? i - 1 : n;
}

/* The first rule of source src matching text, or -1. */
static int
rule_match(const struct finder *f, int src, const char *text)
{
	uint32_t i;

	for (i = 0; f->rules != NULL && i < f->rules->n; i++)
		if (f->src[i] == src &&
		    regexec(&f->rules->r[i].re, text, 0, NULL, 0) == 0)
			return (int)i;
	return -1;
}

/* Per annotation name (string id): the STARTs still open, innermost
 * last. */
struct open_name {
	uint32_t id;
	int64_t *ev;
	size_t n, cap;
	int seen;
};

struct annots {
	struct u64map ids;		/* name string id -> index */
	struct open_name *names;
	size_t n, cap;
};

static struct open_name *
open_of(struct annots *a, uint32_t name)
{
	uint64_t v;

	if (u64map_get(&a->ids, name, &v))
		return &a->names[v];
	XGROW(a->names, a->cap, a->n + 1);
	memset(&a->names[a->n], 0, sizeof a->names[a->n]);
	a->names[a->n].id = name;
	u64map_put(&a->ids, name, a->n);
	return &a->names[a->n++];
}

static void
bad(struct an_phases *out, uint32_t i, const char *name, const char *why)
{
	if (out->n_bad++ > 0)
		return;
	snprintf(out->bad, sizeof out->bad, "annotation %" PRIu32
	    " (%.60s): %s; ignored", i, name, why);
}

/* The phase of the annotation named name, or -1 (no rule takes it). */
static int64_t
annot_phase(struct finder *f, const char *name, int *numbered)
{
	size_t len = stripped_len(name, numbered);
	int r;

	if (f->rules == NULL)
		return phase_of(f, name, len, AN_PH_ANNOTATION);
	if ((r = rule_match(f, AN_PH_ANNOTATION, name)) < 0)
		return -1;
	return phase_of(f, f->rules->r[r].name, strlen(f->rules->r[r].name),
	    AN_PH_ANNOTATION);
}

/* Ranges with no END: to the next START of their phase when their name
 * is numbered, else to the last event. */
struct pending {
	uint32_t phase;
	int64_t first;
	int numbered;
};

static int
cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->phase != y->phase)
		return x->phase < y->phase ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static void
close_pending(struct finder *f, struct pending *pd, size_t n,
    uint64_t n_before)
{
	uint64_t k;
	size_t i;

	if (n > 0) /* qsort(NULL, 0, ...) is undefined */
		qsort(pd, n, sizeof *pd, cmp_pending);
	for (i = 0; i < n; i++) {
		int64_t last = (int64_t)f->t->n - 1, next = INT64_MAX;

		if (pd[i].numbered) {
			for (k = 0; k < n_before; k++)
				if (f->out->inst[k].phase == pd[i].phase &&
				    f->out->inst[k].first > pd[i].first &&
				    f->out->inst[k].first < next)
					next = f->out->inst[k].first;
			if (i + 1 < n && pd[i + 1].phase == pd[i].phase &&
			    pd[i + 1].first < next)
				next = pd[i + 1].first;
			if (next != INT64_MAX)
				last = next - 1;
		}
		push_inst(f, pd[i].phase, pd[i].first, last, 0);
	}
}

/* The annotation source: every range (or every range a rule takes). */
static void
find_annotations(struct finder *f)
{
	const struct snapshot *s = f->s;
	struct an_times tm = {f->t, 0};
	struct pending *pd = NULL;
	size_t n_pd = 0, cap_pd = 0, i;
	uint64_t hint = 0, n_before;
	int64_t t0, first;
	struct annots a;
	uint32_t k;
	int dropped = 0;

	memset(&a, 0, sizeof a);
	u64map_init(&a.ids);
	if (!snap_trace_has_time(f->t)) {
		f->out->no_time = f->out->n_annotations > 0;
		u64map_destroy(&a.ids);
		return;
	}
	/* few annotations: binary searches read fewer events than the
	 * pass that lets them gallop (steps.c) */
	if (f->out->n_annotations < f->t->n / 128)
		tm.gallop = -1;
	/* a range that ended before the first event: the events before it
	 * were dropped (a ring buffer), so one that started before it is
	 * cut */
	t0 = snap_ev_time(f->t, 0);
	for (k = 0; k < s->n_annotations && !dropped; k++)
		dropped = s->annotations[k].device == f->d &&
		    s->annotations[k].stage == SNAP_STAGE_END &&
		    s->annotations[k].time_us != SNAP_NO_TIME &&
		    s->annotations[k].time_us < t0;
	for (k = 0; k < s->n_annotations; k++) {
		const struct snap_annotation *an = &s->annotations[k];
		const char *name = snap_str(s, an->name);
		struct open_name *o;
		int64_t ph, ev;
		int numbered;

		if (an->device != f->d)
			continue;
		if (an->time_us == SNAP_NO_TIME) {
			bad(f->out, k, name, "no time_us");
			continue;
		}
		if (an->stage == SNAP_STAGE_OTHER) {
			bad(f->out, k, name, "stage is neither START nor END");
			continue;
		}
		if ((ph = annot_phase(f, name, &numbered)) < 0)
			continue;
		o = open_of(&a, an->name);
		if (an->stage == SNAP_STAGE_START) {
			ev = (int64_t)an_ev_at_time_gallop(&tm, &hint,
			    an->time_us);
			XGROW(o->ev, o->cap, o->n + 1);
			/* negative: cut by the start of the trace */
			o->ev[o->n++] = dropped && an->time_us < t0 ? -1 : ev;
		} else {
			ev = an->time_us == INT64_MAX ? (int64_t)f->t->n - 1 :
			    (int64_t)an_ev_at_time_gallop(&tm, &hint,
			    an->time_us + 1) - 1;
			if (o->n > 0) {
				first = o->ev[--o->n];
				push_inst(f, (uint32_t)ph, first < 0 ? 0 :
				    first, ev, first >= 0);
			} else if (!o->seen) {
				/* the trace began inside this range */
				push_inst(f, (uint32_t)ph, 0, ev, 0);
			} else {
				bad(f->out, k, name, "END without a START");
			}
		}
		o->seen = 1;
	}
	/* the trace ended inside these */
	for (i = 0; i < a.n; i++)
		while (a.names[i].n > 0) {
			XGROW(pd, cap_pd, n_pd + 1);
			pd[n_pd].first = a.names[i].ev[--a.names[i].n];
			if (pd[n_pd].first < 0)
				pd[n_pd].first = 0;
			pd[n_pd].phase = (uint32_t)annot_phase(f,
			    snap_str(s, a.names[i].id), &pd[n_pd].numbered);
			n_pd++;
		}
	n_before = f->out->n_inst;
	close_pending(f, pd, n_pd, n_before);
	free(pd);
	for (i = 0; i < a.n; i++)
		free(a.names[i].ev);
	free(a.names);
	u64map_destroy(&a.ids);
}

/* What the user frames of a stack say: no user frame, none matching, or
 * the first frame rule matching (its index + ST_RULE). */
#define ST_TODO 0
#define ST_NEUTRAL 1
#define ST_NONE 2
#define ST_RULE 3

struct frames {
	struct an_frame_cache fc;
	uint32_t *st;		/* per stack */
	int32_t *fr;		/* per frame: rule + 1, 0 none, -1 todo */
};

static uint32_t
stack_match(struct finder *f, struct frames *fm, uint32_t stack)
{
	const uint32_t *fr;
	uint32_t n, i, v = ST_NEUTRAL;
	int best = -1, r;

	if (stack >= f->s->n_stacks)
		stack = 0;
	if (fm->st[stack] != ST_TODO)
		return fm->st[stack];
	fr = snap_stack(f->s, stack, &n);
	for (i = 0; i < n; i++) {
		if (fr[i] >= f->s->n_frames ||
		    an_frame_cache_kind(&fm->fc, fr[i]) != AN_FRAME_USER)
			continue;
		if (fm->fr[fr[i]] < 0)
			fm->fr[fr[i]] = rule_match(f, AN_PH_FRAME,
			    snap_str(f->s, f->s->frames[fr[i]].name)) + 1;
		r = fm->fr[fr[i]] - 1;
		if (r >= 0 && (best < 0 || r < best))
			best = r;
		v = ST_NONE;
	}
	if (best >= 0)
		v = (uint32_t)best + ST_RULE;
	fm->st[stack] = v;
	return v;
}

/* The first of the events that allocation i caused: the segment_alloc
 * (segment_map) events just before it, from event lo on. */
static int64_t
caused_from(const struct snap_trace *t, uint64_t i, int64_t lo)
{
	int64_t j = (int64_t)i;
	unsigned a;

	while (j > lo && ((a = snap_ev_action(t, (uint64_t)j - 1)) ==
	    SNAP_SEGMENT_ALLOC || a == SNAP_SEGMENT_MAP))
		j--;
	return j;
}

/* The frame source: runs of allocations whose user frames match. */
static void
find_frames(struct finder *f)
{
	const struct snap_trace *t = f->t;
	struct frames fm;
	uint64_t i;
	int64_t first = -1, at;
	uint32_t cur = 0, m;
	const char *name;

	an_frame_cache_init(&fm.fc, f->s);
	fm.st = xcalloc((size_t)f->s->n_stacks + 1, sizeof *fm.st);
	fm.fr = xmalloc(((size_t)f->s->n_frames + 1) * sizeof *fm.fr);
	memset(fm.fr, 0xff, ((size_t)f->s->n_frames + 1) * sizeof *fm.fr);
	for (i = 0; i < t->n; i++) {
		if (sv_stop_poll(i))
			break;
		if (snap_ev_action(t, i) != SNAP_ALLOC)
			continue;
		m = stack_match(f, &fm, snap_ev_stack(t, i));
		if (m == ST_NEUTRAL || (first >= 0 && m == cur))
			continue;
		/* a run starts, or ends, with the segments the allocation
		 * that starts or ends it made */
		at = caused_from(t, i, first + 1);
		if (first >= 0) {
			name = f->rules->r[cur - ST_RULE].name;
			push_inst(f, phase_of(f, name, strlen(name),
			    AN_PH_FRAME), first, at - 1, 1);
			first = -1;
		}
		if (m >= ST_RULE) {
			first = at;
			cur = m;
		}
	}
	if (first >= 0) {
		name = f->rules->r[cur - ST_RULE].name;
		push_inst(f, phase_of(f, name, strlen(name), AN_PH_FRAME),
		    first, (int64_t)t->n - 1, 1);
	}
	free(fm.st);
	free(fm.fr);
	an_frame_cache_destroy(&fm.fc);
}

/* The longest phase name metadata may give. */
#define META_NAME_MAX 256

static int
is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

/* The phase metadata m names: the value of its key "phase" (a dict as
 * str() or JSON writes it, or phase=NAME, phase: NAME), its length (0:
 * none) and its start in *name. */
static size_t
meta_phase(const char *m, const char **name)
{
	const char *p = m, *k;
	size_t n;
	char q;

	while ((k = strstr(p, "phase")) != NULL) {
		p = k + 5;
		/* a key of its own, not "subphase" or "phases" */
		if ((k > m && is_word(k[-1])) || is_word(*p))
			continue;
		if (*p == '\'' || *p == '"') {
			if (k == m || k[-1] != *p)
				continue;
			p++;
		} else if (k > m && (k[-1] == '\'' || k[-1] == '"'))
			continue;
		while (*p == ' ')
			p++;
		if (*p != ':' && *p != '=')
			continue;
		p++;
		while (*p == ' ')
			p++;
		if (*p == '\'' || *p == '"') {
			q = *p++;
			n = strcspn(p, q == '"' ? "\"" : "'");
			if (p[n] != q)
				return 0;
		} else
			n = strcspn(p, ",;}) \t\r\n");
		*name = p;
		return n;
	}
	return 0;
}

/* The phase of an annotate event's metadata, or -1 (it names none, or no
 * rule takes it). */
static int64_t
annotate_phase(struct finder *f, const char *meta)
{
	char buf[META_NAME_MAX + 1];
	const char *name;
	size_t n;
	int r, numbered;

	if (f->rules != NULL) {
		if ((r = rule_match(f, AN_PH_ANNOTATE, meta)) < 0)
			return -1;
		return phase_of(f, f->rules->r[r].name,
		    strlen(f->rules->r[r].name), AN_PH_ANNOTATE);
	}
	n = meta_phase(meta, &name);
	if (n == 0 || n > META_NAME_MAX)
		return -1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	n = stripped_len(buf, &numbered);
	if (n == 0)
		return -1;
	return phase_of(f, buf, n, AN_PH_ANNOTATE);
}

/* An instance an annotate opened, until its allocation is freed. */
struct ann_open {
	uint32_t phase;
	int complete;		/* its alloc is in the trace */
	int closed;		/* its allocation was freed */
	int64_t first;
	uint64_t next;		/* of its address, + 1; 0: none */
};

/* The annotate source: the life of each annotated allocation. */
static void
find_annotates(struct finder *f)
{
	const struct snap_trace *t = f->t;
	struct u64map live, open;	/* address -> alloc event + 1 (0:
					   freed); -> newest instance + 1 */
	struct ann_open *op = NULL;
	size_t n_op = 0, cap_op = 0;
	uint64_t i, v, k, addr;
	int64_t ph, first;
	unsigned act;
	int dup;

	if (!(f->s->features & SNAP_F_ANNOTATE))
		return;
	u64map_init(&live);
	u64map_init(&open);
	for (i = 0; i < t->n; i++) {
		if (sv_stop_poll(i))
			break;
		act = snap_ev_action(t, i);
		if (act != SNAP_ALLOC && act != SNAP_FREE_COMPLETED &&
		    act != SNAP_ANNOTATE)
			continue;
		addr = snap_ev_addr(t, i);
		if (act == SNAP_ALLOC) {
			u64map_put(&live, addr, i + 1);
			continue;
		}
		if (act == SNAP_FREE_COMPLETED) {
			u64map_put(&live, addr, 0);
			if (!u64map_get(&open, addr, &k))
				continue;
			for (; k != 0; k = op[k - 1].next) {
				push_inst(f, op[k - 1].phase, op[k - 1].first,
				    (int64_t)i, op[k - 1].complete);
				op[k - 1].closed = 1;
			}
			u64map_del(&open, addr);
			continue;
		}
		if ((ph = annotate_phase(f, snap_str(f->s,
		    snap_ev_meta(t, i)))) < 0)
			continue;
		if (!u64map_get(&live, addr, &v)) {
			first = 0;	/* allocated before the trace */
			v = 0;
		} else if (v == 0) {
			if (f->out->n_bad++ == 0)
				snprintf(f->out->bad, sizeof f->out->bad,
				    "annotate event %" PRIu64 ": on an "
				    "allocation the trace freed; ignored", i);
			continue;
		} else
			first = caused_from(t, v - 1, 0);
		dup = 0;
		if (u64map_get(&open, addr, &k))
			for (; k != 0 && !dup; k = op[k - 1].next)
				dup = op[k - 1].phase == (uint32_t)ph;
		if (dup)
			continue;
		XGROW(op, cap_op, n_op + 1);
		op[n_op].phase = (uint32_t)ph;
		op[n_op].complete = v != 0;
		op[n_op].closed = 0;
		op[n_op].first = first;
		op[n_op].next = u64map_get(&open, addr, &k) ? k : 0;
		u64map_put(&open, addr, ++n_op);
		f->out->n_annotate++;
	}
	/* never freed: to the last event */
	for (k = 0; k < n_op; k++)
		if (!op[k].closed)
			push_inst(f, op[k].phase, op[k].first,
			    (int64_t)t->n - 1, 0);
	u64map_destroy(&live);
	u64map_destroy(&open);
	free(op);
}

/* The finders, from AN_PHASE_SOURCES. */
static const struct {
	int dflt;			/* used without rules */
	void (*find)(struct finder *);
} sources[] = {
#define AN_PHASE_SOURCE_ROW(id, name, text, dflt, fn) {dflt, fn},
	AN_PHASE_SOURCES(AN_PHASE_SOURCE_ROW)
#undef AN_PHASE_SOURCE_ROW
};

/* The distinct metadata of the annotate events of f's device. */
static uint32_t *
annotate_metas(const struct finder *f, uint32_t *n)
{
	struct u64map seen;
	uint32_t *m = NULL, id;
	size_t cap = 0;
	uint64_t i, v;

	*n = 0;
	if (!(f->s->features & SNAP_F_ANNOTATE))
		return NULL;
	u64map_init(&seen);
	for (i = 0; i < f->t->n; i++) {
		if (snap_ev_action(f->t, i) != SNAP_ANNOTATE)
			continue;
		id = snap_ev_meta(f->t, i);
		if (u64map_get(&seen, id, &v))
			continue;
		u64map_put(&seen, id, 1);
		XGROW(m, cap, (size_t)*n + 1);
		m[(*n)++] = id;
	}
	u64map_destroy(&seen);
	return m;
}

/* The source each rule uses: its own, else annotations when one of the
 * device's matches it, else annotate events when the metadata of one
 * matches it, else frames. */
static void
resolve_sources(struct finder *f)
{
	const struct snapshot *s = f->s;
	struct u64map seen;
	uint32_t i, k, *meta = NULL, n_meta = 0;
	uint64_t v;
	int metas = 0;

	u64map_init(&seen);
	for (i = 0; i < f->rules->n; i++) {
		f->src[i] = f->rules->r[i].source;
		if (f->src[i] >= 0)
			continue;
		f->src[i] = AN_PH_FRAME;
		if (!metas) {
			meta = annotate_metas(f, &n_meta);
			metas = 1;
		}
		for (k = 0; k < n_meta; k++)
			if (regexec(&f->rules->r[i].re, snap_str(s, meta[k]), 0,
			    NULL, 0) == 0) {
				f->src[i] = AN_PH_ANNOTATE;
				break;
			}
		for (k = 0; k < s->n_annotations; k++) {
			const struct snap_annotation *an = &s->annotations[k];

			if (an->device != f->d || u64map_get(&seen, an->name,
			    &v))
				continue;
			u64map_put(&seen, an->name, 1);
			if (regexec(&f->rules->r[i].re, snap_str(s, an->name),
			    0, NULL, 0) == 0) {
				f->src[i] = AN_PH_ANNOTATION;
				break;
			}
		}
		u64map_destroy(&seen);
		u64map_init(&seen);
	}
	u64map_destroy(&seen);
	free(meta);
}

static int
cmp_inst(const void *a, const void *b)
{
	const struct an_phase_inst *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	if (x->last != y->last)
		return x->last > y->last ? -1 : 1;	/* the outer first */
	return x->phase < y->phase ? -1 : x->phase > y->phase;
}

/* Instances in order; phases in the order of their first instances;
 * iterations and the phases' counts. */
static void
order(struct an_phases *out)
{
	uint32_t *map = xcalloc((size_t)out->n_phases + 1, sizeof *map);
	struct an_phase *ph = xcalloc((size_t)out->n_phases + 1, sizeof *ph);
	uint32_t n = 0;
	uint64_t i;

	if (out->n_inst > 0)
		qsort(out->inst, out->n_inst, sizeof *out->inst, cmp_inst);
	memset(map, 0xff, (size_t)out->n_phases * sizeof *map);
	for (i = 0; i < out->n_inst; i++) {
		uint32_t p = out->inst[i].phase;

		if (map[p] == UINT32_MAX) {
			map[p] = n;
			ph[n++] = out->phases[p];
		}
	}
	/* phases with no instance left (empty ranges) */
	for (i = 0; i < out->n_phases; i++)
		if (map[i] == UINT32_MAX)
			free(out->phases[i].name);
	free(out->phases);
	out->phases = ph;
	out->n_phases = n;
	for (i = 0; i < out->n_inst; i++) {
		struct an_phase_inst *p = &out->inst[i];
		struct an_phase *q;

		p->phase = map[p->phase];
		q = &out->phases[p->phase];
		p->iteration = q->n_inst++;
		q->n_complete += p->complete != 0;
		q->mean_len += (uint64_t)(p->last - p->first + 1);
	}
	for (i = 0; i < n; i++)
		out->phases[i].mean_len /= out->phases[i].n_inst;
	out->max_last = xmalloc(((size_t)out->n_inst + 1) *
	    sizeof *out->max_last);
	for (i = 0; i < out->n_inst; i++)
		out->max_last[i] = i > 0 && out->max_last[i - 1] >
		    out->inst[i].last ? out->max_last[i - 1] :
		    out->inst[i].last;
	free(map);
}

/* The step of each instance. */
static void
set_steps(struct an_phases *out, const struct an_steps *st)
{
	struct an_at at;
	uint64_t i;

	out->has_steps = 1;
	out->steps_source = st->source;
	out->n_steps = st->n;
	out->layers = st->layers;
	memset(&at, 0, sizeof at);
	for (i = 0; i < out->n_inst; i++)
		out->inst[i].step = an_step_at_gallop(st, out->inst[i].first,
		    &at);
}

int
an_phases_find(const struct snapshot *s, uint32_t d,
    const struct an_phase_rules *rules, const struct an_steps *steps,
    struct an_phases *out, struct sv_error *err)
{
	struct finder f;
	uint32_t i;
	int k, use;

	memset(out, 0, sizeof *out);
	memset(&f, 0, sizeof f);
	out->device = d;
	f.s = s;
	f.d = d;
	f.t = snap_trace_of(s, d);
	f.out = out;
	f.rules = rules != NULL && rules->n > 0 ? rules : NULL;
	out->from_rules = f.rules != NULL;
	if (f.t == NULL || f.t->n == 0)
		return 0;
	for (i = 0; i < s->n_annotations; i++)
		out->n_annotations += s->annotations[i].device == d;
	u64map_init(&f.by_name);
	if (f.rules != NULL) {
		f.src = xcalloc(f.rules->n, sizeof *f.src);
		resolve_sources(&f);
	}
	/* each source that gives phases without rules, or that a rule
	 * uses */
	for (k = 0; k < AN_PH_SOURCE_COUNT; k++) {
		use = f.rules == NULL && sources[k].dflt;
		for (i = 0; f.rules != NULL && i < f.rules->n; i++)
			use |= f.src[i] == k;
		if (use)
			sources[k].find(&f);
	}
	order(out);
	if (steps != NULL)
		set_steps(out, steps);
	free(f.src);
	u64map_destroy(&f.by_name);
	if (sv_stop_requested()) {
		an_phases_destroy(out);
		return sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET,
		    "stopped");
	}
	return 0;
}

/* ---- measuring ---------------------------------------------------------- */

/* A block an instance leaves behind (alive at its end), and one a phase
 * leaves behind across its iterations (alive at the end of its last
 * complete instance): the instance (or its phase), the ordinal of the
 * instance among its phase's complete ones, the site. */
struct rec {
	uint64_t key;		/* instance, or phase */
	uint64_t ord;
	uint32_t site, stack;
	uint64_t bytes;
};

static int
cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

struct recs {
	struct rec *r;
	size_t n, cap;
};

static void
rec_push(struct recs *rs, uint64_t key, uint64_t ord, uint32_t site,
    uint32_t stack, uint64_t bytes)
{
	XGROW(rs->r, rs->cap, rs->n + 1);
	rs->r[rs->n].key = key;
	rs->r[rs->n].ord = ord;
	rs->r[rs->n].site = site;
	rs->r[rs->n].stack = stack;
	rs->r[rs->n].bytes = bytes;
	rs->n++;
}

/* What the sweep knows of each phase: the end of its last complete
 * instance, and each instance's ordinal among the complete ones. */
struct sweep {
	const struct idx_timeline *tl;
	struct an_sites *sites;
	struct an_phases *ph;
	int64_t *end;		/* per phase, -1: no complete instance */
	uint64_t *ord;		/* per instance */
	struct recs left, grow;
	uint64_t *active;	/* instances holding the event */
	size_t n_active, cap_active;
};

/* Event i, an allocation or a free of element e, inside the active
 * instances. */
static void
sweep_elem(struct sweep *w, int64_t i, const struct idx_elem *e)
{
	uint32_t site = UINT32_MAX;
	size_t k;

	for (k = 0; k < w->n_active; k++) {
		struct an_phase_inst *p = &w->ph->inst[w->active[k]];
		int64_t end = w->end[p->phase];

		if (e->alloc_ev != i) {
			/* a free: of a block from before the instance? */
			if (e->free_ev == i && e->alloc_ev < p->first) {
				p->freed_before_count++;
				p->freed_before_bytes += e->size;
			}
			continue;
		}
		p->alloc_count++;
		p->alloc_bytes += e->size;
		if (e->free_ev >= 0 && e->free_ev <= p->last)
			continue;
		if (site == UINT32_MAX)
			site = an_site_of(w->sites, e->stack);
		p->left_count++;
		p->left_bytes += e->size;
		rec_push(&w->left, w->active[k], 0, site, e->stack, e->size);
		if (p->complete && p->last <= end &&
		    (e->free_ev < 0 || e->free_ev > end))
			rec_push(&w->grow, p->phase, w->ord[w->active[k]], site,
			    e->stack, e->size);
	}
}

/* One pass over the events the instances hold. */
static int
sweep_run(struct sweep *w, struct sv_error *err)
{
	const struct idx_timeline *tl = w->tl;
	struct an_phases *ph = w->ph;
	uint64_t next = 0, el;
	int64_t i = 0, n = (int64_t)tl->n_events;
	size_t k, j;

	while (i < n) {
		if (sv_stop_poll((uint64_t)i))
			return sv_error_set(err, SV_ERR_CANCELLED,
			    SV_NO_OFFSET, "stopped");
		if (w->n_active == 0) {
			if (next >= ph->n_inst)
				break;
			if (ph->inst[next].first > i)
				i = ph->inst[next].first;
		}
		while (next < ph->n_inst && ph->inst[next].first <= i) {
			struct an_phase_inst *p = &ph->inst[next];

			p->before_bytes = idx_tl_total(tl, p->first - 1);
			XGROW(w->active, w->cap_active, w->n_active + 1);
			w->active[w->n_active++] = next++;
		}
		{
			uint64_t t = idx_tl_total(tl, i);

			for (k = 0; k < w->n_active; k++) {
				struct an_phase_inst *p =
				    &ph->inst[w->active[k]];

				if (p->peak_ev < 0 || t > p->peak) {
					p->peak = t;
					p->peak_ev = i;
				}
			}
		}
		if ((el = idx_tl_ev_elem(tl, (uint64_t)i)) < tl->n_elems) {
			struct idx_elem e = idx_tl_elem(tl, el);

			sweep_elem(w, i, &e);
		}
		for (k = j = 0; k < w->n_active; k++) {
			struct an_phase_inst *p = &ph->inst[w->active[k]];

			if (p->last > i) {
				w->active[j++] = w->active[k];
				continue;
			}
			p->total_end = idx_tl_total(tl, i);
			p->reserved_end = idx_tl_reserved(tl, i);
		}
		w->n_active = j;
		i++;
	}
	return 0;
}

static int
cmp_site_bytes(const void *a, const void *b)
{
	const struct an_phase_site *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* Each instance's blocks left behind, by site. */
static void
gather_left(struct sweep *w)
{
	struct rec *r = w->left.r;
	size_t i = 0, j;

	if (w->left.n > 0)
		qsort(r, w->left.n, sizeof *r, cmp_rec);
	while (i < w->left.n) {
		struct an_phase_inst *p = &w->ph->inst[r[i].key];
		size_t cap = 0;

		for (j = i; j < w->left.n && r[j].key == r[i].key; ) {
			struct an_phase_site *s;
			size_t k = j;

			XGROW(p->left, cap, (size_t)p->n_left + 1);
			s = &p->left[p->n_left++];
			s->site = r[k].site;
			s->stack = r[k].stack;
			s->count = s->bytes = 0;
			for (; j < w->left.n && r[j].key == r[k].key &&
			    r[j].site == r[k].site; j++) {
				s->count++;
				s->bytes += r[j].bytes;
			}
		}
		if (p->n_left > 0)
			qsort(p->left, p->n_left, sizeof *p->left,
			    cmp_site_bytes);
		i = j;
	}
}

/* The verdict of phase p (index q): are its instances iterations? */
static int
verdict(const struct an_phases *ph, uint32_t q)
{
	const struct an_phase *p = &ph->phases[q];
	int64_t prev = -1;
	uint64_t i;

	if (p->n_complete < JUDGE_MIN)
		return AN_PH_FEW;
	if (ph->n_steps == 0)
		return ph->layers > 0 ? AN_PH_LAYERS : AN_PH_JUDGED;
	/* instances are in order: two in one step are neighbours */
	for (i = 0; i < ph->n_inst; i++) {
		const struct an_phase_inst *x = &ph->inst[i];

		if (x->phase != q || !x->complete || x->step < 0)
			continue;
		if (x->step == prev)
			return AN_PH_IN_STEP;
		prev = x->step;
	}
	return AN_PH_JUDGED;
}

static int
cmp_grow(const void *a, const void *b)
{
	const struct an_phase_grow *x = a, *y = b;

	if (x->per_iter != y->per_iter)
		return x->per_iter > y->per_iter ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/*
 * One site's blocks r[0..n) (by ordinal) of a judged phase with m
 * complete instances: does it grow? Leaving out the last instance, the
 * blocks fall into at least two instances and half of them, with at
 * most twice as many in one as in another.
 */
static int
grows(const struct rec *r, size_t n, uint64_t m, struct an_phase_grow *g)
{
	uint64_t hits = 0, lo = UINT64_MAX, hi = 0, cur = 0, bytes = 0;
	size_t i;

	memset(g, 0, sizeof *g);
	g->site = r[0].site;
	g->stack = r[0].stack;
	for (i = 0; i < n; i++) {
		g->count++;
		g->bytes += r[i].bytes;
		if (i + 1 == n || r[i + 1].ord != r[i].ord)
			g->hits++;
		if (r[i].ord + 1 >= m)
			continue;	/* the last complete instance */
		bytes += r[i].bytes;
		cur++;
		if (i + 1 < n && r[i + 1].ord == r[i].ord)
			continue;
		hits++;
		if (cur < lo)
			lo = cur;
		if (cur > hi)
			hi = cur;
		cur = 0;
	}
	if (hits < 2 || hits * 2 < m - 1 || hi > 2 * lo)
		return 0;
	g->per_iter = bytes / hits;
	return 1;
}

/* What each phase leaves behind that grows. */
static void
gather_grow(struct sweep *w)
{
	struct an_phases *ph = w->ph;
	struct rec *r = w->grow.r;
	size_t i = 0, j, cap;
	struct an_phase_grow g;

	if (w->grow.n > 0)
		qsort(r, w->grow.n, sizeof *r, cmp_rec);
	while (i < w->grow.n) {
		struct an_phase *p = &ph->phases[r[i].key];

		for (j = i; j < w->grow.n && r[j].key == r[i].key &&
		    r[j].site == r[i].site; j++)
			;
		cap = p->n_grow;
		if (p->verdict == AN_PH_JUDGED &&
		    grows(r + i, j - i, p->n_complete, &g)) {
			XGROW(p->grow, cap, (size_t)p->n_grow + 1);
			p->grow[p->n_grow++] = g;
		}
		i = j;
	}
}

/* A site growing in several phases is the innermost's: the one with the
 * shortest instances. */
static void
mark_innermost(struct an_phases *ph)
{
	uint32_t a, b;
	uint64_t i, k;

	for (a = 0; a < ph->n_phases; a++)
		for (i = 0; i < ph->phases[a].n_grow; i++) {
			struct an_phase_grow *g = &ph->phases[a].grow[i];

			g->innermost = 1;
			for (b = 0; b < ph->n_phases && g->innermost; b++) {
				const struct an_phase *q = &ph->phases[b];

				if (b == a)
					continue;
				for (k = 0; k < q->n_grow; k++)
					if (q->grow[k].site == g->site &&
					    (q->mean_len <
					    ph->phases[a].mean_len ||
					    (q->mean_len ==
					    ph->phases[a].mean_len && b > a)))
						g->innermost = 0;
			}
		}
}

int
an_phases_measure(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, const struct an_steps *steps,
    struct an_phases *ph, struct sv_error *err)
{
	struct an_steps own;
	struct sweep w;
	uint64_t *seen, i;
	uint32_t q;
	int r;

	if (!ph->has_steps) {
		memset(&own, 0, sizeof own);
		if (steps == NULL && an_steps_find(s, ph->device, &own,
		    err) != 0)
			return -1;
		set_steps(ph, steps != NULL ? steps : &own);
		an_steps_destroy(&own);
	}
	memset(&w, 0, sizeof w);
	w.tl = tl;
	w.sites = sites;
	w.ph = ph;
	w.end = xcalloc((size_t)ph->n_phases + 1, sizeof *w.end);
	w.ord = xcalloc((size_t)ph->n_inst + 1, sizeof *w.ord);
	seen = xcalloc((size_t)ph->n_phases + 1, sizeof *seen);
	for (q = 0; q < ph->n_phases; q++)
		w.end[q] = -1;
	for (i = 0; i < ph->n_inst; i++) {
		struct an_phase_inst *p = &ph->inst[i];

		if (!p->complete || p->first < 0 ||
		    (uint64_t)p->last >= tl->n_events)
			continue;
		w.ord[i] = seen[p->phase]++;
		if (p->last > w.end[p->phase])
			w.end[p->phase] = p->last;
	}
	free(seen);
	r = sweep_run(&w, err);
	if (r == 0) {
		for (i = 0; i < ph->n_inst; i++) {
			struct an_phase_inst *p = &ph->inst[i];
			struct an_phase *f = &ph->phases[p->phase];
			uint64_t el;

			if (p->peak_ev >= 0 && (el = idx_tl_ev_elem(tl,
			    (uint64_t)p->peak_ev)) < tl->n_elems) {
				struct idx_elem e = idx_tl_elem(tl, el);

				if (e.alloc_ev == p->peak_ev) {
					p->peak_site = an_site_of(sites,
					    e.stack);
					p->peak_stack = e.stack;
				}
			}
			if (p->iteration == 0 || p->peak > f->peak) {
				f->peak = p->peak;
				f->peak_inst = i;
			}
		}
		gather_left(&w);
		for (q = 0; q < ph->n_phases; q++)
			ph->phases[q].verdict = verdict(ph, q);
		gather_grow(&w);
		for (q = 0; q < ph->n_phases; q++)
			if (ph->phases[q].n_grow > 0)
				qsort(ph->phases[q].grow,
				    ph->phases[q].n_grow,
				    sizeof *ph->phases[q].grow, cmp_grow);
		mark_innermost(ph);
		ph->measured = 1;
	}
	free(w.left.r);
	free(w.grow.r);
	free(w.active);
	free(w.end);
	free(w.ord);
	return r;
}

void
an_phases_destroy(struct an_phases *ph)
{
	uint64_t i;

	for (i = 0; i < ph->n_phases; i++) {
		free(ph->phases[i].name);
		free(ph->phases[i].grow);
	}
	for (i = 0; i < ph->n_inst; i++)
		free(ph->inst[i].left);
	free(ph->phases);
	free(ph->inst);
	free(ph->max_last);
	memset(ph, 0, sizeof *ph);
}

int64_t
an_phase_inst_at(const struct an_phases *ph, int64_t ev)
{
	uint64_t lo = 0, hi = ph->n_inst, i;

	/* the last instance starting at or before ev, then back to the
	 * innermost one that holds it */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ph->inst[mid].first <= ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i > 0 && ph->max_last[i - 1] >= ev; i--)
		if (ph->inst[i - 1].last >= ev)
			return (int64_t)(i - 1);
	return -1;
}

const char *
an_phase_verdict_text(const struct an_phase *p, char *buf, size_t size)
{
	switch (p->verdict) {
	case AN_PH_FEW:
		snprintf(buf, size, "%" PRIu64 " complete instance%s, %d "
		    "are needed", p->n_complete, p->n_complete == 1 ? "" : "s",
		    JUDGE_MIN);
		break;
	case AN_PH_IN_STEP:
		snprintf(buf, size, "it repeats inside a step: its instances "
		    "are no iterations");
		break;
	case AN_PH_LAYERS:
		snprintf(buf, size, "no steps; the trace repeats inside one "
		    "call: its instances are no iterations");
		break;
	default:
		snprintf(buf, size, "%s", "");
		break;
	}
	return buf;
}
