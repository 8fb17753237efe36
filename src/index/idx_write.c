/*
 * Writing an index file: sections (stored as is or LZ4-compressed, each
 * on an IDX_ALIGN boundary, with its XXH3 in the TOC), the msgpack header
 * and, last, the fixed prelude at offset 0 (doc/FORMAT.md). Also the
 * rewrite of a mapped index with new extension sections.
 */
#include "config.h"

#include <errno.h>
#include <lz4.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "index/idx_int.h"
#include "util/xalloc.h"

int
idx_w_raw(struct writer *w, const void *p, size_t n)
{
	const uint8_t *c = p;

	while (n > 0 && w->err == 0) {
		ssize_t r = write(w->fd, c, n > (1u << 30) ? (1u << 30) : n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			w->err = r < 0 ? errno : EIO;
			break;
		}
		c += r;
		n -= (size_t)r;
		w->off += (uint64_t)r;
	}
	return w->err == 0 ? 0 : -1;
}

static int
w_align(struct writer *w)
{
	static const uint8_t zero[IDX_ALIGN];
	size_t pad = (size_t)((IDX_ALIGN - w->off % IDX_ALIGN) % IDX_ALIGN);

	return idx_w_raw(w, zero, pad);
}

static void
w_progress(struct writer *w)
{
	uint64_t part = w->src_size / 10, done;

	if (w->o == NULL || w->o->progress == NULL)
		return;
	done = w->est ? (uint64_t)((double)part * (double)w->off /
			    (double)w->est)
		      : part;
	if (done > part)
		done = part;
	if (w->o->progress(w->o->progress_ctx, w->src_size - part + done,
		w->src_size) != 0)
		w->cancelled = 1;
}

/* Writes one section of raw bytes (stored as is, or LZ4 when comp). */
static int
w_section(struct writer *w, const char *name, const void *data, uint64_t n,
    uint32_t comp)
{
	struct toc_ent *t;
	const void *out = data;
	uint64_t outlen = n;
	char *z = NULL;

	if (w->err != 0 || w->cancelled)
		return -1;
	if (comp == IDX_COMP_LZ4 && (n == 0 || n > (uint64_t)LZ4_MAX_INPUT_SIZE))
		comp = IDX_COMP_NONE;
	if (comp == IDX_COMP_LZ4) {
		int bound = LZ4_compressBound((int)n), zl;

		z = xmalloc((size_t)bound);
		zl = LZ4_compress_default(data, z, (int)n, bound);
		if (zl <= 0) {
			comp = IDX_COMP_NONE;
		} else {
			out = z;
			outlen = (uint64_t)zl;
		}
	}
	if (w_align(w) != 0) {
		free(z);
		return -1;
	}
	XGROW(w->toc, w->cap_toc, w->n_toc + 1);
	t = &w->toc[w->n_toc++];
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", name);
	t->off = w->off;
	t->len = outlen;
	t->raw = n;
	t->comp = comp;
	t->hash = outlen ? XXH3_64bits(out, outlen) : XXH3_64bits(NULL, 0);
	idx_w_raw(w, out, outlen);
	free(z);
	w_progress(w);
	return w->err == 0 && !w->cancelled ? 0 : -1;
}

/* Copies a stored section from another mapped index as is. */
static int
w_copy(struct writer *w, const struct toc_ent *src, const uint8_t *map)
{
	struct toc_ent *t;

	if (w_align(w) != 0)
		return -1;
	XGROW(w->toc, w->cap_toc, w->n_toc + 1);
	t = &w->toc[w->n_toc++];
	*t = *src;
	t->off = w->off;
	return idx_w_raw(w, map + src->off, src->len);
}

static void
pk_str(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);

	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

static void
pk_u64(msgpack_packer *pk, const char *key, uint64_t v)
{
	pk_str(pk, key);
	msgpack_pack_uint64(pk, v);
}

/* Header: msgpack map (doc/FORMAT.md). */
static void
pack_header(msgpack_sbuffer *sb, const struct src_key *key,
    const char *src_path, const struct snapshot *s,
    const struct hdr_trace *tr, const struct hdr_tl *tl, uint32_t n_tl,
    const struct toc_ent *toc, size_t n_toc)
{
	msgpack_packer pk;
	uint32_t i;

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 8);
	pk_str(&pk, "format");
	pk_str(&pk, "snapview-index");
	pk_u64(&pk, "version", IDX_VERSION);
	pk_str(&pk, "abi");
	msgpack_pack_array(&pk, 8);
	msgpack_pack_uint64(&pk, IDX_ENDIAN_MARK);
	msgpack_pack_uint64(&pk, sizeof(struct snap_frame));
	msgpack_pack_uint64(&pk, sizeof(struct snap_segment));
	msgpack_pack_uint64(&pk, sizeof(struct snap_block));
	msgpack_pack_uint64(&pk, sizeof(struct snap_annotation));
	msgpack_pack_uint64(&pk, sizeof(struct snap_setting));
	msgpack_pack_uint64(&pk, sizeof(struct idx_elem));
	msgpack_pack_uint64(&pk, sizeof(struct idx_lod_bucket));

	pk_str(&pk, "source");
	msgpack_pack_map(&pk, 4);
	pk_u64(&pk, "size", key->size);
	pk_u64(&pk, "mtime_ns", key->mtime_ns);
	pk_u64(&pk, "hash", key->hash);
	pk_str(&pk, "path");
	pk_str(&pk, src_path);

	pk_str(&pk, "snap");
	msgpack_pack_map(&pk, 5);
	pk_u64(&pk, "features", s->features);
	pk_u64(&pk, "protocol", (uint64_t)(s->protocol < 0 ? 0 : s->protocol));
	pk_u64(&pk, "source_size", s->source_size);
	pk_u64(&pk, "unknown_keys", s->unknown_keys);
	pk_str(&pk, "unknown_actions");
	msgpack_pack_array(&pk, s->n_unknown_actions);
	for (i = 0; i < s->n_unknown_actions; i++)
		msgpack_pack_uint64(&pk, s->unknown_actions[i]);

	pk_str(&pk, "traces");
	msgpack_pack_array(&pk, s->n_traces);
	for (i = 0; i < s->n_traces; i++) {
		msgpack_pack_map(&pk, 2);
		pk_u64(&pk, "n", tr[i].n);
		pk_u64(&pk, "cols", tr[i].cols);
	}
	pk_str(&pk, "timelines");
	msgpack_pack_array(&pk, n_tl);
	for (i = 0; i < n_tl; i++) {
		msgpack_pack_map(&pk, 8);
		pk_u64(&pk, "n", tl[i].n_events);
		pk_u64(&pk, "n_elems", tl[i].n_elems);
		pk_u64(&pk, "base_total", tl[i].base_total);
		pk_u64(&pk, "base_reserved", tl[i].base_reserved);
		pk_u64(&pk, "peak", tl[i].peak);
		pk_str(&pk, "peak_ev");
		msgpack_pack_int64(&pk, tl[i].peak_ev);
		pk_u64(&pk, "n_pre", tl[i].n_pre);
		pk_u64(&pk, "n_ghost", tl[i].n_ghost);
	}
	pk_str(&pk, "toc");
	msgpack_pack_array(&pk, (uint32_t)n_toc);
	for (i = 0; i < n_toc; i++) {
		msgpack_pack_array(&pk, 6);
		pk_str(&pk, toc[i].name);
		msgpack_pack_uint64(&pk, toc[i].off);
		msgpack_pack_uint64(&pk, toc[i].len);
		msgpack_pack_uint64(&pk, toc[i].raw);
		msgpack_pack_uint64(&pk, toc[i].comp);
		msgpack_pack_uint64(&pk, toc[i].hash);
	}
}

/* Writes the header and then the prelude at offset 0. */
int
idx_w_finish(struct writer *w, const struct src_key *key, const char *src_path,
    const struct snapshot *s, const struct hdr_trace *tr,
    const struct hdr_tl *tl, uint32_t n_tl)
{
	msgpack_sbuffer sb;
	uint8_t pre[IDX_PRELUDE_LEN];
	uint64_t hoff;
	ssize_t r;

	if (w->err != 0 || w->cancelled || w_align(w) != 0)
		return -1;
	hoff = w->off;
	msgpack_sbuffer_init(&sb);
	pack_header(&sb, key, src_path, s, tr, tl, n_tl, w->toc, w->n_toc);
	idx_w_raw(w, sb.data, sb.size);
	memset(pre, 0, sizeof pre);
	memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
	put_u32(pre + IDX_OFF_VERSION, IDX_VERSION);
	put_u64(pre + IDX_OFF_HEADER_OFF, hoff);
	put_u64(pre + IDX_OFF_HEADER_LEN, sb.size);
	put_u64(pre + IDX_OFF_HEADER_HASH, XXH3_64bits(sb.data, sb.size));
	put_u64(pre + IDX_OFF_PRELUDE_HASH, XXH3_64bits(pre,
	    IDX_OFF_PRELUDE_HASH));
	msgpack_sbuffer_destroy(&sb);
	if (w->err != 0)
		return -1;
	r = pwrite(w->fd, pre, sizeof pre, 0);
	if (r != (ssize_t)sizeof pre) {
		w->err = r < 0 ? errno : EIO;
		return -1;
	}
	return 0;
}

int
idx_w_extensions(struct writer *w, const struct sv_index *ix)
{
	size_t i;
	char name[IDX_MAX_SECTION_NAME + 8];

	for (i = 0; i < ix->n_ext; i++) {
		snprintf(name, sizeof name, "%s%s", IDX_SEC_EXT_PREFIX,
		    ix->ext[i].name);
		if (w_section(w, name, ix->ext[i].data, ix->ext[i].len,
			IDX_COMP_LZ4) != 0)
			return -1;
	}
	return 0;
}

void
idx_hdr_from_tl(struct hdr_tl *h, const struct idx_timeline *tl)
{
	h->n_events = tl->n_events;
	h->n_elems = tl->n_elems;
	h->base_total = tl->base_total;
	h->base_reserved = tl->base_reserved;
	h->peak = tl->peak;
	h->peak_ev = tl->peak_ev;
	h->n_pre = tl->n_pre;
	h->n_ghost = tl->n_ghost;
}

uint32_t
idx_trace_cols(const struct snap_trace *t)
{
	return (t->time_us != NULL ? HDR_COL_TIME : 0) |
	    (t->compile_context != NULL ? HDR_COL_CTX : 0) |
	    (t->user_metadata != NULL ? HDR_COL_META : 0);
}

static int
w_col(struct writer *w, uint32_t d, const char *col, const void *p,
    uint64_t n, size_t rec)
{
	char name[IDX_MAX_SECTION_NAME];

	snprintf(name, sizeof name, IDX_SEC_DEV_FMT, (unsigned)d, col);
	return w_section(w, name, p, n * rec, IDX_COMP_NONE);
}

/* Writes the whole-snapshot sections. */
int
idx_w_snapshot(struct writer *w, const struct snapshot *s)
{
	/* strings and annotations are stored as they are and used in place:
	 * decompressing them cost a reopen more than all else (a few MB
	 * next to hundreds of MB of columns) */
	w_section(w, IDX_SEC_STRS_DATA, s->strs.data, s->strs.len,
	    IDX_COMP_NONE);
	w_section(w, IDX_SEC_STRS_OFF, s->strs.off, (uint64_t)s->strs.n * 8,
	    IDX_COMP_NONE);
	w_section(w, IDX_SEC_FRAMES, s->frames,
	    (uint64_t)s->n_frames * sizeof *s->frames, IDX_COMP_LZ4);
	w_section(w, IDX_SEC_STACK_OFF, s->stack_off,
	    ((uint64_t)s->n_stacks + 1) * 4, IDX_COMP_LZ4);
	w_section(w, IDX_SEC_STACK_FRAMES, s->stack_frames,
	    s->n_stack_frames * 4, IDX_COMP_LZ4);
	w_section(w, IDX_SEC_SEGMENTS, s->segments,
	    (uint64_t)s->n_segments * sizeof *s->segments, IDX_COMP_NONE);
	w_section(w, IDX_SEC_BLOCKS, s->blocks,
	    (uint64_t)s->n_blocks * sizeof *s->blocks, IDX_COMP_NONE);
	w_section(w, IDX_SEC_ANNOTATIONS, s->annotations,
	    (uint64_t)s->n_annotations * sizeof *s->annotations,
	    IDX_COMP_NONE);
	return w_section(w, IDX_SEC_SETTINGS, s->settings,
	    (uint64_t)s->n_settings * sizeof *s->settings, IDX_COMP_LZ4);
}

int
idx_w_trace(struct writer *w, uint32_t d, const struct snap_trace *t)
{
	w_col(w, d, IDX_COL_ACTION, t->action, t->n, 1);
	w_col(w, d, IDX_COL_ADDR, t->addr, t->n, 8);
	w_col(w, d, IDX_COL_SIZE, t->size, t->n, 8);
	w_col(w, d, IDX_COL_STREAM, t->stream, t->n, 8);
	w_col(w, d, IDX_COL_STACK, t->stack, t->n, 4);
	if (t->time_us != NULL)
		w_col(w, d, IDX_COL_TIME, t->time_us, t->n, 8);
	if (t->compile_context != NULL)
		w_col(w, d, IDX_COL_CTX, t->compile_context, t->n, 4);
	if (t->user_metadata != NULL)
		w_col(w, d, IDX_COL_META, t->user_metadata, t->n, 4);
	return w->err == 0 && !w->cancelled ? 0 : -1;
}

int
idx_w_timeline(struct writer *w, uint32_t d, const struct idx_timeline *tl,
    const struct idx_lod_bucket *lod)
{
	w_col(w, d, IDX_COL_ELEMS, tl->elems, tl->n_elems,
	    sizeof *tl->elems);
	w_col(w, d, IDX_COL_EV_ELEM, tl->ev_elem, tl->n_events, 8);
	w_col(w, d, IDX_COL_TOTAL, tl->total, tl->n_events, 8);
	w_col(w, d, IDX_COL_RESERVED, tl->reserved, tl->n_events, 8);
	return w_col(w, d, IDX_COL_LOD, lod, idx_lod_count(tl->n_events, NULL),
	    sizeof *lod);
}

uint64_t
idx_estimate_size(const struct snapshot *s)
{
	uint64_t e = s->strs.len + (uint64_t)s->n_blocks * 40, i;

	for (i = 0; i < s->n_traces; i++)
		e += s->traces[i].n * (1 + 8 * 3 + 4 + 24 + 3 + 56 / 2 +
		    (s->traces[i].time_us != NULL ? 8 : 0));
	return e;
}

/* Rewrites a mapped index with its sections plus the extensions it
 * lacked (held in ix->ext, heap). */
int
idx_rewrite_index(struct writer *w, const struct sv_index *ix,
    const struct src_key *key, const char *src_path, struct sv_error *err)
{
	const struct snapshot *s = ix->snap;
	struct hdr_trace *tr;
	struct hdr_tl *tl;
	size_t i, pl = strlen(IDX_SEC_EXT_PREFIX);
	uint8_t pre[IDX_PRELUDE_LEN];
	uint32_t d;
	int r;

	tr = xcalloc(s->n_traces + 1, sizeof *tr);
	tl = xcalloc(ix->n_devs + 1, sizeof *tl);
	for (d = 0; d < s->n_traces; d++) {
		tr[d].n = s->traces[d].n;
		tr[d].cols = idx_trace_cols(&s->traces[d]);
	}
	for (d = 0; d < ix->n_devs; d++)
		idx_hdr_from_tl(&tl[d], &ix->devs[d].tl);
	memset(pre, 0, sizeof pre);
	memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
	idx_w_raw(w, pre, sizeof pre);
	for (i = 0; i < ix->n_toc; i++)
		if (strncmp(ix->toc[i].name, IDX_SEC_EXT_PREFIX, pl) != 0)
			w_copy(w, &ix->toc[i], ix->map);
	idx_w_extensions(w, ix);
	r = idx_w_finish(w, key, src_path, s, tr, tl, ix->n_devs);
	if (r != 0)
		sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(w->err ? w->err : EIO));
	free(tr);
	free(tl);
	return r;
}
