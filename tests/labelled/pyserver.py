#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""pyserver.py SOCKET: the labelled set's Python 3.11 server (README.md). The main thread accepts
connections on the unix stream socket SOCKET and reads one request line from each; a pool of 3
worker threads blocked on queue.get() (waiting for the next job: idle) does them: "hold" takes a
threading.Lock and sleeps 280 ms holding it, "contend" takes the same lock (waits for the
holder), "nap" sleeps 200 ms (all three latency: waits inside a request); "quit" exits 0.
Ground truth to $LAB_LOG: "LABEL TID START END WHAT" per wait, "thread TID ROLE"."""
import os
import queue
import socket
import sys
import threading
import time

LOG = os.environ.get("LAB_LOG")
log_fd = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if LOG else -1
resource = threading.Lock()
jobs = queue.Queue()


def lab(label, t0, t1, what):
    if log_fd >= 0:
        os.write(log_fd, b"%s %d %d %d %s\n" % (label.encode(), threading.get_native_id(), t0, t1,
                                                what.encode()))


def thread_role(role):
    if log_fd >= 0:
        os.write(log_fd, b"thread %d %s\n" % (threading.get_native_id(), role.encode()))


def nap(seconds):
    t0 = time.monotonic_ns()
    time.sleep(seconds)
    lab("latency", t0, time.monotonic_ns(), "sleep")


def take_resource():
    t0 = time.monotonic_ns()
    resource.acquire()
    lab("latency", t0, time.monotonic_ns(), "lock")


def do_job(conn, cmd):
    if cmd == "hold":
        take_resource()
        nap(0.28)
        resource.release()
    elif cmd == "contend":
        take_resource()
        resource.release()
    elif cmd == "nap":
        nap(0.2)
    try:
        conn.sendall(b"done\n")
    except OSError:
        pass
    conn.close()


def worker():
    thread_role("py_worker")
    while True:
        t0 = time.monotonic_ns()
        conn, cmd = jobs.get()
        lab("idle", t0, time.monotonic_ns(), "jobwait")
        do_job(conn, cmd)


def read_request(conn):
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(64)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").strip()


def main():
    path = sys.argv[1]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)
    srv.bind(path)
    srv.listen(16)
    for _ in range(3):
        threading.Thread(target=worker, daemon=True).start()
    thread_role("py_accept")
    while True:
        t0 = time.monotonic_ns()
        conn, _ = srv.accept()
        lab("idle", t0, time.monotonic_ns(), "accept")
        cmd = read_request(conn)
        if not cmd:
            conn.close()
        elif cmd == "quit":
            conn.sendall(b"bye\n")
            os.unlink(path)
            return 0
        else:
            jobs.put((conn, cmd))


sys.exit(main())
