// SPDX-License-Identifier: GPL-2.0
/*
 * serving.c - whether a process serves: a socket of its descriptors (/proc/PID/fd) listens in
 * its network namespace's tables (/proc/PID/net/{tcp,tcp6,udp,udp6,unix}).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/serving.h"
#include "lib/util.h"

/* TCP_LISTEN and TCP_CLOSE as /proc/net/tcp and udp write them; __SO_ACCEPTCON of net/unix. */
#define TCP_ST_LISTEN 0x0a
#define UDP_ST_UNCONNECTED 0x07
#define UNIX_ACCEPTCON 0x10000

struct inodes {
	unsigned long *v;
	size_t nr;
	size_t cap;
};

static int cmp_inode(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* The socket inodes of @pid's descriptors, sorted. Return: 0, or a negative errno. */
static int socket_inodes(pid_t pid, struct inodes *in)
{
	char path[64], link[64];
	unsigned long ino, *v;
	struct dirent *de;
	DIR *dir;
	ssize_t n;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir) {
		return errno == ENOENT ? -ESRCH : -errno;
	}
	while ((de = readdir(dir))) {
		/* readlinkat() reads the link itself: nothing is followed. */
		n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
		if (n <= 0) {
			continue;
		}
		link[n] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) != 1) {
			continue;
		}
		if (in->nr == in->cap) {
			in->cap = in->cap ? in->cap * 2 : 16;
			v = realloc(in->v, in->cap * sizeof(*v));
			if (!v) {
				err = -ENOMEM;
				goto out;
			}
			in->v = v;
		}
		in->v[in->nr++] = ino;
	}
	if (in->nr) {
		ls_sort(in->v, in->nr, sizeof(*in->v), cmp_inode);
	}
out:
	closedir(dir);
	return err;
}

static bool has_inode(const struct inodes *in, unsigned long ino)
{
	return ino && bsearch(&ino, in->v, in->nr, sizeof(*in->v), cmp_inode);
}

/* The first port of the ephemeral range: a UDP socket bound below or above it was bound so. */
static void ephemeral_range(unsigned int *lo, unsigned int *hi)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

	*lo = 32768;
	*hi = 60999;
	if (f) {
		if (fscanf(f, "%u %u", lo, hi) != 2) {
			*lo = 32768;
			*hi = 60999;
		}
		fclose(f);
	}
}

/*
 * Whether a socket of @in serves in /proc/PID/net/@table: TCP listening; UDP unconnected, bound
 * to a port of its own choosing (a client's unconnected socket gets an ephemeral one).
 */
static bool inet_serves(pid_t pid, const char *table, bool udp, const struct inodes *in)
{
	unsigned int lport, rport, st, lo, hi;
	char path[64], line[512];
	unsigned long ino;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, table);
	f = fopen(path, "re");
	if (!f) {
		return false;
	}
	if (udp) {
		ephemeral_range(&lo, &hi);
	}
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line,
			   " %*d: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%x %x %*x:%*x %*x:%*x %*x %*u %*u %lu",
			   &lport, &rport, &st, &ino) != 4) {
			continue; /* the header */
		}
		if (udp) {
			found = st == UDP_ST_UNCONNECTED && !rport && lport &&
				(lport < lo || lport > hi) && has_inode(in, ino);
		} else {
			found = st == TCP_ST_LISTEN && has_inode(in, ino);
		}
	}
	fclose(f);
	return found;
}

/* Whether a unix socket of @in listens (a stream or seqpacket socket that accepts). */
static bool unix_serves(pid_t pid, const struct inodes *in)
{
	char path[64], line[512];
	unsigned int flags;
	unsigned long ino;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		return false;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*x: %*x %*x %x %*x %*x %lu", &flags, &ino) != 2) {
			continue;
		}
		found = (flags & UNIX_ACCEPTCON) && has_inode(in, ino);
	}
	fclose(f);
	return found;
}

/**
 * serving_probe() - whether process @pid serves: one of its descriptors is a socket that listens
 * (TCP, unix) or waits for datagrams on a port it chose (UDP), in its own network namespace
 *
 * A process without a socket costs one read of its descriptor directory.
 *
 * Return: 1 when it serves, 0 when not, or a negative errno (-ESRCH: it is gone).
 */
int serving_probe(pid_t pid)
{
	struct inodes in = { 0 };
	int err;

	err = socket_inodes(pid, &in);
	if (err || !in.nr) {
		goto out;
	}
	err = inet_serves(pid, "tcp", false, &in) || inet_serves(pid, "tcp6", false, &in) ||
	      unix_serves(pid, &in) || inet_serves(pid, "udp", true, &in) ||
	      inet_serves(pid, "udp6", true, &in);
out:
	free(in.v);
	return err;
}
