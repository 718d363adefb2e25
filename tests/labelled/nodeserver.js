// SPDX-License-Identifier: GPL-2.0
/*
 * nodeserver.js SOCKET: the labelled set's Node server (README.md). The event loop serves the
 * unix stream socket SOCKET, one request line per connection, and is idle between requests; a
 * worker_threads Worker holds a shared "lock". "hold" and "contend" ask the worker to take the
 * lock for 280 ms (it waits with Atomics.wait's timeout: a sleep inside its work) and wait for
 * it synchronously with Atomics.wait (a wait inside a request, in the event loop thread); "nap"
 * is a synchronous 200 ms sleep (Atomics.wait to its timeout); "quit" exits 0. Ground truth to
 * $LAB_LOG: "LABEL TID START END WHAT" per wait, "thread TID ROLE".
 */
'use strict';
const fs = require('fs');
const net = require('net');
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

const LOG = process.env.LAB_LOG;
const logFd = LOG ? fs.openSync(LOG, 'a') : -1;

function tid() {
	return Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
}

function now() {
	return process.hrtime.bigint(); // uv_hrtime: CLOCK_MONOTONIC
}

function lab(line) {
	if (logFd >= 0) {
		fs.writeSync(logFd, line + '\n');
	}
}

function span(label, t0, t1, what) {
	lab(`${label} ${tid()} ${t0} ${t1} ${what}`);
}

if (!isMainThread) {
	// The holder: each message is a job, 280 ms with the lock taken, then the lock is released.
	const cell = new Int32Array(workerData);
	const own = new Int32Array(new SharedArrayBuffer(4));
	lab(`thread ${tid()} node_holder`);
	parentPort.on('message', () => {
		const t0 = now();
		Atomics.wait(own, 0, 0, 280);
		span('latency', t0, now(), 'sleep');
		Atomics.store(cell, 0, 1);
		Atomics.notify(cell, 0);
	});
	return;
}

const sab = new SharedArrayBuffer(4);
const cell = new Int32Array(sab);
const holder = new Worker(__filename, { workerData: sab });
lab(`thread ${tid()} node_loop`);

function lockWait() {
	Atomics.store(cell, 0, 0);
	holder.postMessage('hold');
	const t0 = now();
	Atomics.wait(cell, 0, 0);
	span('latency', t0, now(), 'lock');
}

function nap(ms) {
	const t0 = now();
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
	span('latency', t0, now(), 'sleep');
}

const path = process.argv[2];
try {
	fs.unlinkSync(path);
} catch (e) {
	// none there
}
const server = net.createServer((c) => {
	let data = '';
	c.on('data', (chunk) => {
		data += chunk;
		if (!data.includes('\n')) {
			return;
		}
		const cmd = data.trim();
		if (cmd === 'hold' || cmd === 'contend') {
			lockWait();
		} else if (cmd === 'nap') {
			nap(200);
		} else if (cmd === 'quit') {
			c.end('bye\n', () => {
				fs.unlinkSync(path);
				process.exit(0);
			});
			return;
		}
		c.end('done\n');
	});
	c.on('error', () => {});
});
server.listen(path);
