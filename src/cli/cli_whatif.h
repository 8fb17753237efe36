#ifndef SNAPVIEW_CLI_CLI_WHATIF_H
#define SNAPVIEW_CLI_CLI_WHATIF_H
/*
 * The simulation's verdicts as snapview oom and frag print them (the
 * analysis is analysis/whatif.h; the printers live in cmd_whatif.c).
 */
#include <stdint.h>

#include "analysis/frag.h"
#include "analysis/whatif.h"
#include "util/json.h"

/* oom: "  verdict:       ..." for the OOM at event ev, when v holds one. */
void cli_whatif_oom_text(const struct an_whatif_oom_verdict *v, uint64_t n,
    int64_t ev);
/* oom --json: "verdicts": [{"event", "verdict", "text", ...}] in the
 * device's object. */
void cli_whatif_oom_json(struct json *j, const struct an_whatif_oom_verdict *v,
    uint64_t n);

/* frag: runs the simulation for device d (expandable segments, and the
 * max_split_size_mb the hints would name: the largest request that made
 * a segment, at least 20 MiB) and prints its section, or in JSON the
 * "whatif" key of the device's object. 0, or -1 with err set. */
int cli_whatif_frag(const struct snapshot *s, uint32_t d, struct replay *r,
    const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_frag *f, struct json *j, struct sv_error *err);

#endif
