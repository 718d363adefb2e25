#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make deb's package (issue 22), installed into this very system with dpkg and purged at the
# end: the paths it installs, the installed binary working from them and never from the build
# tree, the unit as systemd reads it, the conffile, the service neither enabled nor started,
# remove keeping the snapshots and the configuration, purge removing both.
#
# While it is installed, /etc/latsnap.conf is every `latsnap record`'s default config file on
# the machine: the test keeps that window to the few checks that need the package.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_root
require dpkg dpkg-deb dpkg-query jq strings ldd unshare systemd-analyze make
require_latsnap
require_workloads sleeper

MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
ARCH=$(dpkg --print-architecture)
VERSION=$("$LATSNAP" --version | sed -n 's/^latsnap //p')
LIBDIR=/usr/lib/$MA/latsnap
# What the package must install, and what must not be there before (dpkg would take over a file
# no package owns, and purge would then delete it: someone's config, someone's snapshots).
PATHS="/usr/bin/latsnap $LIBDIR/liblatsnap.so $LIBDIR/liblatsnap-events.so
$LIBDIR/latsnap-trace-reader $LIBDIR/latsnap-replay /usr/share/man/man1/latsnap.1.gz
/usr/share/man/man1/latsnap-record.1.gz /usr/share/man/man1/latsnap-report.1.gz
/usr/share/man/man1/latsnap-show.1.gz /usr/share/man/man1/latsnap-flame.1.gz
/usr/share/man/man1/latsnap-export.1.gz /usr/share/man/man1/latsnap-status.1.gz
/usr/share/man/man1/latsnap-top.1.gz /usr/share/man/man5/latsnap.conf.5.gz
/usr/share/man/man5/latsnap-rules.5.gz /lib/systemd/system/latsnap.service
/etc/latsnap.conf /usr/share/doc/latsnap/copyright /usr/share/doc/latsnap/changelog.Debian.gz"

# A latsnap package already installed is someone's: never remove it; say so and stop.
status=$(dpkg-query -W -f='${Status} ${Version}' latsnap 2>/dev/null)
case $status in
*installed* | *config-files* | *unpacked* | *half-*)
	bail_out "a latsnap package is already on this machine ($status): this test installs" \
		"and purges its own; remove it first (dpkg --purge latsnap)"
	;;
esac
for p in $PATHS /var/lib/latsnap; do
	[ -e "$p" ] && bail_out "$p exists and no package owns it: this test would install over it" \
		"and purge it; move it away first"
done

# The package, built as an operator builds it; MAKEFLAGS of a make check-asan above would pass
# its sanitizer CFLAGS and build tree down, so the package's build starts from a clean slate.
# On every CPU: it is a second full build, the longest part of this file, and nothing else of
# make check runs meanwhile.
DEB=$ROOT/build/latsnap_${VERSION}_$ARCH.deb
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" -j"$(nproc)" deb \
	>"$TMPD/make.out" 2>&1
rc=$?
is "$rc" 0 "make deb: exit 0" || diag_file "$TMPD/make.out" "  make: " 40
[ -f "$DEB" ] || bail_out "make deb left no $DEB"
pass "make deb left build/${DEB##*/}"
dpkg-deb -c "$DEB" >"$TMPD/contents"
ok '! awk "\$2 != \"root/root\"" "$TMPD/contents" | grep -q .' \
	"every file of the package is root:root"

# The build tree is never referenced by what is installed: the library dir baked in is /usr's.
mkdir -p "$TMPD/x"
dpkg-deb -x "$DEB" "$TMPD/x"
for f in usr/bin/latsnap "${LIBDIR#/}/latsnap-trace-reader" "${LIBDIR#/}/latsnap-replay" \
	"${LIBDIR#/}/liblatsnap.so" "${LIBDIR#/}/liblatsnap-events.so"; do
	is "$(strings "$TMPD/x/$f" | grep -c "$ROOT")" 0 "${f##*/}: no string names the build tree"
done
is "$(strings "$TMPD/x/usr/bin/latsnap" | grep -c "^$LIBDIR\$")" 1 \
	"latsnap looks for its libraries in $LIBDIR"

# --- installed ----------------------------------------------------------------------------
INSTALLED=0
cleanup() {
	if [ "$INSTALLED" = 1 ]; then
		dpkg --purge latsnap >/dev/null 2>&1 || echo "# cleanup: dpkg --purge latsnap failed" >&2
	fi
	_tap_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

INSTALLED=1
dpkg -i "$DEB" >"$TMPD/dpkg-i.out" 2>&1
rc=$?
is "$rc" 0 "dpkg -i: exit 0" || diag_file "$TMPD/dpkg-i.out" "  dpkg: "
is "$(dpkg-query -W -f='${Status} ${Version}' latsnap 2>/dev/null)" \
	"install ok installed $VERSION" "dpkg-query: latsnap $VERSION installed"
dpkg -L latsnap >"$TMPD/list" 2>&1
for p in $PATHS; do
	ok 'grep -qx "$p" "$TMPD/list" && [ -f "$p" ]' "dpkg -L latsnap lists $p, and it is there"
done
like "$(dpkg-query -W -f='${Conffiles}' latsnap)" "^ ?/etc/latsnap\.conf [0-9a-f]{32}" \
	"/etc/latsnap.conf is a conffile"
is "$(stat -c '%a %U' /var/lib/latsnap 2>&1)" "700 root" "postinst made /var/lib/latsnap, 0700"
ok '! ls /etc/systemd/system/*.wants/latsnap.service >/dev/null 2>&1' \
	"the service is not enabled on install"
ok '! for p in $(pgrep -x latsnap); do readlink "/proc/$p/exe"; done | grep -qx /usr/bin/latsnap' \
	"the service is not started on install: no /usr/bin/latsnap runs"

out=$(/usr/bin/latsnap --version 2>&1)
is "$out" "latsnap $VERSION" "/usr/bin/latsnap --version"
ldd /usr/bin/latsnap >"$TMPD/ldd" 2>&1
ok '! grep -q "not found" "$TMPD/ldd"' "ldd: every library of /usr/bin/latsnap found" ||
	diag_file "$TMPD/ldd" "  ldd: "

# The installed latsnap records with the build tree hidden (a tmpfs over it, in a mount
# namespace of its own): its preload library, events library and trace reader come from $LIBDIR.
cp "$WL/sleeper" "$TMPD/sleeper"
timeout -k 5 "$LATSNAP_TIMEOUT" unshare --mount --propagation private sh -c \
	'mount -t tmpfs none "$1" && shift && exec "$@"' sh "$ROOT" \
	/usr/bin/latsnap record --no-snapshot --json -t 50ms -- "$TMPD/sleeper" 120 1 \
	>"$TMPD/rec.out" 2>"$TMPD/rec.err"
rc=$?
is "$rc" 0 "installed latsnap record -- sleeper 120, the build tree hidden: exit 0" ||
	diag_file "$TMPD/rec.err" "  stderr: "
NAP='select(.kind == "syscall" and (.syscall == "nanosleep" or .syscall == "clock_nanosleep"))'
is "$(jcount "$TMPD/rec.out" "$NAP")" 1 "one nanosleep outlier" || dump_outliers "$TMPD/rec.out"
between "$(jfirst "$TMPD/rec.out" "$NAP" .duration_ns)" 120000000 600000000 \
	"its duration is the 120 ms nap"
is "$(jfirst "$TMPD/rec.out" "$NAP" .user_stack.source)" '"unwind"' \
	"its user stack was unwound by the installed preload library"

# The shipped configuration is valid for the installed latsnap (a bad key would stop the service).
timeout -k 5 "$LATSNAP_TIMEOUT" /usr/bin/latsnap record --no-snapshot -c /etc/latsnap.conf \
	-d 200ms >/dev/null 2>"$TMPD/conf.err"
rc=$?
is "$rc" 0 "record -c /etc/latsnap.conf (the default config) starts and exits 0" ||
	diag_file "$TMPD/conf.err" "  stderr: "

# The unit as systemd reads it. systemd-analyze verify needs no running systemd (here PID 1 is
# not systemd, so the unit cannot be started: its sandbox is checked by reading only). Unknown
# keys and bad values are warnings, not a failed status: any line about the unit fails.
systemd-analyze verify /lib/systemd/system/latsnap.service >"$TMPD/verify" 2>&1
rc=$?
is "$rc" 0 "systemd-analyze verify latsnap.service: exit 0" || diag_file "$TMPD/verify" "  "
ok '! grep -q "latsnap" "$TMPD/verify"' "systemd-analyze verify: nothing to say about it" ||
	diag_file "$TMPD/verify" "  "
if systemd-analyze security --offline=true /lib/systemd/system/latsnap.service \
	>"$TMPD/security" 2>&1; then
	diag "systemd-analyze security: $(grep -i 'exposure level' "$TMPD/security")"
fi

# --- remove, then purge ---------------------------------------------------------------------
SNAP=/var/lib/latsnap/20261124T000000.000Z-0001
mkdir -p "$SNAP"
echo '{}' >"$SNAP/summary.json"
dpkg --remove latsnap >"$TMPD/dpkg-r.out" 2>&1
rc=$?
is "$rc" 0 "dpkg --remove: exit 0" || diag_file "$TMPD/dpkg-r.out" "  dpkg: "
ok '[ ! -e /usr/bin/latsnap ] && [ -f /etc/latsnap.conf ] && [ -d "$SNAP" ]' \
	"remove: the binary goes, the conffile and the snapshots stay"
dpkg --purge latsnap >"$TMPD/dpkg-p.out" 2>&1
rc=$?
is "$rc" 0 "dpkg --purge: exit 0" || diag_file "$TMPD/dpkg-p.out" "  dpkg: "
INSTALLED=0
ok '[ ! -e /var/lib/latsnap ]' "purge removed /var/lib/latsnap"
left=
for p in $PATHS /etc/systemd/system/latsnap.service; do
	[ -e "$p" ] || [ -L "$p" ] && left="$left $p"
done
is "$left" "" "purge left none of the package's files (nor a mask of the unit)"
ok '! dpkg-query -W -f="\${Status}" latsnap 2>/dev/null | grep -q "installed\|config-files"' \
	"dpkg no longer knows latsnap"

done_testing
