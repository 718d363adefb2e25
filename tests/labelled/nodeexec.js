// SPDX-License-Identifier: GPL-2.0
// nodeexec.js: Node's event loop blocked in child_process.execSync (labelled set, README.md).
// Per round: execSync of a Python child that sleeps 300 ms (latency: the loop waits for the
// child it started, ended by the child's exit; and the child's own sleep, which it logs), then a 300 ms setTimeout with nothing else to do (idle: the loop is free,
// its epoll_wait runs to the timer). Ground truth to $LAB_LOG, and its own window.
'use strict';
const fs = require('fs');
const cp = require('child_process');
const LOG = process.env.LAB_LOG;
const fd = LOG ? fs.openSync(LOG, 'a') : -1;
const tid = parseInt(fs.readlinkSync('/proc/thread-self').split('/').pop(), 10);
const now = () => process.hrtime.bigint();
function lab(label, t0, t1, what) {
	if (fd >= 0) {
		fs.writeSync(fd, `${label} ${tid} ${t0} ${t1} ${what}\n`);
	}
}
const CHILD = `exec /usr/bin/python3 -c 'import os, threading, time
t0 = time.monotonic_ns(); time.sleep(0.3)
os.write(os.open("${LOG || '/dev/null'}", os.O_WRONLY | os.O_APPEND), b"latency %d %d %d sleep\\n" % (threading.get_native_id(), t0, time.monotonic_ns()))'`;
let round = 0;
let start;
function step() {
	if (round === 2) {
		if (fd >= 0) {
			fs.writeSync(fd, `window ${start} ${now()}\n`);
		}
		return;
	}
	round++;
	let t0 = now();
	cp.execSync(CHILD);
	lab('latency', t0, now(), 'child');
	t0 = now();
	setTimeout(() => {
		lab('idle', t0, now(), 'timer');
		step();
	}, 300);
}
setTimeout(() => {
	start = now();
	step();
}, 100);
