#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""mariadb-client.py SOCKET LOG [IDLE_S]: the labelled set's MariaDB sessions (README.md), with
PyMySQL over the server's unix socket. Session A: BEGIN; SELECT ... FOR UPDATE; SELECT SLEEP(1.0);
COMMIT. Session B, 0.1 s into A's sleep: an UPDATE of that row (waits ~0.9 s for A's row lock).
Then session C: SELECT SLEEP(0.3). Then IDLE_S seconds (default 2) of nothing, and SHUTDOWN.
Each session's server thread is named by performance_schema (THREAD_OS_ID). Appends to LOG
"latency TID START END WHAT" for A's sleep, B's lock wait and C's sleep (as this client times
each statement, CLOCK_MONOTONIC ns), "thread TID ROLE" and "window START END"."""
import sys
import threading
import time

import pymysql


def connect(sock):
    deadline = time.monotonic() + 60
    while True:
        try:
            return pymysql.connect(unix_socket=sock, user="root", password="", autocommit=True)
        except pymysql.err.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def os_tid(c):
    with c.cursor() as cur:
        cur.execute("SELECT THREAD_OS_ID FROM performance_schema.threads "
                    "WHERE PROCESSLIST_ID = CONNECTION_ID()")
        return int(cur.fetchone()[0])


def timed(c, sql):
    with c.cursor() as cur:
        t0 = time.monotonic_ns()
        cur.execute(sql)
        cur.fetchall()
        return t0, time.monotonic_ns()


def main():
    sock, log = sys.argv[1], sys.argv[2]
    idle = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
    lines = []
    a, b, c = connect(sock), connect(sock), connect(sock)
    tids = {}
    for name, conn in (("session_a", a), ("session_b", b), ("session_c", c)):
        tids[name] = os_tid(conn)
        lines.append("thread %d mariadb_%s" % (tids[name], name))
    with a.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS lab")
        cur.execute("CREATE TABLE IF NOT EXISTS lab.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
        cur.execute("REPLACE INTO lab.t VALUES (1, 0)")
    time.sleep(0.5)
    start = time.monotonic_ns()
    with a.cursor() as cur:
        cur.execute("BEGIN")
        cur.execute("SELECT * FROM lab.t WHERE id = 1 FOR UPDATE")
    spans = {}

    def session_a():
        spans["a"] = timed(a, "SELECT SLEEP(1.0)")
        with a.cursor() as cur:
            cur.execute("COMMIT")

    ta = threading.Thread(target=session_a)
    ta.start()
    time.sleep(0.1)
    spans["b"] = timed(b, "UPDATE lab.t SET v = v + 1 WHERE id = 1")
    ta.join()
    time.sleep(0.2)
    spans["c"] = timed(c, "SELECT SLEEP(0.3)")
    lines.append("latency %d %d %d sleep" % (tids["session_a"], *spans["a"]))
    lines.append("latency %d %d %d rowlock" % (tids["session_b"], *spans["b"]))
    lines.append("latency %d %d %d sleep" % (tids["session_c"], *spans["c"]))
    time.sleep(idle)
    lines.append("window %d %d" % (start, time.monotonic_ns()))
    with open(log, "a") as f:
        f.write("\n".join(lines) + "\n")
    with c.cursor() as cur:
        cur.execute("SHUTDOWN")


main()
