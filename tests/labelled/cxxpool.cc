// SPDX-License-Identifier: GPL-2.0
// cxxpool: the labelled set's C++ program (README.md), no sockets. A pool of 2 std::threads waits
// on a std::condition_variable for jobs (idle); per round a new thread locks a std::mutex and
// sleeps 300 ms holding it (latency), 40 ms later another new thread locks it (latency: a lock
// its holder releases), the main thread joins both (latency), sleeps 300 ms (latency) and hands
// the pool a job, which sleeps 100 ms (latency). Ground truth to $LAB_LOG, and its own window.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <sys/syscall.h>

static FILE *lab_log;
static std::mutex log_mu, resource, jobs_mu;
static std::condition_variable jobs_cv;
static std::deque<int> jobs;

static long long now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void lab(const char *label, long long t0, long long t1, const char *what)
{
	std::lock_guard<std::mutex> g(log_mu);

	if (lab_log) {
		fprintf(lab_log, "%s %ld %lld %lld %s\n", label, (long)syscall(SYS_gettid), t0, t1, what);
		fflush(lab_log);
	}
}

static void nap(int ms)
{
	long long t0 = now_ns();

	std::this_thread::sleep_for(std::chrono::milliseconds(ms));
	lab("latency", t0, now_ns(), "sleep");
}

static void holder()
{
	std::lock_guard<std::mutex> g(resource);

	nap(300);
}

static void taker()
{
	long long t0 = now_ns();
	std::lock_guard<std::mutex> g(resource);

	lab("latency", t0, now_ns(), "lock");
}

static void worker()
{
	for (;;) {
		std::unique_lock<std::mutex> l(jobs_mu);
		long long t0 = now_ns();

		jobs_cv.wait(l, [] { return !jobs.empty(); });
		lab("idle", t0, now_ns(), "jobwait");
		int job = jobs.front();
		jobs.pop_front();
		l.unlock();
		if (job < 0) {
			return;
		}
		nap(100);
	}
}

int main()
{
	const char *path = getenv("LAB_LOG");
	std::thread pool[2] = { std::thread(worker), std::thread(worker) };

	lab_log = path ? fopen(path, "a") : nullptr;
	std::this_thread::sleep_for(std::chrono::milliseconds(100));
	long long start = now_ns();
	for (int round = 0; round < 2; round++) {
		std::thread a(holder);
		/* A sleep, latency if a loaded machine stretches it past the threshold. */
		nap(40);
		std::thread b(taker);
		long long t0 = now_ns();
		a.join();
		b.join();
		lab("latency", t0, now_ns(), "join");
		nap(300);
		{
			std::lock_guard<std::mutex> g(jobs_mu);
			jobs.push_back(round);
		}
		jobs_cv.notify_one();
		nap(200);
	}
	long long end = now_ns();
	{
		std::lock_guard<std::mutex> g(jobs_mu);
		jobs.push_back(-1);
		jobs.push_back(-1);
	}
	jobs_cv.notify_all();
	for (auto &t : pool) {
		t.join();
	}
	if (lab_log) {
		fprintf(lab_log, "window %lld %lld\n", start, end);
	}
	return 0;
}
