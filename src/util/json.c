/*
 * Streaming JSON writer.
 */
#include "config.h"

#include "util/json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "util/escape.h"

void
json_init(struct json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof *j);
	j->f = f;
	j->pretty = pretty;
}

static void
indent(struct json *j)
{
	int i;

	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Separator before a value or a key. */
static void
before(struct json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth > 0 && j->count[j->depth]++ > 0)
		fputc(',', j->f);
	if (j->depth > 0)
		indent(j);
}

static void
json_open_bracket(struct json *j, int c)
{
	before(j);
	fputc(c, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->count[j->depth] = 0;
}

static void
json_close_bracket(struct json *j, int c)
{
	int had = j->count[j->depth] > 0;

	if (j->depth > 0)
		j->depth--;
	if (had)
		indent(j);
	fputc(c, j->f);
}

void json_obj_begin(struct json *j) { json_open_bracket(j, '{'); }
void json_obj_end(struct json *j) { json_close_bracket(j, '}'); }
void json_arr_begin(struct json *j) { json_open_bracket(j, '['); }
void json_arr_end(struct json *j) { json_close_bracket(j, ']'); }

void
json_key(struct json *j, const char *key)
{
	before(j);
	sv_json_string(j->f, key, strlen(key));
	fputs(j->pretty ? ": " : ":", j->f);
	j->after_key = 1;
}

void
json_strn(struct json *j, const char *s, size_t len)
{
	before(j);
	sv_json_string(j->f, s, len);
}

void
json_str(struct json *j, const char *s)
{
	json_strn(j, s, strlen(s));
}

void
json_u64(struct json *j, uint64_t v)
{
	before(j);
	fprintf(j->f, "%" PRIu64, v);
}

void
json_i64(struct json *j, int64_t v)
{
	before(j);
	fprintf(j->f, "%" PRId64, v);
}

void
json_u64_delta(struct json *j, uint64_t from, uint64_t to)
{
	before(j);
	if (to >= from)
		fprintf(j->f, "%" PRIu64, to - from);
	else
		fprintf(j->f, "-%" PRIu64, from - to);
}

void
json_double(struct json *j, double v)
{
	before(j);
	if (isfinite(v))
		fprintf(j->f, "%.17g", v);
	else
		fputs("null", j->f);
}

void
json_bool(struct json *j, int v)
{
	before(j);
	fputs(v ? "true" : "false", j->f);
}

void
json_null(struct json *j)
{
	before(j);
	fputs("null", j->f);
}

void
json_end(struct json *j)
{
	fputc('\n', j->f);
}

void
json_kv_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_str(j, s);
}

void
json_kv_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void
json_kv_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_i64(j, v);
}

void
json_kv_bool(struct json *j, const char *key, int v)
{
	json_key(j, key);
	json_bool(j, v);
}

void
json_kv_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	json_double(j, v);
}
