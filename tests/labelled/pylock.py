#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""pylock.py: Python 3.11 threads, no sockets (labelled set, README.md). Per round a new thread
takes a threading.Lock and sleeps 300 ms holding it; 40 ms later another new thread takes the same
lock (latency: a lock wait ended by its holder's release) and the main thread joins both (latency:
a join ended by the threads' exit). Between rounds a pool thread waits 300 ms on a queue.Queue
(idle: a worker waiting for its next job). Ground truth to $LAB_LOG, and its own window."""
import os
import queue
import threading
import time

LOG = os.environ.get("LAB_LOG")
log_fd = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if LOG else -1
lock = threading.Lock()
jobs = queue.Queue()


def lab(label, t0, t1, what):
    if log_fd >= 0:
        os.write(log_fd, b"%s %d %d %d %s\n" % (label.encode(), threading.get_native_id(), t0, t1,
                                                what.encode()))


def holder(held):
    lock.acquire()
    held.set()
    t0 = time.monotonic_ns()
    time.sleep(0.3)
    lab("latency", t0, time.monotonic_ns(), "sleep")
    lock.release()


def taker():
    t0 = time.monotonic_ns()
    lock.acquire()
    lab("latency", t0, time.monotonic_ns(), "lock")
    lock.release()


def worker():
    while True:
        t0 = time.monotonic_ns()
        job = jobs.get()
        lab("idle", t0, time.monotonic_ns(), "jobwait")
        if job is None:
            return


def main():
    pool = threading.Thread(target=worker)
    pool.start()
    time.sleep(0.1)
    start = time.monotonic_ns()
    for _ in range(2):
        held = threading.Event()
        a = threading.Thread(target=holder, args=(held,))
        t0 = time.monotonic_ns()
        a.start()
        # The taker only once the lock is held: a machine's load may delay the holder's start.
        held.wait()
        lab("latency", t0, time.monotonic_ns(), "start")
        time.sleep(0.04)
        b = threading.Thread(target=taker)
        b.start()
        t0 = time.monotonic_ns()
        a.join()
        b.join()
        lab("latency", t0, time.monotonic_ns(), "join")
        t0 = time.monotonic_ns()
        time.sleep(0.3)  # the pool's worker waits for its next job meanwhile
        lab("latency", t0, time.monotonic_ns(), "sleep")
        jobs.put(1)
        time.sleep(0.01)
    end = time.monotonic_ns()
    jobs.put(None)
    pool.join()
    if log_fd >= 0:
        os.write(log_fd, b"window %d %d\n" % (start, end))


main()
