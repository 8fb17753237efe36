/*
 * -o FILE: a temporary file beside the target, put in place at the end
 * (cli_out.h).
 */
#include "config.h"

#include "cli/cli_out.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/xalloc.h"

int
cli_out_open(const struct cli_opts *o, struct cli_out *out)
{
	struct stat st;
	const char *slash, *base;
	size_t dl;
	mode_t mask;
	int fd;

	memset(out, 0, sizeof *out);
	if (o->output == NULL || *o->output == '\0') {
		fprintf(stderr, "snapview: %s needs -o FILE\nTry 'snapview "
		    "--help'.\n", o->cmd);
		return CLI_EXIT_USAGE;
	}
	out->path = o->output;
	out->force = o->force;
	if (!o->force && lstat(o->output, &st) == 0) {
		fprintf(stderr, "snapview: %s: exists; --force replaces it\n",
		    cli_shown(o->output));
		return CLI_EXIT_USAGE;
	}
	slash = strrchr(o->output, '/');
	base = slash != NULL ? slash + 1 : o->output;
	dl = (size_t)(base - o->output);
	if (*base == '\0') {
		fprintf(stderr, "snapview: %s: not a file name\n",
		    cli_shown(o->output));
		return CLI_EXIT_USAGE;
	}
	out->tmp = xmalloc(dl + strlen(base) + 16);
	memcpy(out->tmp, o->output, dl);
	snprintf(out->tmp + dl, strlen(base) + 16, ".%s.XXXXXX", base);
	if ((fd = mkstemp(out->tmp)) < 0) {
		fprintf(stderr, "snapview: %s: %s\n", cli_shown(o->output),
		    strerror(errno));
		free(out->tmp);
		out->tmp = NULL;
		return CLI_EXIT_IO;
	}
	mask = umask(0);
	umask(mask);
	(void)fchmod(fd, 0666 & ~mask);
	if ((out->f = fdopen(fd, "w")) == NULL) {
		close(fd);
		cli_out_abort(out);
		fprintf(stderr, "snapview: %s: %s\n", cli_shown(o->output),
		    strerror(errno));
		return CLI_EXIT_IO;
	}
	return 0;
}

void
cli_out_abort(struct cli_out *out)
{
	if (out->f != NULL)
		fclose(out->f);
	out->f = NULL;
	if (out->tmp != NULL)
		unlink(out->tmp);
	free(out->tmp);
	out->tmp = NULL;
}

int
cli_out_commit(struct cli_out *out)
{
	int bad, e = 0;

	bad = fflush(out->f) != 0 || ferror(out->f);
	if (bad)
		e = errno;
	if (fclose(out->f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	out->f = NULL;
	if (!bad && out->force && rename(out->tmp, out->path) != 0) {
		bad = 1;
		e = errno;
	} else if (!bad && !out->force) {
		if (link(out->tmp, out->path) != 0) {
			struct stat st;

			e = errno;
			/* a file system without hard links: a rename, when
			 * the name is still free (a race there is lost to
			 * whoever took it between the look and the rename) */
			if ((e == EPERM || e == ENOTSUP || e == EOPNOTSUPP) &&
			    lstat(out->path, &st) != 0 && errno == ENOENT &&
			    rename(out->tmp, out->path) == 0) {
				free(out->tmp);
				out->tmp = NULL;
				return 0;
			}
			bad = 1;
		}
		unlink(out->tmp);
	}
	if (bad) {
		fprintf(stderr, "snapview: %s: %s%s\n", cli_shown(out->path),
		    strerror(e), e == EEXIST ? "; --force replaces it" : "");
		cli_out_abort(out);
		return CLI_EXIT_IO;
	}
	free(out->tmp);
	out->tmp = NULL;
	return 0;
}
