#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""postgres-client.py SOCKDIR LOG [IDLE_S]: the labelled set's PostgreSQL sessions (README.md),
with psycopg2 over the server's unix socket in SOCKDIR. Session A: BEGIN; SELECT ... FOR UPDATE;
SELECT pg_sleep(1.0); COMMIT. Session B, 0.1 s into A's sleep: an UPDATE of that row (waits ~0.9 s
for A's row lock: ProcSleep, in WaitLatch's epoll_wait). Then session C: SELECT pg_sleep(0.3). Then
IDLE_S seconds (default 2) of nothing. Each session is one backend process (pg_backend_pid()).
Appends to LOG "latency TID START END WHAT" for A's sleep, B's lock wait and C's sleep (as this
client times each statement, CLOCK_MONOTONIC ns), "thread TID ROLE" and "window START END"."""
import sys
import threading
import time

import psycopg2


def connect(sockdir):
    deadline = time.monotonic() + 60
    while True:
        try:
            c = psycopg2.connect(host=sockdir, user="postgres", dbname="postgres")
            c.autocommit = True
            return c
        except psycopg2.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def timed(c, sql):
    with c.cursor() as cur:
        t0 = time.monotonic_ns()
        cur.execute(sql)
        if cur.description:
            cur.fetchall()
        return t0, time.monotonic_ns()


def main():
    sockdir, log = sys.argv[1], sys.argv[2]
    idle = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
    lines = []
    a, b, c = connect(sockdir), connect(sockdir), connect(sockdir)
    tids = {}
    for name, conn in (("session_a", a), ("session_b", b), ("session_c", c)):
        tids[name] = conn.get_backend_pid()
        lines.append("thread %d postgres_%s" % (tids[name], name))
    with a.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS lab_t (id INT PRIMARY KEY, v INT)")
        cur.execute("INSERT INTO lab_t VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET v = 0")
    time.sleep(0.5)
    start = time.monotonic_ns()
    with a.cursor() as cur:
        cur.execute("BEGIN")
        cur.execute("SELECT * FROM lab_t WHERE id = 1 FOR UPDATE")
        cur.fetchall()
    spans = {}

    def session_a():
        spans["a"] = timed(a, "SELECT pg_sleep(1.0)")
        with a.cursor() as cur:
            cur.execute("COMMIT")

    ta = threading.Thread(target=session_a)
    ta.start()
    time.sleep(0.1)
    spans["b"] = timed(b, "UPDATE lab_t SET v = v + 1 WHERE id = 1")
    ta.join()
    time.sleep(0.2)
    spans["c"] = timed(c, "SELECT pg_sleep(0.3)")
    lines.append("latency %d %d %d sleep" % (tids["session_a"], *spans["a"]))
    lines.append("latency %d %d %d rowlock" % (tids["session_b"], *spans["b"]))
    lines.append("latency %d %d %d sleep" % (tids["session_c"], *spans["c"]))
    time.sleep(idle)
    lines.append("window %d %d" % (start, time.monotonic_ns()))
    with open(log, "a") as f:
        f.write("\n".join(lines) + "\n")
    for conn in (a, b, c):
        conn.close()


main()
