# SPDX-License-Identifier: GPL-2.0
# pyframes.py - Python waits whose frames latsnap must name (tests/integration/89c-python-frames.t):
# a thread blocks 200 ms in threading.Lock.acquire() inside wait_for_lock(), called from handle();
# then the main thread sleeps 200 ms in nap(). Prints what it did; exits with its argument
# (0 without one), so that a test sees the status latsnap hands on.
# With "bad-chain" instead: bad_chain() sleeps 200 ms with its frame's link to its caller's
# (_PyInterpreterFrame.previous) pointing at unmapped memory, restored before it returns: what
# the preload library reads must end there, not crash the program.
import ctypes
import sys
import threading
import time

lock = threading.Lock()


def linger():
    # latsnap names a frame from its code object once the stack has reached it, while this
    # runs on; at exit the interpreter frees its code objects (the frame is then unknown).
    # Short sleeps, none an outlier, leave it the time.
    for _ in range(10):
        time.sleep(0.03)


def wait_for_lock():
    lock.acquire()  # LOCK-WAIT
    lock.release()


def handle():
    wait_for_lock()  # HANDLE-CALL
    return "handled"


def nap():
    time.sleep(0.2)  # SLEEP


# CPython 3.11's offsets (lib/py311.h): PyThreadState.cframe, _PyCFrame.current_frame,
# _PyInterpreterFrame.previous.
TSTATE_CFRAME, CFRAME_CURRENT, FRAME_PREVIOUS = 56, 8, 48


def bad_chain():
    get = ctypes.pythonapi.PyThreadState_Get
    get.restype = ctypes.c_void_p
    cframe = ctypes.c_void_p.from_address(get() + TSTATE_CFRAME).value
    frame = ctypes.c_void_p.from_address(cframe + CFRAME_CURRENT).value
    previous = ctypes.c_void_p.from_address(frame + FRAME_PREVIOUS)
    saved = previous.value
    previous.value = 0x10  # BAD-CHAIN
    time.sleep(0.2)  # BAD-SLEEP
    previous.value = saved
    print("bad-chain: done")
    linger()


def main():
    lock.acquire()
    worker = threading.Thread(target=handle, name="pyworker")
    worker.start()
    time.sleep(0.2)
    lock.release()
    worker.join()
    nap()
    print("pyframes: done")
    linger()


if __name__ == "__main__":
    if sys.argv[1:] == ["bad-chain"]:
        bad_chain()
        sys.exit(0)
    main()
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
