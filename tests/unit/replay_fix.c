/*
 * Fixtures of the replay's unit tests (replay_fix.h).
 */
#include "config.h"

#include "replay_fix.h"

/* Pushes a final segment with blocks; totals computed from them. */
void
push_seg(struct snapshot *s, uint64_t addr, uint64_t stream, int large,
    int exp, const struct fb *b, int nb)
{
	struct snap_segment *sg = snap_push_segment(s);
	uint64_t off = addr;
	int i;

	sg->addr = addr;
	sg->stream = stream;
	sg->is_large = (uint8_t)large;
	sg->is_expandable = (uint8_t)exp;
	sg->first_block = s->n_blocks;
	sg->n_blocks = (uint32_t)nb;
	for (i = 0; i < nb; i++) {
		struct snap_block *k = snap_push_block(s);

		sg = &s->segments[s->n_segments - 1];
		k->addr = off;
		k->size = b[i].size;
		k->state = (uint8_t)b[i].state;
		k->requested_size = b[i].req;
		off += b[i].size;
		sg->total_size += b[i].size;
		if (b[i].state == A)
			sg->allocated_size += b[i].size;
		if (b[i].state != I) {
			sg->active_size += b[i].size;
			sg->requested_size += b[i].req;
		}
	}
	s->features |= SNAP_F_REQUESTED;
}

void
ev(struct snapshot *s, unsigned action, uint64_t addr, uint64_t size)
{
	snap_trace_push(s, snap_trace_get(s, 0), action, addr, size, 0, 0);
}

struct replay *
open_ok(const struct snapshot *s)
{
	struct sv_error err;
	struct replay *r = replay_new(s, 0, &err);

	ck_assert_ptr_nonnull(r);
	return r;
}

void
seek_ok(struct replay *r, int64_t at)
{
	struct sv_error err;

	ck_assert_int_eq(replay_seek(r, at, &err), 0);
}

uint64_t
check_issues(struct replay *r)
{
	struct sv_error err;
	struct replay_check c;
	uint64_t n, i;

	ck_assert_int_eq(replay_check(r, &c, &err), 0);
	n = c.n_issues;
	for (i = 0; i < c.n_kept && i < 5; i++)
		fprintf(stderr, "issue ev %lld 0x%llx: %s\n",
		    (long long)c.issues[i].ev,
		    (unsigned long long)c.issues[i].addr, c.issues[i].msg);
	replay_check_destroy(&c);
	return n;
}
