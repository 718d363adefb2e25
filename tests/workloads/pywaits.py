#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""pywaits.py [ROUNDS]: the waits of a CPython 3.11 program that look alike in C, one
PyThread_acquire_lock_timed() on a semaphore each, with a known label. Ground truth to $WL_LOG:
"LABEL TID START END WHAT" per wait (CLOCK_MONOTONIC ns), "thread TID ROLE".
- two "locker" threads take one threading.Lock in turn, each holding it 150 ms (a sleep) while
  the other waits for it: every lock wait and every hold is latency (work, no request hands it);
- two workers wait on a queue.Queue, one on a queue.SimpleQueue (a C module's wait), for jobs
  the main thread puts every 250 ms: idle ("jobwait");
- a ThreadPoolExecutor of two, idle after one job each (SimpleQueue.get): idle, and one thread
  waiting on a threading.Event until the end: idle (both logged as one span each at the end).
The main thread paces the jobs with sleeps and joins nothing still running."""
import concurrent.futures
import os
import queue
import sys
import threading
import time

LOG = os.environ.get("WL_LOG")
log_fd = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if LOG else -1
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
HOLD_S = 0.15
resource = threading.Lock()
jobs = queue.Queue()
simple_jobs = queue.SimpleQueue()
done = threading.Event()


def now():
    return time.monotonic_ns()


def lab(label, t0, t1, what):
    if log_fd >= 0:
        os.write(log_fd, b"%s %d %d %d %s\n" % (label.encode(), threading.get_native_id(), t0,
                                                t1, what.encode()))


def thread_role(role):
    if log_fd >= 0:
        os.write(log_fd, b"thread %d %s\n" % (threading.get_native_id(), role.encode()))


def take_resource():
    t0 = now()
    resource.acquire()
    lab("lock", t0, now(), "threading.Lock")


def locker(started):
    thread_role("locker")
    started.wait()
    for _ in range(ROUNDS):
        take_resource()
        t0 = now()
        time.sleep(HOLD_S)
        lab("nap", t0, now(), "holding the lock")
        resource.release()
        # The other locker takes it now, before this one comes back for it.
        time.sleep(0.01)


def worker(q):
    thread_role("jobworker")
    while True:
        t0 = now()
        job = q.get()
        lab("idle", t0, now(), "jobwait")
        if job is None:
            return
        sum(range(1000))


def waiter():
    thread_role("eventwaiter")
    t0 = now()
    done.wait()
    lab("idle", t0, now(), "event")


def main():
    started = threading.Event()
    lockers = [threading.Thread(target=locker, args=(started,)) for _ in range(2)]
    queues = [jobs, jobs, simple_jobs]
    workers = [threading.Thread(target=worker, args=(q,)) for q in queues]
    ev = threading.Thread(target=waiter)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2,
                                                 initializer=thread_role,
                                                 initargs=("poolworker",))
    for t in lockers + workers + [ev]:
        t.start()
    # One job each: the pool starts a thread per job until it has max_workers.
    first = [pool.submit(threading.get_native_id) for _ in range(2)]
    pool_tids = [f.result() for f in first]
    pool_t0 = now()
    time.sleep(0.2)
    started.set()
    rounds_s = 2 * ROUNDS * (HOLD_S + 0.01) + 0.3
    end = time.monotonic() + rounds_s
    while time.monotonic() < end:
        jobs.put(1)
        simple_jobs.put(1)
        time.sleep(0.25)
    for t in lockers:
        t.join()
    for q in queues:
        q.put(None)
    for t in workers:
        t.join()
    done.set()
    ev.join()
    pool_t1 = now()
    pool.shutdown(wait=True)
    for tid in pool_tids:
        if log_fd >= 0:
            os.write(log_fd, b"idle %d %d %d poolwait\n" % (tid, pool_t0, pool_t1))
    return 0


sys.exit(main())
