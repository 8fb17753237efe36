/*
 * Progress bar for long builds (the first open of a big snapshot).
 */
#include "config.h"

#include "cli/progress.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/fatal.h"
#include "util/stop.h"

static const int cancel_sigs[] = {SIGINT, SIGTERM, SIGHUP};
#define N_CANCEL (sizeof cancel_sigs / sizeof cancel_sigs[0])
static struct sigaction cancel_old[N_CANCEL];
static atomic_int cancel_flag;
static volatile sig_atomic_t cancel_sig;

/* The descriptor of a bar on screen, for a fatal signal's line to start
 * on a clean line (util/fatal.h); -1 when none is. */
static volatile sig_atomic_t bar_fd = -1;

static void
bar_erase_async(void)
{
	if (bar_fd >= 0 && write(bar_fd, "\r\033[K", 4) < 0)
		return;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
cli_progress_init(struct cli_progress *p, FILE *f, const char *label,
    int quiet)
{
	memset(p, 0, sizeof *p);
	if (quiet || f == NULL || !isatty(fileno(f)))
		return;
	p->f = f;
	p->label = label;
	p->start = now();
}

int
cli_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct cli_progress *p = ctx;
	double t, el, rate, pct, eta;
	const char *base;
	char bar[21];
	int i, fill;

	if (atomic_load(&cancel_flag))
		return 1;
	if (p == NULL || p->f == NULL)
		return 0;
	t = now();
	if (p->drawn && t - p->last < 0.1 && done < total)
		return 0;
	p->last = t;
	el = t - p->start;
	pct = total ? 100.0 * (double)done / (double)total : 100.0;
	if (pct > 100.0)
		pct = 100.0;
	rate = el > 0 ? (double)done / el / 1e6 : 0;
	eta = done > 0 && done < total ? el * (double)(total - done) /
					     (double)done
				       : 0;
	fill = (int)(pct / 5);
	for (i = 0; i < 20; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[20] = '\0';
	base = strrchr(p->label, '/');
	base = base != NULL ? base + 1 : p->label;
	fprintf(p->f, "\rindexing %.30s [%s] %3.0f%% %7.1f MB/s ETA %3.0fs ",
	    base, bar, pct, rate, eta);
	fflush(p->f);
	if (!p->drawn) {
		bar_fd = fileno(p->f);
		sv_fatal_set_restore(bar_erase_async);
	}
	p->drawn = 1;
	return 0;
}

void
cli_progress_end(struct cli_progress *p)
{
	if (p->f != NULL && p->drawn) {
		bar_fd = -1;
		sv_fatal_set_restore(NULL);
		fprintf(p->f, "\r\033[K");
		fflush(p->f);
	}
	p->drawn = 0;
}

static void
on_cancel(int sig)
{
	if (cancel_sig != 0) { /* the second: at once */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	cancel_sig = sig;
	atomic_store(&cancel_flag, 1);
}

void
cli_cancel_begin(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_cancel;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	cancel_sig = 0;
	atomic_store(&cancel_flag, 0);
	for (i = 0; i < N_CANCEL; i++) {
		sigaction(cancel_sigs[i], &sa, &cancel_old[i]);
		/* one ignored (nohup, a background job) stays so */
		if (cancel_old[i].sa_handler == SIG_IGN)
			sigaction(cancel_sigs[i], &cancel_old[i], NULL);
	}
	sv_stop_flag = &cancel_flag;
}

void
cli_cancel_end(struct cli_progress *p)
{
	size_t i;
	int sig;

	for (i = 0; i < N_CANCEL; i++)
		sigaction(cancel_sigs[i], &cancel_old[i], NULL);
	sv_stop_flag = NULL;
	sig = cancel_sig;
	if (sig == 0)
		return;
	cli_progress_end(p);
	signal(sig, SIG_DFL);
	raise(sig);
}
