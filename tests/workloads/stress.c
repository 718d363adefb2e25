// SPDX-License-Identifier: GPL-2.0
/*
 * stress [SECONDS=3] [WORKERS=64] [NAP_US=2000]
 *
 * Many threads for the preload library's signal to land in, and the places
 * where a signal handler that unwinds is most likely to hurt. For SECONDS:
 *  - WORKERS threads loop on nanosleep(NAP_US): under `latsnap record -t 1ms`
 *    every nap is an outlier, so the library's handler runs after nearly each
 *    one. Around every nap a worker checks what the handler must leave alone:
 *    a checksum of its own buffer, and errno, set to a sentinel before the
 *    call (a nanosleep that succeeds leaves errno untouched, so anything else
 *    afterwards is the handler's doing). A nap cut short (EINTR) is also bad:
 *    latsnap's signal comes at the end of a syscall, never in its middle.
 *  - 2 threads malloc, fill, check and free blocks of 1 MiB and more, above
 *    the mmap threshold (fixed with mallopt, which also stops glibc from
 *    raising it), so each block is an mmap and a munmap inside malloc.
 *  - 1 thread dlopens and dlcloses a system library nothing else loads
 *    (libz.so.1), calling into it each time: openat, read, mmap and munmap
 *    inside the dynamic loader, with its lock held.
 *  - 1 thread forks children that _exit(0) at once and reaps them: each child
 *    inherits the registration in the kernel (the library wraps no fork). A
 *    child that exits while this thread is in the library's handler (which
 *    blocks every asynchronous signal) has its SIGCHLD queued, not discarded,
 *    and the kernel wakes a napping worker for it: the nap is interrupted and
 *    restarted unseen, unless latsnap's signal comes at that restart, when the
 *    worker sees EINTR. With EXEC_PATH, every other child execs it instead
 *    ("exec ok|bad DONE 0": children that exec'd and exited 0).
 * Under a low threshold (-t 100us) those syscalls are outliers too, and the
 * signal lands inside malloc, the loader and fork. A watchdog thread, with
 * every signal blocked, ends a run still going 5 s after the deadline in
 * which some thread then does not move for 3 s (a deadlock) with status 3,
 * naming the threads that are stuck.
 * WL_LOG lines: "pid P", "tid ROLE TID" per thread (ROLE main, watchdog,
 * worker0.., malloc0, malloc1, dlopen, fork), "worker I ok|bad ITERS SUM_BAD
 * ERRNO_BAD EINTR", "malloc|dlopen|fork ok|bad DONE BAD" (DONE
 * allocations, dlopen/dlclose pairs, children reaped with status 0; BAD
 * failures), "why ROLE TEXT" for the last failure of a thread; from the
 * watchdog "stuck ROLE TID sig60_blocked 0|1 wchan W" and "hung STUCK
 * IN_HANDLER late_ms MS steal_ms MS" (a deadlock), or "slow LATE_MS" (late but
 * still moving). Exits 0 only if every thread was ok.
 */
#include "wl_common.h"
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#define MAX_WORKERS 1024
#define WORKER_BUF 4096
#define ERRNO_SENTINEL 0x5a5a
#define MALLOC_THREADS 2
#define MALLOC_MIN (1u << 20)
/* A library that exists on Debian and that neither the workload nor liblatsnap.so pulls in. */
#define DL_LIBRARY "libz.so.1"
#define DL_SYMBOL "zlibVersion"
/* latsnap's default signal (SIGRTMAX-4); no thread here blocks it but the watchdog. */
#define LS_SIGNAL 60
#define WATCHDOG_GRACE_S 5
#define WATCHDOG_CONFIRM_S 3

static uint64_t deadline_ns;
static long nap_us;

/* Who runs where, for the watchdog to name the threads that never finished. */
struct slot {
	char role[16];
	pid_t tid;
	int done;
	/* Bumped once per loop (per join in main): a thread that moves is slow, not stuck. */
	unsigned long progress;
};

static struct slot slots[MAX_WORKERS + 8];
static int nr_slots;

struct worker {
	pthread_t thread;
	int index;
	struct slot *slot;
	long iters, sum_bad, errno_bad, eintr;
};

struct counter {
	pthread_t thread;
	int index;
	struct slot *slot;
	long ok, bad;
	char why[96];
};

static uint64_t checksum(const uint8_t *buf, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= buf[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static struct slot *new_slot(const char *role, int index)
{
	struct slot *s = &slots[nr_slots++];

	if (index >= 0)
		snprintf(s->role, sizeof(s->role), "%s%d", role, index);
	else
		snprintf(s->role, sizeof(s->role), "%s", role);
	return s;
}

static void slot_start(struct slot *s)
{
	__atomic_store_n(&s->tid, wl_gettid(), __ATOMIC_RELEASE);
	wl_log("tid %s %d", s->role, (int)s->tid);
}

static void slot_tick(struct slot *s)
{
	__atomic_fetch_add(&s->progress, 1, __ATOMIC_RELAXED);
}

static void slot_end(struct slot *s)
{
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

static int running(void)
{
	return wl_now_ns() < deadline_ns;
}

static void nap_us_once(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static __attribute__((noinline)) int worker_nap(const struct timespec *ts)
{
	int ret;

	errno = ERRNO_SENTINEL;
	ret = nanosleep(ts, NULL);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
	return ret;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct timespec ts = { .tv_sec = nap_us / 1000000, .tv_nsec = (nap_us % 1000000) * 1000 };
	uint8_t *buf = malloc(WORKER_BUF);
	uint64_t expect;
	size_t i;

	slot_start(w->slot);
	if (!buf) {
		w->sum_bad++;
		slot_end(w->slot);
		return NULL;
	}
	for (i = 0; i < WORKER_BUF; i++)
		buf[i] = (uint8_t)(w->index * 31 + i * 7);
	expect = checksum(buf, WORKER_BUF);
	while (running()) {
		if (worker_nap(&ts)) {
			/* Cut short: the signal came in the middle of the syscall. */
			if (errno == EINTR)
				w->eintr++;
			else
				w->errno_bad++;
		} else if (errno != ERRNO_SENTINEL) {
			w->errno_bad++;
		}
		if (checksum(buf, WORKER_BUF) != expect)
			w->sum_bad++;
		w->iters++;
		slot_tick(w->slot);
	}
	free(buf);
	slot_end(w->slot);
	return NULL;
}

static void *malloc_main(void *arg)
{
	struct counter *c = arg;
	size_t size, i;
	uint8_t *p;
	long iter = 0;

	slot_start(c->slot);
	while (running()) {
		size = MALLOC_MIN + (size_t)(iter++ % 4) * (256u << 10);
		p = malloc(size);
		if (!p) {
			c->bad++;
			snprintf(c->why, sizeof(c->why), "malloc(%zu) failed", size);
			break;
		}
		/* Touch every page, then check it: munmap must free what we wrote. */
		for (i = 0; i < size; i += 4096)
			p[i] = (uint8_t)(i >> 12) ^ (uint8_t)c->index;
		for (i = 0; i < size; i += 4096) {
			if (p[i] != ((uint8_t)(i >> 12) ^ (uint8_t)c->index)) {
				c->bad++;
				snprintf(c->why, sizeof(c->why), "page %zu changed", i >> 12);
				break;
			}
		}
		free(p);
		c->ok++;
		slot_tick(c->slot);
		/* Leave the CPUs to the workers and to latsnap now and then. */
		if (iter % 4 == 0)
			nap_us_once(200);
	}
	slot_end(c->slot);
	return NULL;
}

/*
 * The program keeps its own dlopen/dlclose and its forks apart, as a multithreaded program that
 * forks without exec must for its child to use the loader: glibc 2.36 does not reset the loader's
 * write lock in the child (and lttng-ust's fork handling, which the library had until it dropped
 * lttng-ust, walked the loaded objects there). latsnap's own part, its handlers unwinding in other
 * threads during a fork, is what this workload checks.
 */
static pthread_mutex_t loader_fork_lock = PTHREAD_MUTEX_INITIALIZER;

static void *dlopen_main(void *arg)
{
	const char *(*version)(void);
	struct counter *c = arg;
	const char *v;
	void *h;

	slot_start(c->slot);
	while (running()) {
		pthread_mutex_lock(&loader_fork_lock);
		h = dlopen(DL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			pthread_mutex_unlock(&loader_fork_lock);
			c->bad++;
			snprintf(c->why, sizeof(c->why), "%s", dlerror());
			break;
		}
		version = (const char *(*)(void))dlsym(h, DL_SYMBOL);
		v = version ? version() : NULL;
		if (!v || v[0] != '1') {
			c->bad++;
			snprintf(c->why, sizeof(c->why), "%s() gave %s", DL_SYMBOL, v ? v : "NULL");
		}
		if (dlclose(h)) {
			pthread_mutex_unlock(&loader_fork_lock);
			c->bad++;
			snprintf(c->why, sizeof(c->why), "dlclose: %s", dlerror());
			break;
		}
		pthread_mutex_unlock(&loader_fork_lock);
		c->ok++;
		slot_tick(c->slot);
		nap_us_once(200);
	}
	slot_end(c->slot);
	return NULL;
}

/* EXEC_PATH: every other child execs it (a new image, which loads the library again). */
static const char *exec_path;
static long execs;

static void *fork_main(void *arg)
{
	struct counter *c = arg;
	int status, do_exec = 0;
	pid_t pid;

	slot_start(c->slot);
	while (running()) {
		do_exec = exec_path && !do_exec;
		pthread_mutex_lock(&loader_fork_lock);
		pid = fork();
		if (pid == 0) {
			if (do_exec) {
				execl(exec_path, exec_path, (char *)NULL);
				_exit(127);
			}
			_exit(0);
		}
		pthread_mutex_unlock(&loader_fork_lock);
		if (pid < 0) {
			c->bad++;
			snprintf(c->why, sizeof(c->why), "fork: %s", strerror(errno));
			break;
		}
		if (waitpid(pid, &status, 0) != pid) {
			c->bad++;
			snprintf(c->why, sizeof(c->why), "waitpid: %s", strerror(errno));
			break;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			/* The child died on its way from fork() to _exit(0). */
			c->bad++;
			if (WIFSIGNALED(status))
				snprintf(c->why, sizeof(c->why), "a child was killed by signal %d",
					 WTERMSIG(status));
			else
				snprintf(c->why, sizeof(c->why), "a child exited with %d",
					 WEXITSTATUS(status));
		} else {
			c->ok++;
			execs += do_exec;
		}
		slot_tick(c->slot);
		nap_us_once(1000);
	}
	slot_end(c->slot);
	return NULL;
}

/* Up to SIZE - 1 bytes of /proc/self/task/TID/FILE, without the last newline; "" on failure. */
static void read_task_file(pid_t tid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
}

/* The machine's stolen time in ms (the "cpu" line of /proc/stat): a VM whose vCPUs were paused. */
static long long steal_ms(void)
{
	unsigned long long v[8] = { 0 };
	char line[256];
	FILE *f = fopen("/proc/stat", "re");

	if (!f) {
		return -1;
	}
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) != 8) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return (long long)(v[7] * 1000 / (unsigned long long)sysconf(_SC_CLK_TCK));
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int all_done(const struct slot *self)
{
	int i;

	for (i = 0; i < nr_slots; i++) {
		if (&slots[i] != self && !__atomic_load_n(&slots[i].done, __ATOMIC_ACQUIRE)) {
			return 0;
		}
	}
	return 1;
}

/*
 * watchdog - ends a run that is not over WATCHDOG_GRACE_S after the deadline and in which some
 * thread then makes no progress for WATCHDOG_CONFIRM_S: a deadlock. A thread that still moves is
 * only slow (a loaded machine, or a VM paused long enough for the clock to jump past the grace):
 * every loop checks the deadline, so it ends at its next turn. Main only joins, so it counts as
 * stuck only once every other thread is done. The watchdog names the stuck threads and whether
 * each has LS_SIGNAL blocked, which in this program means it is inside the signal's handler (or
 * in fork(), which blocks every signal for a moment), then exits 3, so that the test fails fast
 * and says why. WL_HANG_HOLD=S keeps a hung process S seconds more, for a debugger.
 */
static void *watchdog_main(void *arg)
{
	static unsigned long seen[MAX_WORKERS + 8];
	char status[4096], wchan[64];
	unsigned long long blocked;
	int i, stuck = 0, in_handler = 0, sig_blocked, others_done;
	long long steal_start = steal_ms();
	const char *hold = getenv("WL_HANG_HOLD");
	uint64_t now, late;
	sigset_t all;
	char *p;

	/* Never signalled by latsnap (blocked): it must stay free to act when the others are not. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	slot_start(arg);
	now = wl_now_ns();
	if (deadline_ns + WATCHDOG_GRACE_S * 1000000000ull > now) {
		sleep_ns(deadline_ns + WATCHDOG_GRACE_S * 1000000000ull - now);
	}
	if (all_done(arg)) {
		return NULL;
	}
	for (i = 0; i < nr_slots; i++) {
		seen[i] = __atomic_load_n(&slots[i].progress, __ATOMIC_RELAXED);
	}
	sleep_ns(WATCHDOG_CONFIRM_S * 1000000000ull);
	if (all_done(arg)) {
		return NULL;
	}
	late = (wl_now_ns() - deadline_ns) / 1000000ull;
	others_done = 1;
	for (i = 1; i < nr_slots; i++) {
		if (&slots[i] != arg && !__atomic_load_n(&slots[i].done, __ATOMIC_ACQUIRE)) {
			others_done = 0;
		}
	}
	for (i = 0; i < nr_slots; i++) {
		struct slot *s = &slots[i];

		if (s == arg || __atomic_load_n(&s->done, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&s->progress, __ATOMIC_RELAXED) != seen[i] ||
		    (s == &slots[0] && !others_done)) {
			continue;
		}
		read_task_file(s->tid, "status", status, sizeof(status));
		read_task_file(s->tid, "wchan", wchan, sizeof(wchan));
		p = strstr(status, "SigBlk:");
		blocked = p ? strtoull(p + 7, NULL, 16) : 0;
		sig_blocked = (int)((blocked >> (LS_SIGNAL - 1)) & 1);
		stuck++;
		in_handler += sig_blocked;
		if (stuck <= 16) {
			wl_log("stuck %s %d sig%d_blocked %d wchan %s", s->role, (int)s->tid,
			       LS_SIGNAL, sig_blocked, wchan[0] ? wchan : "?");
		}
	}
	if (!stuck) {
		/* Slow, not stuck: every unfinished thread moved. Let them finish. */
		wl_log("slow %llu", (unsigned long long)late);
		return NULL;
	}
	wl_log("hung %d %d late_ms %llu steal_ms %lld", stuck, in_handler, (unsigned long long)late,
	       steal_start < 0 ? -1 : steal_ms() - steal_start);
	fprintf(stderr,
		"stress: %d threads made no progress in %d s, %d s after the deadline, %d of them "
		"with signal %d blocked (in its handler?)\n",
		stuck, WATCHDOG_CONFIRM_S, WATCHDOG_GRACE_S, in_handler, LS_SIGNAL);
	if (hold) {
		sleep_ns((uint64_t)strtoul(hold, NULL, 10) * 1000000000ull);
	}
	_exit(3);
}

static int report(const char *what, const struct counter *c, int n)
{
	long ok = 0, bad = 0;
	int i;

	for (i = 0; i < n; i++) {
		ok += c[i].ok;
		bad += c[i].bad;
		if (c[i].bad) {
			wl_log("why %s%d %s", what, i, c[i].why);
			wl_say("%s %d: %s", what, i, c[i].why);
		}
	}
	/* It never got to do anything: no evidence either way, so not ok. */
	wl_log("%s %s %ld %ld", what, bad || !ok ? "bad" : "ok", ok, bad);
	wl_say("%s: %ld done, %ld bad", what, ok, bad);
	return bad == 0 && ok > 0;
}

int main(int argc, char **argv)
{
	struct counter mallocs[MALLOC_THREADS] = { 0 }, dl = { 0 }, fk = { 0 };
	struct slot *main_slot, *watchdog_slot;
	struct worker *workers;
	pthread_t watchdog;
	long seconds, nworkers, i;
	int good = 1, ok;
	void *h;

	wl_init("stress", "[SECONDS=3] [WORKERS=64] [NAP_US=2000] [EXEC_PATH]", argc, argv);
	exec_path = argc > 4 ? argv[4] : NULL;
	seconds = wl_arg(1, 3, 1, 3600);
	nworkers = wl_arg(2, 64, 1, MAX_WORKERS);
	nap_us = wl_arg(3, 2000, 1, 1000000);

	/* The library must be there, and not loaded already (else dlclose unmaps nothing). */
	h = dlopen(DL_LIBRARY, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (h) {
		fprintf(stderr, "stress: %s is loaded already\n", DL_LIBRARY);
		return 1;
	}
	h = dlopen(DL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "stress: dlopen %s: %s\n", DL_LIBRARY, dlerror());
		return 1;
	}
	dlclose(h);

	/* A fixed threshold: glibc would otherwise raise it at the first free of a big block. */
	if (!mallopt(M_MMAP_THRESHOLD, 128 * 1024))
		wl_die("mallopt", 0);

	workers = calloc((size_t)nworkers, sizeof(*workers));
	if (!workers)
		wl_die("calloc", errno);
	/* Every slot exists before any thread starts: the watchdog reads them unlocked. */
	main_slot = new_slot("main", -1);
	watchdog_slot = new_slot("watchdog", -1);
	for (i = 0; i < nworkers; i++) {
		workers[i].index = (int)i;
		workers[i].slot = new_slot("worker", (int)i);
	}
	for (i = 0; i < MALLOC_THREADS; i++) {
		mallocs[i].index = (int)i;
		mallocs[i].slot = new_slot("malloc", (int)i);
	}
	dl.slot = new_slot("dlopen", -1);
	fk.slot = new_slot("fork", -1);
	slot_start(main_slot);

	deadline_ns = wl_now_ns() + (uint64_t)seconds * 1000000000ull;
	wl_spawn(&watchdog, watchdog_main, watchdog_slot, "pthread_create");
	for (i = 0; i < nworkers; i++)
		wl_spawn(&workers[i].thread, worker_main, &workers[i], "pthread_create");
	for (i = 0; i < MALLOC_THREADS; i++)
		wl_spawn(&mallocs[i].thread, malloc_main, &mallocs[i], "pthread_create");
	wl_spawn(&dl.thread, dlopen_main, &dl, "pthread_create");
	wl_spawn(&fk.thread, fork_main, &fk, "pthread_create");

	for (i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];

		pthread_join(w->thread, NULL);
		slot_tick(main_slot);
		ok = w->iters > 0 && !w->sum_bad && !w->errno_bad && !w->eintr;
		good &= ok;
		wl_log("worker %d %s %ld %ld %ld %ld", w->index, ok ? "ok" : "bad", w->iters,
		       w->sum_bad, w->errno_bad, w->eintr);
		if (!ok)
			wl_say("worker %d: %ld naps, %ld checksum, %ld errno, %ld EINTR", w->index,
			       w->iters, w->sum_bad, w->errno_bad, w->eintr);
	}
	for (i = 0; i < MALLOC_THREADS; i++)
		pthread_join(mallocs[i].thread, NULL);
	pthread_join(dl.thread, NULL);
	pthread_join(fk.thread, NULL);
	good &= report("malloc", mallocs, MALLOC_THREADS);
	good &= report("dlopen", &dl, 1);
	good &= report("fork", &fk, 1);
	if (exec_path)
		wl_log("exec %s %ld 0", execs ? "ok" : "bad", execs);
	free(workers);
	slot_end(main_slot);
	/* The watchdog is still asleep: returning ends it with the process. */
	return good ? 0 : 1;
}
