# SPDX-License-Identifier: GPL-2.0
# pyframes.py - Python waits whose frames latsnap must name (tests/integration/89c-python-frames.t):
# a thread blocks 200 ms in threading.Lock.acquire() inside wait_for_lock(), called from handle();
# then the main thread sleeps 200 ms in nap(). Prints what it did; exits with its argument
# (0 without one), so that a test sees the status latsnap hands on.
import sys
import threading
import time

lock = threading.Lock()


def wait_for_lock():
    lock.acquire()  # LOCK-WAIT
    lock.release()


def handle():
    wait_for_lock()  # HANDLE-CALL
    return "handled"


def nap():
    time.sleep(0.2)  # SLEEP


def main():
    lock.acquire()
    worker = threading.Thread(target=handle, name="pyworker")
    worker.start()
    time.sleep(0.2)
    lock.release()
    worker.join()
    nap()
    print("pyframes: done")


if __name__ == "__main__":
    main()
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
