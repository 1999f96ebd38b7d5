#!/bin/sh
# Runs a command next to a systemd-journald of its own. Must be started
# inside a private mount namespace, never on the machine's own paths:
#   unshare -m --propagation private bench/private-journald.sh CMD [ARGS...]
# Mounts tmpfs over /run/systemd, /run/log and /var/log/journal (so the
# machine's journal is never touched), starts journald with no arguments
# (any argument would name a journal namespace), waits for its socket, runs
# CMD, and stops journald when CMD ends. Exits with CMD's status.
set -eu
JOURNALD=${JOURNALD:-/lib/systemd/systemd-journald}
[ "$(readlink /proc/self/ns/mnt)" != "$(readlink /proc/1/ns/mnt)" ] || {
    echo "private-journald.sh: not in a private mount namespace; refusing" >&2; exit 2; }
mount -t tmpfs tmpfs /run/systemd
mount -t tmpfs tmpfs /run/log
if [ -d /var/log/journal ]; then mount -t tmpfs tmpfs /var/log/journal; fi
"$JOURNALD" &
journald=$!
trap 'kill $journald 2>/dev/null; wait $journald 2>/dev/null || true' EXIT
i=0
until [ -S /run/systemd/journal/socket ]; do
    i=$((i + 1)); [ $i -lt 1000 ] || { echo "private-journald.sh: journald did not start" >&2; exit 3; }; sleep 0.01
done
"$@"
