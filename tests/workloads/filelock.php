<?php
// SPDX-License-Identifier: GPL-2.0
// filelock.php FILE MS: PHP's flock(), the way a PHP-FPM worker waits on a lock file. This process
// takes FILE's exclusive lock, starts a second PHP ("filelock.php wait FILE") that asks for the
// same lock, holds it MS ms and lets it go. Known cause: a flock outlier of ~MS in the second
// one, waiting for a file lock. It prints "waiter PID" and the waiter's "waited MS ms".
if ($argv[1] === 'wait') {
	$f = fopen($argv[2], 'c');
	$t0 = hrtime(true);
	flock($f, LOCK_EX) or exit(1);
	printf("waited %.1f ms\n", (hrtime(true) - $t0) / 1e6);
	exit(0);
}
$f = fopen($argv[1], 'c');
flock($f, LOCK_EX) or exit(1);
$p = proc_open([PHP_BINARY, __FILE__, 'wait', $argv[1]], [], $pipes);
printf("waiter %d\n", proc_get_status($p)['pid']);
usleep((int)$argv[2] * 1000);
flock($f, LOCK_UN);
exit(proc_close($p));
