#!/bin/sh
# Installs relink: relinkd (sbin) and relinkctl (bin), systemd unit, sysusers.d
# entry, D-Bus policy and activation file, journal catalog, relinkd's
# configuration file, man pages (when built: make man), README and the D-Bus
# group drop-in example. The Debian package stages its files with this
# script too (scripts/build-deb.sh), so this is the one list of what goes where.
#
#   scripts/install.sh [PREFIX [DESTDIR [BINDIR]]]
#
# PREFIX   install prefix (default /usr/local); the unit's ExecStart= points
#          at PREFIX/sbin/relinkd.
# DESTDIR  staging root prepended to every path (default empty: the live system).
# BINDIR   where the built relinkd and relinkctl are (default .build/release).
#
# The system bus only reads policies and activation files from fixed
# directories (/usr/share/dbus-1/... on Debian); they go under PREFIX/share
# unless DBUS_SYSTEM_CONFDIR / DBUS_SYSTEM_SERVICEDIR say otherwise.
# SYSTEMD_SYSTEM_UNITDIR overrides PREFIX/lib/systemd/system (the Debian 12
# package uses /lib/systemd/system, where its debhelper looks for units).
# RELINK_MAN_DIR: where relinkd.8 and relinkctl.1 are (default .build/man,
# written by scripts/manpages.sh); skipped when they are not there.
# RELINK_SYSCONFDIR: where relink/relinkd.conf goes (default /etc, whatever
# PREFIX is: relinkd reads /etc/relink/relinkd.conf). The file sets nothing
# (every setting is commented out, showing its default); an existing one is
# an operator's and is never replaced. In the Debian package it is a conffile.
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

unitdir=${SYSTEMD_SYSTEM_UNITDIR:-$prefix/lib/systemd/system}
sysusersdir=$prefix/lib/sysusers.d
catalogdir=$prefix/lib/systemd/catalog
dbusconfdir=${DBUS_SYSTEM_CONFDIR:-$prefix/share/dbus-1/system.d}
dbusservicedir=${DBUS_SYSTEM_SERVICEDIR:-$prefix/share/dbus-1/system-services}
docdir=$prefix/share/doc/relink
mandir=$prefix/share/man
mansrc=${RELINK_MAN_DIR:-$here/.build/man}
sysconfdir=${RELINK_SYSCONFDIR:-/etc}

for binary in relinkd relinkctl; do
    if [ ! -x "$bindir_src/$binary" ]; then
        echo "install.sh: $bindir_src/$binary not found; build first (scripts/build-release.sh relinkd relinkctl)" >&2
        exit 1
    fi
done

install -d "$destdir$prefix/bin" "$destdir$prefix/sbin" "$destdir$unitdir" "$destdir$sysusersdir" \
    "$destdir$catalogdir" "$destdir$dbusconfdir" "$destdir$dbusservicedir"
install -m 0755 "$bindir_src/relinkd" "$destdir$prefix/sbin/"
install -m 0755 "$bindir_src/relinkctl" "$destdir$prefix/bin/"

sed "s|^ExecStart=/usr/sbin/|ExecStart=$prefix/sbin/|" "$srcdir/relinkd.service" \
    > "$destdir$unitdir/relinkd.service"
chmod 0644 "$destdir$unitdir/relinkd.service"
install -m 0644 "$srcdir/relink.sysusers" "$destdir$sysusersdir/relink.conf"
install -m 0644 "$srcdir/relink.catalog" "$destdir$catalogdir/relink.catalog"
install -m 0644 "$srcdir/org.relink.conf" "$destdir$dbusconfdir/org.relink.conf"
install -m 0644 "$srcdir/org.relink.service" "$destdir$dbusservicedir/org.relink.service"
install -d "$destdir$sysconfdir/relink"
if [ -e "$destdir$sysconfdir/relink/relinkd.conf" ]; then
    echo "install.sh: keeping the existing $destdir$sysconfdir/relink/relinkd.conf"
else
    install -m 0644 "$srcdir/relinkd.conf" "$destdir$sysconfdir/relink/relinkd.conf"
fi
for page in relinkd.8 relinkctl.1; do
    if [ -f "$mansrc/$page" ]; then
        install -d "$destdir$mandir/man${page##*.}"
        install -m 0644 "$mansrc/$page" "$destdir$mandir/man${page##*.}/$page"
    fi
done
if [ -f "$here/README.md" ]; then
    install -d "$destdir$docdir"
    install -m 0644 "$here/README.md" "$destdir$docdir/README.md"
fi
# The reference the README links to (docs/..., docs/api/...), beside it, so
# that an operator who follows the journal catalog's Support: link to the
# README finds its pages. History and profiles stay in the repository.
if [ -d "$here/docs" ]; then
    install -d "$destdir$docdir/docs/api"
    for page in "$here"/docs/*.md; do
        case "$(basename "$page")" in benchmarks-history.md|startup-profile.md) continue ;; esac
        install -m 0644 "$page" "$destdir$docdir/docs/"
    done
    install -m 0644 "$here"/docs/api/*.md "$destdir$docdir/docs/api/"
fi
# Not active where it is: an operator copies it to /etc/dbus-1/system.d/.
install -d "$destdir$docdir/examples"
install -m 0644 "$srcdir/examples/org.relink-group.conf" "$destdir$docdir/examples/org.relink-group.conf"

echo "installed relink under $destdir$prefix"
