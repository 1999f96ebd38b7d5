#!/bin/sh
# Checks relink's system files offline (no systemd as PID 1 needed):
#  * systemd-analyze verify on every unit in systemd/;
#  * systemd-analyze security --offline=true on relinkd.service, failing above
#    THRESHOLD tenths (systemd 252: --threshold= compares with the exposure
#    times ten, default 100; 15 = exposure 1.5);
#  * systemd-sysusers --dry-run on the sysusers entry;
#  * journalctl --update-catalog / --list-catalog on the catalog, in a temp root;
#  * the D-Bus policy loads into a private dbus-daemon and stops others (root
#    here) from owning org.relink.
# Usage: scripts/check-units.sh [BINDIR]   (BINDIR: built relinkd/relinkctl;
# default: stub executables, since verify only checks ExecStart= exists).
# RELINK_SYSTEMD_DIR: check the files there instead of systemd/.
# Exits non-zero when any check fails.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
threshold=${RELINK_SECURITY_THRESHOLD:-15}
# Where the unit and system files come from (install.sh reads it too).
srcdir=${RELINK_SYSTEMD_DIR:-$here/systemd}
work=$(mktemp -d)
bus_pid=
cleanup() {
    if [ -n "$bus_pid" ]; then kill "$bus_pid" 2>/dev/null; fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

bindir=${1:-}
if [ -z "$bindir" ]; then
    bindir=$work/stub-bin
    mkdir -p "$bindir"
    for binary in relinkd relinkctl; do
        printf '#!/bin/sh\nexit 0\n' > "$bindir/$binary"
        chmod 0755 "$bindir/$binary"
    done
fi

# Install into a temp prefix on the real root, so ExecStart= names an existing
# executable and units we depend on (dbus.socket, ...) resolve as on the host.
prefix=$work/prefix
# (relinkd.conf too: RELINK_SYSCONFDIR keeps it out of the real /etc.)
RELINK_SYSCONFDIR=$prefix/etc "$here/scripts/install.sh" "$prefix" "" "$bindir" > /dev/null || { echo "FAIL: install.sh"; exit 1; }

for source in "$srcdir"/*.service "$srcdir"/*.socket "$srcdir"/*.timer "$srcdir"/*.path; do
    [ -e "$source" ] || continue
    grep -q '^\[D-BUS Service\]' "$source" && continue   # D-Bus activation file, not a unit
    name=$(basename "$source")
    unit=$prefix/lib/systemd/system/$name
    [ -f "$unit" ] || { fail "$name is not installed by install.sh"; continue; }
    # --man=no: Documentation=man:relinkd(8) resolves only where the man pages
    # are installed (scripts/check-deb.sh verifies the installed unit with them).
    out=$(systemd-analyze verify --man=no "$unit" 2>&1)
    rc=$?
    own=$(printf '%s\n' "$out" | grep -F -e "$name" -e "$unit" || true)
    if [ $rc -ne 0 ] || [ -n "$own" ]; then
        printf '%s\n' "$out"
        fail "systemd-analyze verify $name"
    else
        echo "ok: systemd-analyze verify $name"
    fi
done

# The example lock's unit for relaunch (docs/relaunch.md): started by the bus
# through SystemdService=; checked here since no systemd runs as PID 1 on CI.
for unit in "$here"/examples/python-lock/relaunch/*.service; do
    grep -q '^\[D-BUS Service\]' "$unit" && continue
    out=$(systemd-analyze verify --man=no "$unit" 2>&1)
    if [ $? -ne 0 ] || [ -n "$(printf '%s\n' "$out" | grep -F "$(basename "$unit")")" ]; then
        printf '%s\n' "$out"
        fail "systemd-analyze verify $(basename "$unit")"
    else
        echo "ok: systemd-analyze verify examples/python-lock/relaunch/$(basename "$unit")"
    fi
done

out=$(systemd-analyze security --offline=true --threshold="$threshold" \
    "$prefix/lib/systemd/system/relinkd.service" 2>&1)
rc=$?
level=$(printf '%s\n' "$out" | grep 'Overall exposure level' || true)
if [ $rc -ne 0 ] || [ -z "$level" ]; then
    printf '%s\n' "$out"
    fail "systemd-analyze security relinkd.service (threshold $threshold tenths)"
else
    echo "ok: ${level#→ } (threshold $threshold tenths)"
fi

root=$work/root
mkdir -p "$root/etc" "$root/usr/lib/sysusers.d" "$root/usr/lib/systemd/catalog"
cp "$prefix/lib/sysusers.d/relink.conf" "$root/usr/lib/sysusers.d/relink.conf"
out=$(systemd-sysusers --root="$root" --dry-run relink.conf 2>&1)
if [ $? -ne 0 ] || ! printf '%s\n' "$out" | grep -q "Creating user 'relink'" \
    || printf '%s\n' "$out" | grep -q 'relink.conf:'; then
    printf '%s\n' "$out"
    fail "systemd-sysusers relink.conf"
else
    echo "ok: systemd-sysusers creates user relink"
fi

cp "$prefix/lib/systemd/catalog/relink.catalog" "$root/usr/lib/systemd/catalog/"
if journalctl --root="$root" --update-catalog 2> "$work/catalog.err" && [ ! -s "$work/catalog.err" ]; then
    listed=$(journalctl --root="$root" --list-catalog)
    missing=0
    for id in $(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$srcdir/relink.catalog"); do
        printf '%s\n' "$listed" | grep -q "^$id relink: " || { echo "catalog: $id not listed"; missing=1; }
    done
    if [ $missing -eq 0 ]; then echo "ok: catalog parses ($(printf '%s\n' "$listed" | grep -c ' relink: ') entries)"
    else fail "journal catalog"; fi
else
    cat "$work/catalog.err"
    fail "journalctl --update-catalog"
fi

cat > "$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
    <allow own="*"/>
  </policy>
  <include>$prefix/share/dbus-1/system.d/org.relink.conf</include>
</busconfig>
CONF
# dbus-daemon prints its address once it accepts connections (the socket
# file alone appears at bind(), before listen(): a connection then is
# refused, which once failed this check).
dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile --nosyslog --print-address=3 \
    3> "$work/address" > "$work/bus.log" 2>&1 &
bus_pid=$!
i=0
while [ ! -s "$work/address" ] && kill -0 "$bus_pid" 2>/dev/null && [ $i -lt 500 ]; do
    i=$((i + 1)); sleep 0.01
done
if [ -s "$work/address" ]; then
    reply=$(dbus-send --bus="unix:path=$work/bus" --print-reply --reply-timeout=5000 --dest=org.freedesktop.DBus \
        /org/freedesktop/DBus org.freedesktop.DBus.RequestName string:org.relink uint32:0 2>&1 < /dev/null)
    if [ "$(id -un)" != relink ] && printf '%s\n' "$reply" | grep -q 'AccessDenied'; then
        echo "ok: D-Bus policy loads and denies org.relink to $(id -un)"
    else
        printf '%s\n' "$reply"
        fail "D-Bus policy did not deny org.relink to $(id -un)"
    fi
else
    cat "$work/bus.log"
    fail "dbus-daemon rejected org.relink.conf"
fi
kill "$bus_pid" 2>/dev/null
wait "$bus_pid" 2>/dev/null
bus_pid=

if [ $failures -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all unit checks passed"
