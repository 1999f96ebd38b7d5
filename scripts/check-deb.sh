#!/bin/sh
# The Debian package's round trip (docs/packaging.md#the-check):
#  1. build it (scripts/build-deb.sh) unless a .deb is given;
#  2. lintian, failing on any tag of any severity that packaging/debian/
#     relink.lintian-overrides does not explain (and on a stale override);
#  3. `apt-get install ./relink_VERSION_ARCH.deb`; every file it lists is
#     there; the maintainer scripts made the user relink, enabled the unit
#     and updated the journal catalog; the binaries, man pages and unit work;
#     /etc/relink/relinkd.conf is a conffile that sets nothing, and the
#     group drop-in is in /usr/share/doc/relink/examples;
#  4. start, as far as a machine without systemd as PID 1 allows: a private
#     bus made from Debian's own system.conf (so it reads the installed
#     policy and activation file from their real places) sees org.relink as
#     activatable; relinkd from /usr/sbin runs as the user relink with the
#     state directory and environment its unit gives it, owns org.relink
#     under the installed policy, reads the installed relinkd.conf (the
#     default bounds), tells a notify socket READY=1 and answers
#     `relinkctl status` from another user; SIGTERM stops it with status 0;
#  5. an operator's edit of relinkd.conf survives an upgrade (the package
#     repacked as a newer version) and `apt-get remove`;
#  6. `apt-get purge relink`: every file is gone, relinkd.conf and /etc/relink
#     too, so are the state directory, the unit's enablement and the catalog
#     entries; the user relink stays (Debian policy: system users are not
#     removed).
#
#   scripts/check-deb.sh [DEB]
#
# Installing needs root (CI runs as root); without root it builds and runs
# lintian as the caller, then runs itself again through sudo for the round
# trip when sudo works without a password, and otherwise stops, saying so.
# It refuses to run where relink is already installed or /var/lib/relink
# exists, since the purge at its end would remove them.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
failures=0
checks=0
ok() { checks=$((checks + 1)); echo "ok: $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL: $*"; }
finish() {
    if [ $failures -ne 0 ]; then echo "check-deb: $failures of $checks checks failed"; exit 1; fi
    echo "check-deb: all $checks checks passed"; exit 0
}

# Root for the round trip: this shell, or itself again through sudo.
if [ "$(id -u)" -eq 0 ]; then
    root=self
elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
    root=sudo
else
    root=none
fi
state=/var/lib/relink
if [ $root != none ]; then
    if dpkg-query -W -f='${Status}' relink 2> /dev/null | grep -q 'installed'; then
        echo "check-deb.sh: relink is installed on this machine; this check would replace and purge it (dpkg --purge relink first)" >&2
        exit 1
    fi
    if [ -e "$state" ]; then
        echo "check-deb.sh: $state exists (a relinkd's restore store?); this check's purge would delete it" >&2
        exit 1
    fi
fi

work=$(mktemp -d)
chmod 0755 "$work"   # the users relink and nobody reach the bus and notify sockets in it
bus_pid=
notify_pid=
daemon_pid=
cleanup() {
    for pid in $daemon_pid $notify_pid $bus_pid; do kill "$pid" 2> /dev/null; done
    if [ -n "${installed_here:-}" ] && dpkg-query -W relink > /dev/null 2>&1; then
        echo "cleanup: purging relink after a failed check"
        dpkg --purge relink > /dev/null 2>&1
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

deb=${1:-}
if [ -z "$deb" ]; then
    echo "== scripts/build-deb.sh"
    started=$(date +%s)
    if "$here/scripts/build-deb.sh" > "$work/build.log" 2>&1; then
        deb=$(tail -n 1 "$work/build.log")
        ok "scripts/build-deb.sh built $(basename "$deb") in $(($(date +%s) - started)) s"
    else
        tail -n 80 "$work/build.log"
        fail "scripts/build-deb.sh"
        finish
    fi
fi
[ -f "$deb" ] || { echo "FAIL: no package at '$deb'"; exit 1; }
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
version=$(dpkg-deb -f "$deb" Version)
echo "== $deb (relink $version)"

# lintian. -I -E --pedantic show every tag; an override's comment is its reason.
# (RELINK_CHECK_DEB_PART=round-trip: the sudo run below, after lintian.)
if [ "${RELINK_CHECK_DEB_PART:-all}" != round-trip ]; then
    if lintian -I -E --pedantic --fail-on error,warning,info,pedantic,experimental "$deb" > "$work/lintian" 2>&1; then
        ok "lintian: no tag but the $(grep -c '^relink: ' "$here/packaging/debian/relink.lintian-overrides") overridden ones (packaging/debian/relink.lintian-overrides)"
    else
        grep -v 'running with root privileges' "$work/lintian"
        fail "lintian"
    fi
fi

case $root in
    none)
        echo "check-deb.sh: not root and no password-less sudo: the install, start and purge round trip is not run here"
        finish ;;
    sudo)
        echo "== the round trip as root (sudo)"
        sudo -n env RELINK_CHECK_DEB_PART=round-trip "$0" "$deb" || fail "the round trip as root (above)"
        finish ;;
esac

echo "== apt-get install $deb"
installed_here=1
if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb" > "$work/install.log" 2>&1 \
    && [ "$(dpkg-query -W -f='${Status} ${Version}' relink)" = "install ok installed $version" ]; then
    ok "apt-get install ./$(basename "$deb") (relink $version installed)"
else
    cat "$work/install.log"
    fail "apt-get install"
    finish
fi
grep -i -e 'warning' -e 'error' "$work/install.log" | grep -v -e '^W: Download is performed unsandboxed' && fail "apt-get install printed warnings (above)"

dpkg-query -L relink > "$work/files"
missing=0
while IFS= read -r path; do
    [ -e "$path" ] || { echo "missing: $path"; missing=$((missing + 1)); }
done < "$work/files"
[ $missing -eq 0 ] && ok "all $(wc -l < "$work/files") paths the package lists are there" || fail "$missing listed paths missing"
for path in /usr/sbin/relinkd /usr/bin/relinkctl /lib/systemd/system/relinkd.service \
    /usr/share/dbus-1/system.d/org.relink.conf /usr/share/dbus-1/system-services/org.relink.service \
    /usr/lib/sysusers.d/relink.conf /usr/lib/systemd/catalog/relink.catalog \
    /usr/share/man/man8/relinkd.8.gz /usr/share/man/man1/relinkctl.1.gz \
    /usr/share/doc/relink/copyright /usr/share/doc/relink/changelog.gz /usr/share/doc/relink/README.md \
    /usr/share/doc/relink/docs/journal.md /usr/share/doc/relink/docs/real-hardware.md /usr/share/doc/relink/docs/api/errors.md \
    /etc/relink/relinkd.conf /usr/share/doc/relink/examples/org.relink-group.conf; do
    grep -qx "$path" "$work/files" || fail "the package does not ship $path"
done

# relinkd.conf: a conffile (dpkg keeps an operator's edits on upgrade and
# removes it on purge only), as shipped in systemd/, setting nothing.
conf=/etc/relink/relinkd.conf
if dpkg-query -W -f='${Conffiles}\n' relink | grep -q "^ $conf [0-9a-f]\{32\}\$"; then
    ok "$conf is a conffile"
else
    dpkg-query -W -f='${Conffiles}\n' relink
    fail "$conf is not among the package's conffiles"
fi
if cmp -s "$conf" "$here/systemd/relinkd.conf" && [ "$(stat -c '%U %a' "$conf")" = "root 644" ] \
    && ! grep -v -e '^#' -e '^[[:space:]]*$' "$conf"; then
    ok "$conf is systemd/relinkd.conf, root's, mode 644, every setting commented out"
else
    fail "$conf: $(stat -c '%U %a' "$conf" 2>&1), or not systemd/relinkd.conf, or it sets something (above)"
fi
if cmp -s /usr/share/doc/relink/examples/org.relink-group.conf "$here/systemd/examples/org.relink-group.conf"; then
    ok "the group drop-in example is /usr/share/doc/relink/examples/org.relink-group.conf (uncompressed, to copy)"
else
    fail "/usr/share/doc/relink/examples/org.relink-group.conf differs from systemd/examples/org.relink-group.conf"
fi

[ "$(/usr/bin/relinkctl --version)" = "$version" ] && ok "relinkctl --version: $version" || fail "relinkctl --version: $(/usr/bin/relinkctl --version 2>&1)"
[ "$(/usr/sbin/relinkd --version)" = "$version" ] && ok "relinkd --version: $version" || fail "relinkd --version: $(/usr/sbin/relinkd --version 2>&1)"
if /usr/sbin/relinkd --help | grep -q '^USAGE: relinkd' && /usr/bin/relinkctl --help | grep -q '^USAGE: relinkctl'; then
    ok "relinkd --help, relinkctl --help"
else
    fail "--help"
fi
# The binaries need nothing from the Swift toolchain.
if ldd /usr/sbin/relinkd /usr/bin/relinkctl | grep -e 'not found' -e '/opt/swift' -e 'libswift'; then
    fail "the installed binaries load libraries from outside Debian's packages (above)"
else
    ok "the binaries load only Debian's libraries (ldd)"
fi
if man -w relinkd.8 > /dev/null 2>&1 && man -w relinkctl.1 > /dev/null 2>&1 \
    && man 8 relinkd 2> /dev/null | grep -q -- '--state-directory'; then
    ok "man 8 relinkd, man 1 relinkctl"
else
    fail "man pages"
fi

entry=$(getent passwd relink)
case $entry in
    relink:*:*:*:*:/var/lib/relink:*nologin) ok "postinst made the system user relink ($entry)" ;;
    *) fail "user relink: '$entry'" ;;
esac
wants=/etc/systemd/system/multi-user.target.wants/relinkd.service
if [ "$(readlink "$wants")" = /lib/systemd/system/relinkd.service ]; then
    ok "postinst enabled relinkd.service ($wants)"
else
    fail "relinkd.service is not enabled: $wants -> '$(readlink "$wants")'"
fi
catalog_ids=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' /usr/lib/systemd/catalog/relink.catalog)
listed=$(journalctl --list-catalog 2> /dev/null)
unlisted=0
for id in $catalog_ids; do printf '%s\n' "$listed" | grep -q "^$id relink: " || unlisted=$((unlisted + 1)); done
[ $unlisted -eq 0 ] && ok "journalctl --list-catalog has the $(echo $catalog_ids | wc -w) relink entries (systemd's trigger)" || fail "$unlisted catalog entries missing from journalctl --list-catalog"
# With the man pages installed, verify also checks Documentation=man:...
if out=$(systemd-analyze verify /lib/systemd/system/relinkd.service 2>&1) \
    && ! printf '%s\n' "$out" | grep -q 'relinkd.service'; then
    ok "systemd-analyze verify the installed relinkd.service"
else
    printf '%s\n' "$out"
    fail "systemd-analyze verify /lib/systemd/system/relinkd.service"
fi

# Start. Where systemd is PID 1 (a gateway), the postinst started
# relinkd.service: check it is active and answers on the system bus. Where it
# is not (this machine, CI), do what the unit does: a system bus made from
# Debian's system.conf with another socket, which reads /usr/share/dbus-1/
# system.d and system-services as the real one does, and relinkd run as the
# unit would run it.
start_with_systemd() {
    echo "== start: systemd runs here; the postinst started relinkd.service"
    i=0
    while [ "$(systemctl is-active relinkd.service)" != active ] && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
    [ "$(systemctl is-active relinkd.service)" = active ] && ok "systemctl is-active relinkd.service" \
        || { systemctl status relinkd.service --no-pager; fail "relinkd.service is not active"; }
    status=$(setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/relinkctl status 2>&1)
    printf '%s\n' "$status" | grep -q "$version" && ok "relinkctl status as nobody on the system bus" \
        || { printf '%s\n' "$status"; fail "relinkctl status as nobody"; }
    journalctl -b -u relinkd.service --no-pager 2> /dev/null | grep -q -F "$default_bounds" \
        && ok "relinkd read the installed $conf: $default_bounds" || fail "relinkd did not log '$default_bounds'"
}

start_without_systemd() {
    echo "== start: /usr/sbin/relinkd as relink on a system bus from /usr/share/dbus-1/system.conf"
    sed -e '/<user>/d' -e '/<fork\/>/d' -e '/<pidfile>/d' -e '/<syslog\/>/d' \
        -e "s|<listen>[^<]*</listen>|<listen>unix:path=$work/system_bus_socket</listen>|" \
        -e 's|<includedir>system.d</includedir>|<includedir>/usr/share/dbus-1/system.d</includedir>|' \
        /usr/share/dbus-1/system.conf > "$work/system.conf"
    bus=unix:path=$work/system_bus_socket
    dbus-daemon --config-file="$work/system.conf" --nofork --nopidfile --print-address=3 \
        3> "$work/address" > "$work/bus.log" 2>&1 &
    bus_pid=$!
    i=0
    while [ ! -s "$work/address" ] && kill -0 "$bus_pid" 2> /dev/null && [ $i -lt 500 ]; do i=$((i + 1)); sleep 0.01; done
    if [ -s "$work/address" ]; then
        names=$(DBUS_SYSTEM_BUS_ADDRESS=$bus dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.ListActivatableNames 2>&1 < /dev/null)
        printf '%s\n' "$names" | grep -q '"org.relink"' && ok "the system bus lists org.relink as activatable (the installed activation file)" \
            || { printf '%s\n' "$names"; fail "org.relink is not activatable"; }
    else
        cat "$work/bus.log"
        fail "dbus-daemon with Debian's system.conf and the installed policy did not start"
        finish
    fi

    # The notify socket systemd would give relinkd (Type=notify).
    python3 - "$work/notify" > "$work/notify.log" 2>&1 <<'PY' &
import os, socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
while True:
    print(sock.recv(4096).decode(errors="replace").replace("\n", " "), flush=True)
PY
    notify_pid=$!
    i=0
    while [ ! -S "$work/notify" ] && [ $i -lt 500 ]; do i=$((i + 1)); sleep 0.01; done

    # What StateDirectory=relink, StateDirectoryMode=0700, UMask=0077 and User=,
    # Group= do; --log-destination stderr since there is no journald to read here.
    install -d -o relink -g relink -m 0700 "$state"
    (
        umask 0077
        exec setpriv --reuid=relink --regid=relink --init-groups \
            env STATE_DIRECTORY="$state" NOTIFY_SOCKET="$work/notify" \
            /usr/sbin/relinkd --bus-address "$bus" --log-destination stderr
    ) > "$work/relinkd.log" 2>&1 &
    daemon_pid=$!
    i=0
    while ! grep -q 'READY=1' "$work/notify.log" && kill -0 "$daemon_pid" 2> /dev/null && [ $i -lt 3000 ]; do i=$((i + 1)); sleep 0.01; done
    if grep -q 'READY=1' "$work/notify.log"; then
        ok "relinkd (as relink) sent READY=1 to its notify socket"
    else
        cat "$work/relinkd.log" "$work/notify.log"
        fail "relinkd did not send READY=1 within 30 s"
    fi
    if grep -q -F "$default_bounds" "$work/relinkd.log"; then
        ok "relinkd read the installed $conf: $default_bounds"
    else
        cat "$work/relinkd.log"
        fail "relinkd did not log '$default_bounds'"
    fi
    status=$(setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/relinkctl --bus-address "$bus" status 2>&1)
    if printf '%s\n' "$status" | grep -q "$version"; then
        ok "relinkctl status as nobody, through the installed policy: $(printf '%s\n' "$status" | head -n 1)"
    else
        printf '%s\n' "$status"
        fail "relinkctl status as nobody"
    fi
    owner=$(stat -c '%U %a' "$state"/relink.sqlite 2> /dev/null)
    [ "$owner" = "relink 600" ] && ok "the store $state/relink.sqlite is relink's, mode 600" || fail "store: '$owner'"
    kill -TERM "$daemon_pid"
    i=0
    while kill -0 "$daemon_pid" 2> /dev/null && [ $i -lt 3000 ]; do i=$((i + 1)); sleep 0.01; done
    wait "$daemon_pid"
    rc=$?
    daemon_pid=
    if [ $rc -eq 0 ] && grep -q 'STOPPING=1' "$work/notify.log"; then
        ok "SIGTERM: STOPPING=1, exit 0"
    else
        cat "$work/relinkd.log" "$work/notify.log"
        fail "SIGTERM: exit $rc"
    fi
    kill "$bus_pid" "$notify_pid" 2> /dev/null
    wait "$bus_pid" "$notify_pid" 2> /dev/null
    bus_pid=
    notify_pid=
}

# What relinkd logs at start-up with the shipped relinkd.conf (docs/relinkd-conf.md).
default_bounds="per-user bounds: max-identifiers=64 max-intents=256 max-subscriptions=1024 max-published-services=64 max-transfer-bytes=67108864 max-stored-events=64000"
if [ -d /run/systemd/system ]; then start_with_systemd; else start_without_systemd; fi

# An operator's edit of the conffile against an upgrade: the same package
# repacked as a newer version (its relinkd.conf unchanged, as in most
# upgrades). dpkg must keep the edit without asking (stdin is /dev/null, so
# a conffile prompt would fail the upgrade) and leave no .dpkg-* beside it.
echo "== an edited $conf across an upgrade and a remove"
sed -i 's/^#max-identifiers = 64$/max-identifiers = 7/' "$conf"
edited=$(sha256sum < "$conf")
grep -q '^max-identifiers = 7$' "$conf" || fail "could not edit $conf as an operator would"
next=$version+check1
dpkg-deb -R "$deb" "$work/repack" \
    && sed -i "s/^Version: .*/Version: $next/" "$work/repack/DEBIAN/control" \
    && dpkg-deb --root-owner-group -Zgzip -z1 --build "$work/repack" "$work/relink_next.deb" > /dev/null
if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$work/relink_next.deb" < /dev/null > "$work/upgrade.log" 2>&1 \
    && [ "$(dpkg-query -W -f='${Version}' relink)" = "$next" ]; then
    ok "apt-get install relink $next over $version (an upgrade)"
else
    cat "$work/upgrade.log"
    fail "the upgrade to $next"
fi
if [ "$(sha256sum < "$conf")" = "$edited" ] && ! ls /etc/relink/*.dpkg-* > /dev/null 2>&1; then
    ok "the upgrade kept the operator's $conf (max-identifiers = 7), without asking"
else
    ls -l /etc/relink
    fail "the upgrade changed $conf or left a .dpkg-* file"
fi
if DEBIAN_FRONTEND=noninteractive apt-get remove -y -q relink < /dev/null > "$work/remove.log" 2>&1 \
    && [ "$(dpkg-query -W -f='${db:Status-Status}' relink)" = config-files ] \
    && [ "$(sha256sum < "$conf")" = "$edited" ] && [ ! -e /usr/sbin/relinkd ]; then
    ok "apt-get remove relink: the programs are gone, the edited $conf stays (config-files)"
else
    cat "$work/remove.log"
    fail "apt-get remove relink: $(dpkg-query -W -f='${db:Status-Status}' relink 2>&1), $conf $(ls -l "$conf" 2>&1)"
fi

echo "== apt-get purge relink"
if DEBIAN_FRONTEND=noninteractive apt-get purge -y -q relink > "$work/purge.log" 2>&1 \
    && ! dpkg-query -W relink > /dev/null 2>&1; then
    ok "apt-get purge relink (dpkg knows it no more)"
    installed_here=
else
    cat "$work/purge.log"
    fail "apt-get purge relink"
fi
left=0
while IFS= read -r path; do
    # Directories other packages share (/usr, /lib/systemd/system, ...) stay.
    [ -d "$path" ] && [ -n "$(ls -A "$path" 2> /dev/null)" ] && continue
    [ -e "$path" ] && { echo "left: $path"; left=$((left + 1)); }
done < "$work/files"
[ $left -eq 0 ] && ok "no file of the package is left" || fail "$left files left after purge"
[ ! -e "$state" ] && ok "purge removed $state" || fail "$state is still there"
[ ! -e "$conf" ] && [ ! -e /etc/relink ] && ok "purge removed the edited $conf and /etc/relink" \
    || { ls -la /etc/relink; fail "$conf or /etc/relink is still there after purge"; }
[ ! -e "$wants" ] && [ ! -e /var/lib/systemd/deb-systemd-helper-enabled/relinkd.service.dsh-also ] \
    && ok "purge removed the unit's enablement" || fail "relinkd.service is still enabled"
if journalctl --list-catalog 2> /dev/null | grep -q ' relink: '; then
    fail "relink's catalog entries are still listed"
else
    ok "the journal catalog lists no relink entry"
fi
getent passwd relink > /dev/null && echo "note: the user relink stays after purge (Debian policy)"
finish
