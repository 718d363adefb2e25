#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Packs latsnap into a Debian package with dpkg-deb (make deb). The binaries in BINDIR must
# have been built for the installed layout (PREFIX=/usr, LIBDIR=/usr/lib/MULTIARCH/latsnap):
# they find their libraries and helper by the path baked into them, not by the build tree's.
#   scripts/build-deb.sh BINDIR OUT.deb VERSION ARCH MULTIARCH
set -eu

if [ $# -ne 5 ]; then
	echo "usage: scripts/build-deb.sh BINDIR OUT.deb VERSION ARCH MULTIARCH" >&2
	exit 2
fi
bindir=$(cd "$1" && pwd) out=$2 version=$3 arch=$4 multiarch=$5
top=$(cd "$(dirname "$0")/.." && pwd)
pkg=$top/packaging
libdir=usr/lib/$multiarch/latsnap

# Another architecture's package (make deb ARCH=arm64): its binutils (STRIP), its libraries for
# dpkg-shlibdeps (DEB_HOST_ARCH), and a latsnap this machine cannot run.
STRIP=${STRIP:-strip}
native=$(dpkg --print-architecture 2>/dev/null || echo "$arch")

# The version a package carries is the one the program prints: one source of truth. A cross
# build's binary cannot be run here: the version string must then be in it.
if [ "$arch" = "$native" ]; then
	got=$("$bindir/latsnap" --version | sed -n 's/^latsnap //p')
elif grep -qaF "$version" "$bindir/latsnap"; then
	got=$version
else
	got="(none of it)"
fi
if [ "$got" != "$version" ]; then
	echo "latsnap: deb: $bindir/latsnap --version says '$got', not '$version'" >&2
	exit 1
fi

stage=$bindir/pkgroot
rm -rf "$stage"
mkdir -p "$stage/DEBIAN"

# Stripped: the package ships no debug information (a -dbgsym package would carry it).
install -D -m 0755 "$bindir/latsnap" "$stage/usr/bin/latsnap"
install -D -m 0755 "$bindir/latsnap-trace-reader" "$stage/$libdir/latsnap-trace-reader"
install -D -m 0755 "$bindir/latsnap-replay" "$stage/$libdir/latsnap-replay"
"$STRIP" --remove-section=.comment --remove-section=.note "$stage/usr/bin/latsnap" \
	"$stage/$libdir/latsnap-trace-reader" "$stage/$libdir/latsnap-replay"
for lib in liblatsnap.so liblatsnap-events.so; do
	install -D -m 0644 "$bindir/$lib" "$stage/$libdir/$lib"
	"$STRIP" --strip-unneeded --remove-section=.comment --remove-section=.note \
		"$stage/$libdir/$lib"
done
# Every page: the overview latsnap(1), one per command, latsnap.conf(5), latsnap-rules(5).
for page in "$top"/man/*.[15]; do
	section=${page##*.}
	install -d -m 0755 "$stage/usr/share/man/man$section"
	gzip -9n <"$page" >"$stage/usr/share/man/man$section/${page##*/}.gz"
done
install -D -m 0644 "$pkg/latsnap.service" "$stage/lib/systemd/system/latsnap.service"
install -D -m 0644 "$pkg/latsnap.conf" "$stage/etc/latsnap.conf"
install -D -m 0644 "$pkg/debian/copyright" "$stage/usr/share/doc/latsnap/copyright"
# The library path the config's comment shows is this machine's.
sed -i "s|/usr/lib/MULTIARCH/latsnap|/$libdir|" "$stage/etc/latsnap.conf"

# changelog.Debian: one entry for this version, dated by the last commit when there is one, so
# that two builds of one tree give the same package.
date=$(git -C "$top" log -1 --format=%cD 2>/dev/null || date -R)
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
maint="latsnap maintainers <maintainers@users.noreply.a-seed-244bdc80.example>"
printf 'latsnap (%s) unstable; urgency=medium\n\n  * Built from commit %s (make deb).\n\n' \
	"$version" "$commit" >"$bindir/changelog.Debian"
printf ' -- %s  %s\n' "$maint" "$date" >>"$bindir/changelog.Debian"
gzip -9n <"$bindir/changelog.Debian" >"$stage/usr/share/doc/latsnap/changelog.Debian.gz"

for f in postinst prerm postrm; do
	install -m 0755 "$pkg/debian/$f" "$stage/DEBIAN/$f"
done
echo /etc/latsnap.conf >"$stage/DEBIAN/conffiles"
chmod 0644 "$stage/DEBIAN/conffiles"

# Depends: the shared libraries the binaries link, by dpkg-shlibdeps (which wants a
# debian/control to read: a minimal one in a scratch directory); else by hand, from ldd.
depends=
if command -v dpkg-shlibdeps >/dev/null 2>&1; then
	scratch=$bindir/shlibdeps
	rm -rf "$scratch"
	mkdir -p "$scratch/debian"
	printf 'Source: latsnap\n\nPackage: latsnap\nArchitecture: any\n' >"$scratch/debian/control"
	depends=$(cd "$scratch" && DEB_HOST_ARCH=$arch dpkg-shlibdeps -O -e"$stage/usr/bin/latsnap" \
		-e"$stage/$libdir/latsnap-trace-reader" -e"$stage/$libdir/latsnap-replay" \
		-e"$stage/$libdir/liblatsnap.so" \
		-e"$stage/$libdir/liblatsnap-events.so" 2>"$scratch/warnings" |
		sed -n 's/^shlibs:Depends=//p')
	rm -rf "$scratch"
fi
if [ -z "$depends" ] && [ "$arch" != "$native" ]; then
	echo "latsnap: deb: dpkg-shlibdeps found no dependencies for $arch (its :$arch libraries installed?)" >&2
	exit 1
fi
if [ -z "$depends" ]; then
	depends=$(for f in "$stage/usr/bin/latsnap" "$stage/$libdir"/*; do ldd "$f"; done |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
		xargs -r dpkg -S 2>/dev/null | sed 's/:.*//' | sort -u | paste -sd, | sed 's/,/, /g')
fi

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<CONTROL
Package: latsnap
Version: $version
Architecture: $arch
Maintainer: $maint
Installed-Size: $size
Depends: $depends
Recommends: lttng-tools
Suggests: babeltrace2
Section: devel
Priority: optional
Description: latency flight recorder: why a thread blocked too long
 latsnap watches threads for syscalls and off-CPU sleeps longer than a
 threshold and reports each with its split into on-CPU, blocked and runqueue
 time, the kernel stacks where it waited, who woke it, the user stack, and the
 chain of threads that held it up. Around each one it keeps an LTTng snapshot
 of what the machine did.
 .
 It runs as a command (latsnap record -- COMMAND) or as the latsnap service,
 which is installed neither enabled nor started: edit /etc/latsnap.conf, then
 systemctl enable --now latsnap.
CONTROL

(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
	xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"

mkdir -p "$(dirname "$out")"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out" >/dev/null
echo "latsnap: deb: $out"
