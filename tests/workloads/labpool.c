// SPDX-License-Identifier: GPL-2.0
/*
 * labpool SOCKET [WORKERS=3] [ondemand]
 *
 * A C thread pool server for the labelled set (tests/labelled/README.md): the thread "lp_accept"
 * accepts connections on the unix stream socket SOCKET, reads one request line from each and
 * queues it; WORKERS threads "lp_worker" wait on a condition variable for the next job, do it and
 * write the reply. Requests: "hold" (take the mutex, sleep 280 ms holding it), "contend" (take
 * the same mutex: waits for the holder), "nap" (sleep 200 ms), "await" (hand a part to the thread
 * "lp_helper", which waits on a condition variable of its own for parts and sleeps 200 ms on
 * each, and wait on a semaphore for it to be done: a wait for an event inside a job handed over),
 * "quit" (exit 0); anything else is answered at once.
 * With "ondemand", the workers are started as a JVM's ThreadPoolExecutor starts them: none at
 * first, then one per request until there are WORKERS, each with that request as its first job;
 * a new thread waits until its creator starts it (as HotSpot's os::start_thread does) and does
 * its first job without waiting for it in the queue.
 * Ground truth, to LAB_LOG: "idle TID START END jobwait" around each condition-variable wait
 * (waiting for the next job), "idle TID START END accept" around each accept, "latency TID START
 * END lock|sleep|await" around the waits inside a job, "thread TID ROLE".
 */
#include <semaphore.h>
#include <stdbool.h>

#include "wl_common.h"
#include <sys/socket.h>
#include <sys/un.h>

struct job {
	int fd;
	char cmd[16];
	struct job *next;
};

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t resource = PTHREAD_MUTEX_INITIALIZER;
static struct job *head, *tail;
static int lab_fd = -1;

/* The helper's one part at a time: asked under part_lock, done posted on part_done. */
static pthread_mutex_t part_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t part_cond = PTHREAD_COND_INITIALIZER;
static bool part_asked;
static sem_t part_done;

/* One ground-truth line, "LABEL TID START END WHAT", in one write. */
static void lab_log(const char *label, uint64_t t0, uint64_t t1, const char *what)
{
	char buf[160];
	int n = snprintf(buf, sizeof(buf), "%s %d %llu %llu %s\n", label, (int)wl_gettid(),
			 (unsigned long long)t0, (unsigned long long)t1, what);

	if (lab_fd >= 0 && write(lab_fd, buf, (size_t)n) < 0) {
		/* the log is a test aid */
	}
}

static void lab_thread(const char *role)
{
	char buf[64];
	int n;

	wl_set_comm(role);
	n = snprintf(buf, sizeof(buf), "thread %d %s\n", (int)wl_gettid(), role);
	if (lab_fd >= 0 && write(lab_fd, buf, (size_t)n) < 0) {
		/* the log is a test aid */
	}
}

static __attribute__((noinline)) struct job *wait_for_job(void)
{
	struct job *j;
	uint64_t t0;

	pthread_mutex_lock(&queue_lock);
	while (!head) {
		t0 = wl_now_ns();
		pthread_cond_wait(&queue_cond, &queue_lock);
		lab_log("idle", t0, wl_now_ns(), "jobwait");
	}
	j = head;
	head = j->next;
	if (!head) {
		tail = NULL;
	}
	pthread_mutex_unlock(&queue_lock);
	return j;
}

static __attribute__((noinline)) void nap(long ms)
{
	struct timespec ts = wl_ms_to_ts(ms);
	uint64_t t0 = wl_now_ns();

	nanosleep(&ts, NULL);
	lab_log("latency", t0, wl_now_ns(), "sleep");
}

static __attribute__((noinline)) void take_resource(void)
{
	uint64_t t0 = wl_now_ns();

	pthread_mutex_lock(&resource);
	lab_log("latency", t0, wl_now_ns(), "lock");
}

static void *helper_main(void *arg)
{
	uint64_t t0;

	(void)arg;
	lab_thread("lp_helper");
	for (;;) {
		pthread_mutex_lock(&part_lock);
		while (!part_asked) {
			t0 = wl_now_ns();
			pthread_cond_wait(&part_cond, &part_lock);
			lab_log("idle", t0, wl_now_ns(), "partwait");
		}
		part_asked = false;
		pthread_mutex_unlock(&part_lock);
		nap(200);
		sem_post(&part_done);
	}
	return NULL;
}

/* Hands a part of the job to the helper and waits for it: a wait for an event, in a job. */
/*
 * A file opened and closed inside the job, as servers read /proc for their own figures: it gets
 * the lowest free descriptor, often an earlier connection's, closed by now. Closing it ends
 * nothing of any unit (on arm64's glibc and in a slow guest this happened on its own: 52-work).
 */
static void glance_at_self(void)
{
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
	}
}

static __attribute__((noinline)) void await_part(void)
{
	uint64_t t0 = wl_now_ns();

	pthread_mutex_lock(&part_lock);
	part_asked = true;
	pthread_cond_signal(&part_cond);
	pthread_mutex_unlock(&part_lock);
	while (sem_wait(&part_done) && errno == EINTR) {
	}
	lab_log("latency", t0, wl_now_ns(), "await");
}

static __attribute__((noinline)) void do_job(struct job *j)
{
	if (!strcmp(j->cmd, "hold")) {
		take_resource();
		nap(280);
		pthread_mutex_unlock(&resource);
	} else if (!strcmp(j->cmd, "contend")) {
		take_resource();
		pthread_mutex_unlock(&resource);
	} else if (!strcmp(j->cmd, "nap")) {
		nap(200);
	} else if (!strcmp(j->cmd, "await")) {
		glance_at_self();
		await_part();
	}
	if (write(j->fd, "done\n", 5) != 5) {
		wl_say("reply: %s", strerror(errno));
	}
	close(j->fd);
	free(j);
}

static void *worker_main(void *arg)
{
	(void)arg;
	lab_thread("lp_worker");
	for (;;) {
		do_job(wait_for_job());
	}
	return NULL;
}

/* "ondemand": a worker started with its first job, once its creator lets it run. */
struct first_job {
	sem_t started;
	struct job *job;
};

static void *ondemand_main(void *arg)
{
	struct first_job *f = arg;

	while (sem_wait(&f->started) && errno == EINTR) {
	}
	lab_thread("lp_worker");
	do_job(f->job);
	for (;;) {
		do_job(wait_for_job());
	}
	return NULL;
}

/* Start a worker for @j, as a JVM starts a pool's thread: created, then told to run. */
static void start_worker(struct job *j)
{
	struct first_job *f = calloc(1, sizeof(*f));
	pthread_t t;

	if (!f || sem_init(&f->started, 0, 0)) {
		wl_die("start_worker", errno);
	}
	f->job = j;
	if (pthread_create(&t, NULL, ondemand_main, f)) {
		wl_die("pthread_create", errno);
	}
	/* Give the new thread time to wait for its start, as a JVM's does. */
	usleep(2000);
	sem_post(&f->started);
}

/* One request line from @fd into @cmd, without its newline. */
static void read_request(int fd, char *cmd, size_t size)
{
	size_t n = 0;
	char c;

	while (n + 1 < size && read(fd, &c, 1) == 1 && c != '\n') {
		cmd[n++] = c;
	}
	cmd[n] = '\0';
}

static __attribute__((noinline)) int wait_for_connection(int lfd)
{
	uint64_t t0 = wl_now_ns();
	int fd = accept(lfd, NULL, NULL);

	lab_log("idle", t0, wl_now_ns(), "accept");
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *log = getenv("LAB_LOG");
	long workers, started = 0, i;
	bool ondemand;
	pthread_t *pool;
	struct job *j;
	int lfd, fd;

	if (argc < 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: labpool SOCKET [WORKERS]\n");
		return 2;
	}
	workers = argc > 2 ? atol(argv[2]) : 3;
	ondemand = argc > 3 && !strcmp(argv[3], "ondemand");
	if (log) {
		lab_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (lab_fd < 0) {
			wl_die(log, errno);
		}
	}
	strcpy(sa.sun_path, argv[1]);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(argv[1]);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 16)) {
		wl_die(argv[1], errno);
	}
	signal(SIGPIPE, SIG_IGN); /* a client gone before its reply */
	if (sem_init(&part_done, 0, 0)) {
		wl_die("sem_init", errno);
	}
	pool = ondemand ? NULL : wl_spawn_all(workers, worker_main);
	(void)pool;
	(void)wl_spawn_all(1, helper_main);
	lab_thread("lp_accept");
	for (i = 0;; i++) {
		fd = wait_for_connection(lfd);
		if (fd < 0) {
			wl_die("accept", errno);
		}
		j = calloc(1, sizeof(*j));
		if (!j) {
			wl_die("calloc", errno);
		}
		j->fd = fd;
		read_request(fd, j->cmd, sizeof(j->cmd));
		if (!j->cmd[0]) {
			/* a probe of whether the server is up */
			close(fd);
			free(j);
			continue;
		}
		if (!strcmp(j->cmd, "quit")) {
			if (write(fd, "bye\n", 4) != 4) {
				wl_say("reply: %s", strerror(errno));
			}
			unlink(argv[1]);
			return 0;
		}
		if (ondemand && started < workers) {
			started++;
			start_worker(j);
			continue;
		}
		pthread_mutex_lock(&queue_lock);
		if (tail) {
			tail->next = j;
		} else {
			head = j;
		}
		tail = j;
		pthread_cond_signal(&queue_cond);
		pthread_mutex_unlock(&queue_lock);
	}
}
