#!/bin/sh
# Runs a command next to a systemd-journald of its own:
#   bench/private-journald.sh CMD [ARGS...]
# It first re-executes itself in a private mount namespace (unshare -m,
# private propagation; same pid), and refuses to go on unless its mount
# namespace then differs from its parent's. Inside, it mounts tmpfs over
# /run/systemd, /run/log and /var/log/journal (so the machine's journal is
# never touched), starts journald with no arguments (any argument would name
# a journal namespace), waits for its socket, runs CMD, and stops journald
# when CMD ends. Exits with CMD's status. Needs root.
set -eu
if [ "${RELINK_PRIVATE_JOURNALD_NS:-}" != "$$" ]; then
    RELINK_PRIVATE_JOURNALD_NS=$$ exec unshare -m --propagation private "$0" "$@"
fi
own=$(readlink /proc/self/ns/mnt 2>/dev/null || true)
parent=$(readlink "/proc/$PPID/ns/mnt" 2>/dev/null || true)
if [ -z "$own" ] || [ -z "$parent" ] || [ "$own" = "$parent" ]; then
    echo "private-journald.sh: not in a private mount namespace ($own vs $parent); refusing" >&2
    exit 2
fi
JOURNALD=${JOURNALD:-/lib/systemd/systemd-journald}
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
