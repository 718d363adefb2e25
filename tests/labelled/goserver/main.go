// SPDX-License-Identifier: GPL-2.0

// goserver SOCKET: the labelled set's Go server (tests/labelled/README.md), Go 1.19. A goroutine
// accepts connections on the unix stream socket SOCKET, one goroutine per connection reads the
// request line and hands it to a pool of 3 worker goroutines blocked on a channel (waiting for
// the next job: idle), which do it: "hold" locks a sync.Mutex and sleeps 280 ms holding it,
// "contend" locks the same mutex (waits for the holder), "nap" sleeps 200 ms (all three latency:
// waits inside a request); "quit" exits 0. Ground truth to $LAB_LOG: "LABEL TID START END WHAT"
// per wait, TID the thread (M) the goroutine ran on when it began to wait.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

var (
	resource sync.Mutex
	logMu    sync.Mutex
	logFile  *os.File
)

// now: CLOCK_MONOTONIC in ns, the clock latsnap reports in (time.Now's monotonic reading is
// relative to the process's start).
func now() int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func lab(line string) {
	if logFile == nil {
		return
	}
	logMu.Lock()
	logFile.WriteString(line + "\n")
	logMu.Unlock()
}

type job struct {
	conn net.Conn
	cmd  string
}

func nap(d time.Duration) {
	tid, t0 := syscall.Gettid(), now()
	time.Sleep(d)
	lab(fmt.Sprintf("latency %d %d %d sleep", tid, t0, now()))
}

func takeResource() {
	tid, t0 := syscall.Gettid(), now()
	resource.Lock()
	lab(fmt.Sprintf("latency %d %d %d lock", tid, t0, now()))
}

func doJob(j job) {
	switch j.cmd {
	case "hold":
		takeResource()
		nap(280 * time.Millisecond)
		resource.Unlock()
	case "contend":
		takeResource()
		resource.Unlock()
	case "nap":
		nap(200 * time.Millisecond)
	}
	j.conn.Write([]byte("done\n"))
	j.conn.Close()
}

func worker(jobs chan job) {
	for j := range jobs {
		doJob(j)
	}
}

func main() {
	if p := os.Getenv("LAB_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "goserver:", err)
			os.Exit(1)
		}
		logFile = f
	}
	path := os.Args[1]
	os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goserver:", err)
		os.Exit(1)
	}
	jobs := make(chan job)
	for i := 0; i < 3; i++ {
		go worker(jobs)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "goserver:", err)
			os.Exit(1)
		}
		go func(c net.Conn) {
			line, _ := bufio.NewReader(c).ReadString('\n')
			cmd := strings.TrimSpace(line)
			switch cmd {
			case "":
				c.Close()
			case "quit":
				c.Write([]byte("bye\n"))
				c.Close()
				os.Remove(path)
				os.Exit(0)
			default:
				jobs <- job{c, cmd}
			}
		}(c)
	}
}
