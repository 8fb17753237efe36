/*
 * Export and copy: w writes the open view (list, table, tree) or, with no
 * view open, the stack in the detail pane as it shows it (framework
 * frames folded unless unfolded), as text to a file named at a prompt
 * (a name ending in .svg: the timeline as SVG, render/svg.h); C copies
 * that stack to the user's clipboard through the terminal (OSC 52: it
 * travels over SSH, and tmux takes it with set-clipboard on). No
 * terminal answers an OSC 52, so the status line says the stack was
 * sent, not that it was copied.
 *
 * A file is created with O_CREAT|O_EXCL|O_NOFOLLOW, so nothing that
 * exists is touched, a symbolic link included. An existing file is
 * overwritten only when the user says so at a second prompt, and only
 * when it is a regular file, not a link: it is opened without following
 * links and without blocking (a FIFO), checked to be the file that was
 * asked about, then truncated.
 */
#include "config.h"

#include "tui/export.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render/fmt.h"
#include "render/frames.h"
#include "render/svg.h"
#include "render/tl_modes.h"
#include "tui/pane.h"
#include "tui/view.h"
#include "util/escape.h"
#include "util/xalloc.h"

#define COPY_MAX (64 * 1024)    /* bytes of text copied at most */

/* The stack in the detail pane as text, as the pane shows it: its
 * title, its line of information, then its frames innermost first
 * (escaped), framework runs folded into their line unless unfolded (z),
 * each frame whole. */
static int
write_stack(struct app *a, FILE *f)
{
	char title[512], info[512], line[1024];
	struct frame_line *fl;
	uint32_t stack;
	size_t n, i;

	stack = pane_detail_describe(a, title, sizeof title, info, sizeof info);
	fprintf(f, "%s\n", title);
	if (info[0] != '\0')
		fprintf(f, "%s\n", info);
	n = frames_layout(a->snap, stack, a->unfold, NULL, 0);
	fl = xcalloc(n + 1, sizeof *fl);
	frames_layout(a->snap, stack, a->unfold, fl, n);
	if (n == 0)
		fprintf(f, "(no stack recorded)\n");
	for (i = 0; i < n; i++) {
		if (fl[i].nfold > 0)
			fprintf(f, "%s %u framework frame%s (z unfolds)\n",
			    a->utf8 ? "\xe2\x96\xb8" : "+", fl[i].nfold,
			    fl[i].nfold == 1 ? "" : "s");
		else
			fprintf(f, "%s\n", frames_format(a->snap, fl[i].frame,
			    line, sizeof line));
	}
	free(fl);
	return ferror(f) ? -1 : 0;
}

/* What w writes: the open view, else the stack. */
static int
write_view(struct app *a, FILE *f)
{
	int r = views_write(a, f);

	return r == 1 ? write_stack(a, f) : r;
}

void
export_begin(struct app *a)
{
	const struct view_ops *o = views_open_ops(a);
	char name[128];

	snprintf(name, sizeof name, "snapview-%s-%" PRId64 ".txt",
	    o != NULL && o->write != NULL ? o->name : "stack",
	    a->view.cursor);
	app_prompt(a, PROMPT_EXPORT, "write to file: ", name);
}

/* "~/x" is under $HOME. */
static void
expand(const char *in, char *out, size_t size)
{
	const char *home = getenv("HOME");

	if (in[0] == '~' && in[1] == '/' && home != NULL && home[0] != '\0')
		snprintf(out, size, "%s%s", home, in + 1);
	else
		snprintf(out, size, "%s", in);
}

/* The timeline of the device shown as SVG, in its stacking mode when
 * that groups the allocations, else by call site, the peak marked. */
static int
write_svg(struct app *a, FILE *f)
{
	struct svg_opts so;
	struct svg_mark peak;
	char why[128];

	memset(&so, 0, sizeof so);
	so.width = 1100;
	so.height = 360;
	so.st = tl_stack_grouped(a->view.stack) ? a->view.stack :
	    TL_STACK_SITE;
	so.bands = 12;
	so.xml_decl = 1;
	peak.ev = a->tm.tl->peak_ev;
	peak.kind = SVG_MARK_PEAK;
	peak.label = "peak";
	so.marks = &peak;
	so.n_marks = 1;
	so.title = "Active Memory Timeline";
	if (svg_timeline(f, &a->tm, &so, why, sizeof why) != 0) {
		app_msg(a, "no SVG: %s", why);
		errno = EINVAL;
		return -1;
	}
	return ferror(f) ? -1 : 0;
}

/* A file name ending in .svg. */
static int
is_svg(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && strcmp(path + n - 4, ".svg") == 0;
}

static void
finish(struct app *a, int fd, const char *shown, int svg)
{
	FILE *f = fdopen(fd, "w");
	int r;

	if (f == NULL) {
		close(fd);
		app_msg(a, "%s: %s", shown, strerror(errno));
		return;
	}
	r = svg ? write_svg(a, f) : write_view(a, f);
	if (fclose(f) != 0 || r != 0)
		app_msg(a, "%s: write failed: %s", shown, strerror(errno));
	else
		app_msg(a, "wrote %s", shown);
}

void
export_to(struct app *a, const char *name)
{
	char path[1024], shown[256], label[96];
	struct stat ls;
	int fd;

	if (name[0] == '\0') {
		app_msg(a, "nothing written: no file name");
		return;
	}
	expand(name, path, sizeof path);
	sv_escape(shown, sizeof shown, path, strlen(path));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd >= 0) {
		finish(a, fd, shown, is_svg(path));
		return;
	}
	if (errno != EEXIST) {
		app_msg(a, "%s: %s", shown, strerror(errno));
		return;
	}
	if (lstat(path, &ls) == 0 && !S_ISREG(ls.st_mode)) {
		/* only a regular file is ever overwritten: no question */
		app_msg(a, "%s: not a regular file%s: nothing written", shown,
		    S_ISLNK(ls.st_mode) ? " (a symbolic link)" : "");
		return;
	}
	snprintf(a->export_path, sizeof a->export_path, "%s", path);
	snprintf(label, sizeof label, "%.60s exists: overwrite? (y/n) ",
	    shown);
	app_prompt(a, PROMPT_CONFIRM, label, NULL);
}

void
export_confirm(struct app *a, int yes)
{
	char shown[256];
	struct stat ls, fs;
	int fd;

	sv_escape(shown, sizeof shown, a->export_path,
	    strlen(a->export_path));
	if (!yes) {
		app_msg(a, "nothing written");
		return;
	}
	if (lstat(a->export_path, &ls) != 0) {
		app_msg(a, "%s: %s", shown, strerror(errno));
		return;
	}
	if (!S_ISREG(ls.st_mode)) {
		app_msg(a, "%s: not a regular file%s: nothing written", shown,
		    S_ISLNK(ls.st_mode) ? " (a symbolic link)" : "");
		return;
	}
	fd = open(a->export_path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd < 0) {
		app_msg(a, "%s: %s", shown, strerror(errno));
		return;
	}
	/* the file asked about, still a regular file */
	if (fstat(fd, &fs) != 0 || !S_ISREG(fs.st_mode) ||
	    fs.st_dev != ls.st_dev || fs.st_ino != ls.st_ino ||
	    ftruncate(fd, 0) != 0) {
		close(fd);
		app_msg(a, "%s: changed while asking: nothing written", shown);
		return;
	}
	finish(a, fd, shown, is_svg(a->export_path));
}

/* ---- copy ---------------------------------------------------------------- */

static void
base64(const unsigned char *in, size_t n, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, k = 0;
	uint32_t v;

	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
		    in[i + 2];
		out[k++] = t[v >> 18 & 63];
		out[k++] = t[v >> 12 & 63];
		out[k++] = t[v >> 6 & 63];
		out[k++] = t[v & 63];
	}
	if (n - i == 1) {
		v = (uint32_t)in[i] << 16;
		out[k++] = t[v >> 18 & 63];
		out[k++] = t[v >> 12 & 63];
		out[k++] = '=';
		out[k++] = '=';
	} else if (n - i == 2) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[k++] = t[v >> 18 & 63];
		out[k++] = t[v >> 12 & 63];
		out[k++] = t[v >> 6 & 63];
		out[k++] = '=';
	}
	out[k] = '\0';
}

size_t
export_copy_len(const char *text, size_t len, size_t max)
{
	size_t n = max;

	if (len <= max)
		return len;
	/* whole lines: no character and no escape cut (a stack's lines
	 * are far shorter than max); else a whole character */
	while (n > 0 && text[n - 1] != '\n')
		n--;
	return n > 0 ? n : sv_utf8_fit(text, max);
}

void
export_copy_stack(struct app *a, FILE *term)
{
	char *text = NULL, *b64;
	const char *tmux;
	size_t len = 0, lines = 0, i;
	FILE *m;

	if (a->no_clipboard) {
		app_msg(a, "copy is off (--no-clipboard); w writes to a file");
		return;
	}
	m = open_memstream(&text, &len);
	if (m == NULL) {
		app_msg(a, "copy: %s", strerror(errno));
		return;
	}
	write_stack(a, m);
	fclose(m);
	len = export_copy_len(text, len, COPY_MAX);
	for (i = 0; i < len; i++)
		lines += text[i] == '\n';
	b64 = xmalloc(len / 3 * 4 + 8);
	base64((const unsigned char *)text, len, b64);
	/* the text is escaped (no control characters) and travels as
	 * base64: nothing of it reaches the terminal as a command */
	fprintf(term, "\033]52;c;%s\a", b64);
	fflush(term);
	/* nothing answers an OSC 52: whether it reached the clipboard is
	 * the terminal's (and tmux's set-clipboard) business, so say only
	 * what was done */
	tmux = getenv("TMUX");
	app_msg(a, "stack (%zu line%s) sent by OSC 52: %s", lines,
	    lines == 1 ? "" : "s", tmux != NULL && tmux[0] != '\0' ?
	    "tmux may need set-clipboard on" :
	    "copied if the terminal allows");
	free(b64);
	free(text);
}
