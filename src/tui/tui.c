/*
 * The TUI: terminal set-up and restore, loading with a progress bar, and
 * the one loop (draw dirty panes into the screen cell buffer, blit it to
 * stdscr, one doupdate(), read a key, map it to an action, dispatch to
 * the focused pane then the global handler). SIGINT, SIGTERM and SIGHUP
 * only set a flag: the loop ends, the terminal is restored and the signal
 * is raised again with its default action. A fatal signal (util/fatal.h)
 * cannot wait for the loop: its handler puts the terminal back with
 * write() and tcsetattr() alone. ncurses turns SIGWINCH into KEY_RESIZE.
 * Nothing else in snapview calls curses.
 */
#include "config.h"

#include "tui/tui.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <term.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "analysis/summary.h"
#include "render/fmt.h"
#include "index/idx.h"
#include "replay/replay_idx.h"
#include "snapshot/snap_load.h"
#include "snapshot/snap_stripe.h"
#include "tui/app.h"
#include "tui/modeworker.h"
#include "tui/colors.h"
#include "tui/export.h"
#include "tui/help.h"
#include "tui/keys.h"
#include "tui/mouse.h"
#include "tui/pane.h"
#include "tui/ranks.h"
#include "tui/replay_bg.h"
#include "tui/script.h"
#include "tui/simulate.h"
#include "tui/view.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/fatal.h"
#include "util/thread.h"
#include "util/xalloc.h"

/* Decoded stripe columns the loop's thread keeps (snap_stripe.h): the
 * columns a move reads (about 8 for the replay to the cursor, 1 for the
 * cursor's element) for the last few dozen moves, so that going back
 * over them decodes nothing (64 MiB at most, as for any thread). */
#define TUI_STRIPE_SLOTS 512

static struct app app;
static SCREEN *screen;
static FILE *null_out, *null_in;
static volatile sig_atomic_t curses_up;
static volatile sig_atomic_t got_signal;
/* For a fatal signal: the tty modes from before curses, and what endwin()
 * would write (attributes off, cursor shown, keypad off, main screen). */
static struct termios shell_modes;
static int shell_fd = -1;
static char reset_seq[256];
static size_t reset_len;
static struct script script;
static int scripted;
/* What the key script waits for before its next item (script.h: :wait
 * on, :wait off, :wait samples): app.wait_bands is 1 for the builds. */
static int script_wait = SCR_WAIT_BUILT;
static FILE *latency_log;
/* a mouse event from the key script, for KEY_MOUSE */
static int script_mx, script_my, script_mb;
/* The viewer on several files: the rank set's screens (tui/ranks.h), and
 * whether they show (else a rank's full view, in app). */
static struct rk *set;
static int in_set;
static const struct tui_opts *opts;
/* --categories, read once before the screen is set up */
static struct an_cat_rules cat_rules;

/* The app's fields that come from the options (tui_main, and again when
 * a rank's full view is closed). */
static void
app_set_opts(void)
{
	app.cat_rules = opts->categories != NULL ? &cat_rules : NULL;
	app.phase_rules = opts->phase_rules;
	app.no_mouse = opts->no_mouse;
	/* a leak window is one file's events */
	app.win_from = opts->from >= -1 && set == NULL ? opts->from : -2;
	app.win_to = opts->to >= 0 && set == NULL ? opts->to : -2;
	app.no_clipboard = opts->no_clipboard;
	app.wait_bands = scripted && script_wait == SCR_WAIT_BUILT;
	app.auto_stack = -1;
}

/* ---- terminal ----------------------------------------------------------- */

static void
ui_done(void)
{
	if (curses_up) {
		curs_set(1);
		endwin();
		curses_up = 0;
	}
}

/* The fatal-signal hook: async-signal-safe, so no curses and no stdio. */
static void
ui_restore_async(void)
{
	ssize_t w;
	size_t off = 0;

	if (!curses_up)
		return;
	while (off < reset_len) {
		w = write(STDOUT_FILENO, reset_seq + off, reset_len - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	if (shell_fd >= 0)
		tcsetattr(shell_fd, TCSANOW, &shell_modes);
}

/* Appends terminfo capability cap to reset_seq, without the padding
 * ($<..>) that only tputs() understands; a cap that does not fit whole
 * is left out. */
static void
reset_add(const char *cap)
{
	const char *s = tigetstr(cap), *e;
	char tmp[sizeof reset_seq];
	size_t n = 0;

	if (s == NULL || s == (char *)-1)
		return;
	for (; *s != '\0'; s++) {
		if (s[0] == '$' && s[1] == '<' &&
		    (e = strchr(s, '>')) != NULL) {
			s = e;
			continue;
		}
		if (n == sizeof tmp)
			return;
		tmp[n++] = *s;
	}
	if (n > sizeof reset_seq - reset_len)
		return;
	memcpy(reset_seq + reset_len, tmp, n);
	reset_len += n;
}

static void
prepare_restore(void)
{
	if (tcgetattr(STDOUT_FILENO, &shell_modes) == 0)
		shell_fd = STDOUT_FILENO;
	else if (tcgetattr(STDIN_FILENO, &shell_modes) == 0)
		shell_fd = STDIN_FILENO;
}

static void
on_signal(int sig)
{
	got_signal = sig;
}

static void
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Starts curses; returns 0, or 1 with a message printed. */
static int
ui_init(void)
{
	const char *term = getenv("TERM");
	char *cup;

	if (scripted) {
		null_out = fopen("/dev/null", "w");
		null_in = fopen("/dev/null", "r");
		if (null_out == NULL || null_in == NULL) {
			fprintf(stderr, "snapview: cannot open /dev/null\n");
			return 1;
		}
		screen = newterm(NULL, null_out, null_in);
	} else {
		prepare_restore();
		screen = newterm(NULL, stdout, stdin);
	}
	if (screen == NULL) {
		fprintf(stderr, "snapview: unknown terminal type '%s'; "
		    "set TERM or use 'snapview stats FILE'\n",
		    term ? term : "");
		return 1;
	}
	set_term(screen);
	curses_up = 1;
	cup = tigetstr("cup");
	if (!scripted && (cup == NULL || cup == (char *)-1)) {
		ui_done();
		fprintf(stderr, "snapview: terminal '%s' cannot move the "
		    "cursor; use a full-screen terminal or "
		    "'snapview stats FILE'\n",
		    term ? term : "");
		return 1;
	}
	atexit(ui_done);
	xalloc_set_fatal_hook(ui_done);
	if (!scripted) {
		reset_add("sgr0");
		reset_add("cnorm");
		reset_add("rmkx");
		reset_add("rmcup");
		sv_fatal_set_restore(ui_restore_async);
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	/* clicks and the wheel; presses only, reported at once */
	if (!scripted && !app.no_mouse) {
		mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
		    | BUTTON5_PRESSED
#endif
		    , NULL);
		mouseinterval(0);
	}
	app.mono = !colors_init(0);
	return 0;
}

/* ---- drawing ------------------------------------------------------------ */

/* What blit() last wrote into each cell of stdscr: a cell that has not
 * changed is not written again (setcchar() and wadd_wch() on every cell
 * were about a third of a cursor move's CPU at 200x50). Forgotten when
 * the terminal's size changes (relayout()). */
struct shown {
	wchar_t wc;
	attr_t at;
	short pair;
};
static struct shown *shown;
static int shown_w, shown_h;

static void
shown_forget(void)
{
	free(shown);
	shown = NULL;
	shown_w = shown_h = 0;
}

static void
blit(const struct cellbuf *cb)
{
	int x, y, w = cb->w < COLS ? cb->w : COLS;
	int h = cb->h < LINES ? cb->h : LINES;
	cchar_t cc;
	wchar_t wc[2] = {0, 0};

	if (w < 0 || h < 0)
		w = h = 0;
	if (shown == NULL || shown_w != w || shown_h != h) {
		shown_forget();
		shown = xcalloc((size_t)w * h + 1, sizeof *shown);
		shown_w = w;
		shown_h = h;
		for (y = 0; y < h; y++)
			for (x = 0; x < w; x++)
				shown[(size_t)y * w + x].wc = (wchar_t)-1;
	}
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			const struct cell *c =
			    &cb->cells[(size_t)y * cb->w + x];
			struct shown *o = &shown[(size_t)y * w + x];
			short pair;
			attr_t at = colors_attr(c->color, c->attr, &pair);

			wc[0] = (wchar_t)c->ch;
			if (!app.utf8 && c->ch > 126)
				wc[0] = '?';
			if (o->wc == wc[0] && o->at == at && o->pair == pair)
				continue;
			o->wc = wc[0];
			o->at = at;
			o->pair = pair;
			setcchar(&cc, wc, at, pair, NULL);
			mvwadd_wch(stdscr, y, x, &cc);
		}
	wnoutrefresh(stdscr);
}

static void
draw_too_small(struct cellbuf *cb)
{
	char line[128];
	int y = cb->h / 2;

	cellbuf_fill(cb, 0, 0, cb->w, cb->h, ' ', UIC_DEFAULT, 0);
	snprintf(line, sizeof line, "terminal too small (%dx%d)", cb->w, cb->h);
	cellbuf_puts(cb, 0, y > 0 ? y - 1 : 0, line, cb->w, UIC_ERROR, 0);
	snprintf(line, sizeof line, "need %dx%d; enlarge or press q",
	    LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
	cellbuf_puts(cb, 0, y, line, cb->w, UIC_DEFAULT, 0);
}

/* s on row y from x in at most w cells; text wider than that ends in an
 * ellipsis, so that a message cut short says so. */
static void
status_puts(struct cellbuf *cb, int x, int y, const char *s, int w)
{
	const char *dots = app.utf8 ? "\xe2\x80\xa6" : "...";
	int nd = app.utf8 ? 1 : 3, n;

	if (w <= nd || sv_utf8_cells(s) <= w) {
		cellbuf_puts(cb, x, y, s, w, UIC_STATUS, 0);
		return;
	}
	n = cellbuf_puts(cb, x, y, s, w - nd, UIC_STATUS, 0);
	cellbuf_puts(cb, x + n, y, dots, nd, UIC_STATUS, 0);
}

static void
draw_status(struct cellbuf *cb, const struct rect *r)
{
	char right[96], cur[FMT_BUF], n[FMT_BUF], warn[64];
	const char *left, *w;
	int rw, ww = 0;

	cellbuf_fill(cb, r->x, r->y, r->w, r->h, ' ', UIC_STATUS, 0);
	if (app.prompt != PROMPT_NONE) {
		cellbuf_printf(cb, r->x, r->y, r->w, UIC_STATUS, 0, "%s%.*s_",
		    app.plabel, app.plen, app.pbuf);
		return;
	}
	left = app.msg[0] != '\0' ? app.msg : views_hint(&app);
	if (left == NULL && set != NULL)
		left = ranks_overview_hint();
	if (left == NULL)
		left = simulate_hint(&app);
	if (left == NULL)
		left = "h/l move  +/- zoom  Tab pane  p peak  / search  "
		       "? help  q quit";
	fmt_event(cur, sizeof cur, app.view.cursor);
	fmt_count(n, sizeof n, app.tl.n_events);
	snprintf(right, sizeof right, " %s/%s ", cur, n);
	rw = (int)strlen(right);
	/* the replay does not reproduce the file: say so, always */
	w = check_warning(&app, warn, sizeof warn);
	if (w != NULL && r->w > rw + 40) {
		ww = (int)strlen(w) + 2;
		cellbuf_printf(cb, r->x + r->w - rw - ww, r->y, ww, UIC_ERROR,
		    CB_A_BOLD, " %s ", w);
	}
	status_puts(cb, r->x, r->y, left, r->w - rw - ww - 1);
	if (r->w > rw + 20)
		cellbuf_puts(cb, r->x + r->w - rw, r->y, right, rw, UIC_STATUS,
		    CB_A_BOLD);
}

/* The panes' rectangles for the screen's size: the timeline alone when
 * the panes below are hidden and no view takes one of their places. */
static void
place_panes(int cols, int rows)
{
	layout_compute(cols, rows, &app.lay);
	if (app.timeline_only && !in_set && views_open_ops(&app) == NULL)
		layout_timeline_only(&app.lay);
	if (app.lay.r[app.focus].h <= 0)
		app.focus = LAY_TIMELINE;
}

static void
ui_draw(void)
{
	struct cellbuf *cb = &app.screen;
	int i;

	if (app.lay.too_small) {
		draw_too_small(cb);
	} else if (in_set) {
		ranks_overview_draw(set, cb, app.utf8);
	} else if (app.help) {
		pane_help_ops.draw(&app, cb, &app.lay.full, 1);
		draw_status(cb, &app.lay.r[LAY_STATUS]);
	} else {
		/* a view opened or closed with the panes hidden: they come
		 * back while it is open */
		place_panes(app.lay.cols, app.lay.rows);
		for (i = 0; i < 3; i++)
			if (app.lay.r[i].h > 0)
				views_pane(&app, i)->draw(&app, cb,
				    &app.lay.r[i], app.focus == i);
		draw_status(cb, &app.lay.r[LAY_STATUS]);
	}
	blit(cb);
	doupdate();
}

static void
relayout(void)
{
	int cols, rows;

	getmaxyx(stdscr, rows, cols);
	place_panes(cols, rows);
	cellbuf_resize(&app.screen, cols, rows);
	/* stdscr may have been made anew: blit() writes every cell */
	shown_forget();
	clearok(curscr, TRUE);
}

/* ---- input -------------------------------------------------------------- */

/* An event number as typed at the goto prompt: decimal digits, with an
 * optional '#' and ',' between digits ("#1,234"), or -1 (the state
 * before the first event, as --at -1); nothing else (hex would jump
 * somewhere unexpected). */
static int
parse_event(const char *s, int64_t *out)
{
	int64_t v = 0;
	int digits = 0;

	if (strcmp(s, "-1") == 0) {
		*out = -1;
		return 0;
	}
	if (*s == '#')
		s++;
	for (; *s != '\0'; s++) {
		if (*s == ',' && digits > 0)
			continue;
		if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*s - '0');
		digits++;
	}
	if (digits == 0)
		return -1;
	*out = v;
	return 0;
}

static void
goto_event(const char *s)
{
	char last[FMT_BUF];
	int64_t ev;

	if (parse_event(s, &ev) != 0) {
		app_msg(&app, ": takes a decimal event number or -1, not '%s'",
		    s);
		return;
	}
	if (ev >= (int64_t)app.tl.n_events) {
		app_msg(&app, "no event #%s: the last is %s", s, fmt_event(last,
		    sizeof last, (int64_t)app.tl.n_events - 1));
		return;
	}
	cursor_goto(&app, ev);
	app.detail = DETAIL_EVENT;
	if (ev == -1)
		app_msg(&app, "before the first event: the state the trace "
		    "starts from");
}

static int
prompt_key(int k)
{
	enum prompt_mode m;

	if (app.prompt == PROMPT_CONFIRM) {
		/* one key answers */
		app.prompt = PROMPT_NONE;
		export_confirm(&app, k == 'y' || k == 'Y');
		return UI_REDRAW;
	}
	if (k == 27) {
		app.prompt = PROMPT_NONE;
		return UI_REDRAW;
	}
	if (k == 21) {  /* C-u: clear the line */
		app.plen = 0;
		return UI_REDRAW;
	}
	if (k == KEY_BACKSPACE || k == 127 || k == 8) {
		if (app.plen > 0)
			app.plen--;
		else
			app.prompt = PROMPT_NONE;
		return UI_REDRAW;
	}
	if (k == '\n' || k == '\r' || k == KEY_ENTER) {
		app.pbuf[app.plen] = '\0';
		m = app.prompt;
		app.prompt = PROMPT_NONE;
		if (m == PROMPT_GOTO) {
			if (app.plen > 0)
				goto_event(app.pbuf);
		} else if (m == PROMPT_SEARCH && app.plen > 0) {
			search_set_query(&app, app.pbuf);
			search_run(&app, 1);
		} else if (m == PROMPT_VIEW)
			views_prompt(&app, app.pbuf);
		else if (m == PROMPT_EXPORT)
			export_to(&app, app.pbuf);
		else if (m == PROMPT_WHATIF)
			simulate_run(&app, app.pbuf);
		views_sync(&app);
		return UI_REDRAW;
	}
	if (k >= 32 && k < 127 && app.plen + 1 < (int)sizeof app.pbuf)
		app.pbuf[app.plen++] = (char)k;
	return UI_REDRAW;
}

static int load_file(const char *path, int64_t device, char *msg,
    size_t ml);

/* Closes the open rank's full view: the app as tui_main left it. */
static void
app_unload(void)
{
	struct cellbuf cb = app.screen;
	int utf8 = app.utf8, mono = app.mono;

	views_free(&app);
	device_close(&app);
	memset(&app, 0, sizeof app);
	app.screen = cb;
	app.utf8 = utf8;
	app.mono = mono;
	app.view.utf8 = app.sv.utf8 = utf8;
	app.view.mono = app.sv.mono = mono;
	app.view.colors = colors_bands();
	app_set_opts();
	views_init(&app);
}

/* The ranks action in a rank's full view: back to the overview. */
static int
to_set(void)
{
	if (set == NULL) {
		app_msg(&app, "one file: no rank overview (give several files "
		    "or a directory)");
		return UI_REDRAW;
	}
	app_unload();
	in_set = 1;
	return UI_RELAYOUT | UI_REDRAW;
}

/* A key on the set's screens. */
static int
set_key(int k, enum action act)
{
	const char *path;
	uint32_t d;
	char msg[2048];

	switch (ranks_overview_key(set, k, act)) {
	case RK_QUIT: return UI_QUIT;
	case RK_OPEN:
		ranks_overview_target(set, &path, &d);
		app.path = path;
		if (load_file(path, d, msg, sizeof msg) != 0) {
			app_unload();
			ranks_common_message(set, msg);
			return UI_REDRAW;
		}
		in_set = 0;
		return UI_RELAYOUT | UI_REDRAW;
	default: return UI_REDRAW;
	}
}

static int
dispatch(enum action act)
{
	const struct rect *r;
	int f;

	app.msg[0] = '\0';
	if (app.lay.too_small)
		return act == ACT_QUIT ? UI_QUIT : 0;
	if (in_set)
		return set_key(0, act);
	if (act == ACT_RANKS)
		return to_set();
	if (app.help)
		return pane_help_ops.action(&app, act, &app.lay.full);
	if (act == ACT_EXPORT) {
		export_begin(&app);
		return UI_REDRAW;
	}
	if (act == ACT_COPY) {
		export_copy_stack(&app, scripted ? null_out : stdout);
		return UI_REDRAW;
	}
	if (act == ACT_GOTO || act == ACT_SEARCH) {
		app_prompt(&app, act == ACT_GOTO ? PROMPT_GOTO : PROMPT_SEARCH,
		    act == ACT_GOTO ? "go to event # (decimal, -1: before "
		    "the first): " : "/", NULL);
		return UI_REDRAW;
	}
	r = &app.lay.r[app.focus];
	f = views_action(&app, act);
	if (f == 0)
		f = views_pane(&app, app.focus)->action(&app, act, r);
	if (f == 0)
		f = global_action(&app, act);
	views_sync(&app);
	return f;
}

/* A curses mouse event (or the script's) as a mouse_event: presses and
 * the wheel; releases and motion are not used. */
static int
handle_mouse(void)
{
	MEVENT ev;
	int f;

	if (scripted) {
		app.msg[0] = '\0';
		f = mouse_event(&app, script_mx, script_my,
		    (enum mouse_button)script_mb);
		views_sync(&app);
		return f;
	}
	if (getmouse(&ev) != OK)
		return 0;
	app.msg[0] = '\0';
	if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
		f = mouse_event(&app, ev.x, ev.y, MOUSE_CLICK);
	else if (ev.bstate & BUTTON4_PRESSED)
		f = mouse_event(&app, ev.x, ev.y, MOUSE_WHEEL_UP);
#ifdef BUTTON5_PRESSED
	else if (ev.bstate & BUTTON5_PRESSED)
		f = mouse_event(&app, ev.x, ev.y, MOUSE_WHEEL_DOWN);
#endif
	else
		return 0;
	views_sync(&app);
	return f;
}

static int
handle_key(int k)
{
	enum action act;

	if (k == KEY_RESIZE)
		return UI_RELAYOUT | UI_REDRAW;
	if (k == KEY_MOUSE)
		/* the rank set's screens take no clicks */
		return app.prompt == PROMPT_NONE && !in_set ? handle_mouse()
							    : 0;
	if (app.prompt != PROMPT_NONE)
		return prompt_key(k);
	/* the rank screens have keymaps of their own */
	act = in_set ? ranks_overview_action(set, k) : keys_action(k);
	/* Backspace comes as ^? or ^H as often as KEY_BACKSPACE */
	if (set != NULL && (k == 127 || k == 8))
		act = ACT_RANKS;
	if (in_set && !app.lay.too_small) {
		app.msg[0] = '\0';
		return set_key(k, act);
	}
	if (act == ACT_NONE) {
		app_msg(&app, "key %s is not bound; ? shows the keys",
		    keys_name(k));
		return UI_REDRAW;
	}
	return dispatch(act);
}

static void
dump_screen(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		app_msg(&app, "cannot write %s", path);
		return;
	}
	cellbuf_write_text(&app.screen, f);
	fclose(f);
}

/* When tui_main() began (sv_mono_us()), for the latency log's first
 * screen. */
static long long start_us;

/* Next key: from the script (running its commands on the way), else from
 * the terminal. Returns ERR on timeout, -2 at the end of the script. */
static int
next_key(int *action)
{
	const struct script_item *it;

	*action = ACT_NONE;
	if (!scripted)
		return wgetch(stdscr);
	while ((it = script_next(&script)) != NULL) {
		switch (it->kind) {
		case SCR_KEY: return it->key;
		case SCR_ACTION: *action = it->key; return 0;
		case SCR_DUMP: dump_screen(it->arg); break;
		case SCR_RESIZE:
			resizeterm(it->rows, it->cols);
			return KEY_RESIZE;
		case SCR_MOUSE:
			script_mx = it->cols;
			script_my = it->rows;
			script_mb = it->key;
			return KEY_MOUSE;
		case SCR_QUIT: return -2;
		case SCR_WAIT:
			script_wait = it->key;
			app.wait_bands = script_wait == SCR_WAIT_BUILT;
			break;
		case SCR_WAIT_MODES:
			/* then round the loop: what came is taken and
			 * drawn before the next item */
			modeworker_wait_all(&app);
			return ERR;
		}
	}
	return -2;
}

/* Takes the modes the worker built (modeworker.h). A key script waits for the
 * mode on screen first, so that what it captures does not depend on how
 * fast the worker is. Redraws when something shown changed. */
static void
take_bands(void)
{
	long long t0;

	if (in_set)
		return;
	/* the mode the first screen goes to (pane_timeline_open), before
	 * the script's first key */
	if (app.wait_bands && app.auto_stack >= 0)
		modeworker_wait(&app, app.auto_stack);
	if (app.wait_bands && pane_timeline_building(&app)) {
		t0 = sv_mono_us();
		modeworker_wait(&app, app.view.stack);
		/* how long the mode showed "building" (not a key) */
		if (latency_log != NULL)
			fprintf(latency_log, "bands-ready %lld 0\n",
			    sv_mono_us() - t0);
	}
	if (pane_timeline_poll(&app) & UI_REDRAW)
		ui_draw();
	/* :wait samples: the frames that sample the mode on screen, until
	 * its bands are drawn in full (each samples for a while); the
	 * category mode's first wait for the worker to begin its table */
	while (scripted && script_wait == SCR_WAIT_SAMPLES &&
	    pane_timeline_building(&app)) {
		if (app.sample_more)
			ui_draw();
		else if (pane_timeline_probe_due(&app) &&
		    modeworker_wait_probe(&app)) {
			if (pane_timeline_poll(&app) & UI_REDRAW)
				ui_draw();
		} else
			break;
	}
}

static int
ui_loop(void)
{
	int k, act, f, wait = 250, w;
	long long t0, c0;

	relayout();
	ui_draw();
	/* from the start to the first screen, wall and CPU time */
	if (latency_log != NULL) {
		fprintf(latency_log, "first-screen %lld %lld\n",
		    sv_mono_us() - start_us,
		    sv_clock_us(CLOCK_PROCESS_CPUTIME_ID));
		fflush(latency_log);
	}
	/* the modes not built while opening, and the replay, now that the
	 * screen is up: the replay first (modeworker.c) */
	if (!in_set)
		modeworker_start(&app, replay_bg_pending(&app));
	replay_bg_run(&app);
	wtimeout(stdscr, wait);
	while (!got_signal) {
		take_bands();
		/* the replay built behind the screen, once it is done */
		if ((f = replay_bg_poll(&app, 0)) != 0) {
			if (f == 2) {
				device_replay_came(&app);
				modeworker_release(&app);
			}
			ui_draw();
			/* flushed: a bench waits for it (tui_first_open.sh) */
			if (f == 2 && latency_log != NULL) {
				fprintf(latency_log, "replay-ready %lld\n",
				    sv_mono_us() - start_us);
				fflush(latency_log);
			}
		}
		/* bands on their way to the screen are drawn soon after they
		 * come, without a key; columns left to sample, at once (a
		 * frame samples for 3 ms at most, and a key is read
		 * between frames) */
		w = in_set || !pane_timeline_building(&app) ? 250 :
		    app.sample_more ? 0 : 20;
		if (w != wait)
			wtimeout(stdscr, wait = w);
		k = next_key(&act);
		if (k == -2)
			break;
		if (k == ERR)
			continue;
		t0 = sv_mono_us();
		c0 = sv_clock_us(CLOCK_PROCESS_CPUTIME_ID);
		f = act != ACT_NONE ? dispatch((enum action)act) :
		    handle_key(k);
		if (f & UI_QUIT)
			break;
		if (f & UI_RELAYOUT)
			relayout();
		/* Every handled key redraws: the status line changes too. */
		ui_draw();
		/* another device (or a rank's full view) is up */
		if (!in_set)
			modeworker_start(&app, replay_bg_pending(&app));
		/* wall time, then CPU time: on a busy machine the second
		 * says what the key cost */
		if (latency_log != NULL)
			fprintf(latency_log, "%s %lld %lld\n", act != ACT_NONE ?
			    keys_action_name((enum action)act) : keys_name(k),
			    sv_mono_us() - t0,
			    sv_clock_us(CLOCK_PROCESS_CPUTIME_ID) - c0);
	}
	/* when each mode's bands were ready, from the first screen */
	for (k = 0; latency_log != NULL && k < TL_STACK_COUNT; k++) {
		long long took;

		if (modeworker_ready_us(&app, k) >= 0)
			fprintf(latency_log, "mode-ready %d %lld\n", k,
			    modeworker_ready_us(&app, k));
		/* and when each was first drawn from samples */
		if (modeworker_sampled_us(&app, k, &took) >= 0)
			fprintf(latency_log, "mode-sampled %d %lld %lld\n", k,
			    modeworker_sampled_us(&app, k, &took), took);
	}
	return got_signal ? 128 + got_signal : 0;
}

/* ---- loading ------------------------------------------------------------- */

/* The loading screen: line, a bar at pct, "q cancels". */
static void
draw_loading(const char *line, int pct)
{
	struct cellbuf *cb = &app.screen;
	int w;

	cellbuf_fill(cb, 0, 0, cb->w, cb->h, ' ', UIC_DEFAULT, 0);
	cellbuf_puts(cb, 1, cb->h / 2 - 1, line, cb->w - 2, UIC_DEFAULT, 0);
	w = cb->w - 12 > 0 ? cb->w - 12 : 0;
	cellbuf_put(cb, 1, cb->h / 2, '[', UIC_AXIS, 0);
	cellbuf_fill(cb, 2, cb->h / 2, w * pct / 100, 1, app.utf8 ? 0x2588 :
	    '#', UIC_BAND0, 0);
	cellbuf_fill(cb, 2 + w * pct / 100, cb->h / 2, w - w * pct / 100, 1,
	    app.utf8 ? 0x00b7 : '.', UIC_FREE, 0);
	cellbuf_printf(cb, 2 + w, cb->h / 2, 10, UIC_DEFAULT, 0, "] %3d%%",
	    pct);
	cellbuf_puts(cb, 1, cb->h / 2 + 1, "q cancels", cb->w - 2, UIC_AXIS,
	    0);
	blit(cb);
	doupdate();
}

/* Non-zero when the user cancelled (q, Esc, a signal). */
static int
load_cancelled(void)
{
	int k;

	if (got_signal)
		return 1;
	if (!scripted) {
		while ((k = wgetch(stdscr)) != ERR)
			if (k == 'q' || k == 27)
				return 1;
	}
	return 0;
}

static int
load_progress(void *ctx, uint64_t done, uint64_t total)
{
	static int last_pct = -1;
	int pct = total > 0 ? (int)(done * 100 / total) : 0;
	char line[256];

	(void)ctx;
	if (load_cancelled())
		return 1;
	if (pct == last_pct)
		return 0;
	last_pct = pct;
	memcpy(line, "Loading ", 8);
	sv_escape(line + 8, sizeof line - 8, app.path, strlen(app.path));
	draw_loading(line, pct);
	return 0;
}

/* The set's loading: its own line (no file name: several load). */
static int
set_progress(void *ctx, const char *line, int pct)
{
	(void)ctx;
	if (load_cancelled())
		return 1;
	draw_loading(line, pct);
	return 0;
}

/* Index warnings (stale index rebuilt, cannot write) go to the status
 * line once the screen is up. */
static void
load_warn(void *ctx, const char *msg)
{
	(void)ctx;
	/* index warnings quote file names: untrusted text */
	sv_escape(app.msg, sizeof app.msg, msg, strlen(msg));
}

/* Snapshots from this many bytes open before the index's sections are
 * built (about a quarter of a second of them, at 256 MiB);
 * SNAPVIEW_TEST_DEFER_SECTIONS=N sets it (the tests' 0: every file). */
#define DEFER_SECTIONS_BYTES (256ull << 20)

static int
defer_sections(const char *path)
{
	uint64_t min = app_test_number("SNAPVIEW_TEST_DEFER_SECTIONS",
	    DEFER_SECTIONS_BYTES);
	struct stat st;

	return stat(path, &st) == 0 && (uint64_t)st.st_size >= min;
}

/* Opens path (device, or its default when -1) into the app. Returns 0,
 * or the exit status with one line in msg. */
static int
load_file(const char *path, int64_t device, char *msg, size_t ml)
{
	static struct idx_section_builder sections[2];
	struct idx_opts io, full;
	struct idx_info info;
	struct idx_streamed *streamed = NULL;
	int later;
	struct sv_error err;
	int64_t d;
	char name[1024]; /* the file name, escaped: it is untrusted text */
	char why[512];

	sv_error_clear(&err);
	sv_escape(name, sizeof name, path, strlen(path));
	memset(&io, 0, sizeof io);
	io.cache_dir = opts->cache_dir;
	io.no_cache = opts->no_cache;
	io.progress = load_progress;
	io.warn = load_warn;
	if (!opts->no_cache) {
		/* the sections every command asks for (cli.c) */
		sections[0] = replay_idx_section;
		sections[1] = an_summary_section;
		io.sections = sections;
		io.n_sections = 2;
	}
	/* a large snapshot's first screen does not wait for them: they are
	 * added behind it (replay_bg.h) */
	later = set == NULL && io.n_sections > 0 && sv_thread_max() != 1 &&
	    defer_sections(path);
	full = io;
	if (later) {
		/* their passes beside the parse are made all the same */
		io.sections_later = 1;
		io.streamed_out = &streamed;
	}
	relayout();
	wtimeout(stdscr, 0);
	if (idx_open(path, &io, &app.ix, &err) == 0)
		app.snap = (struct snapshot *)idx_snapshot(app.ix);
	else {
		if (err.code == SV_ERR_CANCELLED || got_signal) {
			snprintf(msg, ml, "snapview: %s: cancelled", name);
			return got_signal ? 128 + got_signal : 130;
		}
		if (err.offset != SV_NO_OFFSET)
			snprintf(msg, ml, "snapview: %s: byte %llu: %s", name,
			    (unsigned long long)err.offset, err.msg);
		else
			snprintf(msg, ml, "snapview: %s: %s", name, err.msg);
		return sv_errcode_status(err.code);
	}
	/* an index on disk that lacks them (one in memory is not built
	 * again for them: the replay comes from its snapshot) */
	if (later)
		idx_get_info(app.ix, &info);
	if (later && !info.in_memory && idx_missing_extensions(app.ix, &full))
		replay_bg_start(&app, path, &full, streamed);
	else
		idx_streamed_free(streamed);
	/* a key script's screens do not depend on the machine's pace: it
	 * has the replay from the first one */
	if (scripted && replay_bg_pending(&app)) {
		replay_bg_run(&app);
		replay_bg_poll(&app, 1);
	}
	app.n_devices = snap_device_count(app.snap);
	/* the event options are the one file's (a rank of a set opens on
	 * its own device, at its peak) */
	if (set == NULL && opts->check != NULL &&
	    opts->check(opts->check_ctx, app.snap, why, sizeof why) != 0) {
		snprintf(msg, ml, "snapview: %s: %s", name, why);
		return 1;
	}
	d = device >= 0 ? device : snap_default_device(app.snap);
	if (d >= app.n_devices && app.n_devices > 0) {
		snprintf(msg, ml, "snapview: %s: no data for device %lld",
		    name, (long long)d);
		return 1;
	}
	if (device_set(&app, (uint32_t)d) != 0) {
		snprintf(msg, ml, "snapview: %s: %s", name, app.msg);
		return 2;
	}
	if (set == NULL && opts->has_at)
		cursor_goto(&app, opts->at);
	/* one file: what to look at first (a rank of a set has its own
	 * line: back to the ranks) */
	if (set == NULL)
		device_news(&app);
	/* the first screen's marks (the OOMs) */
	views_sync(&app);
	return 0;
}

static int
load(const struct tui_opts *o)
{
	char msg[2048];
	int rc = load_file(o->file, o->device, msg, sizeof msg);

	if (rc != 0) {
		ui_done();
		fprintf(stderr, "%s\n", msg);
	}
	return rc;
}

/* The viewer on several files, or a directory: the rank set. */
static int
load_set(const struct tui_opts *o)
{
	char msg[512];
	int rc;

	relayout();
	wtimeout(stdscr, 0);
	rc = ranks_overview_open(&set, o, set_progress, NULL, msg, sizeof msg);
	if (rc != 0) {
		ui_done();
		fprintf(stderr, "snapview: %s\n", msg);
		return got_signal ? 128 + got_signal : rc;
	}
	in_set = 1;
	app_set_opts();
	return 0;
}

static int
wants_set(const struct tui_opts *o)
{
	struct stat st;

	if (o->n_files > 1)
		return 1;
	return stat(o->file, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- entry --------------------------------------------------------------- */

/* Reads the rules file at path into cat_rules: 0, or -1 with one line
 * "snapview: FILE: line N: reason" printed and the exit status in *rc. */
static int
load_rules(const char *path, int *rc)
{
	struct sv_error err;
	char name[1024];

	sv_error_clear(&err);
	if (an_cat_rules_load(path, &cat_rules, &err) == 0)
		return 0;
	sv_escape(name, sizeof name, path, strlen(path));
	fprintf(stderr, "snapview: %s: ", name);
	sv_escape_fputs(stderr, err.msg);
	fputc('\n', stderr);
	*rc = sv_errcode_status(err.code);
	return -1;
}

int
tui_list(FILE *f, const char *what)
{
	if (strcmp(what, "actions") == 0) {
		keys_list(f);
		return 0;
	}
	if (strcmp(what, "help") == 0) {
		pane_help_list(f);
		ranks_overview_help_list(f);
		return 0;
	}
	return -1;
}

int
tui_main(const struct tui_opts *o)
{
	const char *sp = getenv("SNAPVIEW_SCRIPT");
	const char *lat = getenv("SNAPVIEW_LATENCY_LOG");
	char msg[256];
	int rc;

	start_us = sv_mono_us();
	memset(&app, 0, sizeof app);
	app.path = o->file;
	opts = o;
	/* a bad rules file stops the viewer as it stops a command */
	if (o->categories != NULL && load_rules(o->categories, &rc) != 0)
		return rc;
	app_set_opts();
	scripted = sp != NULL && sp[0] != '\0';
	app.wait_bands = scripted && script_wait == SCR_WAIT_BUILT;
	if (scripted && script_load(&script, sp, msg, sizeof msg) != 0) {
		fprintf(stderr, "snapview: SNAPVIEW_SCRIPT: %s\n", msg);
		return 1;
	}
	/* a first ":wait" holds from the start: for the mode the first
	 * screen goes to too */
	if (scripted && script.n > 0 && script.items[0].kind == SCR_WAIT)
		script_wait = script.items[0].key;
	app.wait_bands = scripted && script_wait == SCR_WAIT_BUILT;
	if (!scripted && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))) {
		char name[1024];

		sv_escape(name, sizeof name, o->file, strlen(o->file));
		fprintf(stderr, "snapview: not a terminal; for a text report "
		    "use 'snapview stats %s'\n", name);
		return 1;
	}
	setlocale(LC_ALL, "");
	app.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	install_signals();
	if (ui_init() != 0) {
		script_free(&script);
		return 1;
	}
	cellbuf_init(&app.screen, 0, 0);
	app.view.utf8 = app.sv.utf8 = app.utf8;
	app.view.mono = app.sv.mono = app.mono;
	app.view.colors = colors_bands();
	if (lat != NULL && lat[0] != '\0')
		latency_log = fopen(lat, "w");
	views_init(&app);
	rc = wants_set(o) ? load_set(o) : load(o);
	/* the loop reads back and forth over the trace at every key (the
	 * segment pane's replay to the cursor, the cursor's element): it
	 * keeps more decoded stripes than a pass does */
	snap_stripe_cache_slots(TUI_STRIPE_SLOTS);
	if (rc == 0)
		rc = ui_loop();
	ui_done();
	views_free(&app);
	ranks_overview_free(set);
	set = NULL;
	if (latency_log != NULL)
		fclose(latency_log);
	device_close(&app);
	an_cat_rules_destroy(&cat_rules);
	cellbuf_destroy(&app.screen);
	shown_forget();
	script_free(&script);
	if (screen != NULL)
		delscreen(screen);
	if (null_out != NULL)
		fclose(null_out);
	if (null_in != NULL)
		fclose(null_in);
	if (got_signal) {
		/* die of it, as the parent (a shell loop, make) expects; the
		 * 128 + sig below is for a signal that stays ignored */
		fflush(NULL);
		signal(got_signal, SIG_DFL);
		raise(got_signal);
	}
	return rc;
}
