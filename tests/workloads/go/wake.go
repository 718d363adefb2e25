// SPDX-License-Identifier: GPL-2.0

// wake.go - a goroutine woken by another, for tests/integration/86c-goroutine-lines.t.
//
// gowake [MS]: main.receive waits on a channel; main.sender, locked to a thread of its own,
// sends on it MS milliseconds later (default 100). Known: a goroutine wait of ~MS ("chan
// receive") whose waker is the sender's goroutine, on the sender's thread.
//
// Conventions of the C workloads (tests/workloads/wl_common.h): nothing on stdout; WL_LOG=FILE
// gets "pid PID", "sender GOID TID" and "receiver GOID" lines.
package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

var logFile *os.File

func logLine(format string, args ...interface{}) {
	if logFile != nil {
		fmt.Fprintf(logFile, format+"\n", args...)
	}
}

// goid is the calling goroutine's id, from the first line of its traceback ("goroutine N [").
func goid() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	id, _ := strconv.Atoi(string(buf[:bytes.IndexByte(buf, ' ')]))
	return id
}

//go:noinline
func sender(ch chan<- int, d time.Duration) {
	runtime.LockOSThread()
	logLine("sender %d %d", goid(), syscall.Gettid())
	time.Sleep(d)
	ch <- 1
}

//go:noinline
func receive(ch <-chan int) int {
	return <-ch
}

func main() {
	d := 100 * time.Millisecond
	if len(os.Args) > 1 {
		ms, err := strconv.Atoi(os.Args[1])
		if err != nil || ms < 0 {
			fmt.Fprintf(os.Stderr, "usage: gowake [MS]\n")
			os.Exit(2)
		}
		d = time.Duration(ms) * time.Millisecond
	}
	if path := os.Getenv("WL_LOG"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gowake: WL_LOG %s: %v\n", path, err)
			os.Exit(1)
		}
		logFile = f
	}
	logLine("pid %d", os.Getpid())
	logLine("receiver %d", goid())
	ch := make(chan int)
	go sender(ch, d)
	receive(ch)
}
