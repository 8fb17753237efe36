#ifndef SNAPVIEW_CLI_CLI_BUDGET_H
#define SNAPVIEW_CLI_CLI_BUDGET_H
/*
 * check's budgets (--max-peak, --max-reserved, --max-growth-per-step,
 * --max-frag; analysis/budget.h): the options read, and each device's
 * verdicts printed as text (one line per budget) or as the JSON
 * "budgets" array (doc/json-schema.md).
 */
#include <stdint.h>

#include "analysis/budget.h"
#include "cli/cli.h"
#include "util/json.h"

/* Fills lim from o->max[]. Returns 0 (no budget set is fine), or -1 with
 * the reason printed. */
int cli_budget_parse(const struct cli_opts *o, struct an_budget_limits *lim);

/* Judges and prints the budgets of device d: text lines on stdout, or
 * the key "budgets" in the current JSON object j. *broken is set when
 * one is broken. Returns 0, or -1 with err set. */
int cli_budget_device(const struct cli_input *in, uint32_t d,
    struct replay *r, const struct an_budget_limits *lim, struct json *j,
    int *broken, struct sv_error *err);

#endif
