<?php
// SPDX-License-Identifier: GPL-2.0
// phpflock.php: the labelled set's PHP 8.2 CLI program (README.md): processes, no threads. A
// reader child waits on a pipe for its next job (idle) and sleeps 100 ms per job (latency). Per
// round a child takes flock(LOCK_EX) on a file and sleeps 300 ms holding it (latency), 40 ms
// later another child takes the same flock (latency: a lock its holder releases); the parent
// waits for both (waitpid: a wait on the idle list, not labelled), waits 300 ms on a socket
// nobody writes to (stream_select to its timeout: idle), hands the reader a job and sleeps 200 ms
// (latency).
// Ground truth to $LAB_LOG, and its own window.
$log = getenv('LAB_LOG');
$lockfile = sys_get_temp_dir() . '/phpflock.' . posix_getpid();
touch($lockfile);

function lab($label, $t0, $t1, $what)
{
	global $log;
	if ($log) {
		file_put_contents($log, sprintf("%s %d %d %d %s\n", $label, posix_getpid(), $t0, $t1,
						$what), FILE_APPEND);
	}
}

function nap($ms)
{
	$t0 = hrtime(true);
	usleep($ms * 1000);
	lab('latency', $t0, hrtime(true), 'sleep');
}

function child($fn)
{
	$pid = pcntl_fork();
	if ($pid === 0) {
		$fn();
		exit(0);
	}
	return $pid;
}

$pipe = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
$reader = child(function () use ($pipe) {
	fclose($pipe[0]);
	for (;;) {
		$t0 = hrtime(true);
		$job = fgets($pipe[1]);
		lab('idle', $t0, hrtime(true), 'jobwait');
		if ($job === false || trim($job) === 'quit') {
			return;
		}
		nap(100);
	}
});
fclose($pipe[1]);
$quiet = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
usleep(100000);
$start = hrtime(true);
for ($round = 0; $round < 2; $round++) {
	$a = child(function () use ($lockfile) {
		$f = fopen($lockfile, 'r');
		flock($f, LOCK_EX);
		nap(300);
		flock($f, LOCK_UN);
	});
	usleep(40000);
	$b = child(function () use ($lockfile) {
		$f = fopen($lockfile, 'r');
		$t0 = hrtime(true);
		flock($f, LOCK_EX);
		lab('latency', $t0, hrtime(true), 'flock');
	});
	pcntl_waitpid($a, $status);
	pcntl_waitpid($b, $status);
	$t0 = hrtime(true);
	$r = [$quiet[0]];
	$w = $e = null;
	stream_select($r, $w, $e, 0, 300000);
	lab('idle', $t0, hrtime(true), 'select');
	fwrite($pipe[0], "job\n");
	nap(200);
}
$end = hrtime(true);
fwrite($pipe[0], "quit\n");
pcntl_waitpid($reader, $status);
unlink($lockfile);
if ($log) {
	file_put_contents($log, sprintf("window %d %d\n", $start, $end), FILE_APPEND);
}
