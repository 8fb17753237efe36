#ifndef SNAPVIEW_REPLAY_REPLAY_IDX_H
#define SNAPVIEW_REPLAY_REPLAY_IDX_H
/*
 * Replay checkpoints kept in the index, so a reopen seeks at once with no
 * backward pass. The index layer stores them as the extension section
 * "replay.3" (it knows nothing of replay itself): one record per device
 * with a trace, {u64 device, u64 length, replay_checkpoints_save()
 * bytes}, all little-endian. The name changes with the blob's layout
 * (".2": lists kept as changes, "SVRPCK03"; ".3": the forward pass's
 * findings too, "SVRPCK04"), so an index with an older section gets the
 * new one built on its next open, and the rewrite drops the old one.
 */
#include "index/idx.h"
#include "replay/replay.h"

/* The section builder to pass in idx_opts.sections. */
extern const struct idx_section_builder replay_idx_section;

/* A replay of device d of the index's snapshot: from the saved section
 * when it is there and valid, read through an index reader (its seeks
 * decode the pieces they need, idx_reader_open(); ix must outlive the
 * replay), else built afresh (the backward pass). NULL with err set when
 * neither works. */
struct replay *replay_from_index(const struct sv_index *ix, uint32_t d,
    struct sv_error *err);

#endif
