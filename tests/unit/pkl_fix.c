/* See pkl_fix.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkl_fix.h"
#include "util/xalloc.h"

void
app(char *buf, size_t size, const char *s)
{
	size_t used = strlen(buf);

	if (used + strlen(s) < size)
		strcat(buf, s);
}

void
describe(struct pkl_reader *r, const struct pkl_value *v, char *buf,
    size_t size)
{
	size_t used = strlen(buf), n, i, len;
	const struct pkl_value *it;
	const char *s;

	if (used + 64 >= size)
		return;
	switch (v->kind) {
	case PKL_NONE: app(buf, size, "None"); break;
	case PKL_BOOL: app(buf, size, v->v.u ? "True" : "False"); break;
	case PKL_INT:
		if (v->flags & PKL_F_UNSIGNED)
			snprintf(buf + used, size - used, "%llu",
			    (unsigned long long)v->v.u);
		else
			snprintf(buf + used, size - used, "%lld",
			    (long long)v->v.i);
		break;
	case PKL_BIGINT: app(buf, size, v->v.i < 0 ? "-big" : "big"); break;
	case PKL_FLOAT: snprintf(buf + used, size - used, "%g", v->v.f); break;
	case PKL_STR:
	case PKL_BYTES:
		s = pkl_str(r, v, &len);
		snprintf(buf + used, size - used, "%s'%.*s'",
		    v->kind == PKL_BYTES ? "b" : "", (int)len, s);
		break;
	case PKL_ID:
		if (v->cls != 3)
			snprintf(buf + used, size - used, "#%u:%llu", v->cls,
			    (unsigned long long)v->v.id);
		else
			snprintf(buf + used, size - used, "#%llu",
			    (unsigned long long)v->v.id);
		break;
	case PKL_LIST:
	case PKL_TUPLE:
	case PKL_SET:
	case PKL_DICT:
		it = pkl_items(r, v, &n);
		app(buf, size, v->kind == PKL_LIST ? "[" :
		    v->kind == PKL_TUPLE ? "(" : "{");
		for (i = 0; i < n; i++) {
			if (i)
				app(buf, size, ",");
			if (v->kind == PKL_DICT) {
				describe(r, &it[2 * i], buf, size);
				app(buf, size, ":");
				describe(r, &it[2 * i + 1], buf, size);
			} else {
				describe(r, &it[i], buf, size);
			}
		}
		app(buf, size, v->kind == PKL_LIST ? "]" :
		    v->kind == PKL_TUPLE ? ")" : "}");
		break;
	default: app(buf, size, "?"); break;
	}
}

void
pb_bytes(struct pb *p, const void *s, size_t n)
{
	p->b = xgrow(p->b, &p->cap, p->n + n, 1);
	memcpy(p->b + p->n, s, n);
	p->n += n;
}

void
pb_byte(struct pb *p, uint8_t c)
{
	pb_bytes(p, &c, 1);
}

void
pb_u32(struct pb *p, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 24)};

	pb_bytes(p, x, 4);
}

/* A new string of len copies of c: SHORT_BINUNICODE or BINUNICODE. */
void
pb_str(struct pb *p, size_t len, char c)
{
	char *s = xmalloc(len + 1);

	memset(s, c, len);
	if (len < 256) {
		pb_byte(p, 0x8c);
		pb_byte(p, (uint8_t)len);
	} else {
		pb_byte(p, 'X');
		pb_u32(p, (uint32_t)len);
	}
	pb_bytes(p, s, len);
	free(s);
}

void
pb_put(struct pb *p, uint32_t idx) /* LONG_BINPUT idx, POP */
{
	pb_byte(p, 'r');
	pb_u32(p, idx);
	pb_byte(p, '0');
}

void
pb_get(struct pb *p, uint32_t idx) /* LONG_BINGET idx */
{
	pb_byte(p, 'j');
	pb_u32(p, idx);
}

void
pb_int(struct pb *p, int32_t v) /* BININT v */
{
	pb_byte(p, 'J');
	pb_u32(p, (uint32_t)v);
}
