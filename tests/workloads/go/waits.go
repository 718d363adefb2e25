// SPDX-License-Identifier: GPL-2.0

// waits.go - goroutines that wait in known places, for tests/integration/86-go.t: a Go program's
// user stacks are the kernel's frame-pointer walks (a static binary ignores LD_PRELOAD), and
// below the scheduler's stack switch that walk runs into goroutines that have left the thread.
//
// gowaits [MS]: one after the other, each about MS milliseconds (default 300):
//   - lock: main.contend waits for a sync.Mutex that main.holder holds for MS (a goroutine wait:
//     the runtime parks it, its thread goes idle in the scheduler);
//   - nap: main.nap, called only now, sleeps in time.Sleep for MS (a goroutine wait too);
//   - read: main.pipeReader reads an os.Pipe made blocking (a real read syscall on its
//     goroutine's stack) until main writes to it, MS later.
//
// Meanwhile main.idler, a worker goroutine with no work, waits on a channel from the start to
// the end (a goroutine waiting for work: idle).
//
// Conventions of the C workloads (tests/workloads/wl_common.h): nothing on stdout; WL_LOG=FILE
// gets "pid PID", "PHASE START_NS END_NS" (CLOCK_MONOTONIC) and "tid reader TID" lines.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

var logFile *os.File

// nowNs is CLOCK_MONOTONIC in nanoseconds, the clock latsnap reports in.
func nowNs() int64 {
	var ts syscall.Timespec

	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func logLine(format string, args ...interface{}) {
	if logFile != nil {
		fmt.Fprintf(logFile, format+"\n", args...)
	}
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "gowaits: %s: %v\n", what, err)
	os.Exit(1)
}

//go:noinline
func holder(mu *sync.Mutex, held chan<- struct{}, d time.Duration) {
	mu.Lock()
	held <- struct{}{}
	time.Sleep(d)
	mu.Unlock()
}

//go:noinline
func contend(mu *sync.Mutex) {
	mu.Lock()
	mu.Unlock()
}

//go:noinline
func nap(d time.Duration) {
	time.Sleep(d)
}

//go:noinline
func idler(jobs <-chan int, done chan<- struct{}) {
	for range jobs {
	}
	done <- struct{}{}
}

//go:noinline
func pipeReader(r *os.File, done chan<- error) {
	buf := make([]byte, 16)

	logLine("tid reader %d", syscall.Gettid())
	t0 := nowNs()
	_, err := r.Read(buf)
	logLine("read %d %d", t0, nowNs())
	done <- err
}

func main() {
	ms := 300
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "gowaits: bad MS %q\n", os.Args[1])
			os.Exit(2)
		}
		ms = n
	}
	d := time.Duration(ms) * time.Millisecond
	if path := os.Getenv("WL_LOG"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0644)
		if err != nil {
			fail("WL_LOG "+path, err)
		}
		logFile = f
	}
	logLine("pid %d", os.Getpid())

	jobs, idled := make(chan int), make(chan struct{})
	go idler(jobs, idled)

	var mu sync.Mutex
	held := make(chan struct{})
	go holder(&mu, held, d)
	<-held
	t0 := nowNs()
	contend(&mu)
	logLine("lock %d %d", t0, nowNs())

	t0 = nowNs()
	nap(d)
	logLine("nap %d %d", t0, nowNs())

	r, w, err := os.Pipe()
	if err != nil {
		fail("pipe", err)
	}
	// Fd() puts the file in blocking mode: its reads are read syscalls, not netpoller waits.
	r.Fd()
	done := make(chan error)
	go pipeReader(r, done)
	time.Sleep(d)
	if _, err := w.Write([]byte("x")); err != nil {
		fail("write", err)
	}
	if err := <-done; err != nil {
		fail("read", err)
	}
	close(jobs)
	<-idled
}
