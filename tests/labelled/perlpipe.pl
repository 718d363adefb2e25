#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
# perlpipe.pl: the labelled set's Perl 5.36 program (README.md): a pool of 2 worker processes fed
# over pipes, no threads. Each worker reads its next job from its pipe (idle) and answers on
# another. Per round the parent hands worker 1 "hold": it takes a SysV semaphore (semop), says so,
# and sleeps 300 ms holding it (latency); 40 ms later worker 2 "take": its semop waits for worker
# 1's release (latency: a lock its holder releases); the parent waits for both answers in select
# (latency: replies to work it handed out), sleeps 300 ms (latency), hands worker 2 "nap" (a
# 100 ms sleep: latency) and waits for its answer in select (latency).
# Ground truth to $LAB_LOG, and its own window.
use strict;
use warnings;
use IO::Handle;
use IO::Select;
use IPC::SysV qw(IPC_PRIVATE IPC_CREAT S_IRUSR S_IWUSR SEM_UNDO);
use IPC::Semaphore;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);

my $log;
if ($ENV{LAB_LOG}) {
	open($log, '>>', $ENV{LAB_LOG}) or die "perlpipe: $ENV{LAB_LOG}: $!";
}

sub now { return int(clock_gettime(CLOCK_MONOTONIC) * 1e9); }

# One write(2) per line: the processes' lines never mix.
sub put_log { syswrite($log, $_[0]) if $log; }

sub lab {
	my ($label, $t0, $t1, $what) = @_;
	put_log("$label $$ $t0 $t1 $what\n");
}

sub nap {
	my ($seconds) = @_;
	my $t0 = now();
	Time::HiRes::sleep($seconds);
	lab('latency', $t0, now(), 'sleep');
}

my $parent = $$;
my $sem = IPC::Semaphore->new(IPC_PRIVATE, 1, S_IRUSR | S_IWUSR | IPC_CREAT)
	or die "perlpipe: semget: $!";
# The parent's exit, whichever way, removes it: a private semaphore outlives its processes.
END { $sem->remove if $sem && $$ == $parent; }
$sem->setval(0, 1) or die "perlpipe: semctl: $!";

sub worker {
	my ($jobs, $answers) = @_;
	put_log("thread $$ pl_worker\n");
	for (;;) {
		my $t0 = now();
		my $job = <$jobs>;
		lab('idle', $t0, now(), 'jobwait');
		last if !defined $job || $job eq "quit\n";
		if ($job eq "hold\n") {
			$sem->op(0, -1, SEM_UNDO) or die "perlpipe: semop: $!";
			print $answers "held\n";
			nap(0.3);
			$sem->op(0, 1, SEM_UNDO) or die "perlpipe: semop: $!";
		} elsif ($job eq "take\n") {
			my $t1 = now();
			$sem->op(0, -1, SEM_UNDO) or die "perlpipe: semop: $!";
			lab('latency', $t1, now(), 'lock');
			$sem->op(0, 1, SEM_UNDO) or die "perlpipe: semop: $!";
		} elsif ($job eq "nap\n") {
			nap(0.1);
		}
		print $answers "done\n";
	}
	exit(0);
}

# Each worker: a pipe for its jobs, one for its answers.
my (@to, @from, @pids);
for my $i (0, 1) {
	pipe(my $jobs_r, my $jobs_w) or die "perlpipe: pipe: $!";
	pipe(my $ans_r, my $ans_w) or die "perlpipe: pipe: $!";
	$jobs_w->autoflush(1);
	$ans_w->autoflush(1);
	my $pid = fork() // die "perlpipe: fork: $!";
	if ($pid == 0) {
		close($_) for ($jobs_w, $ans_r, @to, @from);
		worker($jobs_r, $ans_w);
	}
	close($jobs_r);
	close($ans_w);
	push(@to, $jobs_w);
	push(@from, $ans_r);
	push(@pids, $pid);
}
put_log("thread $$ pl_parent\n");

# Waits in select for an answer from each worker in @who.
sub answers {
	my (@who) = @_;
	my %left = map { fileno($from[$_]) => $_ } @who;
	my $sel = IO::Select->new(map { $from[$_] } @who);

	while (%left) {
		for my $fh ($sel->can_read()) {
			my $line = readline($fh);
			die "perlpipe: a worker died" if !defined $line;
			$sel->remove($fh);
			delete $left{fileno($fh)};
		}
	}
}

Time::HiRes::sleep(0.1); # before the window: not scored
my $start = now();
for my $round (0, 1) {
	print { $to[0] } "hold\n";
	# The taker only once the semaphore is held: a machine's load may delay the holder.
	my $t0 = now();
	answers(0);
	lab('latency', $t0, now(), 'start');
	nap(0.04);
	print { $to[1] } "take\n";
	$t0 = now();
	answers(0, 1);
	lab('latency', $t0, now(), 'answers');
	nap(0.3); # the workers wait for their next job meanwhile
	print { $to[1] } "nap\n";
	$t0 = now();
	answers(1);
	lab('latency', $t0, now(), 'answer');
}
my $end = now();
print { $_ } "quit\n" for @to;
waitpid($_, 0) for @pids;
put_log("window $start $end\n");
