// SPDX-License-Identifier: GPL-2.0
// rustpool: the labelled set's Rust program (README.md), no sockets. 2 worker threads wait on an
// mpsc channel for jobs (idle); per round a new thread locks a std::sync::Mutex and sleeps 300 ms
// holding it (latency), 40 ms later another locks it (latency), the main thread joins both
// (latency), sleeps 300 ms (latency), sends a job, which sleeps 100 ms in a worker (latency).
// Ground truth to $LAB_LOG, and its own window.
use std::fs::OpenOptions;
use std::io::Write;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

fn now_ns() -> i64 {
    let mut ts = libc_timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { clock_gettime(1, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

#[repr(C)]
struct libc_timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clk: i32, ts: *mut libc_timespec) -> i32;
    fn gettid() -> i32;
}

fn lab(label: &str, t0: i64, t1: i64, what: &str) {
    if let Ok(path) = std::env::var("LAB_LOG") {
        let mut f = OpenOptions::new().append(true).create(true).open(path).unwrap();
        let tid = unsafe { gettid() };
        f.write_all(format!("{} {} {} {} {}\n", label, tid, t0, t1, what).as_bytes()).unwrap();
    }
}

fn nap(ms: u64) {
    let t0 = now_ns();
    thread::sleep(Duration::from_millis(ms));
    lab("latency", t0, now_ns(), "sleep");
}

fn main() {
    let resource = Arc::new(Mutex::new(0));
    let (tx, rx) = mpsc::channel::<i32>();
    let rx = Arc::new(Mutex::new(rx));
    let mut pool = Vec::new();
    for _ in 0..2 {
        let rx = Arc::clone(&rx);
        pool.push(thread::spawn(move || loop {
            let t0 = now_ns();
            // One worker waits in recv, the other for the receiver's lock: both for a job.
            let job = rx.lock().unwrap().recv().unwrap();
            lab("idle", t0, now_ns(), "jobwait");
            if job < 0 {
                return;
            }
            nap(100);
        }));
    }
    thread::sleep(Duration::from_millis(100));
    let start = now_ns();
    for round in 0..2 {
        let r = Arc::clone(&resource);
        let a = thread::spawn(move || {
            let _g = r.lock().unwrap();
            nap(300);
        });
        // A sleep, latency if a loaded machine stretches it past the threshold.
        nap(40);
        let r = Arc::clone(&resource);
        let b = thread::spawn(move || {
            let t0 = now_ns();
            let _g = r.lock().unwrap();
            lab("latency", t0, now_ns(), "lock");
        });
        let t0 = now_ns();
        a.join().unwrap();
        b.join().unwrap();
        lab("latency", t0, now_ns(), "join");
        nap(300);
        tx.send(round).unwrap();
        nap(200);
    }
    let end = now_ns();
    tx.send(-1).unwrap();
    tx.send(-1).unwrap();
    for t in pool {
        t.join().unwrap();
    }
    if let Ok(path) = std::env::var("LAB_LOG") {
        let mut f = OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(format!("window {} {}\n", start, end).as_bytes()).unwrap();
    }
}
