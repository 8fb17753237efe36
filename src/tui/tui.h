#ifndef SNAPVIEW_TUI_TUI_H
#define SNAPVIEW_TUI_TUI_H
/*
 * Entry point of the interactive viewer. This header is the only part of
 * tui/ that cli/ sees; it does not include curses.
 *
 * Environment: SNAPVIEW_SCRIPT=FILE runs headless (newterm on /dev/null)
 * from a key script (tui/script.h); LINES/COLUMNS fix its size;
 * SNAPVIEW_LATENCY_LOG=FILE writes per key "name wall_us cpu_us";
 * NO_COLOR disables colours.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct snapshot;
struct an_phase_rules;

struct tui_opts {
	const char *file;  /* snapshot to open */
	int64_t device;    /* -1 = default device */
	int quiet;
	const char *cache_dir; /* index location, NULL: default */
	int no_cache;          /* build the index in memory only */
	int no_mouse;          /* ignore the mouse */
	int no_clipboard;      /* C does not copy (OSC 52) */
	int has_at;
	int64_t at;            /* open with the cursor after event at */
	int64_t from, to;      /* the leak window to start with; -2 = none */
	const char *categories; /* category rules file (analysis/category.h),
				   read before the screen is set up */
	const struct an_phase_rules *phase_rules; /* --phase, or NULL
						     (analysis/phases.h) */
	/* Checks the options against the loaded snapshot before anything is
	 * drawn: 0, or -1 with one line in msg (printed, exit status 1).
	 * May be NULL. */
	int (*check)(const void *ctx, const struct snapshot *s, char *msg,
	    size_t size);
	const void *check_ctx;
	/* Every file given: one file opens it; two, their comparison;
	 * more, or a directory, the rank overview. */
	char *const *files;
	size_t n_files;
	const char *layout;    /* a run directory's pattern (analysis/runs.h),
				  NULL: verl and torchtitan are recognised */
};

/* Runs the TUI; returns the process exit status (0 ok, 1 usage or no
 * usable terminal, 2/3 when the file or the categories file cannot be
 * read, 130 cancelled, 128+signal when ended by a signal). */
int tui_main(const struct tui_opts *o);

/* Writes one of the viewer's tables to f, for snapview --list-table:
 * "actions", every action of actions.h (keys_list(), keys.h), or
 * "help", every entry of the help pages, the viewer's and the rank
 * screens' (help_list(), help.h). Returns 0, or -1 when what names
 * neither. */
int tui_list(FILE *f, const char *what);

#endif
