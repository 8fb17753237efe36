/*
 * Rule files (rulefile.h): one bounded read and one line splitter for
 * every kind of rules.
 */
#include "config.h"

#include "analysis/rulefile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

int
an_rulefile_lines(const char *text, size_t len, an_rule_line_fn fn,
    void *ctx, struct sv_error *err)
{
	size_t pos = 0;
	uint32_t line = 0;

	while (pos < len) {
		const char *p = text + pos, *nl;
		size_t n;

		line++;
		nl = memchr(p, '\n', len - pos);
		n = nl != NULL ? (size_t)(nl - p) : len - pos;
		pos += n + (nl != NULL);
		if (memchr(p, '\0', n) != NULL)
			return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
			    "line %u: a NUL byte", line);
		if (n > RULE_LINE_MAX)
			return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
			    "line %u: longer than %u bytes", line,
			    RULE_LINE_MAX);
		if (fn(ctx, p, n, line, err) != 0)
			return -1;
	}
	return 0;
}

int
an_rulefile_load(const char *path, an_rule_line_fn fn, void *ctx,
    struct sv_error *err)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;
	int r;

	if (f == NULL)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	buf = xmalloc(RULES_MAX_BYTES + 1);
	n = fread(buf, 1, RULES_MAX_BYTES + 1, f);
	if (ferror(f))
		r = sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "cannot read: %s", strerror(errno));
	else if (n > RULES_MAX_BYTES)
		r = sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "larger than %u bytes", RULES_MAX_BYTES);
	else
		r = an_rulefile_lines(buf, n, fn, ctx, err);
	free(buf);
	fclose(f);
	return r;
}
