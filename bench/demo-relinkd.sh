#!/usr/bin/env bash
# The main job: relinkd on the simulated bench keeps a lock link alive
# across a SIGKILL of relinkd and an out-of-range spell, with no client
# present, and nothing notified while it ran is lost from the outbox.
# Drives relinkd through its internal control object with busctl.
set -euo pipefail
cd "$(dirname "$0")/.."
RELINKD=${RELINKD:-.build/debug/relinkd}
[ -x "$RELINKD" ] || { echo "demo: $RELINKD missing: run 'swift build' first" >&2; exit 1; }

work=$(mktemp -d /tmp/relink-demo-XXXXXX)
bench_pid=""; relinkd_pid=""
cleanup() {
  [ -n "$relinkd_pid" ] && kill "$relinkd_pid" 2>/dev/null && wait "$relinkd_pid" 2>/dev/null || true
  [ -n "$bench_pid" ] && kill "$bench_pid" 2>/dev/null && wait "$bench_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

bench/run-bench --lock lock --no-stdin > "$work/ready.json" 2> "$work/bench.log" &
bench_pid=$!
for _ in $(seq 100); do [ -s "$work/ready.json" ] && break; sleep 0.1; done
BUS=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["bus"])' "$work/ready.json")
DIR=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["dir"])' "$work/ready.json")
LOCK=00:00:00:00:00:02
SVC=8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b
STATE=8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b
ctl() { busctl --address="$BUS" --json=short call org.relink /org/relink/control org.relink.Control1 "$@"; }
benchctl() { bench/benchctl --dir "$DIR" "$@" >/dev/null; }

start_relinkd() {
  "$RELINKD" --bus-address "$BUS" --state-directory "$work/state" --log-destination stderr --log-level info \
    2>> "$work/relinkd.log" &
  relinkd_pid=$!
  for _ in $(seq 100); do ctl Status >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "demo: relinkd did not come up" >&2; cat "$work/relinkd.log" >&2; exit 1
}
lock_state() {
  ctl Status | python3 -c 'import json,sys
s=json.loads(json.load(sys.stdin)["data"][0])
print(next((c["state"] for i in s["identifiers"] for c in i["connections"]), "none"))'
}
wait_state() {
  for _ in $(seq 300); do [ "$(lock_state)" = "$1" ] && { echo "lock link: $1"; return 0; }; sleep 0.1; done
  echo "demo: lock never reached $1 (now $(lock_state))" >&2; tail -20 "$work/relinkd.log" >&2; exit 1
}
echo 0 > "$work/shown"
# Prints the events stored for the identifier since the last call: the
# outbox keeps them whether or not a client is there to read them.
events() {
  ctl Events st front-door "$(cat "$work/shown")" | python3 -c 'import json,sys
last=sys.argv[1]
for seq, kind, payload in json.load(sys.stdin)["data"][0]:
    body=next(iter(json.loads(payload).values()), {})
    if kind=="value-notified": detail="value "+bytes(body.get("value", [])).decode("utf-8","replace")
    elif kind in ("disconnected","failed-to-connect","name-updated"): detail=json.dumps(body.get("reason", body.get("update", "")))[:80]
    else: detail=body.get("address", {}).get("address", "")
    print(f"  #{seq:<3} {kind:<16} {detail}")
    last=seq
open(sys.argv[2],"w").write(str(last))' "$(cat "$work/shown")" "$work/shown"
}

say "bench up on $BUS (lock $LOCK); relinkd starts with an empty state directory"
start_relinkd
say "client: register 'front-door', connect the lock (pending until cancelled), subscribe to its state"
ctl Register s front-door >/dev/null
ctl Connect ssa{sv} front-door "$LOCK" 1 pending_until_cancelled b true >/dev/null
ctl Subscribe ssss front-door "$LOCK" "$SVC" "$STATE" >/dev/null
wait_state connected
sleep 0.5
benchctl push lock state=unlocked
benchctl push lock state=locked
sleep 0.5
events

say "SIGKILL relinkd while connected and subscribed; start it again with no client present"
kill -9 "$relinkd_pid"; wait "$relinkd_pid" 2>/dev/null || true
start_relinkd
wait_state connected
sleep 0.5
benchctl push lock state=unlocked
sleep 0.5
events

say "the lock goes out of range: relinkd keeps the connection pending"
benchctl out_of_range lock
for _ in $(seq 100); do [ "$(lock_state)" != connected ] && break; sleep 0.1; done
echo "lock link: $(lock_state)"
sleep 2
say "back in range: relinkd reconnects and re-subscribes by itself"
benchctl in_range lock
wait_state connected
sleep 0.5
benchctl push lock state=locked
sleep 0.5
events

say "what relinkd logged (decisions carry RELINK_* fields; under systemd they go to the journal)"
grep -E "RELINK_DECISION=(connect-failed|scan-matched|connected|restored)" "$work/relinkd.log" | tail -6 | cut -c1-220 || true
echo; echo "demo: OK"
