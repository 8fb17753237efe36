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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "index/idx_int.h"
#include "util/fdio.h"
#include "util/tape.h"
#include "util/thread.h"
#include "util/xalloc.h"

int
idx_w_raw(struct writer *w, const void *p, size_t n)
{
	const uint8_t *c = p;

	if (w->fd < 0) {
		if (w->err == 0 && n > 0) {
			snap_buf_reserve(w->mem, n);
			memcpy(w->mem->p + w->mem->len, p, n);
			w->mem->len += n;
			w->off += n;
		}
		return w->err == 0 ? 0 : -1;
	}
	if (w->err == 0 && (w->err = sv_write_all(w->fd, c, n)) == 0)
		w->off += n;
	return w->err == 0 ? 0 : -1;
}

int
idx_w_align(struct writer *w)
{
	static const uint8_t zero[IDX_ALIGN];
	size_t pad = (size_t)((IDX_ALIGN - w->off % IDX_ALIGN) % IDX_ALIGN);

	return idx_w_raw(w, zero, pad);
}

static void
w_progress(struct writer *w)
{
	if (w->o == NULL || w->o->progress == NULL)
		return;
	if (w->o->progress(w->o->progress_ctx, w->at, w->src_size) != 0)
		w->cancelled = 1;
}

/* Where a section's raw bytes come from: memory, or a tape. */
struct src {
	const uint8_t *data;
	struct tape *tape;
};

/* The n raw bytes at off of src (in buf when they must be read) in *out;
 * -1 when they cannot be read. */
static int
src_at(struct writer *w, const struct src *src, uint64_t off, size_t n,
    uint8_t *buf, const uint8_t **out)
{
	if (src->tape == NULL) {
		*out = src->data != NULL ? src->data + off : NULL;
		return 0;
	}
	if (tape_read(src->tape, off, buf, n) != 0) {
		w->err = src->tape->err ? src->tape->err : EIO;
		return -1;
	}
	*out = buf;
	return 0;
}

/* One piece of a section in pieces: its raw bytes, and once compressed
 * its stored form (8 bytes of lengths, then the LZ4 block) of zl + 8
 * bytes. */
struct piece {
	const uint8_t *in;
	uint32_t raw;
	uint8_t *raw_buf;       /* where a tape's bytes are read to */
	uint8_t *z;
	int zl;                 /* 0: failed */
};

static void
piece_compress(struct piece *pc)
{
	pc->zl = LZ4_compress_default((const char *)pc->in, (char *)pc->z + 8,
	    (int)pc->raw, LZ4_compressBound((int)pc->raw));
	if (pc->zl > 0) {
		sv_le32_put(pc->z, (uint32_t)pc->zl);
		sv_le32_put(pc->z + 4, pc->raw);
	}
}

/*
 * The pieces of a section on their way to the file: a ring of RING
 * pieces, read in order, compressed by whichever thread is free (this
 * one and a helper, where one starts), written in order. The replay's
 * checkpoints, tens of MB at 1 GB of snapshot and hundreds at 10, are
 * compressed after everything else of a build: with the helper
 * compressing while this thread reads and writes the pieces before and
 * after, the two cores stay busy (writing into the page cache is a third
 * of that time on its own). The bytes are the same however the pieces
 * were shared out: each piece is compressed on its own.
 */
#define RING 8
enum { P_FREE, P_READ, P_BUSY, P_DONE };
struct zring {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct piece pc[RING];  /* piece i in pc[i % RING] */
	uint8_t state[RING];
	uint64_t head, tail;    /* next piece to write, next to read */
	pthread_t th;
	int helped, quit;
};

/* The first piece read and not yet taken, marked taken, or NULL. Called
 * with the lock held. */
static struct piece *
zring_take(struct zring *z)
{
	uint64_t i;

	for (i = z->head; i < z->tail; i++)
		if (z->state[i % RING] == P_READ) {
			z->state[i % RING] = P_BUSY;
			return &z->pc[i % RING];
		}
	return NULL;
}

/* Compresses piece pc, taken by zring_take(), with the lock released. */
static void
zring_compress(struct zring *z, struct piece *pc)
{
	pthread_mutex_unlock(&z->mu);
	piece_compress(pc);
	pthread_mutex_lock(&z->mu);
	z->state[pc - z->pc] = P_DONE;
	pthread_cond_broadcast(&z->cv);
}

static void *
zring_helper(void *arg)
{
	struct zring *z = arg;
	struct piece *pc;

	pthread_mutex_lock(&z->mu);
	while (!z->quit) {
		if ((pc = zring_take(z)) != NULL)
			zring_compress(z, pc);
		else
			pthread_cond_wait(&z->cv, &z->mu);
	}
	pthread_mutex_unlock(&z->mu);
	return NULL;
}

/* Writes piece pc of section t and hashes it (h). */
static void
piece_write(struct writer *w, struct toc_ent *t, XXH3_state_t *h,
    const struct piece *pc)
{
	if (pc->zl <= 0) {
		w->err = w->err ? w->err : EIO;
		return;
	}
	XXH3_64bits_update(h, pc->z, (size_t)pc->zl + 8);
	idx_w_raw(w, pc->z, (size_t)pc->zl + 8);
	t->len += (uint64_t)pc->zl + 8;
}

/* Writes n bytes as LZ4 pieces (IDX_COMP_LZ4P) into the section t being
 * written, through the ring above: RING pieces' buffers at a time, so a
 * section of hundreds of MB (replay checkpoints) costs no copy of its
 * size. */
static void
w_pieces(struct writer *w, struct toc_ent *t, const struct src *src,
    uint64_t n)
{
	struct zring z;
	XXH3_state_t *h = XXH3_createState();
	uint64_t np = (n + IDX_LZ4_WPIECE - 1) / IDX_LZ4_WPIECE;
	struct piece *pc;
	int k;

	memset(&z, 0, sizeof z);
	for (k = 0; k < RING; k++) {
		z.pc[k].z = xmalloc((size_t)LZ4_compressBound(IDX_LZ4_WPIECE) +
		    8);
		z.pc[k].raw_buf = src->tape != NULL ?
		    xmalloc(IDX_LZ4_WPIECE) : NULL;
	}
	pthread_mutex_init(&z.mu, NULL);
	pthread_cond_init(&z.cv, NULL);
	z.helped = np > 1 && sv_thread_start(&z.th, zring_helper, &z) == 0;
	XXH3_64bits_reset(h);
	pthread_mutex_lock(&z.mu);
	while (z.head < np && w->err == 0) {
		if (z.tail < np && z.tail - z.head < RING) {
			/* the next piece's bytes, read in order (its slot is
			 * free: no other thread looks at it) */
			uint64_t off = z.tail * IDX_LZ4_WPIECE;

			pc = &z.pc[z.tail % RING];
			pc->raw = n - off < IDX_LZ4_WPIECE ?
			    (uint32_t)(n - off) : IDX_LZ4_WPIECE;
			pthread_mutex_unlock(&z.mu);
			k = src_at(w, src, off, pc->raw, pc->raw_buf, &pc->in);
			pthread_mutex_lock(&z.mu);
			if (k != 0)
				break;
			z.state[z.tail++ % RING] = P_READ;
			pthread_cond_broadcast(&z.cv);
		} else if (z.state[z.head % RING] == P_DONE) {
			/* the oldest piece, written while the helper works */
			pc = &z.pc[z.head % RING];
			pthread_mutex_unlock(&z.mu);
			piece_write(w, t, h, pc);
			pthread_mutex_lock(&z.mu);
			z.state[z.head++ % RING] = P_FREE;
		} else if ((pc = zring_take(&z)) != NULL) {
			zring_compress(&z, pc);
		} else {
			pthread_cond_wait(&z.cv, &z.mu);
		}
	}
	pthread_mutex_unlock(&z.mu);
	if (z.helped) /* it finishes the piece it has */
		sv_thread_stop(z.th, &z.mu, &z.cv, &z.quit);
	pthread_cond_destroy(&z.cv);
	pthread_mutex_destroy(&z.mu);
	t->hash = XXH3_64bits_digest(h);
	XXH3_freeState(h);
	for (k = 0; k < RING; k++) {
		free(z.pc[k].raw_buf);
		free(z.pc[k].z);
	}
}

static int
w_section(struct writer *w, const char *name, const struct src *src,
    uint64_t n, uint32_t comp)
{
	struct toc_ent *t;
	const uint8_t *out = NULL;
	uint64_t outlen = n;
	uint8_t *whole = NULL;
	char *z = NULL;

	if (w->err != 0 || w->cancelled)
		return -1;
	if (comp == IDX_COMP_LZ4 && n == 0)
		comp = IDX_COMP_NONE;
	if (comp == IDX_COMP_LZ4 && n > IDX_LZ4_PIECE)
		comp = IDX_COMP_LZ4P;
	if (comp != IDX_COMP_LZ4P) {
		/* the whole section: at most a piece when compressed */
		if (src->tape != NULL)
			whole = xmalloc((size_t)n + 1);
		if (src_at(w, src, 0, (size_t)n, whole, &out) != 0) {
			free(whole);
			return -1;
		}
	}
	if (comp == IDX_COMP_LZ4) {
		int bound = LZ4_compressBound((int)n), zl;

		z = xmalloc((size_t)bound);
		zl = LZ4_compress_default((const char *)out, z, (int)n, bound);
		if (zl <= 0) {
			comp = IDX_COMP_NONE;
		} else {
			out = (const uint8_t *)z;
			outlen = (uint64_t)zl;
		}
	}
	if (idx_w_align(w) != 0) {
		free(z);
		free(whole);
		return -1;
	}
	XGROW(w->toc, w->cap_toc, w->n_toc + 1);
	t = &w->toc[w->n_toc++];
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", name);
	t->off = w->off;
	t->raw = n;
	t->comp = comp;
	if (comp == IDX_COMP_LZ4P) {
		w_pieces(w, t, src, n);
	} else {
		t->len = outlen;
		t->hash = outlen ? XXH3_64bits(out, outlen)
		    : XXH3_64bits(NULL, 0);
		idx_w_raw(w, out, outlen);
	}
	free(z);
	free(whole);
	w_progress(w);
	return w->err == 0 && !w->cancelled ? 0 : -1;
}

/* Writes one section of raw bytes: stored as is, or compressed when comp
 * is IDX_COMP_LZ4 (LZ4 in one piece, or in pieces past IDX_LZ4_PIECE). */
int
idx_w_section(struct writer *w, const char *name, const void *data, uint64_t n,
    uint32_t comp)
{
	struct src src = {data, NULL};

	return w_section(w, name, &src, n, comp);
}

/* Copies a stored section from another mapped index as is. */
static int
w_copy(struct writer *w, const struct toc_ent *src, const uint8_t *map)
{
	struct toc_ent *t;

	if (idx_w_align(w) != 0)
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
    const struct toc_ent *toc, size_t n_toc)
{
	msgpack_packer pk;
	uint32_t i;

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 6);
	pk_str(&pk, "format");
	pk_str(&pk, "snapview-index");
	pk_u64(&pk, "version", IDX_VERSION);
	pk_str(&pk, "abi");
	msgpack_pack_array(&pk, 9);
	msgpack_pack_uint64(&pk, IDX_ENDIAN_MARK);
	msgpack_pack_uint64(&pk, sizeof(struct snap_frame));
	msgpack_pack_uint64(&pk, sizeof(struct snap_segment));
	msgpack_pack_uint64(&pk, sizeof(struct snap_block));
	msgpack_pack_uint64(&pk, sizeof(struct snap_annotation));
	msgpack_pack_uint64(&pk, sizeof(struct snap_setting));
	msgpack_pack_uint64(&pk, sizeof(struct idx_lod_cum));
	msgpack_pack_uint64(&pk, sizeof(struct snap_stripedir));
	msgpack_pack_uint64(&pk, sizeof(struct idx_devrec));

	pk_str(&pk, "source");
	msgpack_pack_map(&pk, 4);
	pk_u64(&pk, "size", key->size);
	pk_u64(&pk, "mtime_ns", key->mtime_ns);
	pk_u64(&pk, "hash", key->hash);
	pk_str(&pk, "path");
	pk_str(&pk, src_path);

	pk_str(&pk, "snap");
	msgpack_pack_map(&pk, 6);
	pk_u64(&pk, "features", s->features);
	pk_u64(&pk, "protocol", (uint64_t)(s->protocol < 0 ? 0 : s->protocol));
	pk_u64(&pk, "source_size", s->source_size);
	pk_u64(&pk, "unknown_keys", s->unknown_keys);
	pk_u64(&pk, "n_traces", s->n_traces);
	pk_str(&pk, "unknown_actions");
	msgpack_pack_array(&pk, s->n_unknown_actions);
	for (i = 0; i < s->n_unknown_actions; i++)
		msgpack_pack_uint64(&pk, s->unknown_actions[i]);

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
    const struct snapshot *s)
{
	msgpack_sbuffer sb;
	uint8_t pre[IDX_PRELUDE_LEN];
	uint64_t hoff;
	ssize_t r;

	if (w->err != 0 || w->cancelled || idx_w_align(w) != 0)
		return -1;
	hoff = w->off;
	msgpack_sbuffer_init(&sb);
	pack_header(&sb, key, src_path, s, w->toc, w->n_toc);
	idx_w_raw(w, sb.data, sb.size);
	memset(pre, 0, sizeof pre);
	memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
	sv_le32_put(pre + IDX_OFF_VERSION, IDX_VERSION);
	sv_le64_put(pre + IDX_OFF_HEADER_OFF, hoff);
	sv_le64_put(pre + IDX_OFF_HEADER_LEN, sb.size);
	sv_le64_put(pre + IDX_OFF_HEADER_HASH, XXH3_64bits(sb.data, sb.size));
	sv_le64_put(pre + IDX_OFF_PRELUDE_HASH, XXH3_64bits(pre,
	    IDX_OFF_PRELUDE_HASH));
	msgpack_sbuffer_destroy(&sb);
	if (w->err != 0)
		return -1;
	if (w->fd < 0) {
		memcpy(w->mem->p, pre, sizeof pre);
		return 0;
	}
	r = pwrite(w->fd, pre, sizeof pre, 0);
	if (r != (ssize_t)sizeof pre) {
		w->err = r < 0 ? errno : EIO;
		return -1;
	}
	return 0;
}

/* A section of the file being extended kept where it is: its TOC entry
 * as it was (idx_extend_index()). */
static void
w_keep(struct writer *w, const struct toc_ent *src)
{
	XGROW(w->toc, w->cap_toc, w->n_toc + 1);
	w->toc[w->n_toc++] = *src;
}

/* The extension sections of ix: built ones from memory, stored ones not
 * yet read copied as they are (kept where they are with keep). */
static int
w_extensions(struct writer *w, const struct sv_index *ix, int keep)
{
	size_t i;
	char name[IDX_MAX_SECTION_NAME + 8];

	for (i = 0; i < ix->n_ext; i++) {
		const struct idx_ext *e = &ix->ext[i];

		snprintf(name, sizeof name, "%s%s", IDX_SEC_EXT_PREFIX,
		    e->name);
		if (keep && e->state >= 0 && e->toc.len > 0) {
			w_keep(w, &e->toc); /* stored, read or not */
		} else if (e->state == 1) {
			struct src src = {e->data, e->tape};

			w_section(w, name, &src, e->len, IDX_COMP_LZ4);
		}
		else if (e->state == 0 && ix->map != NULL)
			w_copy(w, &e->toc, ix->map);
		if (w->err != 0 || w->cancelled)
			return -1;
	}
	return 0;
}

int
idx_w_extensions(struct writer *w, const struct sv_index *ix)
{
	return w_extensions(w, ix, 0);
}

/* Writes the whole-snapshot sections. */
int
idx_w_snapshot(struct writer *w, const struct snapshot *s)
{
	/* strings and annotations are stored as they are and used in place:
	 * decompressing them cost a reopen more than all else (a few MB
	 * next to hundreds of MB of columns) */
	idx_w_section(w, IDX_SEC_STRS_DATA, s->strs.data, s->strs.len,
	    IDX_COMP_NONE);
	idx_w_section(w, IDX_SEC_STRS_OFF, s->strs.off, (uint64_t)s->strs.n * 8,
	    IDX_COMP_NONE);
	idx_w_section(w, IDX_SEC_FRAMES, s->frames,
	    (uint64_t)s->n_frames * sizeof *s->frames, IDX_COMP_LZ4);
	idx_w_section(w, IDX_SEC_STACK_OFF, s->stack_off,
	    ((uint64_t)s->n_stacks + 1) * 4, IDX_COMP_LZ4);
	idx_w_section(w, IDX_SEC_STACK_FRAMES, s->stack_frames,
	    s->n_stack_frames * 4, IDX_COMP_LZ4);
	idx_w_section(w, IDX_SEC_SEGMENTS, s->segments,
	    (uint64_t)s->n_segments * sizeof *s->segments, IDX_COMP_NONE);
	idx_w_section(w, IDX_SEC_BLOCKS, s->blocks,
	    (uint64_t)s->n_blocks * sizeof *s->blocks, IDX_COMP_NONE);
	idx_w_section(w, IDX_SEC_ANNOTATIONS, s->annotations,
	    (uint64_t)s->n_annotations * sizeof *s->annotations,
	    IDX_COMP_NONE);
	return idx_w_section(w, IDX_SEC_SETTINGS, s->settings,
	    (uint64_t)s->n_settings * sizeof *s->settings, IDX_COMP_LZ4);
}

int
idx_extend_keeps_all(const struct sv_index *ix)
{
	size_t i, k;

	for (i = 0; i < ix->n_toc; i++) {
		const struct toc_ent *t = &ix->toc[i];

		if (!idx_sec_is_ext(t->name))
			continue;
		for (k = 0; k < ix->n_ext; k++)
			if (ix->ext[k].state >= 0 && ix->ext[k].toc.len > 0 &&
			    ix->ext[k].toc.off == t->off)
				break;
		if (k == ix->n_ext)
			return 0;
	}
	return 1;
}

/* ix's sections and the extensions it lacked (built into ix->ext): the
 * sections of the file copied at w->off, or with keep their TOC entries
 * kept where they are. */
static int
w_sections(struct writer *w, const struct sv_index *ix, int keep)
{
	size_t i;

	for (i = 0; i < ix->n_toc; i++) {
		if (idx_sec_is_ext(ix->toc[i].name))
			continue;
		if (keep)
			w_keep(w, &ix->toc[i]);
		else
			w_copy(w, &ix->toc[i], ix->map);
	}
	return w_extensions(w, ix, keep);
}

/* The extensions ix lacked, appended to the file it was mapped from at
 * w->off (its end, w->fd open there), the sections it has kept where
 * they are: the TOC then idx_w_finish()'s, whose prelude, written last,
 * makes them part of the index. */
int
idx_extend_index(struct writer *w, const struct sv_index *ix)
{
	return w_sections(w, ix, 1);
}

/* Rewrites a mapped index with its sections plus the extensions it
 * lacked (built into ix->ext). Other extension sections are dropped. */
int
idx_rewrite_index(struct writer *w, const struct sv_index *ix,
    const struct src_key *key, const char *src_path, struct sv_error *err)
{
	uint8_t pre[IDX_PRELUDE_LEN];
	int r;

	memset(pre, 0, sizeof pre);
	memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
	idx_w_raw(w, pre, sizeof pre);
	(void)w_sections(w, ix, 0); /* a failure is w->err, finish's */
	r = idx_w_finish(w, key, src_path, ix->snap);
	if (r != 0)
		sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(w->err ? w->err : EIO));
	return r;
}
