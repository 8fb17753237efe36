/*
 * Fuzz target: the streaming pickle reader alone (src/pickle/), with a
 * sink that exercises every take() answer and records read when they
 * close (take_record). The class of a container and
 * what the sink does with it (keep, drop, replace by an id) are a fixed
 * function of where it sits, so an input always runs the same way, and
 * every string and item the sink is shown is read in full so the
 * sanitizers see any out-of-bounds view.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"
#include "pickle/pkl_reader.h"

struct fz {
	uint64_t ids;
	volatile uint64_t sink; /* keeps the reads from being optimised away */
};

static void
touch(struct fz *z, struct pkl_reader *r, const struct pkl_value *v)
{
	size_t n, i;
	const char *p;
	const struct pkl_value *it;

	if (v == NULL)
		return;
	switch (v->kind) {
	case PKL_STR:
	case PKL_BYTES:
		p = pkl_str(r, v, &n);
		for (i = 0; i < n; i++)
			z->sink += (uint8_t)p[i];
		break;
	case PKL_LIST:
	case PKL_TUPLE:
	case PKL_DICT:
	case PKL_SET:
		it = pkl_items(r, v, &n);
		if (v->kind == PKL_DICT)
			n *= 2;
		for (i = 0; i < n; i++)
			z->sink += it[i].kind + it[i].v.u;
		z->sink += pkl_count(r, v);
		break;
	default:
		z->sink += v->v.u;
		break;
	}
}

static uint8_t
classify(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *key, uint64_t index, uint8_t kind)
{
	struct fz *z = ctx;
	uint64_t h = parent_cls * 13u + kind * 31u + index;

	touch(z, r, key);
	if (key != NULL)
		h += key->kind + key->len;
	return (uint8_t)(h % 7);
}

static int
take(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *parent, const struct pkl_value *key,
    uint64_t index, const struct pkl_value *child, uint64_t *id,
    uint8_t *id_cls, struct sv_error *err)
{
	struct fz *z = ctx;

	(void)parent_cls;
	(void)index;
	(void)err;
	touch(z, r, parent);
	touch(z, r, key);
	touch(z, r, child);
	z->sink += pkl_offset(r) + (uint64_t)pkl_protocol(r);
	switch (child->cls % 3) {
	case 0:
		return PKL_KEEP;
	case 1:
		return PKL_DROP;
	default:
		*id = z->ids++;
		*id_cls = child->cls;
		return PKL_ID_REPLACE;
	}
}

/* Dicts of classes 1 and 4 (which take() drops) are records: read in
 * full, and refused when they have 7 items. */
static int
take_record(void *ctx, struct pkl_reader *r, uint8_t cls,
    const struct pkl_value *items, size_t n, struct sv_error *err)
{
	struct fz *z = ctx;
	size_t i;

	z->sink += cls;
	for (i = 0; i < 2 * n; i++)
		touch(z, r, &items[i]);
	if (n == 7)
		return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "record refused");
	return 0;
}

/* A record's list of a class take() replaces by an id is taken from its
 * items, half the time, as take() would take it; refused when it has 5
 * items. */
static int
take_items(void *ctx, struct pkl_reader *r, uint8_t cls,
    const struct pkl_value *items, size_t n, uint64_t *id, uint8_t *id_cls,
    struct sv_error *err)
{
	struct fz *z = ctx;
	size_t i;

	for (i = 0; i < n; i++)
		touch(z, r, &items[i]);
	if (n == 5)
		return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "list refused");
	if (cls % 3 != 2 || (z->sink & 1))
		return PKL_KEEP;
	*id = z->ids++;
	*id_cls = cls;
	return PKL_ID_REPLACE;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pkl_sink sink = {classify, take, NULL,
	    take_record, 1u << 1 | 1u << 4, take_items, 0};
	struct pkl_reader *keep = NULL;
	struct sv_error err;
	struct fz z = {0, 0};

	sv_error_clear(&err);
	if (pkl_run(data, size, &sink, &z, &keep, &err) != 0) {
		/* a refusal must say why */
		if (err.code == SV_OK || err.msg[0] == '\0')
			abort();
	} else {
		struct pkl_stats st;

		pkl_get_stats(keep, &st);
		z.sink += st.opcodes;
	}
	pkl_reader_free(keep);
	return 0;
}
