#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernels/vm-run.sh SERIES [--] CMD [ARG...]: runs CMD as root in a QEMU guest (TCG) booted
# on Debian's SERIES kernel (5.10, 6.1, 6.12, arm64-6.1: an arm64 guest with an arm64 root of
# Debian's packages in place of this machine's /; scripts/kernels/install.sh fetches it), with this
# machine's userspace: the guest's / is the host's / (9p, read-only) under an overlay whose upper
# layer is a tmpfs, so CMD may write anywhere and nothing it writes reaches the host. CMD runs
# in the work tree (same path as here); its output (stdout and stderr, together) streams to this
# script's stdout, and this script exits with CMD's exit status. docs/check-kernels.md.
#
# Exit status: CMD's; 124 when the guest timed out (VM_TIMEOUT), 125 when it stopped without
# CMD's status (it did not boot, or crashed), each with a "latsnap: check-kernels:" line.
#
# Environment:
#   VM_TIMEOUT  seconds before the guest is killed (default 3600)
#   VM_MEM      guest memory (default 4G; the tmpfs of the overlay holds what CMD writes)
#   VM_SMP      guest CPUs (default 2)
#   VM_ENV      names of more variables to pass to CMD (always passed if set: CI, LATSNAP_TIMEOUT,
#               KEEP_TMP, STORM_SECONDS, LANG, LC_ALL)
#   VM_CONSOLE  where the guest console's log is left (default build/kernels/logs/SERIES.console.log)
#   VM_APPEND   more kernel command line
#   VM_QEMU, VM_QEMU_ARGS  another QEMU binary, more arguments for it (-L DIR for its firmware)
#   VM_ACCEL    QEMU's -accel (default tcg: a host thread per CPU; tcg,thread=single: one for all)
#   VM_CPU      QEMU's -cpu (default max; arm64: max,pauth-impdef=on)
#   VM_CACHE    9p cache mode of the host's / in the guest (default loose)
#   VM_KEEP=1   keep the results share (build/kernels/run/SERIES.*) of the run
#   VM_VERBOSE=1  copy the guest's console to stderr as it goes
#   VM_INIT=systemd  boot systemd as PID 1 (the host's /lib/systemd/systemd) and run CMD as a
#               unit of its default target, after sysinit.target and basic.target (init.sh)
#   /results share: CMD may leave files in $VM_RESULTS (/run/latsnap-vm) for the host.
#   VM_LTTNG_MODULES (for CMD): the kernel's module tree with lttng-modules (lttng-modules.sh),
#               when the series has one; a test bind-mounts it on /lib/modules/RELEASE.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KDIR=${KERNELS_DIR:-$ROOT/build/kernels}

die() { echo "latsnap: check-kernels: $*" >&2; exit 125; }

[ $# -ge 2 ] || die "usage: scripts/kernels/vm-run.sh SERIES [--] CMD [ARG...]"
SERIES=$1
shift
[ "$1" != -- ] || shift
[ $# -ge 1 ] || die "usage: scripts/kernels/vm-run.sh SERIES [--] CMD [ARG...]"

VM_TIMEOUT=${VM_TIMEOUT:-3600}
VM_MEM=${VM_MEM:-4G}
VM_SMP=${VM_SMP:-2}
VM_CACHE=${VM_CACHE:-loose}
LOGDIR=$KDIR/logs
VM_CONSOLE=${VM_CONSOLE:-$LOGDIR/$SERIES.console.log}
KD=$KDIR/$SERIES

# An arm64 series (arm64-6.1): Debian's arm64 kernel under qemu-system-aarch64 (TCG, the virt
# machine), its userspace the arm64 root arm64-root.sh made from Debian's packages in place of
# this machine's /, and latsnap the cross build (make ARCH=arm64: build-arm64/, LATSNAP_BUILD).
case $SERIES in
arm64-*)
	GUEST_ARCH=arm64
	HOSTROOT=$KDIR/arm64-root/root
	BUSYBOX=$HOSTROOT/bin/busybox
	QEMU_SYSTEM=qemu-system-aarch64
	QEMU_MACHINE="-M virt"
	# Pointer authentication with QEMU's cheap hash, not the architected QARMA: the kernel signs
	# and checks the return address of most of its functions, and TCG's QARMA is slow (an exec of
	# /bin/true: 250 ms against 380 ms).
	QEMU_CPU=max,pauth-impdef=on
	# PL011's console; the x86 clock option is not for it.
	CONSOLE_APPEND="console=ttyAMA0"
	;;
*)
	GUEST_ARCH=x86
	HOSTROOT=/
	BUSYBOX=/bin/busybox
	QEMU_SYSTEM=qemu-system-x86_64
	QEMU_MACHINE=
	QEMU_CPU=max
	CONSOLE_APPEND="console=ttyS0 tsc=reliable"
	;;
esac
if [ ! -f "$KD/release" ] || ! command -v $QEMU_SYSTEM >/dev/null || [ ! -x "$BUSYBOX" ]; then
	"$HERE/install.sh" "$SERIES" >&2 || die "$SERIES: scripts/kernels/install.sh failed"
fi
RELEASE=$(cat "$KD/release")
# The QEMU: install.sh's from backports if there is one (the system's, 7.2, livelocks a guest
# whose kernel patches its code: see install.sh's fetch_qemu), else the system's, with every CPU
# in one host thread.
QDIR=$KDIR/qemu/root
if [ "$GUEST_ARCH" = arm64 ]; then
	# Debian 12's own: its livelock is x86's (text_poke_bp's int3); arm64 patches its kernel text
	# with every other CPU stopped.
	VM_QEMU=${VM_QEMU:-$QEMU_SYSTEM}
elif [ -z "${VM_QEMU:-}" ] && [ ! -x "$QDIR/usr/bin/qemu-system-x86_64" ] && [ ! -f "$KDIR/qemu-none" ] &&
	qemu-system-x86_64 --version | grep -q '^QEMU emulator version [1-7]\.'; then
	"$HERE/install.sh" "$SERIES" >&2 || die "$SERIES: scripts/kernels/install.sh failed"
fi
if [ -z "${VM_QEMU:-}" ] && [ -x "$QDIR/usr/bin/qemu-system-x86_64" ]; then
	VM_QEMU=$QDIR/usr/bin/qemu-system-x86_64
	VM_QEMU_ARGS="-L $QDIR/usr/share/seabios -L $QDIR/usr/share/qemu ${VM_QEMU_ARGS:-}"
	export QEMU_MODULE_DIR=$QDIR/usr/lib/x86_64-linux-gnu/qemu
elif [ -z "${VM_QEMU:-}" ] && qemu-system-x86_64 --version | grep -q '^QEMU emulator version [1-7]\.'; then
	VM_ACCEL=${VM_ACCEL:-tcg,thread=single}
fi
QVER=$("${VM_QEMU:-$QEMU_SYSTEM}" --version | sed -n '1s/^QEMU emulator version \([^ ]*\).*/\1/p')
MOD=$KD/modules

# --- the initramfs: busybox, /init, the modules for 9p and overlayfs -------------------------
# A module's path (kernel/fs/9p/9p.ko.xz) and those of its dependencies, dependencies first.
ORDER=()
add_path() {
	local p=$1 line d
	for d in "${ORDER[@]}"; do
		[ "$d" != "$p" ] || return 0
	done
	line=$(grep -F -m1 "$p:" "$MOD/modules.dep") || die "$SERIES: $p is not in $MOD/modules.dep"
	for d in ${line#*:}; do
		add_path "$d"
	done
	ORDER+=("$p")
}
add_module() {
	local re line
	re="(^|/)${1//[-_]/[-_]}\\.ko(\\.[a-z]+)?"
	if line=$(grep -E -m1 "${re}:" "$MOD/modules.dep"); then
		add_path "${line%%:*}"
	elif ! grep -Eq "${re}\$" "$MOD/modules.builtin"; then
		die "$SERIES: module $1 is neither in $MOD/modules.dep nor built in"
	fi
}

INITRD=$KD/initramfs.cpio.gz
if [ ! -s "$INITRD" ] || [ "$HERE/init.sh" -nt "$INITRD" ] || [ "$HERE/vm-run.sh" -nt "$INITRD" ] ||
	[ "$BUSYBOX" -nt "$INITRD" ]; then
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		add_module "$m"
	done
	staging=$(mktemp -d "$KD/.initramfs.XXXXXX")
	mkdir -p "$staging/bin" "$staging/modules" "$staging/proc" "$staging/sys" "$staging/dev"
	cp "$BUSYBOX" "$staging/bin/busybox"
	cp "$HERE/init.sh" "$staging/init"
	chmod 755 "$staging/init"
	# Uncompressed: busybox's insmod takes a plain .ko.
	for p in "${ORDER[@]}"; do
		base=$(basename "$p")
		case $p in
		*.ko.xz) xz -dc "$MOD/$p" >"$staging/modules/${base%.xz}" ;;
		*.ko.zst) zstd -qdc "$MOD/$p" >"$staging/modules/${base%.zst}" ;;
		*.ko.gz) gzip -dc "$MOD/$p" >"$staging/modules/${base%.gz}" ;;
		*) cp "$MOD/$p" "$staging/modules/$base" ;;
		esac
		echo "${base%.ko*}.ko" >>"$staging/modules/order"
	done
	(cd "$staging" && find . | cpio -o -H newc --quiet | gzip -1) >"$staging.cpio.gz"
	mv "$staging.cpio.gz" "$INITRD"
	rm -rf "$staging"
fi

# --- the run's results share: what CMD runs with, and what comes back ------------------------
mkdir -p "$KDIR/run" "$LOGDIR" "$(dirname "$VM_CONSOLE")"
RUN=$(mktemp -d "$KDIR/run/$SERIES.XXXXXX")
chmod 755 "$RUN"
QPID=
TPID=
cleanup() {
	[ -z "$QPID" ] || kill "$QPID" 2>/dev/null || true
	[ -z "$TPID" ] || kill "$TPID" 2>/dev/null || true
	[ "${VM_KEEP:-0}" = 1 ] || rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

q() { printf '%q' "$1"; }
read -r NOFILE_SOFT < <(ulimit -Sn)
read -r NOFILE_HARD < <(ulimit -Hn)
cat >"$RUN/conf" <<EOF
REPO=$(q "$ROOT")
SERIES=$(q "$SERIES")
RELEASE=$(q "$RELEASE")
KMODDIR=$(q "$(cd "$MOD" && pwd -P)")
VM_HOSTNAME=$(q "latsnap-vm-${SERIES//./-}")
NOFILE_SOFT=$NOFILE_SOFT
NOFILE_HARD=$NOFILE_HARD
CACHE=$(q "$VM_CACHE")
INIT=$(q "${VM_INIT:-}")
EOF
# systemd as init: the target that runs CMD; the host's /etc/fstab not read (the guest's root is
# the overlay /init mounted); cgroup v2 alone, as without systemd; its progress on the console.
# Units the host enables that have no business in a throwaway guest are masked.
SYSTEMD_APPEND=
case ${VM_INIT:-} in
'') ;;
systemd)
	SYSTEMD_APPEND="systemd.unit=latsnap-vm.target fstab=no systemd.unified_cgroup_hierarchy=1 \
systemd.show_status=1 systemd.mask=systemd-timesyncd.service systemd.mask=systemd-pstore.service \
systemd.mask=systemd-firstboot.service systemd.mask=systemd-repart.service"
	;;
*) die "VM_INIT: '$VM_INIT' is not systemd" ;;
esac
{
	echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	echo "export HOME=/root USER=root LOGNAME=root SHELL=/bin/bash"
	echo "export VM_SERIES=$(q "$SERIES") VM_RESULTS=/run/latsnap-vm"
	# The arm64 guest runs the cross build (tests/integration/lib.sh's LATSNAP_BUILD).
	if [ "$GUEST_ARCH" = arm64 ] && [ -z "${LATSNAP_BUILD:-}" ]; then
		echo "export LATSNAP_BUILD=$(q "$ROOT/build-arm64")"
	fi
	# The module tree with lttng-modules (lttng-modules.sh), for the test that mounts it.
	if [ -f "$KD/lttng/KEY" ] && [ -f "$KD/lttng/lib/modules/$RELEASE/modules.dep" ]; then
		echo "export VM_LTTNG_MODULES=$(q "$(cd "$KD/lttng/lib/modules/$RELEASE" && pwd -P)")"
	fi
	for v in CI LATSNAP_TIMEOUT LATSNAP_BUILD KEEP_TMP STORM_SECONDS LANG LC_ALL ${VM_ENV:-}; do
		if [ -n "${!v+set}" ]; then
			echo "export $v=$(q "${!v}")"
		fi
	done
} >"$RUN/env"
{
	echo "cd $(q "$ROOT") || exit 125"
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$RUN/cmd"
: >"$RUN/output"

# --- the guest ------------------------------------------------------------------------------------
START=$(date +%s.%N)
# -nodefaults: no VGA, NIC, floppy, CD; the console is ttyS0, into VM_CONSOLE. tsc=reliable: the
# kernel finds TCG's TSCs unsynchronized and falls back to the HPET, whose every read (each
# clock_gettime, each BPF timestamp) is an emulated MMIO access. loglevel=5: warnings and the
# stacks of oopses and lockups, not the boot's chatter. A kernel that stalls RCU for a minute or
# keeps a CPU for 2 (emulated kernel code is slow: thresholds 3 and 6 times the defaults) dumps
# stacks and panics, which ends the run at once (panic=-1, -no-reboot), not at VM_TIMEOUT.
# shellcheck disable=SC2086 # VM_QEMU_ARGS: words
timeout -k 10 "$VM_TIMEOUT" "${VM_QEMU:-$QEMU_SYSTEM}" ${VM_QEMU_ARGS:-} $QEMU_MACHINE -accel "${VM_ACCEL:-tcg}" -cpu "${VM_CPU:-$QEMU_CPU}" -smp "$VM_SMP" -m "$VM_MEM" \
	-nodefaults -display none -no-reboot -serial "file:$RUN/console.log" \
	-kernel "$KD/vmlinuz" -initrd "$INITRD" \
	-append "$CONSOLE_APPEND panic=-1 quiet loglevel=5 \
watchdog_thresh=60 softlockup_panic=1 softlockup_all_cpu_backtrace=1 \
rcupdate.rcu_cpu_stall_timeout=60 sysctl.kernel.panic_on_rcu_stall=1 $SYSTEMD_APPEND ${VM_APPEND:-}" \
	-virtfs "local,path=$HOSTROOT,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$ROOT,mount_tag=repo,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$RUN,mount_tag=results,security_model=none" \
	</dev/null >"$RUN/qemu.log" 2>&1 &
QPID=$!
tail -c +1 -s 0.2 -f --pid=$QPID "$RUN/output" &
TPID=$!
if [ "${VM_VERBOSE:-0}" = 1 ]; then
	tail -c +1 -s 0.2 -F --pid=$QPID "$RUN/console.log" >&2 2>/dev/null &
fi
qrc=0
wait $QPID || qrc=$?
QPID=
wait $TPID || true
TPID=
END=$(date +%s.%N)
cp "$RUN/console.log" "$VM_CONSOLE" 2>/dev/null || true
# The loader cache /init made for a root that had none (the arm64 one), kept for the next boots.
if [ "$HOSTROOT" != / ] && [ -s "$RUN/ld.so.cache" ] && [ ! -e "$HOSTROOT/etc/ld.so.cache" ]; then
	cp "$RUN/ld.so.cache" "$HOSTROOT/etc/ld.so.cache" || true
fi

if [ -s "$RUN/status" ]; then
	rc=$(cat "$RUN/status")
	echo "latsnap: check-kernels: $SERIES ($RELEASE, QEMU $QVER ${VM_ACCEL:-tcg}): booted in $(cat "$RUN/booted") s," \
		"CMD ran $(awk -v a="$(cat "$RUN/booted")" -v b="$(cat "$RUN/done")" 'BEGIN { printf "%.1f", b - a }') s," \
		"$(awk -v a="$START" -v b="$END" 'BEGIN { printf "%.1f", b - a }') s in all; exit $rc" >&2
	exit "$rc"
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "latsnap: check-kernels: $SERIES ($RELEASE): the guest timed out after $VM_TIMEOUT s (VM_TIMEOUT; console: $VM_CONSOLE)" >&2
	rc=124
elif panic=$(grep -a -m1 -o 'Kernel panic - not syncing: .*' "$RUN/console.log"); then
	echo "latsnap: check-kernels: $SERIES ($RELEASE): the guest's kernel panicked: ${panic#Kernel panic - not syncing: } (console: $VM_CONSOLE)" >&2
	rc=125
else
	echo "latsnap: check-kernels: $SERIES ($RELEASE): the guest stopped without the command's status (qemu exit $qrc; console: $VM_CONSOLE)" >&2
	rc=125
fi
sed 's/^/  | /' "$RUN/qemu.log" >&2
tail -n 25 "$RUN/console.log" | sed 's/^/  console| /' >&2
exit $rc
