#ifndef SNAPVIEW_TUI_REPLAY_BG_H
#define SNAPVIEW_TUI_REPLAY_BG_H
/*
 * The replay's checkpoints built behind the first screen.
 *
 * A first open of a large snapshot is the parse, then the index's
 * sections: the replay's checkpoints and the summary (two fifths of the
 * build). The viewer needs the parse's part to draw: load_file opens the
 * index without the sections, and a thread of this file adds them to the
 * index on disk (idx_open() with them, which extends the index just
 * written) while the screen is up; the streams of those sections ran
 * beside the first open's parse all the same (idx_opts.sections_later),
 * and what they gathered goes to that open (the replay's forward pass
 * from an empty start, which spares it both of its passes). Meanwhile
 * the state pane shows the
 * device's final segments and says the replay is coming; when the
 * thread is done, the loop takes the extended index and replays from its
 * checkpoints (replay_bg_poll, device_replay_came). The thread holds no
 * curses and reads
 * nothing of the app: what it hands over is its index, under a mutex.
 */
#include "index/idx.h"

struct app;

/* Readies the adding of the sections o registers to the index of path
 * (o is copied; its progress and warn are replaced), with what the
 * streams of the open that parsed it gathered (streamed, taken; NULL:
 * none, idx_opts.sections_later): from now on the replay is pending. */
void replay_bg_start(struct app *a, const char *path,
    const struct idx_opts *o, struct idx_streamed *streamed);

/* Starts it on a thread of its own (after the first screen: the two do
 * not share the cores), or, when none can be had, does it here. */
void replay_bg_run(struct app *a);

/* 1 while the sections are being built and not yet taken. */
int replay_bg_pending(const struct app *a);

/* How far the build is, 0 to 100 (the index's progress scale, from the
 * end of the parse). */
int replay_bg_percent(const struct app *a);

/* Says on the status line that what (a view, the check) waits for the
 * replay being built, and how far it is. */
void replay_bg_say(struct app *a, const char *what);

/* The extended index once taken (the replay of every device reads it),
 * else NULL. */
const struct sv_index *replay_bg_index(const struct app *a);

/* When the thread is done: takes its index (replay_bg_index; a warning
 * or why there is none goes to the status line) and returns 2: the
 * caller reopens the state of the device shown (device_replay_came).
 * Else 1 when how far it is changed since the last call, 0 when not.
 * wait: block until it is done (a key script's screens must not depend
 * on the machine's pace). */
int replay_bg_poll(struct app *a, int wait);

/* Stops the thread (its build is cancelled: no temporary file stays)
 * and closes the index it made. After the state source is closed. */
void replay_bg_stop(struct app *a);

#endif
