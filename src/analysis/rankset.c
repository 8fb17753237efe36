/*
 * A rank set: its members and the loading of their summaries, in this
 * process where the index is there and in child processes where it has
 * to be built. See rankset.h.
 */
#include "config.h"

#include "analysis/rankset.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "replay/replay_idx.h"
#include "util/fatal.h"
#include "util/fdio.h"
#include "util/le.h"
#include "util/units.h"
#include "util/tape.h"
#include "util/xalloc.h"

/* ---- members ------------------------------------------------------------- */

int64_t
an_rankset_rank_of(const char *name)
{
	const char *p, *base = strrchr(name, '/');
	int64_t found = -1;

	base = base != NULL ? base + 1 : name;
	for (p = base; *p != '\0'; p++) {
		const char *q = p + 4;
		int64_t v = 0;
		int digits = 0;

		if (strncasecmp(p, "rank", 4) != 0)
			continue;
		if (*q == '_' || *q == '-')
			q++;
		for (; isdigit((unsigned char)*q) && digits < 9; q++, digits++)
			v = v * 10 + (*q - '0');
		if (digits > 0 && !isdigit((unsigned char)*q))
			found = v;
	}
	return found;
}

static int
snapshot_name(const char *name)
{
	size_t n = strlen(name);

	if (name[0] == '.')
		return 0;
	return (n > 7 && strcmp(name + n - 7, ".pickle") == 0) ||
	    (n > 4 && strcmp(name + n - 4, ".pkl") == 0);
}

static void
add_member(struct an_rankset *rs, size_t *cap, char *path)
{
	struct an_rs_member *m;
	struct stat st;

	XGROW(rs->m, *cap, rs->n + 1);
	m = &rs->m[rs->n++];
	memset(m, 0, sizeof *m);
	m->path = path;
	m->state = AN_RS_PENDING;
	sv_error_clear(&m->err);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		m->size = (uint64_t)st.st_size;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The snapshot files of directory dir, sorted by name. */
static int
collect_dir(const char *dir, struct an_rankset *rs, size_t *cap,
    struct sv_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, ncap = 0, i;

	if (d == NULL)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	while ((de = readdir(d)) != NULL) {
		char *path;
		struct stat st;

		if (!snapshot_name(de->d_name))
			continue;
		xasprintf(&path, "%s%s%s", dir,
		    dir[strlen(dir) - 1] == '/' ? "" : "/", de->d_name);
		/* a directory or a device named *.pickle is no member */
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
		    !S_ISLNK(st.st_mode)) {
			free(path);
			continue;
		}
		XGROW(names, ncap, n + 1);
		names[n++] = path;
	}
	closedir(d);
	if (n == 0) {
		free(names);
		return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
		    "no snapshot files (*.pickle, *.pkl) in the directory");
	}
	qsort(names, n, sizeof *names, cmp_name);
	for (i = 0; i < n; i++)
		add_member(rs, cap, names[i]);
	free(names);
	return 0;
}

static int
cmp_rank(const void *a, const void *b)
{
	const struct an_rs_member *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Ranks from the names when each has its own, else the positions. */
static void
assign_ranks(struct an_rankset *rs)
{
	size_t i;

	rs->ranks_from_names = rs->n > 0;
	for (i = 0; i < rs->n; i++) {
		rs->m[i].rank = an_rankset_rank_of(rs->m[i].path);
		if (rs->m[i].rank < 0)
			rs->ranks_from_names = 0;
	}
	if (rs->ranks_from_names) {
		qsort(rs->m, rs->n, sizeof *rs->m, cmp_rank);
		for (i = 1; i < rs->n; i++)
			if (rs->m[i].rank == rs->m[i - 1].rank)
				rs->ranks_from_names = 0;
	}
	if (!rs->ranks_from_names)
		for (i = 0; i < rs->n; i++)
			rs->m[i].rank = (int64_t)i;
}

void
an_rankset_from_paths(char *const *paths, const int64_t *ranks, size_t n,
    struct an_rankset *rs)
{
	size_t cap = 0, i;

	memset(rs, 0, sizeof *rs);
	for (i = 0; i < n; i++) {
		add_member(rs, &cap, xstrdup(paths[i]));
		rs->m[i].rank = ranks[i];
	}
	rs->ranks_from_names = 1;
}

int
an_rankset_collect(char *const *args, size_t n, struct an_rankset *rs,
    struct sv_error *err)
{
	struct stat st;
	size_t cap = 0, i;

	memset(rs, 0, sizeof *rs);
	if (n == 1 && stat(args[0], &st) == 0 && S_ISDIR(st.st_mode)) {
		rs->dir = xstrdup(args[0]);
		if (collect_dir(args[0], rs, &cap, err) != 0) {
			an_rankset_free(rs);
			return -1;
		}
	} else {
		for (i = 0; i < n; i++)
			add_member(rs, &cap, xstrdup(args[i]));
	}
	assign_ranks(rs);
	return 0;
}

void
an_rankset_free(struct an_rankset *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++) {
		int k;

		free(rs->m[i].path);
		an_summary_destroy(&rs->m[i].sum);
		for (k = 0; k < AN_RS_EXTRA_MAX; k++)
			free(rs->m[i].extra[k]);
	}
	free(rs->m);
	free(rs->dir);
	memset(rs, 0, sizeof *rs);
}

/* ---- resources ----------------------------------------------------------- */

/*
 * An index build streams the events into the index and holds the
 * strings, frames and stacks: peak RSS 0.07x the snapshot for a 1 GB
 * training run and under 0.01x at 10 GB (bench/index.sh --scale), whose
 * frames repeat, but 1.3x for a 310 MB file whose every frame differs.
 * Taken as 0.75x the file plus 64 MiB for the program itself: the size
 * of a file does not say which it is.
 */
uint64_t
an_rankset_build_mem(uint64_t size)
{
	return size / 4 * 3 + ((uint64_t)64 << 20);
}

uint64_t
an_rankset_mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb;
	long pages, psize;

	if (f != NULL) {
		while (fgets(line, sizeof line, f) != NULL)
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
				fclose(f);
				return (uint64_t)kb * 1024;
			}
		fclose(f);
	}
	pages = sysconf(_SC_AVPHYS_PAGES);
	psize = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || psize <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)psize;
}

static unsigned
online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

/* ---- opening in this process --------------------------------------------- */

struct peek {
	int gave_up;            /* a build began: left to a child */
	char warn[4][512];      /* held until the open is known good */
	int n_warn;
};

static int
peek_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct peek *p = ctx;

	(void)done;
	(void)total;
	p->gave_up = 1;
	return 1;
}

static void
peek_warn(void *ctx, const char *msg)
{
	struct peek *p = ctx;

	if (p->n_warn < 4)
		snprintf(p->warn[p->n_warn++], sizeof p->warn[0], "%s", msg);
}

#define N_SECTIONS (2 + AN_RS_EXTRA_MAX)

static void
set_sections(struct idx_opts *io, struct idx_section_builder *sec,
    const struct an_rankset_opts *o)
{
	size_t i, n = o->n_extra < AN_RS_EXTRA_MAX ? o->n_extra
						  : AN_RS_EXTRA_MAX;

	sec[0] = replay_idx_section;
	sec[1] = an_summary_section;
	for (i = 0; i < n; i++)
		sec[2 + i] = o->extra[i];
	io->sections = io->no_cache ? NULL : sec;
	io->n_sections = io->no_cache ? 0 : 2 + n;
}

static size_t
n_extra(const struct an_rankset_opts *o)
{
	return o->n_extra < AN_RS_EXTRA_MAX ? o->n_extra : AN_RS_EXTRA_MAX;
}

/* Extra section i of an opened index: its stored bytes, else built from
 * the snapshot (an index in memory keeps none). NULL when neither. */
static uint8_t *
extra_of(const struct sv_index *ix, const struct an_rankset_opts *o,
    size_t i, size_t *len)
{
	const struct idx_section_builder *b = &o->extra[i];
	const uint8_t *p;
	uint8_t *data = NULL;
	struct sv_error err;

	if (idx_section(ix, b->name, &p, len) == 0) {
		data = xmalloc(*len + 1);
		memcpy(data, p, *len);
		return data;
	}
	sv_error_clear(&err);
	if (b->build_tape != NULL) {
		struct tape t;

		tape_init(&t, 0);
		if (b->build_tape(idx_snapshot(ix), b->arg, NULL, &t,
		    &err) == 0 && t.err == 0) {
			/* in memory (no limit): the tape's buffer is it */
			data = t.buf != NULL ? t.buf : xmalloc(1);
			*len = (size_t)tape_len(&t);
			return data;
		}
		tape_free(&t);
	} else if (b->build_index != NULL) {
		if (b->build_index(ix, b->arg, &data, len, &err) == 0)
			return data;
	} else if (b->build(idx_snapshot(ix), b->arg, &data, len,
	    &err) == 0) {
		return data;
	}
	*len = 0;
	return NULL;
}

#define MSG_MAX (64u << 20) /* a summary is KiB; anything this big lies */

static void
drop_extra(struct an_rs_member *m)
{
	int k;

	for (k = 0; k < AN_RS_EXTRA_MAX; k++) {
		free(m->extra[k]);
		m->extra[k] = NULL;
		m->extra_len[k] = 0;
	}
}

/* The extra sections of m's index, peeked as the summary is: 0 when
 * every one was there. */
static int
peek_extra(struct an_rs_member *m, const struct an_rankset_opts *o,
    const struct idx_opts *io)
{
	struct sv_error err;
	size_t i;

	for (i = 0; i < n_extra(o); i++) {
		sv_error_clear(&err);
		if (idx_peek_section(m->path, io, o->extra[i].name, MSG_MAX,
		    &m->extra[i], &m->extra_len[i], &err) != 0) {
			drop_extra(m);
			return -1;
		}
	}
	return 0;
}

/* Opens m's index if it is there. Returns 1 when a build is needed. */
static int
open_here(struct an_rs_member *m, const struct an_rankset_opts *o)
{
	struct idx_section_builder sec[N_SECTIONS];
	struct idx_opts io = *o->io;
	struct sv_index *ix;
	struct peek p;
	size_t k;
	int i, r;

	uint8_t *data;
	size_t len;
	char why[128];

	/* the summary alone, when an index has it: a few KiB, where
	 * opening the index validates and unpacks its whole model */
	if (idx_peek_section(m->path, &io, AN_SUM_SECTION, MSG_MAX, &data,
	    &len, &m->err) == 0) {
		r = an_summary_decode(data, len, &m->sum, why, sizeof why);
		free(data);
		if (r == 0 && peek_extra(m, o, &io) == 0) {
			m->state = AN_RS_OK;
			return 0;
		}
		if (r == 0)
			an_summary_destroy(&m->sum);
	}
	sv_error_clear(&m->err);
	memset(&p, 0, sizeof p);
	set_sections(&io, sec, o);
	io.progress = peek_progress;
	io.progress_ctx = &p;
	io.warn = peek_warn;
	io.warn_ctx = &p;
	if (idx_open(m->path, &io, &ix, &m->err) != 0) {
		if (p.gave_up)
			return 1;
		m->state = AN_RS_FAILED;
		return 0;
	}
	r = an_summary_of_index(ix, &m->sum, &m->err);
	for (k = 0; r == 0 && k < n_extra(o); k++)
		m->extra[k] = extra_of(ix, o, k, &m->extra_len[k]);
	idx_close(ix);
	m->state = r == 0 ? AN_RS_OK : AN_RS_FAILED;
	for (i = 0; i < p.n_warn && o->io->warn != NULL; i++)
		o->io->warn(o->io->warn_ctx, p.warn[i]);
	return 0;
}

/* ---- building in child processes ----------------------------------------- */

enum {
	MSG_PROGRESS = 'P', MSG_WARN = 'W', MSG_SUMMARY = 'S', MSG_ERROR = 'E',
	MSG_EXTRA = 'X'		/* u32 which, then the section's bytes */
};

static int
send_msg(int fd, int type, const void *a, size_t na, const void *b,
    size_t nb)
{
	uint8_t h[5];

	h[0] = (uint8_t)type;
	sv_le32_put(h + 1, (uint32_t)(na + nb));
	if (sv_write_all(fd, h, 5) != 0 ||
	    (na > 0 && sv_write_all(fd, a, na) != 0) ||
	    (nb > 0 && sv_write_all(fd, b, nb) != 0))
		return -1;
	return 0;
}

struct child {
	int fd;
	int last_pct;
	int gone;               /* the parent stopped reading */
};

static int
child_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct child *c = ctx;
	int pct = total > 0 ? (int)(done * 1000 / total) : 0;
	uint8_t b[16];

	if (pct == c->last_pct)
		return 0;
	c->last_pct = pct;
	sv_le64_put(b, done);
	sv_le64_put(b + 8, total);
	if (send_msg(c->fd, MSG_PROGRESS, b, sizeof b, NULL, 0) != 0)
		c->gone = 1;
	return c->gone; /* nobody waits for this build any more */
}

static void
child_warn(void *ctx, const char *msg)
{
	struct child *c = ctx;

	if (send_msg(c->fd, MSG_WARN, msg, strlen(msg), NULL, 0) != 0)
		c->gone = 1;
}

static int
child_error(int fd, const struct sv_error *e)
{
	uint8_t b[12];

	sv_le32_put(b, (uint32_t)e->code);
	sv_le64_put(b + 4, e->offset);
	return send_msg(fd, MSG_ERROR, b, sizeof b, e->msg, strlen(e->msg));
}

/* The child: builds m's index (or in memory) and sends its summary.
 * Returns the child's exit status. */
static int
child_run(const struct an_rs_member *m, const struct an_rankset_opts *o, int fd)
{
	struct idx_section_builder sec[N_SECTIONS];
	struct idx_opts io = *o->io;
	struct sv_index *ix;
	struct an_summary sum;
	struct sv_error err;
	struct child c = {fd, -1, 0};
	uint8_t *data, which[4];
	size_t len, k;

	/* the parent owns the terminal and its signals */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	xalloc_set_fatal_hook(NULL);
	sv_fatal_set_restore(NULL);
	sv_error_clear(&err);
	set_sections(&io, sec, o);
	io.progress = child_progress;
	io.progress_ctx = &c;
	io.warn = child_warn;
	io.warn_ctx = &c;
	if (idx_open(m->path, &io, &ix, &err) != 0)
		return child_error(fd, &err) != 0;
	if (an_summary_of_index(ix, &sum, &err) != 0)
		return child_error(fd, &err) != 0;
	/* the extra sections first: the summary is the answer */
	for (k = 0; k < n_extra(o); k++) {
		if ((data = extra_of(ix, o, k, &len)) == NULL)
			continue;
		sv_le32_put(which, (uint32_t)k);
		if (send_msg(fd, MSG_EXTRA, which, 4, data, len) != 0)
			return 1;
	}
	an_summary_encode(&sum, &data, &len);
	/* no cleanup: the process ends now */
	return send_msg(fd, MSG_SUMMARY, data, len, NULL, 0) != 0;
}

struct job {
	pid_t pid;
	int fd;
	size_t member;
	uint64_t mem;
	uint64_t done;          /* source bytes, from its progress */
	uint8_t *buf;
	size_t len, cap;
	int answered;           /* a summary or an error came */
};

struct loader {
	struct an_rankset *rs;
	const struct an_rankset_opts *o;
	struct job *jobs;
	unsigned n_jobs, max_jobs;
	uint64_t budget, in_use;
	size_t next;            /* next member to consider */
	struct an_rankset_progress pr;
	uint64_t bytes_finished;
};

static void
member_fail(struct an_rs_member *m, const char *what, const char *why)
{
	m->state = AN_RS_FAILED;
	sv_error_set(&m->err, SV_ERR_IO, SV_NO_OFFSET, "%s%s", what, why);
}

static int
job_start(struct loader *l, size_t k)
{
	struct an_rs_member *m = &l->rs->m[k];
	struct job *j = &l->jobs[l->n_jobs];
	int p[2];
	pid_t pid;

	if (pipe(p) != 0) {
		member_fail(m, "cannot start a build: ", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		member_fail(m, "cannot start a build: ", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		unsigned i;

		close(p[0]);
		for (i = 0; i < l->n_jobs; i++)
			close(l->jobs[i].fd);
		l->o->child_exit(child_run(m, l->o, p[1]));
		/* child_exit must not return: this copy of the parent must
		 * not go on */
		raise(SIGKILL);
	}
	close(p[1]);
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	memset(j, 0, sizeof *j);
	j->pid = pid;
	j->fd = p[0];
	j->member = k;
	j->mem = an_rankset_build_mem(m->size);
	l->in_use += j->mem;
	l->n_jobs++;
	l->pr.building = l->n_jobs;
	return 0;
}

/* Handles the complete messages in j's buffer. */
static void
job_messages(struct loader *l, struct job *j)
{
	struct an_rs_member *m = &l->rs->m[j->member];
	size_t off = 0;
	char why[160];

	while (j->len - off >= 5) {
		int type = j->buf[off];
		uint32_t n = sv_le32_get(j->buf + off + 1);
		const uint8_t *p = j->buf + off + 5;

		if (n > MSG_MAX) {
			j->answered = 1;
			member_fail(m, "the build sent nonsense", "");
			j->len = 0;
			return;
		}
		if (j->len - off - 5 < n)
			break;
		if (type == MSG_PROGRESS && n == 16) {
			j->done = sv_le64_get(p);
		} else if (type == MSG_WARN && l->o->io->warn != NULL) {
			char *msg = xstrndup((const char *)p, n);

			l->o->io->warn(l->o->io->warn_ctx, msg);
			free(msg);
		} else if (type == MSG_EXTRA && n >= 4 && !j->answered &&
		    sv_le32_get(p) < n_extra(l->o) &&
		    m->extra[sv_le32_get(p)] == NULL) {
			uint32_t k = sv_le32_get(p);

			m->extra[k] = xmalloc(n - 4 + 1);
			memcpy(m->extra[k], p + 4, n - 4);
			m->extra_len[k] = n - 4;
		} else if (type == MSG_SUMMARY && !j->answered) {
			j->answered = 1;
			if (an_summary_decode(p, n, &m->sum, why,
			    sizeof why) == 0) {
				m->state = AN_RS_OK;
				m->built = 1;
			} else {
				member_fail(m, why, "");
				drop_extra(m);
			}
		} else if (type == MSG_ERROR && n >= 12 && !j->answered) {
			drop_extra(m);
			j->answered = 1;
			m->state = AN_RS_FAILED;
			m->err.code = (enum sv_errcode)sv_le32_get(p);
			if (sv_errcode_status(m->err.code) == 0)
				m->err.code = SV_ERR_IO;
			m->err.offset = sv_le64_get(p + 4);
			snprintf(m->err.msg, sizeof m->err.msg, "%.*s",
			    (int)(n - 12), (const char *)p + 12);
		}
		off += 5 + (size_t)n;
	}
	memmove(j->buf, j->buf + off, j->len - off);
	j->len -= off;
}

/* Reads what j sent; 1 at its end. */
static int
job_read(struct loader *l, struct job *j)
{
	ssize_t r;

	XGROW(j->buf, j->cap, j->len + 65536);
	r = read(j->fd, j->buf + j->len, j->cap - j->len);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r <= 0)
		return 1;
	j->len += (size_t)r;
	job_messages(l, j);
	return 0;
}

static void
job_end(struct loader *l, unsigned i)
{
	struct job *j = &l->jobs[i];
	struct an_rs_member *m = &l->rs->m[j->member];
	int status = 0;
	char what[64];

	close(j->fd);
	while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!j->answered) {
		if (WIFSIGNALED(status))
			snprintf(what, sizeof what, "killed by signal %d",
			    WTERMSIG(status));
		else
			snprintf(what, sizeof what, "exit status %d",
			    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		member_fail(m, "the index build failed: ", what);
		drop_extra(m);
	}
	free(j->buf);
	l->in_use -= j->mem;
	l->bytes_finished += m->size;
	l->pr.done++;
	l->jobs[i] = l->jobs[--l->n_jobs];
	l->pr.building = l->n_jobs;
}

static void
jobs_kill(struct loader *l)
{
	unsigned i;

	for (i = 0; i < l->n_jobs; i++)
		kill(l->jobs[i].pid, SIGTERM);
	while (l->n_jobs > 0) {
		l->jobs[0].answered = 1;
		job_end(l, 0);
	}
}

/* Starts the builds that fit. */
static void
jobs_fill(struct loader *l)
{
	while (l->n_jobs < l->max_jobs && l->next < l->rs->n) {
		struct an_rs_member *m = &l->rs->m[l->next];
		uint64_t need;

		if (m->state != AN_RS_PENDING) {
			l->next++;
			continue;
		}
		need = an_rankset_build_mem(m->size);
		if (l->n_jobs > 0 && l->in_use + need > l->budget)
			return;
		l->next++;
		if (job_start(l, l->next - 1) != 0)
			l->pr.done++;
	}
}

static int
report(struct loader *l)
{
	unsigned i;

	if (l->o->progress == NULL)
		return 0;
	l->pr.bytes_done = l->bytes_finished;
	for (i = 0; i < l->n_jobs; i++)
		l->pr.bytes_done += l->jobs[i].done;
	return l->o->progress(l->o->progress_ctx, &l->pr);
}

static int
build_pending(struct an_rankset *rs, const struct an_rankset_opts *o,
    struct an_rankset_progress *pr, struct sv_error *err)
{
	struct loader l;
	struct pollfd *pfd;
	unsigned i, cpus = online_cpus();
	size_t k;
	int r = 0;

	memset(&l, 0, sizeof l);
	l.rs = rs;
	l.o = o;
	l.pr = *pr;
	l.max_jobs = o->jobs > 0 ? o->jobs : cpus;
	l.budget = o->mem_avail > 0 ? o->mem_avail : an_rankset_mem_available();
	l.budget = l.budget / 4 * 3;
	for (k = 0; k < rs->n; k++)
		if (rs->m[k].state == AN_RS_PENDING)
			l.pr.bytes_total += rs->m[k].size;
	l.jobs = xcalloc(l.max_jobs, sizeof *l.jobs);
	pfd = xcalloc(l.max_jobs, sizeof *pfd);
	jobs_fill(&l);
	while (l.n_jobs > 0) {
		for (i = 0; i < l.n_jobs; i++) {
			pfd[i].fd = l.jobs[i].fd;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if (poll(pfd, l.n_jobs, 100) < 0 && errno != EINTR)
			break;
		for (i = l.n_jobs; i-- > 0;)
			if (pfd[i].revents != 0 && job_read(&l, &l.jobs[i]))
				job_end(&l, i);
		jobs_fill(&l);
		if (report(&l) != 0) {
			jobs_kill(&l);
			r = sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET,
			    "cancelled");
			break;
		}
	}
	*pr = l.pr;
	free(pfd);
	free(l.jobs);
	return r;
}

int
an_rankset_load(struct an_rankset *rs, const struct an_rankset_opts *o,
    struct sv_error *err)
{
	struct an_rankset_progress pr;
	size_t k, pending = 0;

	memset(&pr, 0, sizeof pr);
	pr.total = rs->n;
	for (k = 0; k < rs->n; k++) {
		struct an_rs_member *m = &rs->m[k];

		if (m->state != AN_RS_PENDING)
			continue;
		if (!o->io->no_cache && open_here(m, o) == 0) {
			pr.done++;
			continue;
		}
		sv_error_clear(&m->err);
		m->state = AN_RS_PENDING;
		pending++;
	}
	if (o->progress != NULL && o->progress(o->progress_ctx, &pr) != 0)
		return sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET,
		    "cancelled");
	if (pending == 0)
		return 0;
	return build_pending(rs, o, &pr, err);
}

/* ---- the report ---------------------------------------------------------- */

static const struct an_rankset *sort_rs;

static int
cmp_row(const void *a, const void *b)
{
	const struct an_rs_row *x = a, *y = b;
	int64_t rx = sort_rs->m[x->member].rank;
	int64_t ry = sort_rs->m[y->member].rank;

	if (x->dev->peak != y->dev->peak)
		return x->dev->peak > y->dev->peak ? -1 : 1;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->dev->device < y->dev->device ? -1 : 1;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void
an_rankset_report(const struct an_rankset *rs, int64_t only,
    struct an_rs_report *out)
{
	size_t i, n = 0, cap = 0;
	uint32_t d;
	uint64_t *peaks;

	memset(out, 0, sizeof *out);
	for (i = 0; i < rs->n; i++) {
		const struct an_rs_member *m = &rs->m[i];

		if (m->state != AN_RS_OK) {
			out->n_failed++;
			continue;
		}
		for (d = 0; d < m->sum.n_dev; d++) {
			if (only >= 0 && m->sum.dev[d].device != only)
				continue;
			XGROW(out->rows, cap, n + 1);
			out->rows[n].member = i;
			out->rows[n++].dev = &m->sum.dev[d];
		}
	}
	out->n_rows = n;
	if (n == 0)
		return;
	sort_rs = rs;
	qsort(out->rows, n, sizeof *out->rows, cmp_row);
	peaks = xcalloc(n, sizeof *peaks);
	for (i = 0; i < n; i++)
		peaks[i] = out->rows[i].dev->peak;
	qsort(peaks, n, sizeof *peaks, cmp_u64);
	out->median = n % 2 ? peaks[n / 2] :
	    peaks[n / 2 - 1] / 2 + peaks[n / 2] / 2 +
	    (peaks[n / 2 - 1] % 2 + peaks[n / 2] % 2) / 2;
	free(peaks);
	if (out->median > 0)
		out->skew = (double)out->rows[0].dev->peak /
		    (double)out->median;
}

void
an_rankset_report_free(struct an_rs_report *r)
{
	free(r->rows);
	memset(r, 0, sizeof *r);
}

void
an_rankset_skew_text(const struct an_rankset *rs, const struct an_rs_report *r,
    char *buf, size_t size)
{
	const struct an_rs_row *top;
	char a[32], b[32], c[32], dev[32] = "";
	size_t i;

	if (r->n_rows == 0) {
		snprintf(buf, size, "No rank could be read.");
		return;
	}
	top = &r->rows[0];
	for (i = 1; i < r->n_rows; i++)
		if (r->rows[i].dev->device != top->dev->device)
			snprintf(dev, sizeof dev, " (device %u)",
			    top->dev->device);
	sv_fmt_size(a, sizeof a, top->dev->peak);
	sv_fmt_size(b, sizeof b, r->median);
	if (r->n_rows == 1)
		snprintf(buf, size, "One rank: rank %lld%s peaked at %s.",
		    (long long)rs->m[top->member].rank, dev, a);
	else if (r->median == 0 || r->skew < 1.05)
		snprintf(buf, size, "Rank %lld%s peaked highest at %s, within "
		    "5%% of the median peak (%s).",
		    (long long)rs->m[top->member].rank, dev, a, b);
	else
		snprintf(buf, size, "Rank %lld%s peaked highest at %s, %.2fx "
		    "the median peak (%s, +%s).",
		    (long long)rs->m[top->member].rank, dev, a, r->skew, b,
		    sv_fmt_size(c, sizeof c, top->dev->peak - r->median));
}
