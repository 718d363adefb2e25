#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# cpu-limit.sh make NAME: a cgroup NAME allowed 5 ms of CPU per 500 ms (cgroup v1 cpu, or v2
#   cpu.max), its directory on stdout; exit 1 if none can be made.
# cpu-limit.sh remove DIR: the limit lifted (a throttled task, killed, waits for the next period
#   to exit), what is left in it killed, DIR removed once empty (up to 5 s); exit 1 if it stays.
# The container-like CPU limit of bench section 12 and 90-unwind.t j) (issue 33).
set -u
case ${1:-} in
make)
	if [ -e /sys/fs/cgroup/cpu/cpu.cfs_period_us ]; then
		dir=/sys/fs/cgroup/cpu/$2
		mkdir "$dir" && echo 500000 >"$dir/cpu.cfs_period_us" &&
			echo 5000 >"$dir/cpu.cfs_quota_us" || exit 1
	elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control ||
			echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
		dir=/sys/fs/cgroup/$2
		mkdir "$dir" && echo "5000 500000" >"$dir/cpu.max" || exit 1
	else
		exit 1
	fi
	echo "$dir"
	;;
remove)
	dir=$2
	echo -1 >"$dir/cpu.cfs_quota_us" 2>/dev/null || echo max >"$dir/cpu.max" 2>/dev/null
	i=0
	while [ $i -lt 50 ]; do
		p=$(cat "$dir/cgroup.procs" 2>/dev/null)
		[ -z "$p" ] && break
		# shellcheck disable=SC2086 # one pid a word
		kill -9 $p 2>/dev/null
		sleep 0.1
		i=$((i + 1))
	done
	rmdir "$dir" 2>/dev/null
	[ ! -d "$dir" ]
	;;
*)
	echo "usage: cpu-limit.sh make NAME | remove DIR" >&2
	exit 2
	;;
esac
