#!/bin/sh
# Runs a real systemd user manager (systemd --user) on a machine whose PID 1
# is not systemd, for trying relink's systemd path (docs/relaunch.md#systemd).
#
#   bench/systemd/user-manager.sh DIR [UID]      (as root; runs until killed)
#
# DIR becomes the manager's XDG_RUNTIME_DIR (its user bus is DIR/bus, a
# dbus-daemon --session socket-activated by the manager; its private socket
# DIR/systemd/private) and DIR/config its XDG_CONFIG_HOME (user units in
# DIR/config/systemd/user/). UID: the user it runs as (default 0).
# Used by bench/e2e/tests/test_e2e_relaunch_systemd.py (root's manager) and
# test_e2e_relaunch_user_unit.py (nobody's, with DIR = USERS/UID, relinkd
# --user-runtime-directory USERS/%U): as that user, from outside the
# manager's mount namespace, `XDG_RUNTIME_DIR=DIR systemctl --user start U`
# works (its sockets are in DIR); as root it does not (the private socket
# refuses another uid: "Operation not permitted").
#
# What it works around, measured with systemd 252 here:
#  * `systemd --user` exits 1 at once with "Trying to run as user instance,
#    but the system has not been booted with systemd." (written to
#    /dev/console, so nothing on stderr; seen with strace): sd_booted()
#    looks for /run/systemd/system/. The manager runs in its own mount
#    namespace (unshare -m) with a tmpfs on /run/systemd holding that
#    directory, so nothing else on the machine sees it.
#  * As a user other than root it also exits 1 at
#    openat("/sys/fs/cgroup/unified/init.scope/cgroup.procs") = EACCES: it
#    needs a cgroup of its own (delegation). One is made in the unified and
#    name=systemd hierarchies, given to UID, and the manager put in it; it is
#    removed when the manager has exited.
set -eu
dir=$1
uid=${2:-0}
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 2; }
mkdir -p "$dir/config/systemd/user"
chown -R "$uid:$uid" "$dir"
chmod 700 "$dir"
cgroup=relink-user-manager-$$
cleanup() {
    # (the manager made its own cgroups inside: the deepest go first)
    for h in unified systemd; do
        [ -d "/sys/fs/cgroup/$h/$cgroup" ] && find "/sys/fs/cgroup/$h/$cgroup" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
    return 0
}
trap cleanup EXIT INT TERM
inner='
set -eu
mkdir -p /run/systemd
mount -t tmpfs relink-systemd /run/systemd
mkdir -p /run/systemd/system
if [ "$RELINK_UID" != 0 ]; then
    for h in unified systemd; do
        mkdir -p "/sys/fs/cgroup/$h/$RELINK_CGROUP"
        chown -R "$RELINK_UID:$RELINK_UID" "/sys/fs/cgroup/$h/$RELINK_CGROUP"
        echo $$ > "/sys/fs/cgroup/$h/$RELINK_CGROUP/cgroup.procs"
    done
fi
exec setpriv --reuid="$RELINK_UID" --regid="$RELINK_UID" --clear-groups -- \
    env XDG_RUNTIME_DIR="$RELINK_DIR" XDG_CONFIG_HOME="$RELINK_DIR/config" HOME="$RELINK_DIR" systemd --user
'
RELINK_UID=$uid RELINK_DIR=$dir RELINK_CGROUP=$cgroup unshare -m sh -c "$inner" &
child=$!
trap 'kill $child 2>/dev/null; wait $child; cleanup' INT TERM
wait $child
