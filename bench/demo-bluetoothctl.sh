#!/usr/bin/env bash
# A short walk-through of the simulated-Bluetooth bench with bluetoothctl:
# discover a lock and a band, connect, read names and state, get
# notifications, take the lock out of range (the link drops, Connect fails
# with org.bluez.Error.Failed le-connection-abort-by-local), bring it back.
#
#   bench/demo-bluetoothctl.sh            starts its own bench, stops it at the end
#   bench/demo-bluetoothctl.sh --dir DIR  uses a running bench (run-bench --no-stdin)
#
# Exits non-zero if the walk-through did not show what it should.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_dir=""
[ "${1:-}" = "--dir" ] && bench_dir=${2:?--dir needs the bench directory}

work=$(mktemp -d /tmp/relink-demo-XXXXXX)
bench_pid=""
bt_pid=""
cleanup() {
  exec 3>&- 2>/dev/null || true
  [ -n "$bt_pid" ] && kill "$bt_pid" 2>/dev/null || true
  if [ -n "$bench_pid" ]; then kill -TERM "$bench_pid" 2>/dev/null || true; wait "$bench_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -z "$bench_dir" ]; then
  "$here/run-bench" --no-stdin > "$work/bench.out" &
  bench_pid=$!
  for _ in $(seq 1 600); do grep -q '"event"' "$work/bench.out" 2>/dev/null && break; sleep 0.1; done
  grep -q '"event": "ready"' "$work/bench.out" || { cat "$work/bench.out" >&2; exit 1; }
  bench_dir=$(sed -n 's/.*"dir": "\([^"]*\)".*/\1/p' "$work/bench.out" | head -1)
fi
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$bench_dir/bus"
ctl() { "$here/benchctl" --dir "$bench_dir" "$@" > /dev/null; }

LOCK=00:00:00:00:00:02 BAND=00:00:00:00:00:03
LOCK_STATE=8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b
LOCK_COMMAND=8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b
HRM=00002a37-0000-1000-8000-00805f9b34fb

step() { sleep "${2:-0.3}"; printf '\n\033[1m### %s\033[0m\n' "$1"; }
bt() { echo "$1" >&3; sleep "${2:-0.4}"; }

echo "bench: $bench_dir (private bus $DBUS_SYSTEM_BUS_ADDRESS)"
mkfifo "$work/bt.in"
# bluetoothctl's output, without colours, carriage returns or the other
# adapters' chatter (every simulated peripheral has its own adapter on the bus).
bluetoothctl < "$work/bt.in" 2>&1 | sed -u 's/\x1b\[[0-9;]*[a-zA-Z]//g; s/\r//g; s/\x01\|\x02//g' \
  | grep --line-buffered -v 'Controller 00:00:00:00:00:0[2-9]\|Device 00:00:00:00:00:01' \
  | grep --line-buffered -v -E '^[a-z][a-z-]* .*   |^(un)?register-|^Menu [a-z]+:|^Available commands:|^-{5,}' \
  | tee "$work/bt.log" &
bt_pid=$!
exec 3> "$work/bt.in"
bt "select 00:00:00:00:00:01" 1

step "1. Discover: the lock and the band, with their advertised names"
bt "scan on" 2
bt "scan off"

step "2. Connect to the lock: Name becomes its GAP name (0x2A00)"
bt "connect $LOCK" 1.5

step "3. Read the lock state, subscribe, and watch notifications"
bt "menu gatt"
bt "select-attribute $LOCK_STATE"
bt "read"
bt "notify on" 0.6
echo "(the lock reports 'unlocked' by itself)"; ctl push lock state=unlocked; sleep 0.6
bt "back"

step "4. The lock goes out of range: the link drops"
ctl out_of_range lock; sleep 1.5
step "   ... and Connect fails"
bt "connect $LOCK" 2.5

step "5. Back in range: reconnect"
ctl in_range lock
bt "connect $LOCK" 1.5
bt "disconnect $LOCK" 0.8

step "6. The band streams heart-rate measurements (counter in bytes 2-5)"
bt "connect $BAND" 1.5
bt "menu gatt"
bt "select-attribute $HRM"
bt "notify on" 1.6
bt "notify off"
bt "back"
bt "disconnect $BAND" 0.8
bt "quit" 0.5
exec 3>&-
wait "$bt_pid" 2>/dev/null || true
bt_pid=""

ok=1
check() { grep -q "$1" "$work/bt.log" || { echo "demo: MISSING: $2" >&2; ok=0; }; }
check "Device $LOCK RLK-7F3A" "lock discovered with its advertised name"
check "Device $BAND HRM-2C41" "band discovered"
check "Name: Front Door" "GAP name after connecting"
check "unlocked" "lock-state notification"
check "Device $LOCK Connected: no" "link dropped when out of range"
check "le-connection-abort-by-local" "Connect failing while out of range"
check "Connection successful" "connections"
printf '\n'
if [ "$ok" = 1 ]; then echo "demo: OK"; else echo "demo: FAILED" >&2; exit 1; fi
