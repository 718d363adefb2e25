#!/bin/busybox sh
# shellcheck shell=dash disable=SC1091 # busybox ash; /results/conf is the guest's
# SPDX-License-Identifier: GPL-2.0
# /init of the guest's initramfs (scripts/kernels/vm-run.sh builds it; docs/check-kernels.md).
# Loads the modules the initramfs carries, mounts the host's / (9p, read-only) under an overlay
# with a tmpfs upper layer, mounts the kernel's filesystems in it, and runs the command vm-run.sh
# left in the results share (9p, writable) in a chroot there; the command's output and its exit
# status go back through that share. Then powers off. Runs as PID 1 with busybox's applets.

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/null >/dev/console 2>&1

say() { echo "latsnap-vm: $*"; }
off() {
	sync
	poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 10
}
# Without a status file, vm-run.sh reports the guest's failure with the console's last lines.
fail() {
	say "FAILED: $*"
	off
}

# VM_INIT=systemd (vm-run.sh): systemd becomes PID 1 in the prepared root, and runs the command
# as the one unit of its default target (latsnap-vm.target, on the kernel command line), after
# sysinit.target and basic.target as any service. The unit and the target are written into the
# overlay's /etc (a tmpfs: nothing reaches the host). The command's runner writes what /init
# writes otherwise (booted, output, done, status), and the unit powers the guest off when it ends.
start_systemd() {
	U=$R/etc/systemd/system
	mkdir -p $U
	cat >$U/latsnap-vm.target <<-EOF
		[Unit]
		Description=latsnap-vm: the command of scripts/kernels/vm-run.sh
		Requires=latsnap-vm-cmd.service
		After=latsnap-vm-cmd.service
		AllowIsolate=yes
	EOF
	# Not Type=oneshot: a command of minutes would hit its start timeout. The runner always
	# exits 0 (the command's status is in the status file), so SuccessAction= is the one way out;
	# FailureAction= covers a runner that could not run at all. poweroff-force: no stop jobs of
	# the units the command started, but the file systems are unmounted (the results share synced).
	cat >$U/latsnap-vm-cmd.service <<-EOF
		[Unit]
		Description=latsnap-vm: the command
		SuccessAction=poweroff-force
		FailureAction=poweroff-force
		[Service]
		Type=exec
		ExecStart=/bin/bash /run/latsnap-vm/runner
		StandardInput=null
		StandardOutput=journal+console
		LimitMEMLOCK=infinity
		LimitNOFILE=$NOFILE_SOFT:$NOFILE_HARD
		KillMode=mixed
	EOF
	cat >$R/run/latsnap-vm/runner <<-'EOF'
		# The command, as /init runs it without systemd (vm-run.sh: env, cmd), and its status.
		cd /run/latsnap-vm || exit 1
		cut -d' ' -f1 /proc/uptime >booted
		/usr/bin/env -i /bin/bash -c '. /run/latsnap-vm/env && exec /bin/bash /run/latsnap-vm/cmd' \
			</dev/null >>output 2>&1
		rc=$?
		cut -d' ' -f1 /proc/uptime >done
		echo $rc >status.tmp && mv status.tmp status
		sync
		exit 0
	EOF
	# systemd takes the host name from /etc/hostname.
	echo "$VM_HOSTNAME" >$R/etc/hostname
	# The host may be a container: with its /.dockerenv, systemd would think it runs in one,
	# and a systemd in a container ignores the kernel's command line (systemd.unit= above all).
	rm -f $R/.dockerenv
	say "systemd as init at $(cut -d' ' -f1 /proc/uptime) s"
	exec switch_root $R /lib/systemd/systemd
	fail "cannot start systemd"
}

say "init at $(cut -d' ' -f1 /proc/uptime) s"
while read -r m; do
	insmod "/modules/$m" || fail "insmod $m"
done </modules/order

mkdir -p /results /lower /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none results /results ||
	fail "cannot mount the results share"
# REPO, SERIES, RELEASE, KMODDIR, VM_HOSTNAME, NOFILE_SOFT, NOFILE_HARD, CACHE, INIT
INIT=
. /results/conf || fail "no /results/conf"

# The host's /: read-only, cached (the host's files do not change under a run).
mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,cache=$CACHE,ro" hostroot /lower ||
	fail "cannot mount the host's / (9p share hostroot)"
mount -t tmpfs -o mode=755 rw /rw
mkdir -p /rw/upper /rw/work
# 9p reads a symlink from the host at each use (no cache, whatever the cache mode): copy the top
# level's (/lib64, /bin, /lib: in every exec's path) into the upper layer, where they are tmpfs's.
for l in /lower/*; do
	[ -L "$l" ] && ln -s "$(readlink "$l")" "/rw/upper/${l#/lower/}"
done
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
	fail "cannot mount the overlay over the host's /"

R=/newroot
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts $R/dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev shm $R/dev/shm
ln -sfn /proc/self/fd $R/dev/fd
ln -sfn /proc/self/fd/0 $R/dev/stdin
ln -sfn /proc/self/fd/1 $R/dev/stdout
ln -sfn /proc/self/fd/2 $R/dev/stderr
mount -t tmpfs -o mode=1777,nosuid,nodev tmp $R/tmp
mount -t tmpfs -o mode=755,nosuid,nodev run $R/run
mkdir -p $R/run/lock $R/run/latsnap-vm
mount -t tracefs tracefs $R/sys/kernel/tracing || fail "cannot mount tracefs"
mount -t debugfs debugfs $R/sys/kernel/debug
mount -t bpf bpf $R/sys/fs/bpf || fail "cannot mount bpffs"
# cgroup v2 alone, at its usual place (tests/integration/46-targets.t finds it in mountinfo).
# systemd as init mounts it itself, with its own options (systemd.unified_cgroup_hierarchy=1).
if [ "$INIT" != systemd ]; then
	mount -t cgroup2 -o nsdelegate cgroup2 $R/sys/fs/cgroup || fail "cannot mount cgroup2"
fi
mount --move /results $R/run/latsnap-vm

# The work tree, if a tmpfs above hides it (a clone under /tmp): its own share, writable the same way.
if [ ! -f "$R$REPO/scripts/kernels/vm-run.sh" ]; then
	mkdir -p /repo /rw/repo-upper /rw/repo-work "$R$REPO"
	mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,cache=$CACHE,ro" repo /repo &&
		mount -t overlay -o lowerdir=/repo,upperdir=/rw/repo-upper,workdir=/rw/repo-work overlay "$R$REPO" ||
		fail "cannot mount the work tree at $REPO"
fi
# The kernel's own modules, for modprobe in the guest (install.sh ran depmod over them).
mkdir -p "$R/lib/modules/$RELEASE"
mount --bind "$R$KMODDIR" "$R/lib/modules/$RELEASE" || say "no modules at $KMODDIR"

# A root made without running its packages' scripts (the arm64 one, arm64-root.sh) has no loader
# cache: every library is then looked for in each directory through 9p. Made here once, and left
# in the results share for vm-run.sh to keep in that root (2-4 s under TCG).
if [ ! -f "$R/etc/ld.so.cache" ] && [ -x "$R/sbin/ldconfig" ]; then
	chroot $R /sbin/ldconfig && cp "$R/etc/ld.so.cache" $R/run/latsnap-vm/ld.so.cache ||
		say "ldconfig failed"
fi

hostname "$VM_HOSTNAME"
echo "127.0.1.1 $VM_HOSTNAME" >>$R/etc/hosts
ip link set lo up
ulimit -l unlimited
ulimit -H -n "$NOFILE_HARD"
ulimit -S -n "$NOFILE_SOFT"

if [ "$INIT" = systemd ]; then
	start_systemd
fi

cut -d' ' -f1 /proc/uptime >$R/run/latsnap-vm/booted
say "running the command at $(cat $R/run/latsnap-vm/booted) s"
# In the background, so that this shell's wait reaps the orphans the command leaves (daemons that
# exit): PID 1 must, or they stay zombies that pgrep and kill -0 still find.
chroot $R /usr/bin/env -i /bin/bash -c '. /run/latsnap-vm/env && exec /bin/bash /run/latsnap-vm/cmd' \
	</dev/null >>$R/run/latsnap-vm/output 2>&1 &
wait $!
rc=$?
cut -d' ' -f1 /proc/uptime >$R/run/latsnap-vm/done
echo $rc >$R/run/latsnap-vm/status.tmp && mv $R/run/latsnap-vm/status.tmp $R/run/latsnap-vm/status
say "command exited $rc at $(cat $R/run/latsnap-vm/done) s"
off
