#ifndef SNAPVIEW_UTIL_JSON_H
#define SNAPVIEW_UTIL_JSON_H
/*
 * A streaming JSON writer: output goes straight to a FILE, nothing is
 * built in memory, so a report of ten million events costs no more than
 * one. Commas and nesting are tracked; strings are escaped (escape.h).
 * Integers are written exactly (bytes are never rounded in JSON).
 */
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	int count[JSON_MAX_DEPTH]; /* items written at each depth */
	int after_key;
	int pretty;
};

void json_init(struct json *j, FILE *f, int pretty);
void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s);
void json_strn(struct json *j, const char *s, size_t len);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
/* to - from, exactly, whatever the two values: the difference of two
 * 64-bit counts needs 65 bits, which int64_t does not have. */
void json_u64_delta(struct json *j, uint64_t from, uint64_t to);
void json_double(struct json *j, double v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* Ends the document with a newline. */
void json_end(struct json *j);

/* Shorthands: key + value. */
void json_kv_str(struct json *j, const char *key, const char *s);
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_i64(struct json *j, const char *key, int64_t v);
void json_kv_bool(struct json *j, const char *key, int v);
void json_kv_double(struct json *j, const char *key, double v);

#endif
