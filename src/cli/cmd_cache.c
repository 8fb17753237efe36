/*
 * snapview cache [--list | --trim | --clear]: the index cache directory
 * ($XDG_CACHE_HOME/snapview or --cache-dir), what it holds and its limit,
 * or evicting down to the limit, or emptying it. Only files the cache
 * itself wrote are touched (index/idx_cache.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "index/idx_cache.h"
#include "util/json.h"
#include "util/units.h"
#include "util/xalloc.h"

static void
print_list(const char *dir, uint64_t max, int env_set,
    const struct idx_cache_entry *e, size_t n)
{
	char a[32], b[32], when[32];
	uint64_t total = 0;
	struct tm tm;
	time_t t;
	size_t i;

	for (i = 0; i < n; i++)
		total += e[i].size;
	printf("cache: %s\n", cli_shown(dir));
	printf("limit: %s (%s)\n", sv_fmt_size(a, sizeof a, max),
	    env_set ? IDX_CACHE_MAX_ENV : "default; " IDX_CACHE_MAX_ENV
	    " sets it");
	printf("used:  %s in %zu index%s\n", sv_fmt_size(b, sizeof b, total),
	    n, n == 1 ? "" : "es");
	if (n == 0)
		return;
	printf("\n  %-16s  %10s  %s\n", "last used", "size", "index");
	for (i = 0; i < n; i++) {
		t = (time_t)e[i].used;
		if (localtime_r(&t, &tm) == NULL ||
		    strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm) == 0)
			snprintf(when, sizeof when, "?");
		printf("  %-16s  %10s  %s\n", when,
		    sv_fmt_size(a, sizeof a, e[i].size), cli_shown(e[i].name));
	}
}

static void
json_list(const char *dir, uint64_t max, const struct idx_cache_entry *e,
    size_t n)
{
	struct json j;
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < n; i++)
		total += e[i].size;
	cli_json_init(&j);
	json_obj_begin(&j);
	json_kv_str(&j, "dir", dir);
	json_kv_u64(&j, "limit", max);
	json_kv_u64(&j, "total", total);
	json_key(&j, "entries");
	json_arr_begin(&j);
	for (i = 0; i < n; i++) {
		json_obj_begin(&j);
		json_kv_str(&j, "name", e[i].name);
		json_kv_u64(&j, "size", e[i].size);
		json_kv_i64(&j, "last_used", e[i].used);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

static void
print_removed(const struct cli_opts *o, const char *dir, uint64_t n,
    uint64_t bytes)
{
	struct json j;
	char a[32];

	if (o->json) {
		cli_json_init(&j);
		json_obj_begin(&j);
		json_kv_str(&j, "dir", dir);
		json_kv_u64(&j, "removed", n);
		json_kv_u64(&j, "bytes", bytes);
		json_obj_end(&j);
		json_end(&j);
		return;
	}
	printf("cache: %s\n", cli_shown(dir));
	printf("removed: %" PRIu64 " index%s, %s\n", n, n == 1 ? "" : "es",
	    sv_fmt_size(a, sizeof a, bytes));
}

int
cmd_cache(const struct cli_opts *o)
{
	struct idx_cache_entry *e;
	struct sv_error err;
	uint64_t max, n = 0, bytes = 0;
	size_t ne;
	char *dir;
	const char *env = getenv(IDX_CACHE_MAX_ENV);
	int r;

	sv_error_clear(&err);
	if (idx_cache_limit(&max, &err) != 0) {
		fprintf(stderr, "snapview: warning: %s\n", cli_shown(err.msg));
		env = NULL;
		sv_error_clear(&err);
	}
	dir = o->cache_dir != NULL ? xstrdup(o->cache_dir)
				   : idx_cache_default_dir();
	if (dir == NULL) {
		cli_error(NULL, SV_NO_OFFSET, "no cache directory (neither "
		    "XDG_CACHE_HOME nor HOME is set)");
		return CLI_EXIT_USAGE;
	}
	switch (o->cache_op) {
	case CLI_CACHE_CLEAR:
		r = idx_cache_clear(dir, &n, &bytes, &err);
		break;
	case CLI_CACHE_TRIM:
		r = idx_cache_trim(dir, max, NULL, &n, &bytes, &err);
		break;
	default:
		r = idx_cache_list(dir, &e, &ne, &err);
		if (r == 0) {
			if (o->json)
				json_list(dir, max, e, ne);
			else
				print_list(dir, max, env != NULL &&
				    env[0] != '\0', e, ne);
			idx_cache_list_free(e, ne);
		}
		break;
	}
	if (r != 0) {
		r = cli_report(dir, &err);
		free(dir);
		return r;
	}
	if (o->cache_op == CLI_CACHE_CLEAR || o->cache_op == CLI_CACHE_TRIM)
		print_removed(o, dir, n, bytes);
	free(dir);
	return CLI_EXIT_OK;
}
