/*
 * Fatal signals: terminal restore, SIGBUS on a mapping whose file shrank,
 * and the way on to the action that was there before. See fatal.h.
 */
#include "config.h"

#include "util/fatal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/escape.h"

/* Under ASan: ASan keeps SIGSEGV to itself and drops our sigaction()
 * unless told otherwise. With this, our handler restores the terminal
 * and then hands the fault on to ASan's, which reports it as before. */
#if defined(__SANITIZE_ADDRESS__)
#define FATAL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FATAL_ASAN 1
#endif
#endif
#ifdef FATAL_ASAN
const char *__asan_default_options(void);

const char *
__asan_default_options(void)
{
	return "allow_user_segv_handler=1";
}
#endif

/* A process maps a handful of files at once (a snapshot while parsing,
 * an index, two for diff); a full table only means no guard. */
#define GUARD_SLOTS 32
#define GUARD_NAME 512

struct guard {
	_Atomic uintptr_t start; /* 0: free */
	size_t len;
	char name[GUARD_NAME];   /* escaped */
};

static struct guard guards[GUARD_SLOTS];
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;

static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define N_FATAL (sizeof fatal_sigs / sizeof fatal_sigs[0])
static struct sigaction old_act[N_FATAL];
static void (*_Atomic restore_hook)(void);
static volatile sig_atomic_t in_fatal;

/* 64 KiB: enough for write() and tcsetattr() after the main stack
 * overflowed. */
static char alt_stack[1 << 16];

int
sv_fatal_guard(const void *p, size_t len, const char *name)
{
	size_t i;
	int r = -1;

	if (p == NULL || len == 0)
		return 0;
	pthread_mutex_lock(&guard_lock);
	for (i = 0; i < GUARD_SLOTS; i++) {
		if (atomic_load(&guards[i].start) != 0)
			continue;
		guards[i].len = len;
		sv_escape(guards[i].name, sizeof guards[i].name, name,
		    strlen(name));
		/* published last: the handler reads len and name only
		 * after it sees start */
		atomic_store(&guards[i].start, (uintptr_t)p);
		r = 0;
		break;
	}
	pthread_mutex_unlock(&guard_lock);
	return r;
}

void
sv_fatal_unguard(const void *p)
{
	size_t i;

	if (p == NULL)
		return;
	pthread_mutex_lock(&guard_lock);
	for (i = 0; i < GUARD_SLOTS; i++)
		if (atomic_load(&guards[i].start) == (uintptr_t)p) {
			atomic_store(&guards[i].start, 0);
			break;
		}
	pthread_mutex_unlock(&guard_lock);
}

const char *
sv_fatal_guarded(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, s;
	size_t i;

	for (i = 0; i < GUARD_SLOTS; i++) {
		s = atomic_load(&guards[i].start);
		if (s != 0 && a >= s && a - s < guards[i].len)
			return guards[i].name;
	}
	return NULL;
}

void
sv_fatal_set_restore(void (*hook)(void))
{
	atomic_store(&restore_hook, hook);
}

/* Writes s in one write() where it can, so the line arrives whole. */
static void
put(const char *s)
{
	size_t n = strlen(s);
	ssize_t w;

	while (n > 0) {
		w = write(STDERR_FILENO, s, n);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return;
		}
		s += w;
		n -= (size_t)w;
	}
}

static void
on_fatal(int sig, siginfo_t *si, void *uc)
{
	void (*hook)(void) = atomic_load(&restore_hook);
	const char *name;
	size_t i;

	(void)uc;
	/* a fault inside the hook itself must not run it again */
	if (!in_fatal) {
		in_fatal = 1;
		if (hook != NULL)
			hook();
	}
	/* si_code > 0: raised by the kernel for this access, not sent */
	if (sig == SIGBUS && si != NULL && si->si_code > 0 &&
	    (name = sv_fatal_guarded(si->si_addr)) != NULL) {
		static const char pre[] = "snapview: ", post[] =
		    ": the file shrank while in use (truncated by another "
		    "process)\n";
		char line[sizeof pre + GUARD_NAME + sizeof post];
		size_t nl = strlen(name);

		memcpy(line, pre, sizeof pre - 1);
		memcpy(line + sizeof pre - 1, name, nl);
		memcpy(line + sizeof pre - 1 + nl, post, sizeof post);
		put(line);
		_exit(sv_errcode_status(SV_ERR_IO));
	}
	for (i = 0; i < N_FATAL; i++)
		if (fatal_sigs[i] == sig)
			sigaction(sig, &old_act[i], NULL);
	/* A fault returns and runs the faulting instruction again, which
	 * meets the old action with the true siginfo. A signal that was
	 * sent (kill, abort()) is sent again; it stays blocked until this
	 * handler returns. */
	if (si == NULL || si->si_code <= 0 || sig == SIGABRT)
		raise(sig);
}

void
sv_fatal_install(void)
{
	struct sigaction sa;
	stack_t ss;
	size_t i;

	memset(&ss, 0, sizeof ss);
	ss.ss_sp = alt_stack;
	ss.ss_size = sizeof alt_stack;
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < N_FATAL; i++)
		sigaction(fatal_sigs[i], &sa, &old_act[i]);
}
