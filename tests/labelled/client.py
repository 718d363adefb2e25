#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""client.py SOCKET LOG [ROUNDS [IDLE_S [EXTRA]]]: the requests of the labelled set (README.md) to a line
server on the unix stream socket SOCKET: each round "hold" (the server holds a lock, sleeping
280 ms), 40 ms later "contend" (waits for that lock), then "nap" (sleeps 200 ms), then 300 ms of
nothing (with EXTRA, that request too, 300 ms after the nap's reply and before the 300 ms:
labpool's "await"); after the rounds IDLE_S seconds of nothing, then "quit". Appends "window
START END" (the span scored, CLOCK_MONOTONIC ns) to LOG. Waits up to 30 s for the socket."""
import os
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def send(path, cmd):
    # LAB_STAMP=1: the send time too, for a server to label its acceptor's wait from (Ruby's).
    if os.environ.get("LAB_STAMP") and cmd != "ping":
        cmd += " %d" % time.monotonic_ns()
    s = connect(path)
    s.sendall(cmd.encode() + b"\n")
    return s


def reply(s):
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(64)
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def main():
    path, log = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    idle = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
    extra = sys.argv[5] if len(sys.argv) > 5 else None
    deadline = time.monotonic() + 30
    while True:
        try:
            connect(path).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                sys.exit("client.py: %s: no server" % path)
            time.sleep(0.05)
    # A ping the server takes for an unknown request: its threads are all up afterwards.
    reply(send(path, "ping"))
    time.sleep(0.5)
    start = time.monotonic_ns()
    for _ in range(rounds):
        a = send(path, "hold")
        time.sleep(0.04)
        b = send(path, "contend")
        reply(a)
        reply(b)
        reply(send(path, "nap"))
        if extra:
            # The nap's worker back in its wait for the next job first: sent at once, the extra
            # request may find it still closing the nap's connection (a guest under emulation),
            # and it takes the job from the queue itself, never woken: nothing hands it the job.
            time.sleep(0.3)
            reply(send(path, extra))
        time.sleep(0.3)
    time.sleep(idle)
    end = time.monotonic_ns()
    with open(log, "a") as f:
        f.write("window %d %d\n" % (start, end))
    reply(send(path, "quit"))


main()
