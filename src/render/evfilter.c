/*
 * Event filters and frame-text matching. See evfilter.h.
 */
#include "config.h"

#include "render/evfilter.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/fmt.h"
#include "util/xalloc.h"

/* Is q (lower case, qn bytes) in s without regard to ASCII case? A q
 * ending in a digit must not be followed by one. */
static int
contains(const char *s, const char *q, size_t qn)
{
	size_t i, k;

	for (i = 0; s[i] != '\0'; i++) {
		for (k = 0; k < qn && s[i + k] != '\0'; k++)
			if (tolower((unsigned char)s[i + k]) != q[k])
				break;
		if (k < qn)
			continue;
		if (isdigit((unsigned char)q[qn - 1]) &&
		    isdigit((unsigned char)s[i + qn]))
			continue;
		return 1;
	}
	return 0;
}

static int
frame_matches(const struct snapshot *s, uint32_t f, const char *q, size_t qn)
{
	const struct snap_frame *fr = &s->frames[f];
	char label[1024];

	if (fr->line == UINT64_MAX || fr->line == 0)
		snprintf(label, sizeof label, "%s %s", snap_str(s,
		    fr->filename), snap_str(s, fr->name));
	else
		snprintf(label, sizeof label, "%s:%" PRIu64 " %s",
		    snap_str(s, fr->filename), fr->line, snap_str(s, fr->name));
	return contains(label, q, qn);
}

uint8_t *
evfilter_frames(const struct snapshot *s, const char *text)
{
	uint8_t *fm = xcalloc(s->n_frames + 1, 1);
	size_t qn = strlen(text);
	uint32_t f;

	for (f = 0; qn > 0 && f < s->n_frames; f++)
		fm[f] = (uint8_t)frame_matches(s, f, text, qn);
	return fm;
}

uint8_t *
evfilter_stacks(const struct snapshot *s, const char *text)
{
	uint8_t *fm, *sm;
	uint32_t st, i, n;
	const uint32_t *fs;

	sm = xcalloc(s->n_stacks + 1, 1);
	if (text[0] == '\0')
		return sm;
	fm = evfilter_frames(s, text);
	for (st = 1; st < s->n_stacks; st++) {
		fs = snap_stack(s, st, &n);
		for (i = 0; i < n; i++)
			if (fs[i] < s->n_frames && fm[fs[i]]) {
				sm[st] = 1;
				break;
			}
	}
	free(fm);
	return sm;
}

int
evfilter_parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;
	int shift = 0;

	if (!isdigit((unsigned char)*s) && *s != '.')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v < 0)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case '\0': break;
	case 'B': shift = 0; end++; break;
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	default: return -1;
	}
	if (shift > 0 && (*end == 'i' || *end == 'I'))
		end++;
	if (shift > 0 && (*end == 'b' || *end == 'B'))
		end++;
	if (*end != '\0')
		return -1;
	v *= (double)(UINT64_C(1) << shift);
	if (v >= 18446744073709551615.0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* Actions named by word w: a bit set, 0 when w names none. */
static uint32_t
action_bits(const char *w)
{
	unsigned a;

	if (strcmp(w, "free") == 0)
		return 1u << SNAP_FREE_REQUESTED | 1u << SNAP_FREE_COMPLETED;
	if (strcmp(w, "segment") == 0)
		return 1u << SNAP_SEGMENT_ALLOC | 1u << SNAP_SEGMENT_FREE |
		    1u << SNAP_SEGMENT_MAP | 1u << SNAP_SEGMENT_UNMAP;
	for (a = 0; a < SNAP_ACTION_COUNT; a++)
		if (strcmp(w, snap_action_name(a)) == 0)
			return 1u << a;
	return 0;
}

/* One size condition word (">1M", "<=4K", "=512", "1M..4M"): 1 when
 * parsed, 0 when w is not one, -1 when it is one with a bad number. */
static int
size_word(struct evfilter *f, const char *w)
{
	const char *dots = strstr(w, "..");
	char a[64];
	uint64_t v, v2;

	if (strncmp(w, "size", 4) == 0 && strchr("<>=", w[4]) != NULL)
		w += 4;
	if (dots != NULL && isdigit((unsigned char)w[0])) {
		snprintf(a, sizeof a, "%.*s", (int)(dots - w), w);
		if (evfilter_parse_size(a, &v) != 0 ||
		    evfilter_parse_size(dots + 2, &v2) != 0 || v > v2)
			return -1;
		f->size_min = v;
		f->size_max = v2;
		return 1;
	}
	if (w[0] != '<' && w[0] != '>' && w[0] != '=')
		return 0;
	if (evfilter_parse_size(w + 1 + (w[1] == '='), &v) != 0)
		return -1;
	if (w[0] == '=') {
		f->size_min = f->size_max = v;
	} else if (w[0] == '>') {
		if (w[1] != '=' && v == UINT64_MAX)
			return -1;
		f->size_min = w[1] == '=' ? v : v + 1;
	} else {
		if (w[1] != '=' && v == 0)
			return -1;
		f->size_max = w[1] == '=' ? v : v - 1;
	}
	return 1;
}

static void
append(char *buf, size_t size, const char *w)
{
	size_t n = strlen(buf);

	snprintf(buf + n, size - n, "%s%s", n > 0 ? " " : "", w);
}

int
evfilter_parse(struct evfilter *f, const struct snapshot *s, const char *q,
    char *err, size_t errsize)
{
	struct evfilter n;
	char buf[256], *w, *save = NULL;
	size_t i;
	uint32_t bits;
	int r;

	memset(&n, 0, sizeof n);
	n.size_max = UINT64_MAX;
	snprintf(buf, sizeof buf, "%s", q);
	for (w = strtok_r(buf, " \t", &save); w != NULL;
	    w = strtok_r(NULL, " \t", &save)) {
		append(n.desc, sizeof n.desc, w);
		if ((bits = action_bits(w)) != 0) {
			n.actions |= bits;
			continue;
		}
		if ((r = size_word(&n, w)) != 0) {
			if (r < 0) {
				snprintf(err, errsize, "bad size in '%s' "
				    "(sizes take B K M G T: >1M, 4K..2M)", w);
				return -1;
			}
			continue;
		}
		if (strncmp(w, "stream=", 7) == 0) {
			if (fmt_parse_u64(w + 7, &n.stream) != 0) {
				snprintf(err, errsize, "bad stream in '%s'", w);
				return -1;
			}
			n.has_stream = 1;
			continue;
		}
		if (w[0] == '0' && (w[1] == 'x' || w[1] == 'X') &&
		    fmt_parse_u64(w, &n.addr) == 0) {
			n.has_addr = 1;
			continue;
		}
		append(n.text, sizeof n.text, w);
	}
	for (i = 0; n.text[i] != '\0'; i++)
		n.text[i] = (char)tolower((unsigned char)n.text[i]);
	if (n.text[0] != '\0') {
		n.stack_match = evfilter_stacks(s, n.text);
		n.n_stacks = s->n_stacks;
	}
	evfilter_destroy(f);
	*f = n;
	return 0;
}

void
evfilter_destroy(struct evfilter *f)
{
	free(f->stack_match);
	memset(f, 0, sizeof *f);
	f->size_max = UINT64_MAX;
}

int
evfilter_empty(const struct evfilter *f)
{
	return f->actions == 0 && f->size_min == 0 &&
	    f->size_max == UINT64_MAX && !f->has_stream && !f->has_addr &&
	    f->text[0] == '\0';
}

int
evfilter_match(const struct evfilter *f, const struct snap_trace *t,
    uint64_t i)
{
	unsigned act = snap_ev_action(t, i);
	uint64_t v, a;
	uint32_t st;

	if (f->actions != 0 && (act >= 32 || !(f->actions & 1u << act)))
		return 0;
	v = snap_ev_size(t, i);
	if (v < f->size_min || v > f->size_max)
		return 0;
	if (f->has_stream && snap_ev_stream(t, i) != f->stream)
		return 0;
	if (f->has_addr) {
		/* an oom event's address is the device's free bytes */
		a = snap_ev_addr(t, i);
		if (act == SNAP_OOM || a > f->addr ||
		    f->addr - a >= (v > 0 ? v : 1))
			return 0;
	}
	if (f->text[0] != '\0') {
		st = snap_ev_stack(t, i);
		if (f->stack_match == NULL || st >= f->n_stacks ||
		    !f->stack_match[st])
			return 0;
	}
	return 1;
}
