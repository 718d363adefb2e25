<?php
// SPDX-License-Identifier: GPL-2.0
// phpframes.php - PHP waits whose frames latsnap must name (tests/integration/89e-php-frames.t):
// serve() calls handle_request() in a loop, which sleeps 200 ms in usleep(); then take_lock()
// (called from the method Locker::acquire) waits about 200 ms in flock() for a lock that a
// flock(1) child holds. Prints what it did;
// exits with its first argument (0 without one), so that a test sees the status latsnap hands
// on. Its second argument is the lock file (a temporary one without).

function handle_request()
{
	usleep(200000); // SLEEP
}

function serve($n)
{
	for ($i = 0; $i < $n; $i++) {
		handle_request(); // SERVE-CALL
	}
}

function take_lock($path)
{
	$fd = fopen($path, "c");
	flock($fd, LOCK_EX); // LOCK-WAIT
	flock($fd, LOCK_UN);
	fclose($fd);
}

class Locker
{
	public static function acquire($path)
	{
		take_lock($path); // ACQUIRE-CALL
	}
}

// latsnap names a frame from the process's memory once the stack has reached it, while this
// runs on: short sleeps, none an outlier, leave it the time before the interpreter exits.
function linger()
{
	for ($i = 0; $i < 10; $i++) {
		usleep(30000);
	}
}

$status = (int)($argv[1] ?? 0);
$path = $argv[2] ?? tempnam(sys_get_temp_dir(), "phpframes");
serve(2); // MAIN-CALL
echo "served: 2\n";
$ready = $path . ".ready";
@unlink($ready);
$holder = proc_open(["flock", $path, "sh", "-c", "touch \"\$0\"; sleep 0.25", $ready], [], $pipes);
while (!file_exists($ready)) {
	usleep(5000);
}
Locker::acquire($path); // TAKE-CALL
proc_close($holder);
@unlink($ready);
echo "lock: taken\n";
linger();
exit($status);
