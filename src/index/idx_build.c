/*
 * Building an index: the loader parses the snapshot into heap columns;
 * extension sections are built from it; then, device by device, the
 * timeline is computed and the trace columns, timeline arrays and LOD
 * pyramid are written straight from their arrays (no copies) and freed,
 * which keeps the builder's own memory near one device's worth. The header
 * (msgpack TOC) goes last, then the fixed prelude at offset 0. Where the
 * file goes, and when it replaces another, is idx_locate.c's business.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/idx_int.h"
#include "util/xalloc.h"

struct load_progress {
	const struct idx_opts *o;
};

static int
load_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	const struct idx_opts *o = ((struct load_progress *)ctx)->o;

	/* The parse is the first 90% of the work. */
	return o->progress(o->progress_ctx, done - done / 10, total);
}

static int
load_snapshot(const char *path, const struct idx_opts *o,
    struct snapshot **out, struct sv_error *err)
{
	struct snap_load_opts lo;
	struct load_progress lp = {o};

	memset(&lo, 0, sizeof lo);
	if (o->progress != NULL) {
		lo.progress = load_progress_cb;
		lo.progress_ctx = &lp;
	}
	if (o->load != NULL)
		return o->load(path, &lo, out, err);
	return snap_load_file(path, &lo, out, err);
}

static int
valid_section_name(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > 40)
		return 0;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
			(name[i] >= 'A' && name[i] <= 'Z') ||
			(name[i] >= '0' && name[i] <= '9') ||
			strchr("_.-", name[i]) != NULL))
			return 0;
	return 1;
}

/* Builds the extension sections opts asks for and ix lacks. */
int
idx_build_extensions(struct sv_index *ix, const struct snapshot *s,
    const struct idx_opts *o, struct sv_error *err)
{
	size_t i;

	for (i = 0; i < o->n_sections; i++) {
		const struct idx_section_builder *sb = &o->sections[i];
		const uint8_t *d;
		size_t n;
		struct idx_ext *e;
		uint8_t *data = NULL;
		size_t len = 0;

		if (!valid_section_name(sb->name))
			return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
			    "bad section name '%s'", sb->name);
		if (idx_section(ix, sb->name, &d, &n) == 0)
			continue;
		if (sb->build(s, sb->arg, &data, &len, err) != 0)
			return -1;
		ix->ext = xreallocarray(ix->ext, ix->n_ext + 1,
		    sizeof *ix->ext);
		e = &ix->ext[ix->n_ext++];
		snprintf(e->name, sizeof e->name, "%s", sb->name);
		e->data = data != NULL ? data : xmalloc(1);
		e->len = len;
	}
	return 0;
}

int
idx_missing_extensions(const struct sv_index *ix, const struct idx_opts *o)
{
	size_t i;
	const uint8_t *d;
	size_t n;

	for (i = 0; i < o->n_sections; i++)
		if (idx_section(ix, o->sections[i].name, &d, &n) != 0)
			return 1;
	return 0;
}

/*
 * A build overlaps its phases on a second thread (the first open is what
 * the user waits for). Both jobs only read the snapshot, as the main
 * thread does meanwhile (timelines); each is joined before anything it
 * reads is freed, and the writer is used by one thread at a time (the
 * trace job is joined before the main thread writes again). Without a
 * thread, a job runs in place.
 */
struct ext_job {
	pthread_t th;
	int running;             /* started and not joined */
	struct sv_index ext;     /* the sections built */
	const struct snapshot *s;
	const struct idx_opts *o;
	struct sv_error err;
	int rc;
};

static void *
ext_job_run(void *arg)
{
	struct ext_job *j = arg;

	j->rc = idx_build_extensions(&j->ext, j->s, j->o, &j->err);
	return NULL;
}

static void
ext_job_start(struct ext_job *j, const struct snapshot *s,
    const struct idx_opts *o)
{
	memset(j, 0, sizeof *j);
	j->s = s;
	j->o = o;
	sv_error_clear(&j->err);
	if (o->n_sections == 0)
		return;
	if (pthread_create(&j->th, NULL, ext_job_run, j) == 0)
		j->running = 1;
	else
		ext_job_run(j);
}

/* Waits for the job (again: a no-op); -1 with err set if it failed. */
static int
ext_job_join(struct ext_job *j, struct sv_error *err)
{
	if (j->running) {
		pthread_join(j->th, NULL);
		j->running = 0;
	}
	if (j->rc != 0) {
		if (err != NULL)
			*err = j->err;
		return -1;
	}
	return 0;
}

static void
ext_job_free(struct ext_job *j)
{
	ext_job_join(j, NULL);
	while (j->ext.n_ext > 0)
		free(j->ext.ext[--j->ext.n_ext].data);
	free(j->ext.ext);
	j->ext.ext = NULL;
}

/* Writes one device's trace columns (w_trace). */
struct trace_job {
	pthread_t th;
	int running;
	struct writer *w;
	uint32_t d;
	const struct snap_trace *t;
};

static void *
trace_job_run(void *arg)
{
	struct trace_job *j = arg;

	(void)idx_w_trace(j->w, j->d, j->t); /* failures stay in w */
	return NULL;
}

static void
trace_job_start(struct trace_job *j, struct writer *w, uint32_t d,
    const struct snap_trace *t)
{
	memset(j, 0, sizeof *j);
	j->w = w;
	j->d = d;
	j->t = t;
	if (t == NULL)
		return;
	if (pthread_create(&j->th, NULL, trace_job_run, j) == 0)
		j->running = 1;
	else
		trace_job_run(j);
}

static void
trace_job_join(struct trace_job *j)
{
	if (j->running) {
		pthread_join(j->th, NULL);
		j->running = 0;
	}
}

/* Streams s (heap, consumed: trace columns are freed as written) into the
 * open temp file. Extension sections come from the job, joined here
 * before the first trace column is freed. */
static int
write_index(struct writer *w, struct snapshot *s, const struct src_key *key,
    const char *src_path, struct ext_job *job, struct sv_error *err)
{
	uint32_t n_dev = snap_device_count(s), d;
	struct hdr_trace *tr;
	struct hdr_tl *tl;
	uint8_t pre[IDX_PRELUDE_LEN];
	int r = -1;

	tr = xcalloc(s->n_traces + 1, sizeof *tr);
	tl = xcalloc(n_dev + 1, sizeof *tl);
	for (d = 0; d < s->n_traces; d++) {
		tr[d].n = s->traces[d].n;
		tr[d].cols = idx_trace_cols(&s->traces[d]);
	}
	w->est = idx_estimate_size(s);
	/* A prelude that fails its checksum until the real one is written:
	 * the magic says the file is ours, the zero hash that it is not
	 * complete. */
	memset(pre, 0, sizeof pre);
	memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
	idx_w_raw(w, pre, sizeof pre);
	idx_w_snapshot(w, s);
	for (d = 0; d < n_dev && w->err == 0 && !w->cancelled; d++) {
		struct idx_timeline t;
		struct idx_lod_bucket *lod;
		struct trace_job tj;
		int tl_rc;

		/* the trace columns are written while the timeline is
		 * computed from them */
		trace_job_start(&tj, w, d,
		    d < s->n_traces ? &s->traces[d] : NULL);
		tl_rc = idx_timeline_build(s, d, &t, err);
		trace_job_join(&tj);
		if (tl_rc != 0)
			goto out;
		if (ext_job_join(job, err) != 0) {
			idx_timeline_destroy(&t);
			goto out;
		}
		if (d < s->n_traces)
			snap_trace_free_columns(&s->traces[d]);
		if (w->err != 0 || w->cancelled) {
			idx_timeline_destroy(&t);
			break;
		}
		lod = xmalloc((idx_lod_count(t.n_events, NULL) + 1) *
		    sizeof *lod);
		idx_lod_fill(&t, lod);
		idx_w_timeline(w, d, &t, lod);
		idx_hdr_from_tl(&tl[d], &t);
		free(lod);
		idx_timeline_destroy(&t);
	}
	for (; d < s->n_traces && w->err == 0; d++) {
		/* empty traces past the last device with data */
		idx_w_trace(w, d, &s->traces[d]);
	}
	if (ext_job_join(job, err) != 0)
		goto out;
	idx_w_extensions(w, &job->ext);
	if (idx_w_finish(w, key, src_path, s, tr, tl, n_dev) == 0)
		r = 0;
out:
	if (r != 0 && w->cancelled)
		sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET, "cancelled");
	else if (r != 0 && w->err != 0)
		sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(w->err));
	free(tr);
	free(tl);
	return r;
}

/* Parses the snapshot at path and writes its index into fd (a fresh temp
 * file holding the magic). Returns 0, or -1 with err set. */
int
idx_build_into(int fd, const char *path, const struct src_key *key,
    const struct idx_opts *o, struct sv_error *err)
{
	struct snapshot *s = NULL;
	struct ext_job job;
	struct writer w;
	char *abs;
	int r = -1;

	memset(&job, 0, sizeof job);
	memset(&w, 0, sizeof w);
	if (load_snapshot(path, o, &s, err) == 0) {
		/* the extension sections are built meanwhile */
		ext_job_start(&job, s, o);
		w.fd = fd;
		w.o = o;
		w.src_size = key->size;
		abs = realpath(path, NULL);
		r = write_index(&w, s, key, abs != NULL ? abs : path, &job,
		    err);
		free(abs);
		ext_job_join(&job, NULL); /* before s goes */
	}
	snap_free(s);
	ext_job_free(&job);
	free(w.toc);
	return r;
}

/* In-memory index: the loaded snapshot plus heap timelines. */
int
idx_build_memory(const char *path, const struct idx_opts *o,
    struct sv_index **out, struct sv_error *err)
{
	struct sv_index *ix = xcalloc(1, sizeof *ix);
	uint32_t d;

	if (load_snapshot(path, o, &ix->snap, err) != 0) {
		free(ix);
		return -1;
	}
	ix->in_memory = 1;
	ix->built = 1;
	ix->source_size = ix->snap->source_size;
	ix->n_devs = snap_device_count(ix->snap);
	ix->devs = xcalloc(ix->n_devs + 1, sizeof *ix->devs);
	for (d = 0; d < ix->n_devs; d++) {
		if (idx_timeline_build(ix->snap, d, &ix->devs[d].tl, err) != 0)
			goto fail;
		idx_lod_build(&ix->devs[d].lod, &ix->devs[d].tl);
	}
	if (idx_build_extensions(ix, ix->snap, o, err) != 0)
		goto fail;
	*out = ix;
	return 0;
fail:
	idx_index_free(ix);
	return -1;
}
