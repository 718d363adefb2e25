// SPDX-License-Identifier: GPL-2.0

// napper.rs - a Rust program (std only) whose waits are in functions with Rust names, for the
// names latsnap prints (demangled) and stores (mangled), tests/integration/87b-rust-names.t.
//
// rustnapper [MS] [N]: N times (default 2), napper::serve::<Request<u32>> calls a closure that
// calls napper::handle_request, which sleeps MS milliseconds (default 100) in
// std::thread::sleep (through napper::nap): latency, an outlier each. Built twice (Makefile): rustnapper with rustc's
// default (legacy) mangling, "_ZN6napper14handle_request17h<hash>E", and rustnapper-v0 with
// v0 mangling, "_RNvCs<crate hash>_6napper14handle_request".
//
// Conventions of the C workloads (tests/workloads/wl_common.h): nothing on stdout; WL_LOG=FILE
// gets "pid PID" and "nap TID START_NS END_NS" lines (CLOCK_MONOTONIC, the clock latsnap
// reports in; std's Instant is CLOCK_MONOTONIC too, but has no way to read its nanoseconds).

use std::env;
use std::fmt::Debug;
use std::fs::OpenOptions;
use std::io::Write;
use std::thread;
use std::time::Duration;

#[derive(Debug)]
struct Request<T> {
    id: T,
}

// The thread's id, as the kernel numbers it (std has no call for it).
fn gettid() -> i64 {
    extern "C" {
        fn gettid() -> i32;
    }
    unsafe { gettid() as i64 }
}

fn now_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    let mut ts = Timespec { sec: 0, nsec: 0 };
    unsafe { clock_gettime(1, &mut ts) };
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

fn log(line: &str) {
    if let Ok(path) = env::var("WL_LOG") {
        if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{}", line);
        }
    }
}

// The sleep itself, apart: a walk of the frame pointers alone (std has none) skips the caller of
// the function the thread waits in, which is then this one, not handle_request. Each function
// does something after its call, so that neither call is a tail call (a jump, with no frame).
#[inline(never)]
fn nap(ms: u64) -> u64 {
    thread::sleep(Duration::from_millis(ms));
    now_ns()
}

#[inline(never)]
fn handle_request(ms: u64) {
    let t0 = now_ns();
    let t1 = nap(ms);
    log(&format!("nap {} {} {}", gettid(), t0, t1));
}

// Generic, so that its name carries its type ("serve<T>", "serve::<...>"), with a closure in it.
#[inline(never)]
fn serve<T: Debug>(req: &Request<T>, ms: u64) -> usize {
    let work = || handle_request(ms);
    work();
    format!("{:?}", req.id).len()
}

fn main() {
    let args: Vec<String> = env::args().collect();
    let ms = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2);
    let mut len = 0;

    log(&format!("pid {}", std::process::id()));
    for i in 0..n {
        len += serve(&Request { id: i }, ms);
    }
    std::process::exit(if len > 0 { 0 } else { 1 });
}
