#!/bin/sh
# Installs relink: binaries, systemd unit, sysusers.d entry, D-Bus policy and
# activation file, journal catalog.
#
#   scripts/install.sh [PREFIX [DESTDIR [BINDIR]]]
#
# PREFIX   install prefix (default /usr/local); the unit's ExecStart= points
#          at PREFIX/bin/relinkd.
# DESTDIR  staging root prepended to every path (default empty: the live system).
# BINDIR   where the built relinkd and relinkctl are (default .build/release).
#
# The system bus only reads policies and activation files from fixed
# directories (/usr/share/dbus-1/... on Debian); they go under PREFIX/share
# unless DBUS_SYSTEM_CONFDIR / DBUS_SYSTEM_SERVICEDIR say otherwise.
# After a live install: systemd-sysusers; journalctl --update-catalog;
# systemctl daemon-reload; systemctl reload dbus; systemctl enable --now relinkd
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-/usr/local}
destdir=${2:-}
bindir_src=${3:-$here/.build/release}
# Where the unit and system files come from (tests point it at edited copies).
srcdir=${RELINK_SYSTEMD_DIR:-$here/systemd}

case $prefix in
    /*) ;;
    *) echo "install.sh: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2 ;;
esac

unitdir=$prefix/lib/systemd/system
sysusersdir=$prefix/lib/sysusers.d
catalogdir=$prefix/lib/systemd/catalog
dbusconfdir=${DBUS_SYSTEM_CONFDIR:-$prefix/share/dbus-1/system.d}
dbusservicedir=${DBUS_SYSTEM_SERVICEDIR:-$prefix/share/dbus-1/system-services}
docdir=$prefix/share/doc/relink

for binary in relinkd relinkctl; do
    if [ ! -x "$bindir_src/$binary" ]; then
        echo "install.sh: $bindir_src/$binary not found; build first (swift build -c release)" >&2
        exit 1
    fi
done

install -d "$destdir$prefix/bin" "$destdir$unitdir" "$destdir$sysusersdir" \
    "$destdir$catalogdir" "$destdir$dbusconfdir" "$destdir$dbusservicedir"
install -m 0755 "$bindir_src/relinkd" "$bindir_src/relinkctl" "$destdir$prefix/bin/"

sed "s|^ExecStart=/usr/bin/|ExecStart=$prefix/bin/|" "$srcdir/relinkd.service" \
    > "$destdir$unitdir/relinkd.service"
chmod 0644 "$destdir$unitdir/relinkd.service"
install -m 0644 "$srcdir/relink.sysusers" "$destdir$sysusersdir/relink.conf"
install -m 0644 "$srcdir/relink.catalog" "$destdir$catalogdir/relink.catalog"
install -m 0644 "$srcdir/org.relink.conf" "$destdir$dbusconfdir/org.relink.conf"
install -m 0644 "$srcdir/org.relink.service" "$destdir$dbusservicedir/org.relink.service"
if [ -f "$here/README.md" ]; then
    install -d "$destdir$docdir"
    install -m 0644 "$here/README.md" "$destdir$docdir/README.md"
fi

echo "installed relink under $destdir$prefix"
