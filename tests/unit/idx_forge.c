/*
 * Forging index files (idx_forge.h): read, change, reseal.
 */
#include "config.h"

#include "idx_forge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "index/idx_format.h"

static void *
must(void *p)
{
	if (p == NULL) {
		fprintf(stderr, "idx_forge: out of memory\n");
		abort();
	}
	return p;
}

static uint64_t
rd64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void
wr64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static const msgpack_object *
root_key(const msgpack_object *root, const char *key)
{
	uint32_t i;
	size_t n = strlen(key);

	for (i = 0; i < root->via.map.size; i++) {
		const msgpack_object *k = &root->via.map.ptr[i].key;

		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
		    memcmp(k->via.str.ptr, key, n) == 0)
			return &root->via.map.ptr[i].val;
	}
	return NULL;
}

void
forge_load(struct forge *fg, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint64_t hoff, hlen;
	const msgpack_object *toc;
	size_t moff = 0;
	uint32_t i;
	long len;

	memset(fg, 0, sizeof *fg);
	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		abort();
	fg->n = (size_t)len;
	fg->f = must(malloc(fg->n + 1));
	if (fread(fg->f, 1, fg->n, f) != fg->n)
		abort();
	fclose(f);
	if (fg->n < IDX_PRELUDE_LEN)
		abort();
	hoff = rd64(fg->f + IDX_OFF_HEADER_OFF);
	hlen = rd64(fg->f + IDX_OFF_HEADER_LEN);
	if (hoff > fg->n || hlen > fg->n - hoff)
		abort();
	fg->hdr = must(malloc(hlen + 1));
	memcpy(fg->hdr, fg->f + hoff, hlen);
	msgpack_unpacked_init(&fg->res);
	if (msgpack_unpack_next(&fg->res, (const char *)fg->hdr, hlen,
		&moff) != MSGPACK_UNPACK_SUCCESS ||
	    fg->res.data.type != MSGPACK_OBJECT_MAP)
		abort();
	toc = root_key(&fg->res.data, "toc");
	if (toc == NULL || toc->type != MSGPACK_OBJECT_ARRAY)
		abort();
	fg->n_sec = toc->via.array.size;
	fg->sec = must(calloc(fg->n_sec + 1, sizeof *fg->sec));
	for (i = 0; i < toc->via.array.size; i++) {
		const msgpack_object *e = toc->via.array.ptr[i].via.array.ptr;
		struct forge_sec *s = &fg->sec[i];

		snprintf(s->name, sizeof s->name, "%.*s",
		    (int)e[0].via.str.size, e[0].via.str.ptr);
		s->off = e[1].via.u64;
		s->len = e[2].via.u64;
		s->raw = e[3].via.u64;
		s->comp = e[4].via.u64;
		s->hash = e[5].via.u64;
	}
}

struct forge_sec *
forge_find(struct forge *fg, const char *name)
{
	size_t i;

	for (i = 0; i < fg->n_sec; i++)
		if (strcmp(fg->sec[i].name, name) == 0)
			return &fg->sec[i];
	return NULL;
}

struct forge_sec *
forge_add(struct forge *fg, const char *name)
{
	struct forge_sec *s;

	fg->sec = must(realloc(fg->sec, (fg->n_sec + 1) * sizeof *fg->sec));
	s = &fg->sec[fg->n_sec++];
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", name);
	return s;
}

static void
pack_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

void
forge_write(struct forge *fg, const char *path)
{
	const msgpack_object *root = &fg->res.data;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	uint64_t hoff;
	uint8_t *out;
	size_t i, n;
	FILE *f;

	for (i = 0; i < fg->n_sec; i++) {
		struct forge_sec *s = &fg->sec[i];

		if (s->off <= fg->n && s->len <= fg->n - s->off)
			s->hash = XXH3_64bits(fg->f + s->off, s->len);
	}
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, root->via.map.size + (fg->pad > 0));
	for (i = 0; i < root->via.map.size; i++) {
		const msgpack_object_kv *kv = &root->via.map.ptr[i];

		msgpack_pack_object(&pk, kv->key);
		if (kv->key.type != MSGPACK_OBJECT_STR ||
		    kv->key.via.str.size != 3 ||
		    memcmp(kv->key.via.str.ptr, "toc", 3) != 0) {
			msgpack_pack_object(&pk, kv->val);
			continue;
		}
		msgpack_pack_array(&pk, (uint32_t)fg->n_sec);
		for (n = 0; n < fg->n_sec; n++) {
			msgpack_pack_array(&pk, 6);
			pack_str(&pk, fg->sec[n].name);
			msgpack_pack_uint64(&pk, fg->sec[n].off);
			msgpack_pack_uint64(&pk, fg->sec[n].len);
			msgpack_pack_uint64(&pk, fg->sec[n].raw);
			msgpack_pack_uint64(&pk, fg->sec[n].comp);
			msgpack_pack_uint64(&pk, fg->sec[n].hash);
		}
	}
	if (fg->pad > 0) {
		char *z = must(calloc(1, fg->pad));

		pack_str(&pk, "pad");
		msgpack_pack_bin(&pk, fg->pad);
		msgpack_pack_bin_body(&pk, z, fg->pad);
		free(z);
	}
	/* the header goes after every byte of the file, so that it lies
	 * past every section, however the TOC now reads */
	hoff = (fg->n + IDX_ALIGN - 1) / IDX_ALIGN * IDX_ALIGN;
	n = (size_t)hoff + sb.size;
	out = must(calloc(1, n));
	memcpy(out, fg->f, fg->n);
	memcpy(out + hoff, sb.data, sb.size);
	wr64(out + IDX_OFF_HEADER_OFF, hoff);
	wr64(out + IDX_OFF_HEADER_LEN, sb.size);
	wr64(out + IDX_OFF_HEADER_HASH, XXH3_64bits(sb.data, sb.size));
	wr64(out + IDX_OFF_PRELUDE_HASH, XXH3_64bits(out,
	    IDX_OFF_PRELUDE_HASH));
	msgpack_sbuffer_destroy(&sb);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(out, 1, n, f) != n || fclose(f) != 0)
		abort();
	free(out);
}

void
forge_free(struct forge *fg)
{
	msgpack_unpacked_destroy(&fg->res);
	free(fg->hdr);
	free(fg->sec);
	free(fg->f);
	memset(fg, 0, sizeof *fg);
}
