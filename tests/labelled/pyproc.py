#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""pyproc.py: Python 3.11 multiprocessing, processes not threads (labelled set, README.md). Two
worker processes wait on a multiprocessing.Queue for jobs (idle: one in the pipe's read, the other
behind it on the queue's reader lock) and sleep 100 ms per job (latency). Per round a new process
takes a multiprocessing.Lock and sleeps 300 ms holding it (latency), 40 ms later another new
process takes the same lock (latency: a lock its holder releases); the main process waits for
both on a result queue (latency: replies from work it started), then sleeps 300 ms (latency) and
hands the pool a job. Ground truth to $LAB_LOG, and its own window."""
import multiprocessing as mp
import os
import threading
import time

LOG = os.environ.get("LAB_LOG")
log_fd = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if LOG else -1
ctx = mp.get_context("fork")


def lab(label, t0, t1, what):
    if log_fd >= 0:
        os.write(log_fd, b"%s %d %d %d %s\n" % (label.encode(), threading.get_native_id(), t0, t1,
                                                what.encode()))


def role(name):
    if log_fd >= 0:
        os.write(log_fd, b"thread %d %s\n" % (threading.get_native_id(), name.encode()))


def nap(seconds):
    t0 = time.monotonic_ns()
    time.sleep(seconds)
    lab("latency", t0, time.monotonic_ns(), "sleep")


def worker(jobs):
    role("pp_worker")
    while True:
        t0 = time.monotonic_ns()
        job = jobs.get()
        lab("idle", t0, time.monotonic_ns(), "jobwait")
        if job is None:
            return
        nap(0.1)


def holder(lock, held, results):
    role("pp_holder")
    with lock:
        held.set()
        nap(0.3)
    results.put("held")


def taker(lock, results):
    role("pp_taker")
    t0 = time.monotonic_ns()
    with lock:
        lab("latency", t0, time.monotonic_ns(), "lock")
    results.put("took")


def main():
    role("pp_main")
    jobs = ctx.Queue()
    results = ctx.SimpleQueue()
    lock = ctx.Lock()
    pool = [ctx.Process(target=worker, args=(jobs,)) for _ in range(2)]
    for p in pool:
        p.start()
    time.sleep(0.1)
    start = time.monotonic_ns()
    for _ in range(2):
        held = ctx.Event()
        a = ctx.Process(target=holder, args=(lock, held, results))
        t0 = time.monotonic_ns()
        a.start()
        # The taker only once the lock is held: a machine's load may delay the holder's start.
        held.wait()
        lab("latency", t0, time.monotonic_ns(), "start")
        nap(0.04)
        b = ctx.Process(target=taker, args=(lock, results))
        b.start()
        t0 = time.monotonic_ns()
        results.get()
        results.get()
        lab("latency", t0, time.monotonic_ns(), "result")
        # Both have replied and exit: a wait4 of a few ms, on the idle list (not labelled).
        a.join()
        b.join()
        nap(0.3)  # the pool's workers wait for their next job meanwhile
        jobs.put(1)
        nap(0.01)
    end = time.monotonic_ns()
    # The queue's feeder thread (started by the first put), idle between puts: named for the log.
    for t in threading.enumerate():
        if t.name == "QueueFeederThread" and log_fd >= 0:
            os.write(log_fd, b"thread %d pp_feeder\n" % t.native_id)
    for _ in pool:
        jobs.put(None)
    for p in pool:
        p.join()
    if log_fd >= 0:
        os.write(log_fd, b"window %d %d\n" % (start, end))


if __name__ == "__main__":
    main()
