#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernels/check-systemd.sh: `make check-systemd [KERNEL=6.1]` (docs/check-kernels.md).
# Boots Debian's KERNEL under QEMU with this machine's userspace, as make check-kernels does, but
# with systemd as PID 1 (vm-run.sh's VM_INIT=systemd), and runs there tests/systemd/*.t under
# prove: latsnap.service from the package (make deb) started, reloaded and stopped by systemctl.
# The guest's / is the host's under an overlay on a tmpfs: dpkg -i and the edits of /etc stay
# in the guest. Log: build/kernels/logs/systemd-KERNEL.log (and .console.log).
#
# Environment: KERNEL (series, default 6.1); SYSTEMD_TESTS (test files, instead of
# tests/systemd/*.t); VM_TIMEOUT (seconds, default 900), LATSNAP_TIMEOUT, and vm-run.sh's other
# VM_*. Exits with prove's status (1 when a test failed), 124/125 when the guest timed out or
# failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 1
LOGDIR=${KERNELS_DIR:-$ROOT/build/kernels}/logs
mkdir -p "$LOGDIR"

KERNEL=${KERNEL:-6.1}
if [ -n "${SYSTEMD_TESTS:-}" ]; then
	read -r -a TESTS <<<"$SYSTEMD_TESTS"
else
	TESTS=(tests/systemd/*.t)
fi
for t in "${TESTS[@]}"; do
	[ -f "$t" ] || { echo "latsnap: check-systemd: no test $t" >&2; exit 1; }
done
# The package the tests install: make deb's, of this tree.
ls build/latsnap_*.deb >/dev/null 2>&1 || { echo "latsnap: check-systemd: no build/latsnap_*.deb (make deb)" >&2; exit 1; }
[ -x /lib/systemd/systemd ] || { echo "latsnap: check-systemd: no /lib/systemd/systemd on this machine (the guest's init)" >&2; exit 1; }

"$HERE/install.sh" "$KERNEL" || exit 1

log=$LOGDIR/systemd-$KERNEL.log
export VM_INIT=systemd
export VM_TIMEOUT=${VM_TIMEOUT:-900}
export VM_CONSOLE=${VM_CONSOLE:-$LOGDIR/systemd-$KERNEL.console.log}
export LATSNAP_TIMEOUT=${LATSNAP_TIMEOUT:-300}
echo "latsnap: check-systemd: $KERNEL: ${TESTS[*]}, log $log" >&2
t0=$(date +%s)
"$HERE/vm-run.sh" "$KERNEL" -- prove -v --timer --formatter TAP::Formatter::Console "${TESTS[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
t1=$(date +%s)
case $rc in
0) verdict=PASS ;;
124) verdict="FAIL (timed out after $VM_TIMEOUT s)" ;;
125) verdict="FAIL (the guest failed)" ;;
*) verdict="FAIL (prove exit $rc)" ;;
esac
counts=$(grep -E '^Files=[0-9]+, Tests=[0-9]+' "$log" | tail -n 1 | cut -d, -f1,2)
printf 'latsnap: check-systemd: %s %s %s in %dm%02ds%s\n' "$KERNEL" \
	"$(cat "${KERNELS_DIR:-$ROOT/build/kernels}/$KERNEL/release" 2>/dev/null || echo "?")" "$verdict" \
	$(((t1 - t0) / 60)) $(((t1 - t0) % 60)) "${counts:+ ($counts)}"
exit "$rc"
