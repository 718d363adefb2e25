// SPDX-License-Identifier: GPL-2.0
/*
 * holder.c - who holds what a blocked thread waits for.
 *
 * Everything is read from /proc (and, for a unix socket's peer, the kernel's sock_diag): the
 * target's memory through /proc/PID/mem, its descriptors through /proc/PID/fd and fdinfo, every
 * thread's state through stat and syscall. Nothing here stops, signals or slows the target: no
 * ptrace, no signal, and no lock of its but the brief read lock on its mm that a read of its
 * memory takes.
 *
 * What is read is a snapshot of a process that keeps running: a lock may be released, a
 * descriptor closed, an owner exit between two reads. Each answer is therefore checked against
 * the live system (the owner is a thread of the process, the descriptor still names the pipe)
 * before it is given, and a check that fails is "nothing known" (-ENOENT), not an error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/futex.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include "classify/syscalls.h"
#include "tracker/holder.h"
#include "lib/proc.h"

/*
 * This machine's numbers, which struct holder_query gives (the thread's saved registers, as the
 * BPF side read them here): x86-64's and arm64's differ (futex 202 and 98).
 */
#define NR_READ SYS_read
#define NR_WRITE SYS_write
#define NR_READV SYS_readv
#define NR_WRITEV SYS_writev
#define NR_SENDTO SYS_sendto
#define NR_RECVFROM SYS_recvfrom
#define NR_SENDMSG SYS_sendmsg
#define NR_RECVMSG SYS_recvmsg
#define NR_FUTEX SYS_futex
#define NR_RECVMMSG SYS_recvmmsg
#define NR_SENDMMSG SYS_sendmmsg
#define NR_PREADV2 SYS_preadv2
#define NR_PWRITEV2 SYS_pwritev2

/*
 * The head of glibc's struct __pthread_mutex_s on x86-64, the same since glibc 2.3: the futex
 * word is __lock, the first member, so the futex address is the mutex's.
 */
struct glibc_mutex {
	int32_t lock;
	uint32_t count;
	int32_t owner; /* the owner's tid, in the pid namespace of the process */
	uint32_t nusers;
	int32_t kind;
};

#define MUTEX_KIND_ROBUST 0x10
#define MUTEX_KIND_PI 0x20
/* The type (0 to 3) and every flag glibc sets in __kind; anything else is not a mutex. */
#define MUTEX_KIND_KNOWN 0x3f3

/* What the blocked thread's frames say it waits in. */
enum frames_say {
	FRAMES_UNKNOWN, /* no frames, or none that tells */
	FRAMES_MUTEX, /* a pthread mutex lock */
	FRAMES_COND, /* a condition variable wait: nobody holds a condition */
	FRAMES_JOIN, /* pthread_join: held up by the thread it waits to end */
};

/*
 * glibc's names, without their leading underscores, "__GI_" (the internal aliases its debug
 * symbols name first) and symbol version: the symbolizer may give any alias of a function
 * (__GI___lll_lock_wait, ___pthread_mutex_lock, pthread_mutex_lock@@GLIBC_2.2.5), and debug
 * symbols name the static ones too. These are glibc 2.36's; older ones differ in the number of
 * underscores only.
 */
static const char *const mutex_fns[] = {
	"lll_lock_wait", /* where every normal mutex waits; pthread_mutex_lock inlines its call */
	"pthread_mutex_lock",
	"pthread_mutex_lock_full", /* robust, PI and priority-protected mutexes */
	"pthread_mutex_timedlock",
	"pthread_mutex_timedlock64",
	"pthread_mutex_clocklock",
	"pthread_mutex_clocklock64",
	"pthread_mutex_clocklock_common",
	"futex_lock_pi64",
	/* A condition variable's waiter taking its mutex back, woken: blocked on the mutex. */
	"pthread_mutex_cond_lock",
	"pthread_mutex_cond_lock_full",
	"mtx_lock", /* C11's */
	"mtx_timedlock",
	NULL,
};

/* The last two are the old ABI's (GLIBC_2.2.5) condition variables. */
static const char *const cond_fns[] = {
	"pthread_cond_wait",	  "pthread_cond_timedwait",	"pthread_cond_timedwait64",
	"pthread_cond_clockwait", "pthread_cond_clockwait64",	"pthread_cond_wait_common",
	"pthread_cond_wait_2_0",  "pthread_cond_timedwait_2_0", NULL,
};

/* Where glibc waits for a thread to end: on the thread's tid, which the kernel clears at exit. */
static const char *const join_fns[] = {
	"pthread_join", "pthread_clockjoin_ex", "pthread_timedjoin_np", "pthread_clockjoin_np",
	NULL,
};

/* Whether @symbol is one of @names once stripped of leading '_', "GI_" and any "@VERSION". */
static bool symbol_in(const char *symbol, const char *const *names)
{
	size_t len;

	symbol += strspn(symbol, "_");
	if (!strncmp(symbol, "GI_", 3)) {
		symbol += 3 + strspn(symbol + 3, "_");
	}
	len = strcspn(symbol, "@");
	for (; *names; names++) {
		if (strlen(*names) == len && !strncmp(*names, symbol, len)) {
			return true;
		}
	}
	return false;
}

/*
 * The innermost frame that tells decides: a condition variable's waiter that was woken blocks
 * on its mutex (pthread_mutex_cond_lock inside pthread_cond_wait), and is then a mutex waiter.
 */
static enum frames_say frames_say(const struct outlier_frames *user)
{
	size_t i;

	if (!user) {
		return FRAMES_UNKNOWN;
	}
	for (i = 0; i < user->nr; i++) {
		const char *sym = user->v[i].symbol;

		if (!sym) {
			continue;
		}
		if (symbol_in(sym, mutex_fns)) {
			return FRAMES_MUTEX;
		}
		if (symbol_in(sym, cond_fns)) {
			return FRAMES_COND;
		}
		if (symbol_in(sym, join_fns)) {
			return FRAMES_JOIN;
		}
	}
	return FRAMES_UNKNOWN;
}

/*
 * snprintf() into a fixed field of struct holder_found, where a long name (a FIFO's path) is
 * cut, not an error.
 */
static void set_text(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_text(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* Reads a small /proc file into @buf, NUL-terminated; its length, or -errno. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
	} else {
		buf[n] = '\0';
	}
	close(fd);
	return n;
}

/* The first line of @buf that starts with @key, past the key; NULL when none does. */
static const char *find_line(const char *buf, const char *key)
{
	size_t len = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, len)) {
			return p + len;
		}
		p = strchr(p, '\n');
		if (p) {
			p++;
		}
	}
	return NULL;
}

/*
 * The "NSpid:" of /proc/PID[/task/TID]/status: how many pid namespaces the task is in, seen from
 * ours, and its tid in the innermost, which is what its memory holds. 0 when unreadable.
 */
static int ns_pid(const char *status_path, pid_t *inner)
{
	char buf[2048], *end;
	const char *p;
	int levels = 0;
	long v;

	if (read_file(status_path, buf, sizeof(buf)) < 0) {
		return 0;
	}
	p = find_line(buf, "NSpid:");
	if (!p) {
		return 0;
	}
	for (;;) {
		v = strtol(p, &end, 10);
		if (end == p) {
			break;
		}
		*inner = (pid_t)v;
		levels++;
		p = end;
	}
	return levels;
}

/*
 * The thread of process @pid whose tid is @ns_tid in the process's own pid namespace, as this
 * process sees it, into *@tid. A mutex records its owner's tid as the owner sees it: in a
 * container, that is not the tid /proc here shows.
 */
static int thread_of(pid_t pid, pid_t ns_tid, pid_t *tid)
{
	char path[PATH_MAX];
	struct dirent *de;
	pid_t inner = 0;
	int ret = -ENOENT;
	DIR *dir;

	if (ns_tid <= 0) {
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (ns_pid(path, &inner) <= 1) {
		/* Our namespace (or no NSpid, before Linux 4.1): the tid is the same. */
		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)ns_tid);
		if (access(path, F_OK)) {
			return -ENOENT;
		}
		*tid = ns_tid;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir) {
		return -errno;
	}
	while ((de = readdir(dir))) {
		char status[PATH_MAX];
		long t = strtol(de->d_name, NULL, 10);

		if (t <= 0) {
			continue;
		}
		snprintf(status, sizeof(status), "/proc/%d/task/%ld/status", (int)pid, t);
		if (ns_pid(status, &inner) > 0 && inner == ns_tid) {
			*tid = (pid_t)t;
			ret = 0;
			break;
		}
	}
	closedir(dir);
	return ret;
}

/*
 * The process of thread @tid, for a lock shared between processes (a mutex in shared memory):
 * only when the waiter is in our pid namespace, where the tid its memory holds is ours too.
 */
static int process_of(pid_t waiter, pid_t tid, pid_t *pid)
{
	char path[64], buf[2048];
	const char *p;
	pid_t inner;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)waiter);
	if (ns_pid(path, &inner) > 1 || tid <= 0) {
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (read_file(path, buf, sizeof(buf)) < 0) {
		return -ENOENT;
	}
	p = find_line(buf, "Tgid:");
	if (!p || (*pid = (pid_t)strtol(p, NULL, 10)) <= 0) {
		return -ENOENT;
	}
	return 0;
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	if (n < 0) {
		/* An address not mapped (EIO) means it is no lock: nothing known. */
		return errno == EIO || errno == EFAULT ? -ENOENT : -errno;
	}
	return n == (ssize_t)len ? 0 : -ENOENT;
}

/* The comm of @pid's thread @tid into @comm (16 bytes); "?" when it cannot be read. */
static void thread_comm(pid_t pid, pid_t tid, char *comm)
{
	char path[64], buf[32];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if (read_file(path, buf, sizeof(buf)) <= 0) {
		snprintf(comm, 16, "?");
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(comm, 16, "%.15s", buf);
}

/**
 * holder_state() - what thread @tid of @pid is doing, in words, into @buf
 *
 * From /proc/PID/task/TID/stat's state and, when it sleeps, .../syscall's number: "running"
 * (on a CPU or waiting for one: /proc does not tell which), "blocked in futex", "blocked in read,
 * uninterruptible", "stopped", ... Reading .../syscall waits for a sleeping thread to be off its
 * CPU, which it is: the target is not slowed.
 *
 * Return: 0, or -errno when the thread cannot be read (-ESRCH: it is gone).
 */
int holder_state(pid_t pid, pid_t tid, char *buf, size_t size)
{
	struct proc_stat st;
	char path[64], sc[256];
	const char *name;
	char state;
	ssize_t n;
	long nr;
	int err;

	err = proc_stat_read(pid, tid, &st);
	if (err) {
		return err;
	}
	state = st.state;
	switch (state) {
	case 'R':
		snprintf(buf, size, "running");
		return 0;
	case 'S':
	case 'D':
		break;
	case 'T':
		snprintf(buf, size, "stopped");
		return 0;
	case 't':
		snprintf(buf, size, "stopped by its tracer");
		return 0;
	case 'Z':
	case 'X':
		snprintf(buf, size, "exited");
		return 0;
	default:
		snprintf(buf, size, "state %c", state);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	n = read_file(path, sc, sizeof(sc));
	if (n > 0 && !strncmp(sc, "running", 7)) {
		/* Woken between the two reads. */
		snprintf(buf, size, "running");
		return 0;
	}
	nr = n > 0 ? strtol(sc, NULL, 10) : -2;
	name = nr >= 0 ? syscall_name((int)nr) : NULL;
	if (name) {
		snprintf(buf, size, "blocked in %s%s", name,
			 state == 'D' ? ", uninterruptible" : "");
	} else if (nr >= 0) {
		snprintf(buf, size, "blocked in syscall %ld%s", nr,
			 state == 'D' ? ", uninterruptible" : "");
	} else {
		/* -1: sleeping outside a syscall (a page fault); -2: .../syscall unreadable. */
		snprintf(buf, size, "blocked%s%s", nr == -1 ? " outside a syscall" : "",
			 state == 'D' ? ", uninterruptible" : "");
	}
	return 0;
}

/* Fills what @h says of the holder thread itself: comm and state. */
static void describe_thread(struct holder_found *h)
{
	thread_comm(h->pid, h->tid, h->comm);
	if (holder_state(h->pid, h->tid, h->state, sizeof(h->state))) {
		snprintf(h->state, sizeof(h->state), "unknown");
	}
}

/*
 * Whether @m, read at the futex address of a FUTEX_WAIT for @expected, looks like a locked glibc
 * mutex when no frame says so: a known __kind, an owner, and the lock word in the state the
 * waiter saw. A normal mutex's waiter always waits for 2 (locked, with waiters); a robust one's
 * for the owner's tid with FUTEX_WAITERS.
 */
static bool looks_locked(const struct glibc_mutex *m, uint32_t expected)
{
	if ((m->kind & ~MUTEX_KIND_KNOWN) || m->owner <= 0 || (m->kind & MUTEX_KIND_PI)) {
		return false;
	}
	if (m->kind & MUTEX_KIND_ROBUST) {
		return ((uint32_t)m->lock & FUTEX_TID_MASK) == (uint32_t)m->owner &&
		       (expected & FUTEX_TID_MASK) == (uint32_t)m->owner;
	}
	return (m->lock == 1 || m->lock == 2) && expected == 2;
}

/*
 * A pthread_join: the thread it waits for, whose tid is the futex word (and the value waited
 * for) until the kernel clears it as the thread exits. Without frames to vouch for a join, the
 * word must be the value waited for and name another live thread of the process.
 */
static int find_joined(const struct holder_query *q, struct holder_found *h, uint32_t word,
		       bool vouched)
{
	pid_t tid = 0;

	if ((int32_t)word <= 0 || (!vouched && word != (uint32_t)q->args[2]) ||
	    (pid_t)word == q->tid || thread_of(q->pid, (pid_t)word, &tid)) {
		return -ENOENT;
	}
	h->kind = HOLDER_THREAD;
	h->pid = q->pid;
	h->tid = tid;
	snprintf(h->what, sizeof(h->what), "its own end (thread %d, joined)", (int)tid);
	describe_thread(h);
	return 0;
}

/*
 * A futex wait: the owner of the mutex whose word it is. A pthread mutex's owner is in the
 * mutex (its __owner); a PI futex's is the word itself. A condition variable, a semaphore, a
 * barrier or a join has no owner to find.
 */
static int find_futex_owner(const struct holder_query *q, struct holder_found *h)
{
	uint64_t addr = q->args[0];
	int cmd = (int)(q->args[1] & FUTEX_CMD_MASK);
	bool shared = !(q->args[1] & FUTEX_PRIVATE_FLAG);
	enum frames_say say = frames_say(q->user);
	struct glibc_mutex m;
	pid_t owner, pid = q->pid, tid = 0;
	const char *label;
	uint32_t word;
	int ret;

	if (say == FRAMES_COND || (addr & 3)) {
		return -ENOENT;
	}
	if (cmd == FUTEX_LOCK_PI || cmd == FUTEX_LOCK_PI2) {
		ret = read_mem(q->pid, addr, &word, sizeof(word));
		if (ret) {
			return ret;
		}
		owner = (pid_t)(word & FUTEX_TID_MASK);
		label = say == FRAMES_MUTEX ? "pthread mutex" : "PI futex";
	} else if (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) {
		ret = read_mem(q->pid, addr, &m, sizeof(m));
		if (ret) {
			return ret;
		}
		if (say == FRAMES_JOIN ||
		    (say == FRAMES_UNKNOWN && !looks_locked(&m, (uint32_t)q->args[2]))) {
			return find_joined(q, h, (uint32_t)m.lock, say == FRAMES_JOIN);
		}
		/* The frames vouch for a mutex; without them, its contents must. */
		if (say == FRAMES_MUTEX ? m.lock == 0 : !looks_locked(&m, (uint32_t)q->args[2])) {
			return -ENOENT;
		}
		owner = m.owner;
		label = "pthread mutex";
	} else {
		return -ENOENT;
	}
	if (owner <= 0) {
		return -ENOENT;
	}
	/*
	 * Its own process first; a mutex shared between processes (no FUTEX_PRIVATE_FLAG) may be
	 * held in another. An owner that exited holding it is not a thread to show.
	 */
	if (thread_of(q->pid, owner, &tid)) {
		if (!shared || process_of(q->pid, owner, &pid) || pid == q->pid) {
			return -ENOENT;
		}
		tid = owner;
	}
	h->kind = HOLDER_MUTEX;
	h->pid = pid;
	h->tid = tid;
	snprintf(h->what, sizeof(h->what), "%s 0x%" PRIx64 "%s", label, addr,
		 tid == q->tid && pid == q->pid ? " (held by the waiter itself)" : "");
	describe_thread(h);
	return 0;
}

/* Whether syscall @nr reads or writes its first argument, a descriptor: 0, 1, or -1 for neither. */
static int fd_direction(long nr)
{
	switch (nr) {
	case NR_READ:
	case NR_READV:
	case NR_PREADV2:
	case NR_RECVFROM:
	case NR_RECVMSG:
	case NR_RECVMMSG:
		return 0;
	case NR_WRITE:
	case NR_WRITEV:
	case NR_PWRITEV2:
	case NR_SENDTO:
	case NR_SENDMSG:
	case NR_SENDMMSG:
		return 1;
	}
	return -1;
}

/* What the processes holding the other end are searched for. */
struct end_search {
	const char *link; /* the readlink() of a descriptor to it: "pipe:[INO]", "socket:[INO]" */
	bool by_inode; /* a named FIFO: the path must also be the same inode */
	dev_t dev;
	ino_t ino;
	int accmode; /* how it must be open (O_RDONLY, O_WRONLY), or -1 for any way */
	pid_t waiter; /* the waiter's process: another one is the holder to name, when there is one */
	/* Found: the first process other than the waiter's, and the waiter's own. */
	pid_t pid;
	int fd;
	int own_fd; /* -1: not held by the waiter's process */
	unsigned int nr; /* every process holding it */
};

/* The O_ACCMODE of descriptor @fd of @pid from its fdinfo "flags:" (octal); -1 when unknown. */
static int fd_accmode(pid_t pid, int fd)
{
	char path[64], buf[1024];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	if (read_file(path, buf, sizeof(buf)) < 0) {
		return -1;
	}
	p = find_line(buf, "flags:");
	if (!p) {
		return -1;
	}
	return (int)(strtoul(p, NULL, 8) & O_ACCMODE);
}

/* The descriptor of @pid that holds what @s looks for, or -1. */
static int process_holds(struct end_search *s, pid_t pid)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct dirent *de;
	int found = -1, acc;
	struct stat st;
	ssize_t n;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir) {
		/* Exited, or a kernel thread's: holds nothing. */
		return -1;
	}
	while (found < 0 && (de = readdir(dir))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name) {
			continue;
		}
		/*
		 * readlink() only: a stat() would follow the link into its filesystem, which may
		 * hang (NFS). Only a named FIFO whose path matches is stat()ed, a FIFO's inode.
		 */
		snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)pid, fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0) {
			continue;
		}
		link[n] = '\0';
		if (strcmp(link, s->link)) {
			continue;
		}
		if (s->by_inode &&
		    (stat(path, &st) || st.st_dev != s->dev || st.st_ino != s->ino)) {
			continue;
		}
		acc = fd_accmode(pid, (int)fd);
		if (s->accmode < 0 || acc == s->accmode || acc == O_RDWR) {
			found = (int)fd;
		}
	}
	closedir(dir);
	return found;
}

/* Scans every process for what @s looks for. */
static int scan_processes(struct end_search *s)
{
	struct dirent *de;
	DIR *proc;
	int fd;

	proc = opendir("/proc");
	if (!proc) {
		return -errno;
	}
	s->pid = 0;
	s->fd = -1;
	s->own_fd = -1;
	s->nr = 0;
	while ((de = readdir(proc))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0) {
			continue;
		}
		fd = process_holds(s, (pid_t)pid);
		if (fd < 0) {
			continue;
		}
		s->nr++;
		if (pid == s->waiter) {
			s->own_fd = fd;
		} else if (!s->pid) {
			s->pid = (pid_t)pid;
			s->fd = fd;
		}
	}
	closedir(proc);
	return 0;
}

/*
 * The peer of unix socket @ino, from the kernel's sock_diag: the socket at the other end of a
 * connected stream, seqpacket or datagram socket. -ENOENT when it has none, or is not a unix
 * socket of our network namespace.
 */
static int unix_peer(uint32_t ino, uint32_t *peer)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST,
			.nlmsg_seq = 1,
		},
		.req = {
			.sdiag_family = AF_UNIX,
			.udiag_states = ~0U,
			.udiag_ino = ino,
			.udiag_show = UDIAG_SHOW_PEER,
			.udiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE },
		},
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	long buf[1024]; /* aligned for struct nlmsghdr */
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct unix_diag_msg *udm;
	struct rtattr *rta;
	int sock, ret = -ENOENT, len;
	ssize_t n;

	sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (sock < 0) {
		return -errno;
	}
	if (sendto(sock, &msg, sizeof(msg), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		ret = -errno;
		goto out;
	}
	n = recv(sock, buf, sizeof(buf), 0);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	if (!NLMSG_OK(nlh, (size_t)n) || nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*udm))) {
		/* NLMSG_ERROR: no such unix socket here (-ENOENT), or no unix_diag. */
		goto out;
	}
	udm = NLMSG_DATA(nlh);
	if (udm->udiag_ino != ino) {
		goto out;
	}
	rta = (struct rtattr *)(udm + 1);
	len = (int)(nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*udm)));
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(rta) >= sizeof(uint32_t)) {
			memcpy(peer, RTA_DATA(rta), sizeof(*peer));
			ret = *peer ? 0 : -ENOENT;
			break;
		}
	}
out:
	close(sock);
	return ret;
}

/*
 * A read or write on a pipe, FIFO or unix socket: the processes holding its other end. A reader
 * waits for them to write, a writer for them to read. The waiter's own process holding the other
 * end too is the classic forgotten close(): a reader of a pipe whose write end it still holds
 * never sees its end.
 */
static int find_end_holder(const struct holder_query *q, struct holder_found *h, int writing)
{
	char path[64], link[PATH_MAX], peer_link[48], tail[64] = "", also[48] = "";
	const char *role = writing ? "writer" : "reader";
	struct end_search s = { .waiter = q->pid };
	const char *end_name = "";
	enum holder_kind kind;
	unsigned long ino;
	uint32_t peer = 0;
	struct stat st;
	ssize_t n;
	int ret;

	if (q->args[0] > INT_MAX) {
		return -EBADF;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)q->pid, (int)q->args[0]);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		/* No such descriptor, or no such process any more. */
		if (errno != ENOENT) {
			return -errno;
		}
		snprintf(path, sizeof(path), "/proc/%d", (int)q->pid);
		return access(path, F_OK) ? -ESRCH : -EBADF;
	}
	link[n] = '\0';
	if (sscanf(link, "pipe:[%lu]", &ino) == 1) {
		kind = HOLDER_PIPE;
		s.link = link;
		s.accmode = writing ? O_RDONLY : O_WRONLY;
		end_name = writing ? " read end" : " write end";
	} else if (sscanf(link, "socket:[%lu]", &ino) == 1) {
		ret = unix_peer((uint32_t)ino, &peer);
		if (ret) {
			return ret;
		}
		kind = HOLDER_SOCKET;
		snprintf(peer_link, sizeof(peer_link), "socket:[%" PRIu32 "]", peer);
		set_text(tail, sizeof(tail), ", the peer of %s", link);
		s.link = peer_link;
		s.accmode = -1;
	} else if (link[0] == '/' && !stat(path, &st) && S_ISFIFO(st.st_mode)) {
		/* A named FIFO; its path alone could be another inode in another mount namespace. */
		kind = HOLDER_PIPE;
		s.link = link;
		s.by_inode = true;
		s.dev = st.st_dev;
		s.ino = st.st_ino;
		s.accmode = writing ? O_RDONLY : O_WRONLY;
		end_name = writing ? " read end" : " write end";
	} else {
		/* A file, a device, an eventfd...: nobody is known to hold it. */
		return -ENOENT;
	}
	ret = scan_processes(&s);
	if (ret) {
		return ret;
	}
	if (!s.pid && s.own_fd < 0) {
		return -ENOENT;
	}
	h->kind = kind;
	h->nr_others = s.nr - 1;
	if (s.pid) {
		/* Said too: were the holder to close its end, the waiter's own would still hang it. */
		if (s.own_fd >= 0) {
			snprintf(also, sizeof(also), ", also held by the %s's own process", role);
		}
		h->pid = s.pid;
		set_text(h->what, sizeof(h->what), "%s%s (fd %d)%s%s", s.link, end_name, s.fd, tail,
			 also);
	} else {
		h->pid = q->pid;
		set_text(h->what, sizeof(h->what), "%s%s (fd %d)%s held by the %s's own process",
			 s.link, end_name, s.own_fd, tail, role);
	}
	h->tid = h->pid;
	describe_thread(h);
	return 0;
}

/**
 * holder_find() - who holds what the blocked thread @q waits for
 * @q: the thread, its syscall and arguments, and its user stack when known
 * @h: filled when found
 *
 * Knows a glibc pthread mutex waited for with futex(FUTEX_WAIT*), or FUTEX_LOCK_PI (the owner is
 * the mutex's __owner, or the PI futex word); the other end of a pipe or named FIFO read or
 * written (the processes that have it open the other way); the peer of a unix socket (the
 * processes holding it). A condition variable's waiter has no holder. A pipe or socket is held by
 * a process: @h->tid is then its pid; a process other than the waiter's is preferred, and
 * @h->nr_others counts the others. Reads /proc only: the target is neither stopped nor
 * signalled.
 *
 * Return: 0 with @h filled; -ENOENT when nothing is known to hold it (not a syscall known here, a
 * condition variable, a regular file, a lock released meanwhile); -ESRCH when the thread is gone;
 * -EBADF when its descriptor is not open; -EINVAL for a bad query; another -errno when /proc
 * could not be read.
 */
int holder_find(const struct holder_query *q, struct holder_found *h)
{
	char path[64];
	int writing;

	if (!q || !h || q->pid <= 0 || q->tid <= 0) {
		return -EINVAL;
	}
	memset(h, 0, sizeof(*h));
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)q->pid, (int)q->tid);
	if (access(path, F_OK)) {
		return -ESRCH;
	}
	if (q->syscall_nr == NR_FUTEX) {
		return find_futex_owner(q, h);
	}
	writing = fd_direction(q->syscall_nr);
	if (writing < 0) {
		return -ENOENT;
	}
	return find_end_holder(q, h, writing);
}

/**
 * holder_kind_name() - "mutex", "pipe", "socket", or "none"
 */
const char *holder_kind_name(enum holder_kind kind)
{
	switch (kind) {
	case HOLDER_MUTEX:
		return "mutex";
	case HOLDER_PIPE:
		return "pipe";
	case HOLDER_THREAD:
		return "thread";
	case HOLDER_SOCKET:
		return "socket";
	case HOLDER_NONE:
		break;
	}
	return "none";
}
