// SPDX-License-Identifier: GPL-2.0
/*
 * cxxwait [MS=200] [N=2]
 *
 * A C++ program whose waits are in namespaced, templated member functions, for the names
 * latsnap prints (demangled) and stores (mangled):
 *  - latsnap_wl::Napper<int>::nap(long): nanosleep(MS), N times: latency, an outlier each;
 *  - latsnap_wl::Queue<int>::wait_for_job(): a worker thread waits on a condition variable for
 *    the job main posts after each nap: waiting for work, counted apart (idle).
 * Known causes: a requested sleep; idle waits.
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <pthread.h>
#include <unistd.h>

namespace latsnap_wl
{
template <typename T> struct Napper {
	T naps = 0;

	__attribute__((noinline)) void nap(long ms)
	{
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) && errno == EINTR) {
		}
		naps++;
		__asm__ volatile("" ::: "memory"); /* keep the frame */
	}
};

template <typename T> struct Queue {
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
	T posted = 0, taken = 0;
	bool done = false;

	/* Returns false once there is no more work. */
	__attribute__((noinline)) bool wait_for_job()
	{
		bool more;

		pthread_mutex_lock(&lock);
		while (taken == posted && !done) {
			pthread_cond_wait(&cond, &lock);
		}
		more = taken < posted;
		taken += more;
		pthread_mutex_unlock(&lock);
		__asm__ volatile("" ::: "memory");
		return more;
	}

	void post(bool last)
	{
		pthread_mutex_lock(&lock);
		posted += !last;
		done = last;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&lock);
	}
};

static void *worker(void *arg)
{
	Queue<int> *q = static_cast<Queue<int> *>(arg);

	while (q->wait_for_job()) {
	}
	return nullptr;
}
} // namespace latsnap_wl

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 200, n = argc > 2 ? atol(argv[2]) : 2, i;
	latsnap_wl::Napper<int> napper;
	latsnap_wl::Queue<int> queue;
	pthread_t t;

	if (ms <= 0 || n <= 0) {
		fprintf(stderr, "usage: cxxwait [MS=200] [N=2]\n");
		return 2;
	}
	if (pthread_create(&t, nullptr, latsnap_wl::worker, &queue)) {
		return 1;
	}
	pthread_setname_np(t, "cxx_worker");
	for (i = 0; i < n; i++) {
		napper.nap(ms);
		queue.post(false);
	}
	napper.nap(ms);
	queue.post(true);
	pthread_join(t, nullptr);
	printf("cxxwait: %d naps, %d jobs\n", napper.naps, queue.taken);
	return 0;
}
