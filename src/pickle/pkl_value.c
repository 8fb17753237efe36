/*
 * The values of the pickle VM: containers in a recycled pool with their
 * references (a generation in each reference, so a stale one is seen,
 * never followed), the value stack, long integers, and the reader's
 * errors. See pkl_int.h for how the files of the VM share the reader.
 */
#include "config.h"

#include "pickle/pkl_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

int
pkl_fail(struct pkl_reader *r, struct sv_error *err, enum sv_errcode code,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sv_error_vset(err, code, r->op_pos, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- containers -------------------------------------------------------- */

struct pkl_value
pkl_cont_new(struct pkl_reader *r, uint8_t kind, uint8_t cls)
{
	struct pkl_value v;
	struct cont *c;
	uint32_t idx;

	if (r->n_free > 0) {
		idx = r->free_conts[--r->n_free];
	} else {
		if (r->n_conts == r->cap_conts) {
			r->cap_conts = r->cap_conts ? r->cap_conts * 2 : 256;
			r->conts = xreallocarray(r->conts, r->cap_conts,
			    sizeof *r->conts);
		}
		idx = r->n_conts++;
		memset(&r->conts[idx], 0, sizeof r->conts[idx]);
	}
	c = &r->conts[idx];
	c->kind = kind;
	c->cls = cls;
	c->live = 1;
	c->refs = 1; /* the stack's reference */
	c->memo = NO_MEMO;
	c->count = 0;
	c->n = 0;
	c->n_cont = 0;
	c->taken = 0;
	if (++r->live_conts > r->st.containers_peak)
		r->st.containers_peak = r->live_conts;
	memset(&v, 0, sizeof v);
	v.kind = kind;
	v.cls = cls;
	/* gen is kept 29 bits wide so a memo slot can hold it */
	v.v.ref = ((uint64_t)c->gen << 32) | idx;
	return v;
}

/* Drops one reference; frees containers reaching zero, iteratively so a
 * million-deep nesting cannot overflow the C stack. */
void
pkl_decref(struct pkl_reader *r, const struct pkl_value *v)
{
	struct cont *c = cont_of(r, v);

	if (c == NULL || --c->refs > 0)
		return;
	r->n_work = 0;
	XGROW(r->work, r->cap_work, 1);
	r->work[r->n_work++] = (uint32_t)v->v.ref;
	while (r->n_work > 0) {
		uint32_t idx = r->work[--r->n_work];
		size_t i;

		c = &r->conts[idx];
		/* a record of scalars and ids (most of them) holds none */
		for (i = 0; i < c->n && c->n_cont > 0; i++) {
			struct cont *k = cont_of(r, &c->items[i]);

			if (k != NULL && --k->refs == 0) {
				XGROW(r->work, r->cap_work, r->n_work + 1);
				r->work[r->n_work++] =
				    (uint32_t)c->items[i].v.ref;
			}
		}
		c->n = 0;
		c->n_cont = 0;
		c->live = 0;
		c->gen = (c->gen + 1) & 0x1fffffff;
		r->live_conts--;
		XGROW(r->free_conts, r->cap_free, r->n_free + 1);
		r->free_conts[r->n_free++] = idx;
	}
}

/* Appends n stack values at v in one copy; the caller counts the
 * containers among them. Grows to at least twice the capacity, so a long
 * run of APPENDS batches stays linear. */
void
pkl_cont_push_run(struct cont *c, const struct pkl_value *v, size_t n)
{
	if (c->n + n > c->cap) {
		c->cap = c->n + n > 2 * c->cap ? c->n + n : 2 * c->cap;
		c->items = xreallocarray(c->items, c->cap, sizeof *c->items);
	}
	memcpy(c->items + c->n, v, n * sizeof *c->items);
	c->n += n;
}

/* ---- stack ------------------------------------------------------------- */

int
pkl_grow_stack(struct pkl_reader *r, struct sv_error *err)
{
	if (r->stack_cap >= MAX_DEPTH)
		return pkl_fail(r, err, SV_ERR_LIMIT, "stack deeper than %u",
		    MAX_DEPTH);
	r->stack_cap = r->stack_cap ? r->stack_cap * 2 : 256;
	r->stack = xreallocarray(r->stack, r->stack_cap, sizeof *r->stack);
	if (r->stack_cap > r->st.max_stack)
		r->st.max_stack = r->stack_cap;
	return 0;
}

/* ---- operands ---------------------------------------------------------- */

/* Decodes an n-byte little-endian two's-complement integer. */
void
pkl_decode_long(const uint8_t *p, uint64_t n, struct pkl_value *v)
{
	int neg;

	memset(v, 0, sizeof *v);
	v->kind = PKL_INT;
	if (n == 0)
		return;
	neg = (p[n - 1] & 0x80) != 0;
	/* strip redundant sign bytes */
	while (n > 1 && p[n - 1] == (neg ? 0xff : 0x00) &&
	    ((p[n - 2] & 0x80) != 0) == neg)
		n--;
	if (n <= 8) {
		uint64_t u = le(p, (size_t)n);

		if (neg && n < 8)
			u |= ~0ull << (8 * n);
		v->v.u = u;
		return;
	}
	if (n == 9 && !neg && p[8] == 0) {
		v->v.u = le(p, 8);
		v->flags = PKL_F_UNSIGNED;
		return;
	}
	v->kind = PKL_BIGINT;
	v->v.i = neg ? -1 : 1;
}
