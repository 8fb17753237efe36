/*
 * PYTORCH_CUDA_ALLOC_CONF read as PyTorch reads it, the settings a
 * snapshot recorded, and round_size() under them. See simconf.h.
 */
#include "config.h"

#include "replay/simconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KMIN_BLOCK 512ull
#define KLARGE_BUFFER (20 * SIMCONF_MIB)

void
simconf_default(struct sim_conf *c)
{
	memset(c, 0, sizeof *c);
	c->max_split = SIMCONF_NO_SPLIT_LIMIT;
	c->max_non_split_rounding = KLARGE_BUFFER;
}

static int
is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static unsigned
log2_floor(uint64_t v)
{
	unsigned k = 0;

	while (v >>= 1)
		k++;
	return k;
}

/* The tokens of AllocatorConfig::lexArgs(): the separators , : [ ] one
 * each, everything between them with the spaces dropped. */
#define CONF_MAX_TOKENS 256
struct lex {
	char tok[CONF_MAX_TOKENS][64];
	size_t n;
};

static int
lex(const char *s, struct lex *lx, char *why, size_t wl)
{
	char buf[64];
	size_t bl = 0;

	lx->n = 0;
	for (;; s++) {
		if (*s == '\0' || strchr(",:[]", *s) != NULL) {
			if (bl > 0) {
				if (lx->n == CONF_MAX_TOKENS)
					goto many;
				buf[bl] = '\0';
				memcpy(lx->tok[lx->n++], buf, bl + 1);
				bl = 0;
			}
			if (*s == '\0')
				return 0;
			if (lx->n == CONF_MAX_TOKENS)
				goto many;
			lx->tok[lx->n][0] = *s;
			lx->tok[lx->n++][1] = '\0';
		} else if (*s != ' ') {
			if (bl + 1 >= sizeof buf) {
				snprintf(why, wl, "a word longer than %zu "
				    "characters", sizeof buf - 1);
				return -1;
			}
			buf[bl++] = *s;
		}
	}
many:
	snprintf(why, wl, "more than %d words", CONF_MAX_TOKENS);
	return -1;
}

static const char *
tok(const struct lex *lx, size_t i)
{
	return i < lx->n ? lx->tok[i] : "";
}

static int
expect(const struct lex *lx, size_t i, const char *what, const char *key,
    char *why, size_t wl)
{
	if (strcmp(tok(lx, i), what) == 0)
		return 0;
	if (i >= lx->n)
		snprintf(why, wl, "%s: expected '%s' after it", key, what);
	else
		snprintf(why, wl, "%s: expected '%s', not '%s'", key, what,
		    tok(lx, i));
	return -1;
}

static int
number(const char *key, const char *s, uint64_t *v, char *why, size_t wl)
{
	char *end;
	unsigned long long u;

	errno = 0;
	if (*s < '0' || *s > '9')
		goto bad;
	u = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		goto bad;
	*v = u;
	return 0;
bad:
	snprintf(why, wl, "%s: '%s' is not a number", key, s);
	return -1;
}

static int
boolean(const char *key, const char *s, int *v, char *why, size_t wl)
{
	if (strcmp(s, "True") == 0 || strcmp(s, "False") == 0) {
		*v = s[0] == 'T';
		return 0;
	}
	snprintf(why, wl, "%s: expected True or False, not '%s'", key, s);
	return -1;
}

/* max_split_size_mb, max_non_split_rounding_mb: at least 20 (kLargeBuffer
 * in MiB), as parseMaxSplitSize() requires. */
static int
mib_value(const char *key, const char *s, uint64_t *out, char *why, size_t wl)
{
	uint64_t v;

	if (number(key, s, &v, why, wl) != 0)
		return -1;
	if (v < KLARGE_BUFFER / SIMCONF_MIB) {
		snprintf(why, wl, "%s: %s is below %llu, the least PyTorch "
		    "accepts", key, s, KLARGE_BUFFER / SIMCONF_MIB);
		return -1;
	}
	*out = v > UINT64_MAX / SIMCONF_MIB ? UINT64_MAX / SIMCONF_MIB *
	    SIMCONF_MIB : v * SIMCONF_MIB;
	return 0;
}

static int
divisions(const char *key, const char *s, uint32_t *out, char *why,
    size_t wl)
{
	uint64_t v;

	if (number(key, s, &v, why, wl) != 0)
		return -1;
	if (v != 0 && (!is_pow2(v) || v > (1u << 30))) {
		snprintf(why, wl, "%s: %s divisions: a power of two or 0",
		    key, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* parseRoundUpPower2Divisions(): one number for every interval, or
 * [MIB:D, ..., >:D] where MIB is a power of two naming the interval of
 * sizes from MIB MiB, the first one also filling the intervals below it
 * and > the ones above the last. */
static int
parse_rounding(const struct lex *lx, size_t *ip, struct sim_conf *c,
    char *why, size_t wl)
{
	const char *key = "roundup_power2_divisions";
	size_t i = *ip, last = 0, k, idx;
	int first = 1;
	uint32_t d;
	uint64_t mib;

	if (strcmp(tok(lx, i), "[") != 0) {
		if (divisions(key, tok(lx, i), &d, why, wl) != 0)
			return -1;
		for (k = 0; k < SIMCONF_INTERVALS; k++)
			c->div[k] = d;
		*ip = i;
		return 0;
	}
	for (i++; i < lx->n && strcmp(tok(lx, i), "]") != 0; i++) {
		const char *interval = tok(lx, i);

		if (expect(lx, ++i, ":", key, why, wl) != 0)
			return -1;
		if (divisions(key, tok(lx, ++i), &d, why, wl) != 0)
			return -1;
		if (strcmp(interval, ">") == 0) {
			for (k = last; k < SIMCONF_INTERVALS; k++)
				c->div[k] = d;
		} else {
			if (number(key, interval, &mib, why, wl) != 0)
				return -1;
			if (!is_pow2(mib)) {
				snprintf(why, wl, "%s: interval %s: a power "
				    "of two (MiB)", key, interval);
				return -1;
			}
			idx = log2_floor(mib);
			if (idx > SIMCONF_INTERVALS - 1)
				idx = SIMCONF_INTERVALS - 1;
			if (first) {
				for (k = 0; k < idx; k++)
					c->div[k] = d;
				first = 0;
			}
			c->div[idx] = d;
			last = idx;
		}
		if (strcmp(tok(lx, i + 1), "]") != 0 &&
		    expect(lx, ++i, ",", key, why, wl) != 0)
			return -1;
	}
	if (i >= lx->n) {
		snprintf(why, wl, "%s: no closing ']'", key);
		return -1;
	}
	*ip = i;
	return 0;
}

/* Keys PyTorch accepts that do not change where device memory goes. */
static const char *const inert_keys[] = {
	"release_lock_on_cudamalloc", "release_lock_on_hipmalloc",
	"pinned_use_cuda_host_register", "pinned_use_hip_host_register",
	"pinned_num_register_threads", "pinned_use_background_threads",
	"pinned_reserve_segment_size_mb",
	"graph_capture_record_stream_reuse", NULL
};

static int
parse_key(const struct lex *lx, size_t *ip, struct sim_conf *c, char *why,
    size_t wl)
{
	const char *key = tok(lx, *ip);
	size_t i = *ip;
	double g;
	char *end;
	size_t k;

	if (expect(lx, ++i, ":", key, why, wl) != 0)
		return -1;
	if (++i >= lx->n) {
		snprintf(why, wl, "%s: no value", key);
		return -1;
	}
	*ip = i;
	if (strcmp(key, "expandable_segments") == 0)
		return boolean(key, tok(lx, i), &c->expandable, why, wl);
	if (strcmp(key, "max_split_size_mb") == 0)
		return mib_value(key, tok(lx, i), &c->max_split, why, wl);
	if (strcmp(key, "max_non_split_rounding_mb") == 0)
		return mib_value(key, tok(lx, i), &c->max_non_split_rounding,
		    why, wl);
	if (strcmp(key, "roundup_power2_divisions") == 0)
		return parse_rounding(lx, ip, c, why, wl);
	if (strcmp(key, "garbage_collection_threshold") == 0) {
		errno = 0;
		g = strtod(tok(lx, i), &end);
		if (errno != 0 || end == tok(lx, i) || *end != '\0') {
			snprintf(why, wl, "%s: '%s' is not a number", key,
			    tok(lx, i));
			return -1;
		}
		if (!(g > 0 && g < 1)) {
			snprintf(why, wl, "%s: %s is not between 0 and 1 "
			    "(both excluded)", key, tok(lx, i));
			return -1;
		}
		c->gc_threshold = g;
		return 0;
	}
	if (strcmp(key, "backend") == 0) {
		if (strcmp(tok(lx, i), "native") == 0)
			return 0;
		snprintf(why, wl, "backend: '%s': only the native caching "
		    "allocator is simulated", tok(lx, i));
		return -1;
	}
	for (k = 0; inert_keys[k] != NULL; k++)
		if (strcmp(key, inert_keys[k]) == 0)
			return 0;
	snprintf(why, wl, "unknown key '%s'", key);
	return -1;
}

int
simconf_parse(const char *text, struct sim_conf *c, char *why, size_t wl)
{
	struct lex *lx = malloc(sizeof *lx);
	size_t i;
	int rc = -1;

	if (lx == NULL) {
		snprintf(why, wl, "out of memory");
		return -1;
	}
	simconf_default(c);
	if (lex(text, lx, why, wl) != 0)
		goto out;
	for (i = 0; i < lx->n; i++) {
		const char *t = tok(lx, i);

		if (strchr(",:[]", t[0]) != NULL && t[1] == '\0') {
			snprintf(why, wl, "'%s' where a key was expected", t);
			goto out;
		}
		if (parse_key(lx, &i, c, why, wl) != 0)
			goto out;
		if (i + 1 < lx->n) {
			i++;
			if (expect(lx, i, ",", tok(lx, i - 1), why, wl) != 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(lx);
	return rc;
}

/* "{1: 0, 2: 4, ...}" as snap_load renders the dict: pairs of numbers,
 * the key an interval in MiB. */
static void
rounding_from_text(const char *p, struct sim_conf *c)
{
	unsigned long long mib, d;
	char *end;
	unsigned idx;

	while (*p != '\0') {
		while (*p != '\0' && (*p < '0' || *p > '9'))
			p++;
		if (*p == '\0')
			return;
		mib = strtoull(p, &end, 10);
		p = end;
		while (*p == ' ' || *p == ':' || *p == '\'')
			p++;
		if (*p < '0' || *p > '9')
			continue;
		d = strtoull(p, &end, 10);
		p = end;
		if (!is_pow2(mib) || (d != 0 && !is_pow2(d)) || d > (1u << 30))
			continue;
		idx = log2_floor(mib);
		if (idx < SIMCONF_INTERVALS)
			c->div[idx] = (uint32_t)d;
	}
}

int
simconf_from_snapshot(const struct snapshot *s, struct sim_conf *c)
{
	const char *v;
	char why[160];
	long long ms;
	double g;

	simconf_default(c);
	if (!(s->features & SNAP_F_SETTINGS))
		return 0;
	v = snap_setting(s, "PYTORCH_CUDA_ALLOC_CONF");
	if (v != NULL && simconf_parse(v, c, why, sizeof why) != 0)
		simconf_default(c);
	if ((v = snap_setting(s, "max_split_size")) != NULL) {
		ms = strtoll(v, NULL, 10);
		c->max_split = ms <= 0 ? SIMCONF_NO_SPLIT_LIMIT :
		    (uint64_t)ms;
	}
	if ((v = snap_setting(s, "expandable_segments")) != NULL)
		c->expandable = strcmp(v, "True") == 0 ||
		    strcmp(v, "1") == 0;
	if ((v = snap_setting(s, "garbage_collection_threshold")) != NULL) {
		g = strtod(v, NULL);
		c->gc_threshold = g > 0 && g < 1 ? g : 0;
	}
	if ((v = snap_setting(s, "roundup_power2_divisions")) != NULL)
		rounding_from_text(v, c);
	return 1;
}

int
simconf_equal(const struct sim_conf *a, const struct sim_conf *b)
{
	return a->max_split == b->max_split &&
	    a->max_non_split_rounding == b->max_non_split_rounding &&
	    memcmp(a->div, b->div, sizeof a->div) == 0 &&
	    a->gc_threshold == b->gc_threshold &&
	    a->expandable == b->expandable && a->pad == b->pad;
}

static void
add(char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
add(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, size - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used += (size_t)n;
}

void
simconf_format(const struct sim_conf *c, char *buf, size_t size)
{
	struct sim_conf d;
	size_t used = 0, k, j;
	int same = 1;

	if (size == 0)
		return;
	buf[0] = '\0';
	simconf_default(&d);
	if (c->expandable)
		add(buf, size, &used, "expandable_segments:True");
	if (c->max_split != d.max_split)
		add(buf, size, &used, "%smax_split_size_mb:%llu",
		    used ? "," : "",
		    (unsigned long long)(c->max_split / SIMCONF_MIB));
	if (c->max_non_split_rounding != d.max_non_split_rounding)
		add(buf, size, &used, "%smax_non_split_rounding_mb:%llu",
		    used ? "," : "", (unsigned long long)
		    (c->max_non_split_rounding / SIMCONF_MIB));
	if (memcmp(c->div, d.div, sizeof d.div) != 0) {
		for (k = 1; k < SIMCONF_INTERVALS; k++)
			same = same && c->div[k] == c->div[0];
		if (same)
			add(buf, size, &used, "%sroundup_power2_divisions:%u",
			    used ? "," : "", c->div[0]);
		else {
			/* the first entry also fills the intervals below it;
			 * the others name one interval each (">" would
			 * overwrite the last one named, as PyTorch reads it) */
			for (j = 1; j < SIMCONF_INTERVALS &&
			    c->div[j] == c->div[0]; j++)
				;
			add(buf, size, &used, "%sroundup_power2_divisions:"
			    "[%llu:%u", used ? "," : "", 1ull << (j - 1),
			    c->div[0]);
			for (k = j; k < SIMCONF_INTERVALS; k++)
				add(buf, size, &used, ",%llu:%u", 1ull << k,
				    c->div[k]);
			add(buf, size, &used, "]");
		}
	}
	if (c->gc_threshold > 0)
		add(buf, size, &used, "%sgarbage_collection_threshold:%g",
		    used ? "," : "", c->gc_threshold);
}

uint32_t
simconf_divisions(const struct sim_conf *c, uint64_t size)
{
	unsigned lg = size ? log2_floor(size) : 0;
	int idx = (int)lg - 20;

	if (idx < 0)
		idx = 0;
	if (idx > SIMCONF_INTERVALS - 1)
		idx = SIMCONF_INTERVALS - 1;
	return c->div[idx];
}

/* roundup_power2_next_division(): the next of d equal steps between the
 * powers of two around size. */
static uint64_t
next_division(uint64_t size, uint32_t d)
{
	uint64_t floor2, step, low;

	if (is_pow2(size))
		return size;
	floor2 = 1ull << log2_floor(size);
	step = floor2 >> log2_floor(d);
	if (step == 0)
		return floor2 << 1;
	low = size & ~(step - 1);
	return low == size ? size : low + step;
}

uint64_t
simconf_round(const struct sim_conf *c, uint64_t req)
{
	uint64_t n;
	uint32_t d;

	/* a request no allocator could round (a file can say 2^64 - 1):
	 * more than any free block, never wrapped to a small one */
	if (req > (UINT64_MAX >> 2) - c->pad)
		return (UINT64_MAX >> 2) / KMIN_BLOCK * KMIN_BLOCK;
	n = req + c->pad;
	if (n < KMIN_BLOCK)
		return KMIN_BLOCK;
	d = simconf_divisions(c, n);
	if (d > 1 && n > KMIN_BLOCK * d)
		return next_division(n, d);
	return (n + KMIN_BLOCK - 1) / KMIN_BLOCK * KMIN_BLOCK;
}
