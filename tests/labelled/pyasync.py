#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""pyasync.py SOCKET: a Python 3.11 asyncio server (labelled set, README.md). Its handler, per
request: "nap" awaits asyncio.sleep(0.3) (idle for the loop thread: free to run other work, its
epoll_wait runs to the timer), "block" calls time.sleep(0.2) in the loop (latency: the loop is
held), "quit" exits. The loop waits for connections in epoll_wait (idle)."""
import asyncio
import os
import sys
import threading
import time

LOG = os.environ.get("LAB_LOG")
log_fd = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if LOG else -1


def lab(label, t0, t1, what):
    if log_fd >= 0:
        os.write(log_fd, b"%s %d %d %d %s\n" % (label.encode(), threading.get_native_id(), t0, t1,
                                                what.encode()))


async def handle(reader, writer):
    cmd = (await reader.readline()).decode().strip()
    if cmd == "nap":
        t0 = time.monotonic_ns()
        await asyncio.sleep(0.3)
        lab("idle", t0, time.monotonic_ns(), "await_sleep")
    elif cmd in ("hold", "contend"):
        t0 = time.monotonic_ns()
        time.sleep(0.2)
        lab("latency", t0, time.monotonic_ns(), "sleep")
    writer.write(b"done\n")
    await writer.drain()
    writer.close()
    if cmd == "quit":
        done.set()


async def main():
    global done
    done = asyncio.Event()
    server = await asyncio.start_unix_server(handle, path=sys.argv[1])
    await done.wait()
    server.close()


done = None
asyncio.run(main())
