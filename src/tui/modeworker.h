#ifndef SNAPVIEW_TUI_MODEWORKER_H
#define SNAPVIEW_TUI_MODEWORKER_H
/*
 * The timeline's stacking modes built in the background: the grouped
 * modes need a pass over the trace the first time they are shown (half
 * a second a pass at 10 M events; the call-site, stream/pool and pool
 * modes share one, the category mode has its own) and the segment mode
 * the segment events the model listed, so once a device's first screen
 * is drawn a worker thread builds those the viewer did not build while
 * opening, the one the view waits for first, then the segment mode,
 * then in the order m cycles through them, and the loop moves each into
 * the model when it is done (modeworker_take). A switch into a mode
 * still being built returns at once: the timeline says it is building
 * (and how far), and draws the bands when they come.
 *
 * SNAPVIEW_BANDS_SYNC=1 in the environment starts no worker: a mode is
 * built when it is first shown, the key waiting for it (the reference
 * the tests compare the background builds with).
 */
#include "tui/app.h"

/* Will modes be built in the background (not SNAPVIEW_BANDS_SYNC)? */
int modeworker_enabled(void);
/* Starts the worker for the app's device (once per device; nothing to
 * do when every mode is built, or with SNAPVIEW_BANDS_SYNC). Held
 * (hold: the replay is being built behind the first screen), it builds
 * only the modes the view waits for until modeworker_release(). */
void modeworker_start(struct app *a, int hold);
/* The replay is there: the held worker builds the other modes too. */
void modeworker_release(struct app *a);
/* Stops the worker and frees what it built and nobody took. */
void modeworker_stop(struct app *a);
/* Will the worker deliver mode st (queued, running or done)? */
int modeworker_pending(struct app *a, int st);
/* The view waits for mode st: the worker builds it next. */
void modeworker_want(struct app *a, int st);
/* Blocks until the worker has finished mode st (or ended). */
void modeworker_wait(struct app *a, int st);
/* Does the worker's category job hand the loop a probe of its table
 * (the modes are sampled, and it begins the table itself)? */
int modeworker_makes_probe(struct app *a);
/* Blocks until the worker has the category table's probe for
 * modeworker_take (1), or will have none: its job ended without one,
 * makes none, or the loop took it before (0). The worker builds that
 * mode next. */
int modeworker_wait_probe(struct app *a);
/* Blocks until the worker has finished every mode (or ended), in its
 * own order; a held worker is released. */
void modeworker_wait_all(struct app *a);
/* Moves what the worker finished into the model (the loop's thread),
 * and the category table's probe once the worker has begun the table
 * (an_cat_probe_new, when the modes are sampled: the category mode is
 * then drawn from samples too). Returns how many jobs and probes were
 * taken. */
int modeworker_take(struct app *a);
/* Did the bands of mode st (the one on screen) come since the last time
 * this was asked? 1 then, with why the reason when the mode turned out
 * unavailable (else ""); 0 if not. Forgets the other modes that came. */
int modeworker_arrived(struct app *a, int st, char *why, size_t size);
/* The mode whose build runs now (of a job of several, the first in
 * the order of enum tl_stack), or -1 (none, or no worker). */
int modeworker_running(struct app *a);
/* How far the build of mode st is, in percent (0 to 99: the passes'
 * items counted by util/stop.h's meter against tl_prep_work), or -1
 * when it is not being built now (queued, done, or no worker). */
int modeworker_progress(struct app *a, int st);
/* Microseconds from the worker's start (the first screen) to the end of
 * the build of mode st, or -1 when it has not ended or was not the
 * worker's (for the latency log, bench/tui_latency.sh). */
long long modeworker_ready_us(struct app *a, int st);
/* Mode st's bands were drawn from samples (render/tl_sample.h) in full
 * while the worker builds them, took_us after its first frame of
 * samples: the first time, that and the time from the worker's start
 * are kept for modeworker_sampled_us. */
void modeworker_sampled(struct app *a, int st, long long took_us);
/* Microseconds from the worker's start until mode st was first drawn
 * from samples in full (*took_us: from its first frame of samples), or
 * -1 when it was not (for the latency log, bench/tui_open.sh). */
long long modeworker_sampled_us(struct app *a, int st, long long *took_us);

#endif
