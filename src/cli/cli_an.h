#ifndef SNAPVIEW_CLI_CLI_AN_H
#define SNAPVIEW_CLI_CLI_AN_H
/*
 * Shared output helpers of the analysis commands (leaks, frag, oom, top,
 * diff): which devices to report, and call sites as text (escaped) and
 * as JSON objects.
 */
#include <stdint.h>
#include <stdio.h>

#include "analysis/category.h"
#include "analysis/frag.h"
#include "analysis/site.h"
#include "analysis/steps.h"
#include "cli/cli.h"
#include "index/idx_timeline.h"
#include "util/json.h"

/* Opens o->file, resolves --device into *only and builds the call-site
 * table from site_opts (--frames, --site-regex). Returns 0, or the exit
 * status with everything closed and the reason printed. */
int cli_an_open(const struct cli_opts *o, const struct cli_opts *site_opts,
    struct cli_input *in, struct an_sites *sites, int64_t *only);

/* Rows to print: cli_limit(), 10 in text by default. */
uint64_t cli_an_limit(const struct cli_opts *o);
/* Opens the per-device report {"file": FILE, "devices": [ ... and closes
 * it again: every analysis command's JSON has this shape. */
void cli_an_json_begin(struct json *j, const char *file);
void cli_an_json_end(struct json *j);

/* Devices to report: --device if given, else every device with a trace
 * event or a segment. Returns 1 when d is to be reported. */
int cli_an_want_device(const struct snapshot *s, int64_t only, uint32_t d);

/* What an analysis command's report gets for one device. */
struct cli_an_dev {
	uint32_t device;
	const struct idx_timeline *tl;
	struct replay *replay;	/* NULL unless the command asked for one */
	int first;		/* 1 for the first device reported */
	const struct cli_input *in; /* for a replay asked for later */
};

/* The line of a leak or step answer on a device whose ring buffer
 * overflowed (snap_ring_overflowed()). */
#define CLI_RING_LOST "the trace lost its start (ring buffer overflowed): " \
	"leaks are judged on what remains"

/* Where a report stands, into buf: "after event #AT", or for a device
 * whose trace is empty (a snapshot dumped without traces) "at the end
 * (no trace in this file: its segments only)". Returns buf. */
const char *cli_an_at(char *buf, size_t size, const struct cli_an_dev *dev,
    int64_t at);

/* Calls report(ctx, dev, err) for each device to report (see
 * cli_an_want_device), with its timeline and, when with_replay, a replay
 * of it; frees both afterwards. A report returns 0, or nonzero with err
 * set. Stops at the first failure. Returns 0, or the exit status with the
 * reason printed. */
int cli_an_each_device(const struct cli_opts *o, struct cli_input *in,
    int64_t only, int with_replay,
    int (*report)(void *ctx, const struct cli_an_dev *dev,
	struct sv_error *err),
    void *ctx);

/* What the report of every analysis command shares. */
struct cli_an_run {
	const struct cli_opts *o;
	const struct snapshot *snap;
	struct an_sites *sites;
	struct an_cat_rules rules;	/* --categories (with CLI_AN_RULES) */
	struct json j;			/* the report, with --json */
	uint64_t limit;			/* cli_an_limit() */
};

#define CLI_AN_REPLAY 0x1	/* each device's report gets a replay */
#define CLI_AN_RULES 0x2	/* --categories is read */

/* The body of an analysis command: opens o->file with the call sites of
 * site_opts (cli_an_open) and, with CLI_AN_RULES, the rules of
 * --categories; fills *run; opens the JSON report; calls report(ctx,
 * dev, err) for each device (cli_an_each_device; ctx is the command's
 * own state, which holds run); closes the report and everything opened.
 * Returns 0 or the exit status. */
int cli_an_run(const struct cli_opts *o, const struct cli_opts *site_opts,
    unsigned flags, struct cli_an_run *run,
    int (*report)(void *ctx, const struct cli_an_dev *dev,
	struct sv_error *err),
    void *ctx);

/* Keys of category c inside the current object: "category" (its
 * name), "bytes", "count". */
void cli_an_category_json(struct json *j, unsigned c, uint64_t bytes,
    uint64_t count);

/* Ranks the categories with blocks (count[c] > 0) by bytes, largest
 * first, into order (AN_CAT_COUNT entries); returns how many. */
unsigned cli_an_rank_categories(const uint64_t *bytes,
    const uint64_t *count, unsigned *order);

/* Resolves --device for an analysis command: -1 = all devices with data;
 * -2 = error already printed (exit with CLI_EXIT_USAGE). */
int64_t cli_an_only(const struct cli_opts *o, const struct snapshot *s);

/* Sets up the site table from --frames/--site-regex; prints and returns
 * the exit status on a bad regex. */
int cli_an_sites(const struct cli_opts *o, const struct snapshot *s,
    struct an_sites *t, uint32_t default_k);

/* Timeline of device d: the index's (borrowed) when the input came
 * through one, else built into *own. NULL with err set on failure. own is
 * always initialised: call idx_timeline_destroy(own) afterwards. */
const struct idx_timeline *cli_an_timeline(const struct cli_input *in,
    uint32_t d, struct idx_timeline *own, struct sv_error *err);

/* Writes the escaped label of frame f / of site id. */
void cli_an_frame_text(FILE *f, const struct snapshot *s, uint32_t frame);
void cli_an_site_text(FILE *f, const struct an_sites *t, uint32_t site);

/* The label of a site of live or leaked blocks (an_top_node,
 * an_leak_site) and, for blocks allocated before the trace and freed in
 * it (free_stack: named by the stack of their free), a mark saying so. */
void cli_an_blocks_site_text(FILE *f, const struct an_sites *t,
    uint32_t site, int free_stack);

/* JSON of one frame: {"filename","line","name"} (line null if unknown). */
void cli_an_frame_json(struct json *j, const struct snapshot *s,
    uint32_t frame);
/* Keys of a site inside the current object: "site" (label), "filename",
 * "line", "name", "frames" [the K frames of the site], "caller" (the next
 * user frame of stack, or null; omitted when stack is UINT32_MAX). */
void cli_an_site_json(struct json *j, struct an_sites *t, uint32_t site,
    uint32_t stack);
/* The same for a site of live or leaked blocks, with "free_stack": true
 * when they were allocated before the trace and are named by the stack
 * of their free. */
void cli_an_blocks_site_json(struct json *j, struct an_sites *t,
    uint32_t site, uint32_t stack, int free_stack);

/* The free memory of each (pool, stream) (frag.h), one line each after
 * indent, and as the JSON array "pool_streams" under key. */
void cli_an_pool_streams_text(const struct an_pool_stream *g, uint32_t n,
    const char *indent);
void cli_an_pool_streams_json(struct json *j, const char *key,
    const struct an_pool_stream *g, uint32_t n);

/* A request's isolation: the value of key (an object, or null when it
 * is not isolated), and the text line after indent (nothing when it is
 * not). */
void cli_an_isolation_json(struct json *j, const char *key,
    const struct an_isolation *iso);
void cli_an_isolation_text(const struct an_isolation *iso,
    const char *indent);

/* Loads --categories FILE into *rules (no rules without the option).
 * Returns 0, or the exit status with `snapview: FILE: line N: reason`
 * printed. */
int cli_an_rules(const struct cli_opts *o, struct an_cat_rules *rules);

/* Steps and categories of one device (free both with
 * cli_an_classes_destroy); prints one warning line for malformed
 * annotations. Returns 0, or -1 with err set. */
struct cli_an_classes {
	struct an_steps steps;
	struct an_categories cats;
};
int cli_an_classes(const struct cli_opts *o, const struct snapshot *s,
    const struct idx_timeline *tl, const struct an_cat_rules *rules,
    struct cli_an_classes *out, struct sv_error *err);
void cli_an_classes_destroy(struct cli_an_classes *c);

/* "N steps (SOURCE)" for text. */
const char *cli_an_steps_text(const struct an_steps *st, char *buf,
    size_t size);

/* Caller frame of stack (the user frame after its site), or UINT32_MAX. */
uint32_t cli_an_caller(struct an_sites *t, uint32_t stack);

#endif
