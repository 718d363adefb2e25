#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""hkdrive.py WL_LOG GT_LOG [ROUNDS [IDLE_S]]: the client of the labelled set's memcached-style
server (README.md), tests/workloads/housekeeper (BATCH=0): its housekeeping threads sleep and
wait to their own timeouts (idle: usleep backing off, a timed condition variable, poll and
epoll_wait to their timeouts); its main thread serves one TCP connection, a byte a request.
Per round: "s" (the server sleeps 100 ms inside the request: latency), "f", then 300 ms of
nothing; after the rounds IDLE_S seconds of nothing, then "q". Writes the ground truth to GT_LOG
from the server's own log (WL_LOG): "slow TID START END" is a latency wait, "tid NAME TID" a
thread's part; then the window."""
import re
import socket
import sys
import time


def main():
    wl, gt = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    idle = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
    deadline = time.monotonic() + 30
    port = None
    while port is None:
        try:
            m = re.search(r"^port (\d+)$", open(wl).read(), re.M)
            port = int(m.group(1)) if m else None
        except OSError:
            pass
        if port is None:
            if time.monotonic() > deadline:
                sys.exit("hkdrive.py: no port in %s" % wl)
            time.sleep(0.05)
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"f")
    s.recv(1)
    time.sleep(0.5)
    start = time.monotonic_ns()
    for _ in range(rounds):
        for c in (b"s", b"f"):
            s.sendall(c)
            s.recv(1)
        time.sleep(0.3)
    time.sleep(idle)
    end = time.monotonic_ns()
    s.sendall(b"q")
    s.close()
    time.sleep(0.2)
    with open(gt, "a") as f:
        for line in open(wl):
            w = line.split()
            if w[0] == "slow" and len(w) == 4:
                f.write("latency %s %s %s sleep\n" % (w[1], w[2], w[3]))
            elif w[0] == "tid" and len(w) == 3:
                f.write("thread %s %s\n" % (w[2], w[1]))
        f.write("window %d %d\n" % (start, end))


main()
