/*
 * Unit tests of src/analysis/phases.c and of the baseline of every
 * window: phase rules (command line, file, sources, errors), instances
 * from annotation ranges (nested, numbered, unclosed, cut by the trace),
 * from annotate events (the life of each annotated allocation, the
 * metadata that names a phase) and from user frames (runs, allocations
 * with no user frame, the segments an allocation made), what an
 * instance found alive at its start and freed (a block allocated before
 * the window and freed in it, for phases and for leaks), its peak and
 * what it leaves behind, and which of what a phase leaves behind grows
 * from iteration to iteration (a leak does; outputs that grow in size,
 * a double buffer, state made once do not; a phase that repeats inside
 * a step, or has two instances, is not judged).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/category.h"
#include "analysis/leaks.h"
#include "analysis/phases.h"
#include "analysis/rulefile.h"
#include "analysis/site.h"
#include "analysis/steps.h"
#include "index/idx_timeline.h"
#include "snapshot/snap_model.h"

/* A trace being built: event i at time 10 i; a mark between the last
 * event and the next one. */
struct bld {
	struct snapshot *s;
	struct snap_trace *t;
};

static void
bld_init(struct bld *b)
{
	b->s = snap_new();
	b->t = snap_trace_get(b->s, 0);
}

static uint32_t
stack1(struct bld *b, const char *file, const char *name, uint64_t line)
{
	uint32_t f = snap_intern_frame(b->s, snap_intern_str(b->s, name,
	    strlen(name)), snap_intern_str(b->s, file, strlen(file)), line);

	return snap_intern_stack(b->s, &f, 1);
}

static int64_t
ev(struct bld *b, int action, uint64_t addr, uint64_t size, uint32_t stack)
{
	uint64_t i = snap_trace_push(b->s, b->t, action, addr, size, 0, stack);

	snap_trace_set_time(b->t, i, (int64_t)i * 10);
	return (int64_t)i;
}

static int64_t
alloc(struct bld *b, uint64_t addr, uint64_t size, uint32_t stack)
{
	return ev(b, SNAP_ALLOC, addr, size, stack);
}

static int64_t
release(struct bld *b, uint64_t addr, uint64_t size, uint32_t stack)
{
	return ev(b, SNAP_FREE_COMPLETED, addr, size, stack);
}

/* START before the next event, END after the last one. */
static void
mark(struct bld *b, const char *name, int stage)
{
	struct snap_annotation an;

	memset(&an, 0, sizeof an);
	an.name = snap_intern_str(b->s, name, strlen(name));
	an.stage = (uint8_t)stage;
	an.time_us = (int64_t)b->t->n * 10 - 5;
	snap_push_annotation(b->s, &an);
}

/* ---- rules -------------------------------------------------------------- */

START_TEST(test_rules)
{
	struct an_phase_rules rs;
	struct sv_error err;
	const char *file = "# rules\n\nupdate   frame:^update_policy$ \n"
	    "gen annotation:rollout|generate\n";

	memset(&rs, 0, sizeof rs);
	ck_assert_int_eq(an_phase_rule_add(&rs, "ref=ref_log", &err), 0);
	ck_assert_int_eq(an_phase_rules_parse(file, strlen(file), &rs, &err),
	    0);
	ck_assert_uint_eq(rs.n, 3);
	ck_assert_str_eq(rs.r[0].name, "ref");
	ck_assert_int_eq(rs.r[0].source, -1);
	ck_assert_uint_eq(rs.r[0].line, 0);
	ck_assert_str_eq(rs.r[1].name, "update");
	ck_assert_int_eq(rs.r[1].source, AN_PH_FRAME);
	ck_assert_uint_eq(rs.r[1].line, 3);
	ck_assert_int_eq(regexec(&rs.r[1].re, "update_policy", 0, NULL, 0), 0);
	ck_assert_int_ne(regexec(&rs.r[1].re, "update_policy2", 0, NULL, 0),
	    0);
	ck_assert_str_eq(rs.r[2].name, "gen");
	ck_assert_int_eq(rs.r[2].source, AN_PH_ANNOTATION);

	ck_assert_int_eq(an_phase_rule_add(&rs, "noequals", &err), -1);
	ck_assert_int_eq(err.code, SV_ERR_USAGE);
	ck_assert_int_eq(an_phase_rule_add(&rs, "=x", &err), -1);
	ck_assert_int_eq(an_phase_rule_add(&rs, "a b=x", &err), -1);
	ck_assert_int_eq(an_phase_rule_add(&rs, "a=", &err), -1);
	ck_assert_int_eq(an_phase_rule_add(&rs, "a=frame:", &err), -1);
	ck_assert_int_eq(an_phase_rule_add(&rs, "a=(", &err), -1);
	ck_assert_msg(strstr(err.msg, "bad regular expression") != NULL, "%s",
	    err.msg);
	ck_assert_int_eq(an_phase_rules_parse("x y\nlonely\n", 11, &rs, &err),
	    -1);
	ck_assert_int_eq(err.code, SV_ERR_FORMAT);
	ck_assert_str_eq(err.msg, "line 2: no regular expression for phase "
	    "'lonely'");
	/* the rule before the bad line stays */
	ck_assert_uint_eq(rs.n, 4);
	an_phase_rules_destroy(&rs);
	ck_assert_uint_eq(rs.n, 0);
}
END_TEST

/* Phase and category rule files share one reader: the same checks and
 * messages for both (a NUL byte, a long line, a file over 1 MiB, a file
 * that is not there), with the bad line's number. */
START_TEST(test_rule_files)
{
	char path[] = "/tmp/svrules.XXXXXX", *big;
	char line[RULE_LINE_MAX + 2];
	struct an_phase_rules rs;
	struct an_cat_rules cr;
	struct sv_error err;
	FILE *f;
	int fd, k;

	memset(&rs, 0, sizeof rs);
	memset(line, 'a', sizeof line);
	line[sizeof line - 1] = '=';
	for (k = 0; k < 2; k++) {
		int r = k == 0 ? an_phase_rules_parse("\nb\0y\n", 5, &rs,
		    &err) : an_cat_rules_parse("\nb\0y\n", 5, &cr, &err);

		ck_assert_int_eq(r, -1);
		ck_assert_str_eq(err.msg, "line 2: a NUL byte");
		r = k == 0 ? an_phase_rules_parse(line, sizeof line, &rs, &err)
		    : an_cat_rules_parse(line, sizeof line, &cr, &err);
		ck_assert_int_eq(r, -1);
		ck_assert_str_eq(err.msg, "line 1: longer than 4096 bytes");
	}
	an_phase_rules_destroy(&rs);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "wb");
	ck_assert_ptr_nonnull(f);
	big = calloc(RULES_MAX_BYTES + 1, 1);
	ck_assert_ptr_nonnull(big);
	memset(big, '\n', RULES_MAX_BYTES + 1);
	ck_assert_uint_eq(fwrite(big, 1, RULES_MAX_BYTES + 1, f),
	    RULES_MAX_BYTES + 1);
	fclose(f);
	free(big);
	ck_assert_int_eq(an_phase_rules_load(path, &rs, &err), -1);
	ck_assert_str_eq(err.msg, "larger than 1048576 bytes");
	ck_assert_int_eq(an_cat_rules_load(path, &cr, &err), -1);
	ck_assert_str_eq(err.msg, "larger than 1048576 bytes");
	/* one byte less: blank lines, no rules */
	ck_assert_int_eq(truncate(path, RULES_MAX_BYTES), 0);
	ck_assert_int_eq(an_phase_rules_load(path, &rs, &err), 0);
	ck_assert_uint_eq(rs.n, 0);
	ck_assert_int_eq(an_cat_rules_load(path, &cr, &err), 0);
	ck_assert_uint_eq(cr.n, 0);
	an_cat_rules_destroy(&cr);
	unlink(path);
	ck_assert_int_eq(an_phase_rules_load(path, &rs, &err), -1);
	ck_assert_int_eq(err.code, SV_ERR_IO);
	ck_assert_int_eq(an_cat_rules_load(path, &cr, &err), -1);
	ck_assert_int_eq(err.code, SV_ERR_IO);
	an_phase_rules_destroy(&rs);
}
END_TEST

/* ---- instances from annotations ----------------------------------------- */

START_TEST(test_annotation_ranges)
{
	struct bld b;
	struct an_phases ph;
	uint32_t st;
	int i;

	bld_init(&b);
	st = stack1(&b, "/home/a/train.py", "step", 1);
	/* the trace began inside "load" */
	alloc(&b, 0x1000, 10, st);
	mark(&b, "load", SNAP_STAGE_END);
	mark(&b, "outer", SNAP_STAGE_START);			/* 1 */
	alloc(&b, 0x2000, 10, st);
	mark(&b, "inner", SNAP_STAGE_START);			/* 2 */
	alloc(&b, 0x3000, 10, st);
	alloc(&b, 0x4000, 10, st);
	mark(&b, "inner", SNAP_STAGE_END);			/* ..3 */
	mark(&b, "empty", SNAP_STAGE_START);
	mark(&b, "empty", SNAP_STAGE_END);
	alloc(&b, 0x5000, 10, st);
	mark(&b, "outer", SNAP_STAGE_END);			/* ..4 */
	/* numbered, with no END: each runs to the next one's START */
	for (i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof name, "ProfilerStep#%d", i + 7);
		mark(&b, name, SNAP_STAGE_START);		/* 5, 7, 9 */
		alloc(&b, 0x6000 + (uint64_t)i * 0x100, 10, st);
		alloc(&b, 0x7000 + (uint64_t)i * 0x100, 10, st);
	}
	mark(&b, "tail", SNAP_STAGE_START);			/* 11.. */
	alloc(&b, 0x8000, 10, st);
	snap_finish(b.s);

	ck_assert_int_eq(an_phases_find(b.s, 0, NULL, NULL, &ph, NULL), 0);
	ck_assert_uint_eq(ph.n_bad, 0);
	ck_assert_uint_eq(ph.n_inst, 7);
	ck_assert_uint_eq(ph.n_phases, 5);
	/* in the order of their first instances */
	ck_assert_str_eq(ph.phases[0].name, "load");
	ck_assert_str_eq(ph.phases[1].name, "outer");
	ck_assert_str_eq(ph.phases[2].name, "inner");
	ck_assert_str_eq(ph.phases[3].name, "ProfilerStep");
	ck_assert_str_eq(ph.phases[4].name, "tail");
	ck_assert_uint_eq(ph.phases[3].n_inst, 3);
	ck_assert_uint_eq(ph.phases[3].n_complete, 0);
	/* load: cut by the start */
	ck_assert_int_eq(ph.inst[0].first, 0);
	ck_assert_int_eq(ph.inst[0].last, 0);
	ck_assert(!ph.inst[0].complete);
	/* outer before the inner one it holds */
	ck_assert_uint_eq(ph.inst[1].phase, 1);
	ck_assert_int_eq(ph.inst[1].first, 1);
	ck_assert_int_eq(ph.inst[1].last, 4);
	ck_assert(ph.inst[1].complete);
	ck_assert_uint_eq(ph.inst[2].phase, 2);
	ck_assert_int_eq(ph.inst[2].first, 2);
	ck_assert_int_eq(ph.inst[2].last, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(ph.inst[3 + i].phase, 3);
		ck_assert_uint_eq(ph.inst[3 + i].iteration, (uint64_t)i);
		ck_assert_int_eq(ph.inst[3 + i].first, 5 + 2 * i);
		/* to the next START of its own phase, else to the end */
		ck_assert_int_eq(ph.inst[3 + i].last, i < 2 ? 6 + 2 * i : 11);
	}
	ck_assert_int_eq(ph.inst[6].first, 11);
	ck_assert_int_eq(ph.inst[6].last, 11);
	ck_assert(!ph.inst[6].complete);
	/* the innermost instance at an event */
	ck_assert_int_eq(an_phase_inst_at(&ph, 3), 2);
	ck_assert_int_eq(an_phase_inst_at(&ph, 4), 1);
	ck_assert_int_eq(an_phase_inst_at(&ph, 0), 0);
	ck_assert_int_eq(an_phase_inst_at(&ph, 11), 6);
	an_phases_destroy(&ph);
	snap_free(b.s);
}
END_TEST

/* Rules on annotation names merge ranges into their phases; the first
 * rule that matches decides; a name no rule takes is no phase. */
START_TEST(test_annotation_rules)
{
	struct an_phase_rules rs;
	struct an_phases ph;
	struct bld b;
	uint32_t st;

	bld_init(&b);
	st = stack1(&b, "/home/a/train.py", "step", 1);
	mark(&b, "ref_log_prob", SNAP_STAGE_START);
	alloc(&b, 0x1000, 10, st);
	mark(&b, "ref_log_prob", SNAP_STAGE_END);
	mark(&b, "actor_log_prob", SNAP_STAGE_START);
	alloc(&b, 0x2000, 10, st);
	mark(&b, "actor_log_prob", SNAP_STAGE_END);
	mark(&b, "other", SNAP_STAGE_START);
	alloc(&b, 0x3000, 10, st);
	mark(&b, "other", SNAP_STAGE_END);
	snap_finish(b.s);
	memset(&rs, 0, sizeof rs);
	ck_assert_int_eq(an_phase_rule_add(&rs, "ref=^ref", NULL), 0);
	ck_assert_int_eq(an_phase_rule_add(&rs, "logp=_log_prob$", NULL), 0);
	ck_assert_int_eq(an_phases_find(b.s, 0, &rs, NULL, &ph, NULL), 0);
	ck_assert(ph.from_rules);
	ck_assert_uint_eq(ph.n_phases, 2);
	ck_assert_str_eq(ph.phases[0].name, "ref");
	ck_assert_str_eq(ph.phases[1].name, "logp");
	ck_assert_int_eq(ph.phases[1].source, AN_PH_ANNOTATION);
	ck_assert_uint_eq(ph.n_inst, 2);
	ck_assert_int_eq(ph.inst[1].first, 1);
	an_phases_destroy(&ph);
	an_phase_rules_destroy(&rs);
	snap_free(b.s);
}
END_TEST

/* ---- instances from user frames ----------------------------------------- */

/* ---- instances from annotate events ------------------------------------ */

/* An annotate event on addr with metadata meta. */
static int64_t
annotate(struct bld *b, uint64_t addr, const char *meta)
{
	int64_t i = ev(b, SNAP_ANNOTATE, addr, 0, 0);

	snap_trace_set_ctx(b->t, (uint64_t)i, 0, snap_intern_str(b->s, meta,
	    strlen(meta)));
	b->s->features |= SNAP_F_ANNOTATE;
	return i;
}

static const char *
inst_name(const struct an_phases *ph, uint64_t i)
{
	return ph->phases[ph->inst[i].phase].name;
}

/* The life of each annotated allocation: the metadata's forms, one
 * instance for two annotations of one phase, the segment an allocation
 * made, a block from before the trace, one never freed, one the trace
 * freed; metadata naming no phase, and rules on the metadata. */
START_TEST(test_annotate_lives)
{
	struct an_phase_rules rs;
	struct sv_error err;
	struct an_phases ph;
	struct bld b;

	bld_init(&b);
	alloc(&b, 0x1000, 100, 0);			/* 0 */
	annotate(&b, 0x1000, "{'phase': 'gen#2', 'n': 1}");
	annotate(&b, 0x1000, "{\"phase\": \"gen\"}");
	ev(&b, SNAP_SEGMENT_ALLOC, 0x2000, 4096, 0);	/* 3 */
	alloc(&b, 0x2000, 200, 0);
	annotate(&b, 0x2000, "phase=upd, step=3");	/* 5 */
	annotate(&b, 0x2000, "subphase=x phases: y");
	release(&b, 0x1000, 100, 0);			/* 7 */
	annotate(&b, 0x1000, "{'phase': 'late'}");
	annotate(&b, 0x9000, "{'phase': 'old'}");	/* 9 */
	release(&b, 0x9000, 300, 0);
	alloc(&b, 0x3000, 50, 0);			/* 11 */
	annotate(&b, 0x3000, "kv-cache");

	ck_assert_int_eq(an_phases_find(b.s, 0, NULL, NULL, &ph, &err), 0);
	ck_assert_uint_eq(ph.n_inst, 3);
	ck_assert_uint_eq(ph.n_phases, 3);
	ck_assert_uint_eq(ph.n_annotate, 3);
	ck_assert_uint_eq(ph.n_bad, 1);
	ck_assert_msg(strstr(ph.bad, "annotate event 8") != NULL, "%s",
	    ph.bad);
	/* by first event, the outer first */
	ck_assert_str_eq(inst_name(&ph, 0), "old");
	ck_assert_int_eq(ph.inst[0].first, 0);
	ck_assert_int_eq(ph.inst[0].last, 10);
	ck_assert_int_eq(ph.inst[0].complete, 0);
	ck_assert_str_eq(inst_name(&ph, 1), "gen");
	ck_assert_int_eq(ph.inst[1].first, 0);
	ck_assert_int_eq(ph.inst[1].last, 7);
	ck_assert_int_eq(ph.inst[1].complete, 1);
	ck_assert_int_eq(ph.phases[ph.inst[1].phase].source, AN_PH_ANNOTATE);
	ck_assert_str_eq(inst_name(&ph, 2), "upd");
	ck_assert_int_eq(ph.inst[2].first, 3);	/* its segment_alloc */
	ck_assert_int_eq(ph.inst[2].last, 12);
	ck_assert_int_eq(ph.inst[2].complete, 0);
	an_phases_destroy(&ph);

	/* rules match the whole metadata, with the source named or not */
	memset(&rs, 0, sizeof rs);
	ck_assert_int_eq(an_phase_rule_add(&rs, "kv=annotate:^kv-", &err), 0);
	ck_assert_int_eq(rs.r[0].source, AN_PH_ANNOTATE);
	ck_assert_int_eq(an_phase_rule_add(&rs, "u=step=3", &err), 0);
	ck_assert_int_eq(an_phases_find(b.s, 0, &rs, NULL, &ph, &err), 0);
	ck_assert_uint_eq(ph.n_inst, 2);
	ck_assert_str_eq(inst_name(&ph, 0), "u");
	ck_assert_int_eq(ph.inst[0].first, 3);
	ck_assert_str_eq(inst_name(&ph, 1), "kv");
	ck_assert_int_eq(ph.inst[1].first, 11);
	ck_assert_int_eq(ph.inst[1].last, 12);
	ck_assert_int_eq(ph.phases[ph.inst[1].phase].source, AN_PH_ANNOTATE);
	an_phases_destroy(&ph);
	an_phase_rules_destroy(&rs);
	snap_free(b.s);
}
END_TEST

START_TEST(test_frame_runs)
{
	struct an_phase_rules rs;
	struct an_phases ph;
	struct bld b;
	uint32_t gen, upd, other, cpp, f;

	bld_init(&b);
	gen = stack1(&b, "/home/a/rl.py", "generate", 10);
	upd = stack1(&b, "/home/a/rl.py", "update", 20);
	other = stack1(&b, "/home/a/rl.py", "log_metrics", 30);
	f = snap_intern_frame(b.s, snap_intern_str(b.s, "Engine::thread_main",
	    19), snap_intern_str(b.s, "??", 2), 0);
	cpp = snap_intern_stack(b.s, &f, 1);
	alloc(&b, 0x100, 8, other);				/* 0 */
	ev(&b, SNAP_SEGMENT_ALLOC, 0x10000, 1 << 20, gen);	/* 1: gen.. */
	alloc(&b, 0x10000, 100, gen);
	alloc(&b, 0x10100, 100, cpp);		/* no user frame: goes on */
	release(&b, 0x10000, 100, gen);
	alloc(&b, 0x10200, 100, gen);
	release(&b, 0x10100, 100, 0);				/* ..6 */
	ev(&b, SNAP_SEGMENT_ALLOC, 0x20000, 1 << 20, upd);	/* 7: upd.. */
	alloc(&b, 0x20000, 100, upd);
	alloc(&b, 0x20100, 100, 0);		/* an empty stack: goes on */
	alloc(&b, 0x20200, 100, upd);				/* ..10 */
	alloc(&b, 0x200, 8, other);		/* 11: ends it */
	alloc(&b, 0x20300, 100, gen);		/* 12: gen to the end */
	release(&b, 0x20300, 100, gen);
	snap_finish(b.s);
	memset(&rs, 0, sizeof rs);
	/* no annotation matches: the rule goes to the frames */
	ck_assert_int_eq(an_phase_rule_add(&rs, "gen=^generate$", NULL), 0);
	ck_assert_int_eq(an_phase_rule_add(&rs, "upd=frame:update", NULL), 0);
	ck_assert_int_eq(an_phases_find(b.s, 0, &rs, NULL, &ph, NULL), 0);
	ck_assert_uint_eq(ph.n_phases, 2);
	ck_assert_int_eq(ph.phases[0].source, AN_PH_FRAME);
	ck_assert_uint_eq(ph.n_inst, 3);
	ck_assert_int_eq(ph.inst[0].first, 1);
	ck_assert_int_eq(ph.inst[0].last, 6);
	ck_assert(ph.inst[0].complete);
	ck_assert_int_eq(ph.inst[1].first, 7);
	ck_assert_int_eq(ph.inst[1].last, 10);
	ck_assert_str_eq(ph.phases[ph.inst[1].phase].name, "upd");
	ck_assert_int_eq(ph.inst[2].first, 12);
	ck_assert_int_eq(ph.inst[2].last, 13);
	ck_assert_uint_eq(ph.inst[2].iteration, 1);
	an_phases_destroy(&ph);
	an_phase_rules_destroy(&rs);
	snap_free(b.s);
}
END_TEST

/* ---- the baseline of a window ------------------------------------------- */

/*
 * Before the window: P (1000 bytes, allocated before the trace: only its
 * free is in it), X (100) and Y (200). In the window (events 2..6): Z
 * (50) allocated and kept, X and P freed, W (10) allocated and freed.
 * After it: Y freed.
 */
static struct bld
build_window(void)
{
	struct bld b;
	uint32_t st;

	bld_init(&b);
	st = stack1(&b, "/home/a/train.py", "step", 1);
	alloc(&b, 0xa000, 100, st);				/* 0: X */
	alloc(&b, 0xb000, 200, st);				/* 1: Y */
	mark(&b, "window", SNAP_STAGE_START);
	alloc(&b, 0xc000, 50, st);				/* 2: Z */
	release(&b, 0xa000, 100, st);				/* 3: X */
	release(&b, 0xf000, 1000, st);				/* 4: P */
	alloc(&b, 0xd000, 10, st);				/* 5: W */
	release(&b, 0xd000, 10, st);				/* 6 */
	mark(&b, "window", SNAP_STAGE_END);
	release(&b, 0xb000, 200, st);				/* 7: Y */
	snap_finish(b.s);
	return b;
}

START_TEST(test_window_baseline_phase)
{
	struct bld b = build_window();
	struct idx_timeline tl;
	struct an_sites t;
	struct an_phases ph;
	const struct an_phase_inst *p;

	ck_assert_int_eq(idx_timeline_build(b.s, 0, &tl, NULL), 0);
	ck_assert_int_eq(an_sites_init(&t, b.s, 1, NULL, NULL), 0);
	ck_assert_int_eq(an_phases_find(b.s, 0, NULL, NULL, &ph, NULL), 0);
	ck_assert_int_eq(an_phases_measure(b.s, &tl, &t, NULL, &ph, NULL), 0);
	ck_assert_uint_eq(ph.n_inst, 1);
	p = &ph.inst[0];
	ck_assert_int_eq(p->first, 2);
	ck_assert_int_eq(p->last, 6);
	/* everything alive at its start, P from before the trace too */
	ck_assert_uint_eq(p->before_bytes, 1300);
	ck_assert_uint_eq(p->freed_before_count, 2);
	ck_assert_uint_eq(p->freed_before_bytes, 1100);
	/* the peak counts what was there before: right after Z */
	ck_assert_uint_eq(p->peak, 1350);
	ck_assert_int_eq(p->peak_ev, 2);
	ck_assert_uint_ne(p->peak_site, UINT32_MAX);
	ck_assert_uint_eq(p->alloc_count, 2);
	ck_assert_uint_eq(p->alloc_bytes, 60);
	ck_assert_uint_eq(p->left_count, 1);
	ck_assert_uint_eq(p->left_bytes, 50);
	ck_assert_uint_eq(p->n_left, 1);
	ck_assert_uint_eq(p->total_end, 250);
	an_phases_destroy(&ph);
	an_sites_destroy(&t);
	idx_timeline_destroy(&tl);
	snap_free(b.s);
}
END_TEST

/* The leak window of the same events: Z is the one leak; Y is alive
 * from before it; X and P, alive before it and freed in it, are neither
 * leaked nor dropped from what was alive before. */
START_TEST(test_window_baseline_leaks)
{
	struct bld b = build_window();
	struct idx_timeline tl;
	struct an_sites t;
	struct an_leaks l;

	ck_assert_int_eq(idx_timeline_build(b.s, 0, &tl, NULL), 0);
	ck_assert_int_eq(an_sites_init(&t, b.s, 1, NULL, NULL), 0);
	ck_assert_int_eq(an_leaks(b.s, &tl, &t, 2, 6, &l, NULL), 0);
	ck_assert_uint_eq(l.count, 1);
	ck_assert_uint_eq(l.bytes, 50);
	ck_assert_uint_eq(l.alive_before, 1);
	ck_assert_uint_eq(l.alive_before_bytes, 200);
	ck_assert_uint_eq(l.before_trace, 0);
	an_leaks_destroy(&l);
	/* ending before P's free: P is alive from before the window */
	ck_assert_int_eq(an_leaks(b.s, &tl, &t, 2, 3, &l, NULL), 0);
	ck_assert_uint_eq(l.count, 1);
	ck_assert_uint_eq(l.alive_before, 2);
	ck_assert_uint_eq(l.alive_before_bytes, 1200);
	an_leaks_destroy(&l);
	/* from before the trace: P counts as allocated before it */
	ck_assert_int_eq(an_leaks(b.s, &tl, &t, -1, 3, &l, NULL), 0);
	ck_assert_uint_eq(l.count, 3);
	ck_assert_uint_eq(l.before_trace, 1);
	ck_assert_uint_eq(l.alive_before, 0);
	an_leaks_destroy(&l);
	an_sites_destroy(&t);
	idx_timeline_destroy(&tl);
	snap_free(b.s);
}
END_TEST

/* ---- growth ------------------------------------------------------------- */

/*
 * n iterations of two phases, gen and upd, an Optimizer.step range in
 * upd (the steps): gen keeps one 1000-byte block every iteration (the
 * leak), an output freed in upd whose size grows every iteration, and a
 * buffer freed in the next gen; upd makes its state once. twice: gen
 * runs twice in each iteration.
 */
static struct bld
build_iters(int n, int twice)
{
	struct bld b;
	uint32_t sl, so, sd, ss, st;
	int k, r;

	bld_init(&b);
	sl = stack1(&b, "/home/a/rl.py", "keep_stats", 10);
	so = stack1(&b, "/home/a/rl.py", "outputs", 20);
	sd = stack1(&b, "/home/a/rl.py", "buffer", 30);
	ss = stack1(&b, "/home/a/rl.py", "state", 40);
	st = stack1(&b, "/home/a/rl.py", "temp", 50);
	for (k = 0; k < n; k++) {
		uint64_t base = 0x100000 * (uint64_t)(k + 1);

		for (r = 0; r < 1 + twice; r++) {
			uint64_t at = base + 0x10000 * (uint64_t)r;

			mark(&b, "gen", SNAP_STAGE_START);
			alloc(&b, at, 4096, st);
			release(&b, at, 4096, st);
			alloc(&b, at + 0x1000, 100 * (uint64_t)(k + 1), so);
			alloc(&b, at + 0x2000, 1000, sl);
			alloc(&b, at + 0x3000, 5000, sd);
			if (k > 0 || r > 0)
				release(&b, r > 0 ? base + 0x3000 :
				    base - 0x100000 + 0x10000 * (uint64_t)twice
				    + 0x3000, 5000, sd);
			mark(&b, "gen", SNAP_STAGE_END);
		}
		mark(&b, "upd", SNAP_STAGE_START);
		if (k == 0)
			alloc(&b, 0x10, 7777, ss);
		mark(&b, "Optimizer.step#SGD.step", SNAP_STAGE_START);
		alloc(&b, base + 0x9000, 64, st);
		release(&b, base + 0x9000, 64, st);
		mark(&b, "Optimizer.step#SGD.step", SNAP_STAGE_END);
		for (r = 0; r < 1 + twice; r++)
			release(&b, base + 0x10000 * (uint64_t)r + 0x1000,
			    100 * (uint64_t)(k + 1), so);
		mark(&b, "upd", SNAP_STAGE_END);
	}
	snap_finish(b.s);
	return b;
}

static void
measure(struct bld *b, struct idx_timeline *tl, struct an_sites *t,
    struct an_phases *ph)
{
	ck_assert_int_eq(idx_timeline_build(b->s, 0, tl, NULL), 0);
	ck_assert_int_eq(an_sites_init(t, b->s, 1, NULL, NULL), 0);
	ck_assert_int_eq(an_phases_find(b->s, 0, NULL, NULL, ph, NULL), 0);
	ck_assert_int_eq(an_phases_measure(b->s, tl, t, NULL, ph, NULL), 0);
}

static void
done(struct bld *b, struct idx_timeline *tl, struct an_sites *t,
    struct an_phases *ph)
{
	an_phases_destroy(ph);
	an_sites_destroy(t);
	idx_timeline_destroy(tl);
	snap_free(b->s);
}

START_TEST(test_grow_leak_only)
{
	struct bld b = build_iters(6, 0);
	struct idx_timeline tl;
	struct an_sites t;
	struct an_phases ph;
	const struct an_phase *gen, *upd;
	char buf[256];
	uint64_t i;

	measure(&b, &tl, &t, &ph);
	ck_assert_int_eq(ph.steps_source, AN_STEPS_OPTIMIZER);
	ck_assert_uint_eq(ph.n_steps, 6);
	ck_assert_uint_eq(ph.n_phases, 3);
	gen = &ph.phases[0];
	upd = &ph.phases[1];
	ck_assert_str_eq(gen->name, "gen");
	ck_assert_str_eq(upd->name, "upd");
	ck_assert_str_eq(ph.phases[2].name, "Optimizer.step#SGD.step");
	ck_assert_int_eq(gen->verdict, AN_PH_JUDGED);
	ck_assert_int_eq(upd->verdict, AN_PH_JUDGED);
	ck_assert_uint_eq(gen->n_grow, 1);
	ck_assert_str_eq(an_site_label(&t, gen->grow[0].site, buf,
	    sizeof buf), "/home/a/rl.py:10 keep_stats");
	ck_assert_uint_eq(gen->grow[0].per_iter, 1000);
	ck_assert_uint_eq(gen->grow[0].hits, 6);
	ck_assert_uint_eq(gen->grow[0].count, 6);
	ck_assert_uint_eq(gen->grow[0].bytes, 6000);
	ck_assert(gen->grow[0].innermost);
	ck_assert_uint_eq(upd->n_grow, 0);
	ck_assert_uint_eq(ph.phases[2].n_grow, 0);
	/* each gen leaves its output, the leak and its buffer behind */
	for (i = 0; i < ph.n_inst; i++) {
		const struct an_phase_inst *p = &ph.inst[i];

		if (p->phase != 0)
			continue;
		ck_assert_uint_eq(p->n_left, 3);
		ck_assert_uint_eq(p->left_bytes, 6000 + 100 * (p->iteration +
		    1));
		ck_assert_uint_eq(p->freed_before_count, p->iteration > 0);
	}
	done(&b, &tl, &t, &ph);
}
END_TEST

START_TEST(test_grow_not_judged)
{
	struct bld b = build_iters(2, 0);
	struct idx_timeline tl;
	struct an_sites t;
	struct an_phases ph;
	char why[160];

	measure(&b, &tl, &t, &ph);
	ck_assert_int_eq(ph.phases[0].verdict, AN_PH_FEW);
	ck_assert_uint_eq(ph.phases[0].n_grow, 0);
	ck_assert_str_eq(an_phase_verdict_text(&ph.phases[0], why,
	    sizeof why), "2 complete instances, 3 are needed");
	done(&b, &tl, &t, &ph);

	/* twice a step: no iterations, whatever it leaves */
	b = build_iters(5, 1);
	measure(&b, &tl, &t, &ph);
	ck_assert_uint_eq(ph.phases[0].n_inst, 10);
	ck_assert_int_eq(ph.phases[0].verdict, AN_PH_IN_STEP);
	ck_assert_uint_eq(ph.phases[0].n_grow, 0);
	ck_assert_int_eq(ph.phases[1].verdict, AN_PH_JUDGED);
	done(&b, &tl, &t, &ph);
}
END_TEST

/* A leak in a phase nested in another is the inner one's. */
START_TEST(test_grow_innermost)
{
	struct bld b;
	struct idx_timeline tl;
	struct an_sites t;
	struct an_phases ph;
	uint32_t sl, st;
	uint64_t q;
	int k;

	bld_init(&b);
	sl = stack1(&b, "/home/a/rl.py", "keep_stats", 10);
	st = stack1(&b, "/home/a/rl.py", "temp", 50);
	for (k = 0; k < 4; k++) {
		char name[32];

		snprintf(name, sizeof name, "ProfilerStep#%d", k);
		mark(&b, name, SNAP_STAGE_START);
		alloc(&b, 0x1000, 64, st);
		release(&b, 0x1000, 64, st);
		mark(&b, "logp", SNAP_STAGE_START);
		alloc(&b, 0x10000 + (uint64_t)k * 0x1000, 1000, sl);
		mark(&b, "logp", SNAP_STAGE_END);
		alloc(&b, 0x2000, 64, st);
		release(&b, 0x2000, 64, st);
		mark(&b, name, SNAP_STAGE_END);
	}
	snap_finish(b.s);
	measure(&b, &tl, &t, &ph);
	ck_assert_uint_eq(ph.n_phases, 2);
	for (q = 0; q < 2; q++) {
		ck_assert_uint_eq(ph.phases[q].n_grow, 1);
		ck_assert_uint_eq(ph.phases[q].grow[0].per_iter, 1000);
		ck_assert_int_eq(ph.phases[q].grow[0].innermost,
		    strcmp(ph.phases[q].name, "logp") == 0);
	}
	done(&b, &tl, &t, &ph);
}
END_TEST

static Suite *
phases_suite(void)
{
	Suite *s = suite_create("phases");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_rules);
	tcase_add_test(tc, test_rule_files);
	tcase_add_test(tc, test_annotation_ranges);
	tcase_add_test(tc, test_annotation_rules);
	tcase_add_test(tc, test_annotate_lives);
	tcase_add_test(tc, test_frame_runs);
	tcase_add_test(tc, test_window_baseline_phase);
	tcase_add_test(tc, test_window_baseline_leaks);
	tcase_add_test(tc, test_grow_leak_only);
	tcase_add_test(tc, test_grow_not_judged);
	tcase_add_test(tc, test_grow_innermost);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(phases_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
