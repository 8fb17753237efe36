#ifndef SNAPVIEW_ANALYSIS_RULEFILE_H
#define SNAPVIEW_ANALYSIS_RULEFILE_H
/*
 * The rule files a user writes (categories, phases): read whole with a
 * bound, split into lines with the checks every rule file shares (no NUL
 * byte, no line over RULE_LINE_MAX bytes), each line handed to the
 * file's own parser. Errors say "line N: reason".
 */
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define RULES_MAX_BYTES (1u << 20)
#define RULE_LINE_MAX 4096

/* Parses one line (n bytes at p, no newline) of number line (from 1). */
typedef int (*an_rule_line_fn)(void *ctx, const char *p, size_t n,
    uint32_t line, struct sv_error *err);

/* Each line of text (len bytes) to fn, in order; stops at the first
 * error (-1, err set). */
int an_rulefile_lines(const char *text, size_t len, an_rule_line_fn fn,
    void *ctx, struct sv_error *err);

/* The lines of the file at path (at most RULES_MAX_BYTES) to fn. */
int an_rulefile_load(const char *path, an_rule_line_fn fn, void *ctx,
    struct sv_error *err);

#endif
