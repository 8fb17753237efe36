#ifndef SNAPVIEW_ANALYSIS_PHASES_H
#define SNAPVIEW_ANALYSIS_PHASES_H
/*
 * Phases: named stretches of one device's trace (the rollout, the
 * reference pass, the update of an RL iteration), each instance an event
 * range, and what each leaves behind.
 *
 * Sources, one row each of AN_PHASE_SOURCES (a new one, such as a trace
 * action that names phases, is one more row, with its finder in
 * phases.c, and a rule can name it as its source):
 *   annotation  record_function ranges of external_annotations
 *               (ProfilerStep#N, Optimizer.step#..., the program's own):
 *               a START and the END of the same name, innermost first.
 *               The phase is the name without a trailing "#N" (every
 *               ProfilerStep#N is an instance of ProfilerStep). A START
 *               maps to the first event at or after its time, an END to
 *               the last event at or before it (as steps.h maps them); a
 *               range with no END runs to the next START of its phase
 *               when its name ends in "#N", else to the last event, and
 *               an END with no START, the first of its name, began
 *               before the trace: both are incomplete. A range that
 *               holds no event is no instance. Without time_us there
 *               are none.
 *   annotate    annotate events (PyTorch 2.14: _annotate_tensor(),
 *               _annotate_memory()): an instance is the life of the
 *               annotated allocation, from its alloc (with the segment
 *               events it caused just before it) to the free_completed
 *               of its address; one whose alloc came before the trace
 *               starts at the first event, one never freed runs to the
 *               last: both are incomplete. Without rules, only metadata
 *               naming a phase makes one: the value of a key "phase"
 *               ({'phase': 'rollout'}, {"phase": "rollout"},
 *               phase=rollout), without a trailing "#N"; with rules, the
 *               whole metadata is matched. Several annotations of one
 *               phase on one allocation are one instance. An annotate
 *               on an address whose allocation the trace has freed is
 *               ignored (counted in n_bad).
 *   frame       the functions of the user frames (frame.h) of each
 *               allocation's stack, against the rules of this source:
 *               an instance is a maximal run of events from an
 *               allocation whose user frames match a rule to the event
 *               before the next allocation whose user frames match no
 *               rule, or another rule's phase (or to the last event). An
 *               allocation with no user frame (the autograd engine's
 *               thread) neither starts nor ends a run. Complete.
 *
 * Without rules, every annotation range is an instance. A user rule
 * (--phase NAME=REGEX, or a file of lines NAME REGEX) names phase NAME;
 * with rules, only theirs are phases. The regex (POSIX extended) may
 * start with a source's name and a colon ("annotation:^gen",
 * "annotate:kv", "frame:generate") to pick that source; else it matches
 * annotation names, else (when no annotation of the device matches it)
 * the metadata of annotate events, else (when none matches either) the
 * functions of user frames. The first rule (command line first, then the file,
 * in order) that matches decides.
 *
 * For each instance (an_phases_measure), from the device's timeline:
 *   - before: the bytes live at its start, whatever allocated them (the
 *     Active Memory Timeline total after the event before its first,
 *     blocks from before the trace included), and of those the blocks
 *     freed inside it: a window's live set starts from everything
 *     before it, never from empty;
 *   - its peak: the highest total after any of its events, the first
 *     event reaching it and the call site of the allocation made there;
 *   - what it allocates, and what of that is still alive at its end,
 *     by call site (what it leaves behind);
 *   - the allocated (total) and reserved bytes after its last event.
 * Instances nest (an Optimizer.step range inside the update): each is
 * measured on its own.
 *
 * For each phase, what it leaves behind that grows iteration after
 * iteration, judged as leaks.h judges steps: the blocks its complete
 * instances allocate that are still alive at the end of its last
 * complete instance, by call site and by the instance that allocated
 * them. A site grows when, leaving out the last complete instance (whose
 * outputs had no time to be consumed), its blocks fall into at least two
 * instances and at least half of them, about as many blocks in each (at
 * most twice as many in one as in another); its bytes per iteration are
 * those blocks' bytes over those instances. So a buffer kept one
 * iteration and freed the next, a state made once, or outputs whose size
 * varies from iteration to iteration never grow. A phase is judged only
 * with at least three complete instances that are iterations of the
 * program: with steps (steps.h) no two in one step; without steps, not
 * when the trace repeats inside one call (a loop over layers). A site
 * that grows in phases nested in each other is marked innermost in the
 * phase whose instances are shortest on average.
 */
#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/site.h"
#include "analysis/steps.h"
#include "index/idx_timeline.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

/* X-macro: id, name (rules, JSON), text, whether it gives phases without
 * rules, and its finder (phases.c: it adds the instances it finds, of
 * the rules that use it, or of its own names without rules). */
#define AN_PHASE_SOURCES(_)                                                    \
	_(AN_PH_ANNOTATION, "annotation", "record_function ranges", 1,         \
	    find_annotations)                                                  \
	_(AN_PH_ANNOTATE, "annotate", "annotate events", 1, find_annotates)    \
	_(AN_PH_FRAME, "frame", "user frames", 0, find_frames)

enum an_phase_source {
#define AN_PHASE_SOURCE_ENUM(id, name, text, dflt, fn) id,
	AN_PHASE_SOURCES(AN_PHASE_SOURCE_ENUM)
#undef AN_PHASE_SOURCE_ENUM
	AN_PH_SOURCE_COUNT
};

/* "annotation", ...; "annotation" for a value out of range. */
const char *an_phase_source_name(int source);
const char *an_phase_source_text(int source);

/* ---- user rules --------------------------------------------------------- */

#define AN_PHASE_RULES_MAX 1024
#define AN_PHASE_NAME_MAX 64	/* bytes of a rule's phase name */

struct an_phase_rule {
	char *name;		/* the phase, owned */
	int source;		/* enum an_phase_source, -1: either */
	uint32_t line;		/* of its file, 0: the command line */
	regex_t re;
};

struct an_phase_rules {
	struct an_phase_rule *r;
	uint32_t n;
};

/* Appends the rule of spec, "NAME=REGEX" (--phase). Returns 0, or -1
 * with err (SV_ERR_USAGE) saying what is wrong. */
int an_phase_rule_add(struct an_phase_rules *rs, const char *spec,
    struct sv_error *err);
/* Appends the rules of text (len bytes, need not be NUL-terminated):
 * lines "NAME REGEX"; blank lines and lines starting with '#' are
 * skipped. On a bad line returns -1 with err "line N: reason"
 * (SV_ERR_FORMAT); the rules appended before it stay. */
int an_phase_rules_parse(const char *text, size_t len,
    struct an_phase_rules *rs, struct sv_error *err);
/* Reads and parses the file at path (at most 1 MiB). */
int an_phase_rules_load(const char *path, struct an_phase_rules *rs,
    struct sv_error *err);
void an_phase_rules_destroy(struct an_phase_rules *rs);

/* ---- the phases of a device --------------------------------------------- */

struct an_phase_site {
	uint32_t site;
	uint32_t stack;		/* of its first block */
	uint64_t count, bytes;
};

struct an_phase_inst {
	uint32_t phase;		/* index into an_phases.phases */
	uint64_t iteration;	/* among its phase's instances, from 0 */
	int64_t step;		/* the step holding its first event, -1 */
	int64_t first, last;	/* events, inclusive */
	int complete;		/* both ends in the trace */
	/* an_phases_measure: */
	uint64_t before_bytes;	/* live at its start */
	uint64_t freed_before_count, freed_before_bytes; /* of those, freed
							   in it */
	uint64_t peak;
	int64_t peak_ev;
	uint32_t peak_site;	/* of the allocation at peak_ev, or
				   UINT32_MAX when no allocation is there */
	uint32_t peak_stack;	/* its stack, 0 */
	uint64_t alloc_count, alloc_bytes;
	uint64_t left_count, left_bytes; /* allocated in it, alive at its
					    end */
	struct an_phase_site *left;	 /* by bytes, the most first */
	uint64_t n_left;
	uint64_t total_end, reserved_end; /* after its last event */
};

/* A site whose blocks grow with the phase's iterations. */
struct an_phase_grow {
	uint32_t site;
	uint32_t stack;		/* of its first block */
	uint64_t count, bytes;	/* alive at the end of the last complete
				   instance */
	uint64_t hits;		/* instances that left them */
	uint64_t per_iter;	/* bytes per iteration (the last complete
				   instance left out) */
	int innermost;		/* grows in no phase nested in this one */
};

enum an_phase_verdict {
	AN_PH_JUDGED,
	AN_PH_FEW,		/* fewer than 3 complete instances */
	AN_PH_IN_STEP,		/* two in one step: a loop inside a step */
	AN_PH_LAYERS		/* no steps; the trace repeats inside one
				   call */
};

struct an_phase {
	char *name;		/* owned; untrusted text: escape it */
	int source;		/* enum an_phase_source */
	uint64_t n_inst, n_complete;
	int verdict;		/* enum an_phase_verdict (measured) */
	uint64_t peak;		/* the highest of its instances' */
	uint64_t peak_inst;	/* index into an_phases.inst */
	uint64_t mean_len;	/* events per instance */
	struct an_phase_grow *grow; /* growing sites, per_iter, most first */
	uint64_t n_grow;
};

struct an_phases {
	uint32_t device;
	int from_rules;		/* phases come from user rules */
	int has_steps;		/* the fields below and the instances'
				   steps are set */
	int steps_source;	/* enum an_steps_source */
	uint64_t n_steps;
	uint64_t layers;	/* an_steps.layers */
	struct an_phase *phases; /* in the order of their first instances */
	uint32_t n_phases;
	struct an_phase_inst *inst; /* by first event, an outer one first */
	uint64_t n_inst;
	int64_t *max_last;	/* per instance: the latest last event of
				   the instances up to it */
	int measured;
	uint64_t n_annotations;	/* of this device */
	uint64_t n_annotate;	/* its annotate events that gave an
				   instance */
	int no_time;		/* annotations, but no time_us */
	uint64_t n_bad;		/* malformed annotations, ignored */
	char bad[200];		/* the first, described */
};

/* Finds the phase instances of device d of s: with rules (may be NULL)
 * theirs, else every annotation range. steps (steps.h) may be NULL: the
 * instances' steps are then left to an_phases_measure, so that finding
 * them costs no search for steps. Returns 0 (out->n_inst may be 0), or
 * -1 with err (SV_ERR_CANCELLED when this thread was asked to stop,
 * util/stop.h), out empty. */
int an_phases_find(const struct snapshot *s, uint32_t d,
    const struct an_phase_rules *rules, const struct an_steps *steps,
    struct an_phases *out, struct sv_error *err);
/* Measures the instances of ph against tl (the timeline of ph's device)
 * and judges what each phase leaves behind: one pass over the events the
 * instances hold, O(events x nesting) plus the sort of what they leave
 * behind. steps: those of an_phases_find, else these, else found here.
 * Returns 0, or -1 with err (cancelled). */
int an_phases_measure(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, const struct an_steps *steps,
    struct an_phases *ph, struct sv_error *err);
void an_phases_destroy(struct an_phases *ph);

/* The innermost instance holding event ev (the one that starts last), or
 * -1. */
int64_t an_phase_inst_at(const struct an_phases *ph, int64_t ev);

/* Why a phase was not judged, one clause ("2 complete instances, 3 are
 * needed"); "" when it was. */
const char *an_phase_verdict_text(const struct an_phase *p, char *buf,
    size_t size);

#endif
