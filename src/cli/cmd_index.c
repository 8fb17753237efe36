/*
 * snapview index: builds the index of a snapshot (or checks that the one
 * there is current) and says where it is, how big it is next to the
 * snapshot, and how long the open took.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "index/idx.h"
#include "util/json.h"
#include "util/units.h"

static double
seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
print_size(uint64_t n)
{
	char buf[32];

	fputs(sv_fmt_size(buf, sizeof buf, n), stdout);
}

/* Where a build's time went (idx.h): the parse, the sections after it,
 * and the rest of the open. */
static void
print_phases(const struct idx_info *info, double dt)
{
	double rest = dt - info->parse_s - info->sections_s;

	printf("       parse %.2f s, sections %.2f s, the rest %.2f s\n",
	    info->parse_s, info->sections_s, rest > 0 ? rest : 0);
}

int
cmd_index(const struct cli_opts *o)
{
	struct idx_opts io;
	struct cli_progress pb;
	struct sv_index *ix;
	struct sv_error err;
	struct idx_info info;
	double t0 = seconds(), dt;
	int r;

	sv_error_clear(&err);
	cli_index_opts(o, &io, &pb, o->file);
	/* the command that vouches for an index checks all of it */
	io.verify = IDX_VERIFY_FULL;
	cli_cancel_begin();
	r = idx_open(o->file, &io, &ix, &err);
	cli_cancel_end(&pb);
	cli_progress_end(&pb);
	if (r != 0)
		return cli_report(o->file, &err);
	dt = seconds() - t0;
	idx_get_info(ix, &info);
	if (o->json) {
		struct json j;

		/* the path holds the file's name: a string as any other */
		cli_json_init(&j);
		json_obj_begin(&j);
		if (info.path != NULL)
			json_kv_str(&j, "index", info.path);
		else {
			json_key(&j, "index");
			json_null(&j);
		}
		json_kv_u64(&j, "size", info.size);
		json_kv_u64(&j, "source_size", info.source_size);
		json_kv_bool(&j, "built", info.built);
		json_kv_double(&j, "seconds", dt);
		json_kv_double(&j, "parse_seconds", info.parse_s);
		json_kv_double(&j, "sections_seconds", info.sections_s);
		json_obj_end(&j);
		json_end(&j);
	} else if (info.path == NULL) {
		printf("index: in memory (not written)\n");
		printf("time:  %.2f s\n", dt);
	} else {
		printf("index: %s\n", cli_shown(info.path));
		printf("size:  ");
		print_size(info.size);
		if (info.source_size > 0)
			printf(" (%.2fx the snapshot, ",
			    (double)info.size / (double)info.source_size);
		else
			printf(" (");
		print_size(info.source_size);
		printf(")\n");
		printf("time:  %.2f s (%s)\n", dt,
		    info.built ? "built" : "up to date");
	}
	if (!o->json && info.built)
		print_phases(&info, dt);
	idx_close(ix);
	return 0;
}
