#ifndef SNAPVIEW_ANALYSIS_SUMMARY_H
#define SNAPVIEW_ANALYSIS_SUMMARY_H
/*
 * The summary of one snapshot, device by device: the figures of a rank
 * overview (snapview ranks, the viewer on several files). It is computed
 * once, from the snapshot, by the extension section builder below, and
 * kept in the index as the section "summary.1", a few KiB, so that an
 * overview of N indexed ranks reads N small sections and no snapshot.
 *
 * Per device with data:
 *   - the Active Memory Timeline peak (requested bytes), its first event,
 *     its time after the first event and the step that holds it;
 *   - the most reserved memory and its event; reserved and allocated
 *     (requested) bytes after the last event;
 *   - the number of oom events;
 *   - waste: reserved minus allocated bytes at the most-reserved event
 *     (memory the allocator held and no tensor used, when it held the
 *     most: rounding, free blocks, cached segments);
 *   - the call site holding most bytes at the peak (top.h, one frame);
 *   - the leading leak suspect as leaks.h ranks them: the first site when
 *     it grows every step (judged only with two complete steps);
 *   - the steps (steps.h) as event ranges, at most AN_SUM_MAX_STEPS;
 *   - the timeline downsampled to at most AN_SUM_SPARK samples: sample k
 *     is the highest total over events [k n / S, (k + 1) n / S), as a
 *     fraction of the peak in 1/65535;
 *   - what stats counts over the events (stats.h, struct an_ev_counts:
 *     events by action, streams, first and last time), so that stats on
 *     a reopen reads no event.
 *
 * Encoding (little-endian):
 * "SVSUM" 0 0 2, u32 devices, then per device the fields of struct
 * an_sum_dev in order (strings as u32 length + bytes), the samples as
 * u32 count + u16 each, the steps as u32 count + (i64 first, i64 last)
 * each, then the counts: u32 n (SNAP_ACTION_COUNT + 1), n x u64 events
 * by action, u64 streams, u32 has_time, i64 time_first, i64 time_last.
 * The decoder checks every count, length, event number and range: an
 * index is a file, and a file may lie.
 */
#include <stddef.h>
#include <stdint.h>

#include "index/idx.h"
#include "analysis/stats.h"
#include "index/idx_timeline.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

#define AN_SUM_SECTION "summary.4"
#define AN_SUM_SPARK 1024      /* timeline samples kept */
#define AN_SUM_MAX_STEPS 4096  /* steps kept */
#define AN_SUM_LABEL_MAX 1024  /* bytes of a call-site label kept */
#define AN_SUM_MAX_DEVICES 4096
#define AN_SUM_Q 65535u        /* a sample of value peak */

#define AN_SUM_F_TIME 0x1        /* peak_time is known */
#define AN_SUM_F_JUDGED 0x2      /* two complete steps: leaks judged */
#define AN_SUM_F_STEPS_CUT 0x4   /* more steps than were kept */

struct an_sum_step {
	int64_t first, last;     /* events, inclusive */
};

struct an_sum_dev {
	uint32_t device;
	uint32_t flags;          /* AN_SUM_F_* */
	uint64_t events;
	uint64_t peak;           /* Active Memory Timeline peak */
	int64_t peak_ev;         /* -1: before the first event */
	int64_t peak_time;       /* us after the first event (F_TIME) */
	int64_t peak_step;       /* 0-based step holding the peak, or -1 */
	uint64_t reserved_max;
	int64_t reserved_max_ev;
	uint64_t reserved_end, allocated_end;
	uint64_t ooms;
	uint64_t waste;          /* reserved - allocated at reserved_max_ev */
	uint64_t top_bytes;      /* of top_site, live at the peak */
	char *top_site;          /* owned; "" when nothing was live */
	uint32_t steps_source;   /* enum an_steps_source */
	uint64_t n_steps, n_complete;
	uint64_t leak_bytes;     /* of leak_site, alive at the end */
	uint64_t leak_per_step;
	uint64_t leak_steps;     /* steps holding its blocks */
	char *leak_site;         /* owned; "" when no site grows every step */
	uint16_t *spark;         /* owned; n_spark samples */
	uint32_t n_spark;
	struct an_sum_step *steps; /* owned; n_kept */
	uint32_t n_kept;
	struct an_ev_counts counts;
};

struct an_summary {
	struct an_sum_dev *dev;
	uint32_t n_dev;
};

/* Computes the summary of device d from its timeline (tl->device == d),
 * its pyramid (lod; NULL: none, every event is read) and what a build
 * counted of its events (tally, idx_ev_tally(); NULL: they are counted
 * here, a pass over them). Returns 0, or -1 with err set. */
struct idx_lod;
struct idx_ev_tally;
int an_summary_device(const struct snapshot *s, const struct idx_timeline *tl,
    const struct idx_lod *lod, const struct idx_ev_tally *tally,
    struct an_sum_dev *out, struct sv_error *err);

/* Every device with data (snap_device_has_data), timelines built here. */
int an_summary_build(const struct snapshot *s, struct an_summary *out,
    struct sv_error *err);

void an_summary_destroy(struct an_summary *sum);

/* Heap bytes of sum (*data is the caller's). */
void an_summary_encode(const struct an_summary *sum, uint8_t **data,
    size_t *len);
/* Reads bytes written by an_summary_encode(). Returns 0, or -1 with a
 * reason in why (out is then empty). */
int an_summary_decode(const uint8_t *data, size_t len,
    struct an_summary *out, char *why, size_t wl);

/* The builder to register in idx_opts.sections. */
extern const struct idx_section_builder an_summary_section;

/* The summary computed from an opened index's snapshot and timelines. */
int an_summary_from_index(const struct sv_index *ix, struct an_summary *out,
    struct sv_error *err);

/* The summary section of an opened index, decoded: 0, or -1 when it has
 * none that decodes (nothing is computed). */
int an_summary_section_of(const struct sv_index *ix, struct an_summary *out);

/* The summary of an opened index: its section (decoded), else computed
 * as an_summary_from_index() does. Returns 0, or -1 with err set. */
int an_summary_of_index(const struct sv_index *ix, struct an_summary *out,
    struct sv_error *err);

/* The device summary of sum for device d, or NULL. */
const struct an_sum_dev *an_summary_dev(const struct an_summary *sum,
    uint32_t d);

/* Sample k of dev in bytes (0 past the last). */
uint64_t an_sum_spark_value(const struct an_sum_dev *dev, uint32_t k);
/* The highest sample over events e0..e1 (clamped to the trace), 0 when
 * the range is empty. */
uint64_t an_sum_spark_range(const struct an_sum_dev *dev, int64_t e0,
    int64_t e1);
/* The events sample k of dev covers, e0..e1 (e1 < e0 when none). */
void an_sum_sample_events(const struct an_sum_dev *dev, uint32_t k,
    int64_t *e0, int64_t *e1);

#endif
