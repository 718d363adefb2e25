// SPDX-License-Identifier: GPL-2.0
/*
 * cpucontend [S=300] [VICTIM_MS=20] [LEAD_MS=5]
 *
 * CPU starvation with a known cause. One SCHED_FIFO (priority 10) spinner is
 * pinned on each CPU this process may use; they spin in user space for S ms.
 * Before they start:
 *  - thread "victim" (SCHED_OTHER) enters nanosleep(VICTIM_MS) in
 *    victim_nap(), LEAD_MS before the spinners start, so it wakes while every
 *    CPU is hogged: its nanosleep lasts ~S and is mostly runqueue time.
 *  - thread "cruncher" (SCHED_OTHER) spins in user space in crunch() (no
 *    system calls) from before the spinners start until after they stop, so
 *    it is preempted for ~S: an off-CPU "sleep" outlier, mostly runqueue.
 * The spinners wait blocked on a futex until all are pinned and real-time,
 * and then start together; the whole run takes about S + 50 ms.
 * RT throttling (sched_rt_runtime_us 950000 of 1000000) and the deferred
 * fair deadline server only let SCHED_OTHER threads run after ~950 ms of
 * RT hogging per second, so S up to ~900 ms gives a full-length starvation.
 *
 * Needs CAP_SYS_NICE (root): exits 1 with a message if SCHED_FIFO is refused.
 * WL_LOG lines: "pid P", "tid victim T", "tid cruncher T",
 * "victim T START END" (the nanosleep), "cruncher_gap T START END" (the
 * longest time the cruncher's loop did not run), "spin CPU START END".
 */
#include "wl_common.h"
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>

#define MAX_SPINNERS 1024

static long spin_ms, victim_ms, lead_ms;
static _Atomic int ready, victim_sleeping, cruncher_running, stop_cruncher;
static _Atomic int spin_error;
static _Atomic uint32_t go;
static _Atomic uint64_t deadline_ns;

struct spinner {
	pthread_t th;
	int cpu;
	uint64_t t0, t1;
};

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)uaddr, op, val, NULL, NULL, 0);
}

static __attribute__((noinline)) void hog_cpu_until(uint64_t deadline)
{
	while (wl_now_ns() < deadline)
		__asm__ volatile("" ::: "memory");
}

static void *spinner_main(void *arg)
{
	struct spinner *s = arg;
	struct sched_param sp = { .sched_priority = 10 };
	cpu_set_t set;
	char name[16];

	snprintf(name, sizeof(name), "spinner%d", s->cpu);
	wl_set_comm(name);
	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		spin_error = errno ? errno : EINVAL;
		fprintf(stderr, "cpucontend: sched_setaffinity(cpu %d): %s\n", s->cpu,
			strerror(errno));
		ready++;
		return NULL;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
		spin_error = errno ? errno : EINVAL;
		fprintf(stderr, "cpucontend: sched_setscheduler(SCHED_FIFO, 10): %s\n",
			strerror(errno));
		ready++;
		return NULL;
	}
	ready++;
	while (!go)
		futex(&go, FUTEX_WAIT_PRIVATE, 0);
	s->t0 = wl_now_ns();
	hog_cpu_until(deadline_ns);
	s->t1 = wl_now_ns();
	return NULL;
}

static __attribute__((noinline)) void victim_nap(long ms)
{
	struct timespec ts = wl_ms_to_ts(ms);
	uint64_t t0 = wl_now_ns(), t1;

	victim_sleeping = 1;
	nanosleep(&ts, NULL);
	t1 = wl_now_ns();
	wl_log_span("victim", t0, t1);
	wl_say("victim: nanosleep(%ld ms) took %.3f ms", ms, (double)(t1 - t0) / 1e6);
}

static void *victim_main(void *arg)
{
	(void)arg;
	wl_role("victim");
	victim_nap(victim_ms);
	return NULL;
}

/* The CPU's counter: the TSC on x86-64, the virtual counter (CNTVCT_EL0) on arm64. */
static inline uint64_t tsc(void)
{
#if defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
#else
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
#endif
}

/*
 * User-space only, and no clock read while it runs: it spins on the TSC in crunch() itself, so
 * that it is preempted there. A clock read in the loop would be where it is preempted in a VM
 * (the guest takes interrupts at its exits to the hypervisor, which the vDSO's clock read
 * makes), and glibc's clock_gettime keeps no frame pointer: a frame-pointer walk from there
 * skips crunch(). A gap in the TSC is turned into CLOCK_MONOTONIC times with a rate measured
 * over 50 ms at start.
 */
static double ns_per_tick;

/* The TSC's rate, over 50 ms, before any thread starts (the spinners' wait must stay short). */
static void calibrate_tsc(void)
{
	uint64_t t0 = wl_now_ns(), c0 = tsc();

	while (wl_now_ns() - t0 < 50000000) {
	}
	ns_per_tick = (double)(wl_now_ns() - t0) / (double)(tsc() - c0);
}

static __attribute__((noinline)) void crunch(uint64_t *gap_start, uint64_t *gap_end)
{
	uint64_t prev, now, max = 0, ns;

	cruncher_running = 1;
	prev = tsc();
	/*
	 * The stop is tested after the gap is measured: back on a CPU that higher-priority threads
	 * keep busy, the cruncher may find the stop already set, and its gap still counts.
	 */
	do {
		now = tsc();
		if (now - prev > max) {
			max = now - prev;
			/* Only after a gap worth the name: no clock read in the loop otherwise. */
			if ((double)max * ns_per_tick > 1000000) {
				ns = wl_now_ns();
				*gap_end = ns;
				*gap_start = ns - (uint64_t)((double)(tsc() - prev) * ns_per_tick);
			}
		}
		prev = now;
	} while (!stop_cruncher);
}

static void *cruncher_main(void *arg)
{
	uint64_t gs = 0, ge = 0;

	(void)arg;
	wl_role("cruncher");
	crunch(&gs, &ge);
	wl_log_span("cruncher_gap", gs, ge);
	wl_say("cruncher: longest time off CPU %.3f ms", (double)(ge - gs) / 1e6);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct spinner sp[MAX_SPINNERS];
	pthread_t victim, cruncher;
	cpu_set_t allowed;
	int n = 0, cpu, i;

	wl_init_knobs("cpucontend", argc, argv, WL_KNOB("S", spin_ms, 300, 1, 900),
		      WL_KNOB("VICTIM_MS", victim_ms, 20, 0, 900),
		      WL_KNOB("LEAD_MS", lead_ms, 5, 0, 900));
	if (lead_ms > victim_ms) {
		fprintf(stderr, "cpucontend: LEAD_MS must not exceed VICTIM_MS\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		wl_die("sched_getaffinity", errno);
	/*
	 * The victim, the cruncher and this thread stay SCHED_OTHER, but at the highest nice
	 * (threads inherit it): on a machine that a nice -15 hog keeps busy, a nice 0 thread got
	 * the CPU so late that the victim's nap was over before the spinners started, and the
	 * starvation never happened. Best effort: without CAP_SYS_NICE the run is as before.
	 */
	setpriority(PRIO_PROCESS, 0, -20);
	calibrate_tsc();

	for (cpu = 0; cpu < CPU_SETSIZE && n < MAX_SPINNERS; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		sp[n].cpu = cpu;
		wl_spawn(&sp[n].th, spinner_main, &sp[n], "pthread_create(spinner)");
		n++;
	}
	while (ready < n)
		wl_nanosleep_ms(1);
	if (spin_error) {
		go = 1;
		futex(&go, FUTEX_WAKE_PRIVATE, INT32_MAX);
		for (i = 0; i < n; i++)
			pthread_join(sp[i].th, NULL);
		fprintf(stderr, "cpucontend: cannot set up the real-time spinners\n");
		return 1;
	}

	wl_spawn(&cruncher, cruncher_main, NULL, "pthread_create(cruncher)");
	while (!cruncher_running)
		wl_nanosleep_ms(1);
	wl_spawn(&victim, victim_main, NULL, "pthread_create(victim)");
	while (!victim_sleeping)
		sched_yield();
	wl_nanosleep_ms(lead_ms);

	/* Start every spinner with one wake-up. From here on, every
	 * SCHED_OTHER thread of the machine waits for a CPU, this one too. */
	deadline_ns = wl_now_ns() + (uint64_t)spin_ms * 1000000ull;
	go = 1;
	futex(&go, FUTEX_WAKE_PRIVATE, INT32_MAX);

	for (i = 0; i < n; i++)
		pthread_join(sp[i].th, NULL);
	pthread_join(victim, NULL);
	/* let the cruncher run again a little so that its gap has an end */
	wl_nanosleep_ms(10);
	stop_cruncher = 1;
	pthread_join(cruncher, NULL);
	for (i = 0; i < n; i++) {
		wl_log("spin %d %llu %llu", sp[i].cpu, (unsigned long long)sp[i].t0,
		       (unsigned long long)sp[i].t1);
		wl_say("spinner on cpu %d hogged %.3f ms", sp[i].cpu,
		       (double)(sp[i].t1 - sp[i].t0) / 1e6);
	}
	return 0;
}
