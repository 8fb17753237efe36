#ifndef SNAPVIEW_RENDER_STACKTREE_H
#define SNAPVIEW_RENDER_STACKTREE_H
/*
 * The call-stack tree of the top view: live bytes at every level of the
 * stacks that hold them, bottom-up as `snapview top --frames K` prints
 * them (the call site first, then the frames that called it), with
 * expandable and collapsible nodes, a subtree focus, and an optional
 * first level of groups (categories).
 *
 * Input: one entry per distinct stack (bytes, blocks, and a group when
 * grouping). A node is a path prefix: the entries are sorted by path, so
 * a node is a range of them and its children are the runs of that range
 * that continue with the same frame. Only the rows the expansion shows
 * are built (O(entries under expanded nodes + shown rows)), when the
 * entries or the expansion change, not per frame drawn.
 *
 * Paths: with framework frames hidden, the call site (an_site_of: the one
 * rule of analysis/site.h) and the user frames that called it;
 * shown, every frame of the stack innermost first except those
 * memory_viz filters and the caching allocator's own at the start (its
 * malloc or free: the path starts at their caller). Expansion and
 * selection are remembered by path, so they survive new entries (the
 * cursor moved).
 *
 * An entry of blocks allocated before the trace and freed in it
 * (free_stack: its stack is that of the free, analysis/top.h) has a
 * first node of its own (the site or frame with STREE_FREED), shown as
 * "freed at SITE".
 *
 * Pure: no curses, no I/O except stree_write.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/site.h"
#include "render/cellbuf.h"
#include "util/u64map.h"

#define STREE_MAX_DEPTH 256
/* Pseudo frames: the empty stack, group g (STREE_GROUP + g), and the call
 * site id k of the first level (STREE_SITE + k; a C++ site is named by
 * more than one frame, "AccumulateGrad -> at::new_empty_strided"). */
#define STREE_NO_STACK 0xffffffffu
#define STREE_GROUP 0xfff00000u
#define STREE_SITE 0x80000000u
#define STREE_FREED 0x40000000u  /* flag: the first node of free_stack */

struct stree_entry {
	uint32_t stack;
	uint32_t group;          /* used when the tree is grouped */
	uint64_t bytes, count;
	int free_stack;          /* blocks allocated before the trace, stack
				    of their free */
};

struct stree_row {
	uint32_t depth;          /* in the path: 0 = call site or group */
	uint32_t frame;          /* frame id or pseudo frame */
	uint64_t lo, hi;         /* its entries */
	uint64_t bytes, count;
	uint64_t key;            /* hash of its path */
	uint32_t top;            /* entry with the most bytes (its stack) */
	uint8_t kids;            /* has children */
	uint8_t open;
	uint8_t pad[2];
};

struct stree {
	const struct snapshot *s;       /* borrowed */
	struct an_sites *sites;         /* borrowed */
	int framework;                  /* show framework frames */
	int grouped;                    /* first level: entry groups */
	/* name of group g for a label (borrowed text); set when grouped */
	const char *(*group_name)(void *ctx, uint32_t g);
	void *group_ctx;
	/* entries sorted by path; path of entry i: frames[off[i]..off[i+1]) */
	struct stree_entry *ents;
	uint64_t n_ents, cap_ents;
	uint64_t *off;
	uint32_t *frames;
	uint64_t n_frames, cap_frames;
	uint64_t bytes, count;          /* everything */
	/* expansion: open = expand_all, except the nodes in toggled */
	int expand_all;
	struct u64map toggled;
	/* focus: only the subtree of this path is shown */
	uint32_t root[STREE_MAX_DEPTH];
	uint32_t root_len;
	/* the rows shown */
	struct stree_row *rows;
	uint64_t n_rows, cap_rows;
	uint64_t sel, first;
	int utf8;
};

void stree_init(struct stree *t, const struct snapshot *s,
    struct an_sites *sites);
void stree_destroy(struct stree *t);

/* Replaces the entries (copied): paths are resolved, sorted, the rows
 * rebuilt, the selection kept on the same path (or its nearest ancestor
 * still there). */
void stree_set(struct stree *t, const struct stree_entry *e, uint64_t n);
/* Re-resolves the paths after framework or grouped changed. */
void stree_refresh(struct stree *t);

/* Row operations on the selection: open (1), close (0) or toggle (-1)
 * the selected node. Closing a node that is closed or a leaf selects its
 * parent. Returns 1 when something changed. */
int stree_open(struct stree *t, int how);
/* Expands every node, or collapses them all when they are. */
void stree_expand_all(struct stree *t);
/* Focuses the subtree of the selected node; on the focused node itself,
 * goes one level back up. */
void stree_focus(struct stree *t);

/* The selected row, or NULL when there are none. */
const struct stree_row *stree_selected(const struct stree *t);
/* Stack of the largest entry under row r (for its call stack). */
uint32_t stree_row_stack(const struct stree *t, const struct stree_row *r);
/* Label of a row's node (raw file text: escape before showing), without
 * the "freed at" of a STREE_FREED node. */
char *stree_label(const struct stree *t, uint32_t frame, char *buf,
    size_t size);
/* Is the node a first node of blocks freed in the trace and allocated
 * before it (STREE_FREED)? */
int stree_freed(const struct stree *t, uint32_t frame);

/* Draws a header and the rows into (x, y, w, h); first moves to keep the
 * selection visible. */
void stree_render(struct stree *t, struct cellbuf *cb, int x, int y, int w,
    int h, int focused);
/* The rows shown, as text (labels whole, escaped). 0, or -1 on a write
 * error. */
int stree_write(const struct stree *t, FILE *f);

#endif
