#!/usr/bin/env bash
# The main job: relinkd on the simulated bench (a lock and a band) with two
# clients of its public D-Bus API:
#   * the example Python lock program (examples/python-lock), restore
#     identifier "front-door": scans, connects the lock, subscribes to its state;
#   * a heart-rate stream from the band, identifier "wrist", set up with
#     busctl calls on org.relink.Manager1 / Central1.
# Mid-stream, the lock program and then relinkd are SIGKILLed; values keep
# coming; relinkd restarts and restores both links by itself; the lock
# program comes back, gets its restored state first, then every event it
# missed, once each, in order.
set -euo pipefail
cd "$(dirname "$0")/.."
RELINKD=${RELINKD:-.build/debug/relinkd}
[ -x "$RELINKD" ] || { echo "demo: $RELINKD missing: run 'swift build' first" >&2; exit 1; }
[ -x .venv/bin/python ] || { echo "demo: .venv missing: run scripts/setup.sh first" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/relink-demo-XXXXXX")
bench_pid=""; relinkd_pid=""; client_pid=""
stop() { [ -n "$1" ] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null || true; }
cleanup() { stop "$client_pid"; stop "$relinkd_pid"; stop "$bench_pid"; rm -rf "$work"; }
trap cleanup EXIT INT TERM

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
note() { printf '   %s\n' "$*"; }

bench/run-bench --lock lock --band band --no-stdin > "$work/ready.json" 2> "$work/bench.log" &
bench_pid=$!
for _ in $(seq 300); do [ -s "$work/ready.json" ] && break; sleep 0.1; done
field() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])' "$work/ready.json" "$1"; }
BUS=$(field bus); DIR=$(field dir)
BAND=00:00:00:00:00:03
HR_SVC=0000180d-0000-1000-8000-00805f9b34fb
HR_CHAR=00002a37-0000-1000-8000-00805f9b34fb
WRIST=/org/relink/central/wrist

bus() { busctl --address="$BUS" --json=short "$@"; }
manager_prop() { bus get-property org.relink /org/relink org.relink.Manager1 "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"])'; }
wrist() { bus call org.relink "$WRIST" org.relink.Central1 "$@"; }
benchctl() { bench/benchctl --dir "$DIR" "$@" >/dev/null; }

start_relinkd() {
  "$RELINKD" --bus-address "$BUS" --state-directory "$work/state" --log-destination stderr --log-level info \
    2>> "$work/relinkd.log" &
  relinkd_pid=$!
  for _ in $(seq 100); do manager_prop Ready >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "demo: relinkd did not come up" >&2; tail -20 "$work/relinkd.log" >&2; exit 1
}
# The links as relinkd's Status shows them (identifier: peripheral state).
links() {
  manager_prop Status | python3 -c 'import json,sys
s=json.loads(sys.stdin.read())
for i in s.get("identifiers", []):
    for c in i.get("connections", []):
        print("   link  %-11s %s  %s" % (i["id"], c.get("address", ""), c.get("state")))'
}
wait_links() {  # wait until both links are connected
  for _ in $(seq 300); do
    [ "$(links | grep -c ' connected$' || true)" -ge 2 ] && { links; return 0; }
    sleep 0.1
  done
  echo "demo: links did not come back:" >&2; links >&2; tail -20 "$work/relinkd.log" >&2; exit 1
}
start_client() {
  examples/python-lock/relink-lock --bus "$BUS" --identifier front-door >> "$work/client.log" 2>&1 &
  client_pid=$!
}
shown=0
client_output() {  # what the lock program printed since the last call
  local total; total=$(wc -l < "$work/client.log")
  if [ "$total" -gt "$shown" ]; then sed -n "$((shown + 1)),${total}p" "$work/client.log" | sed 's/^/   lock program | /'; fi
  shown=$total
}
wait_client() {  # wait until the lock program printed a line matching the regex $1
  for _ in $(seq 200); do grep -qE -- "$1" "$work/client.log" && return 0; sleep 0.1; done
  echo "demo: the lock program never printed '$1'" >&2; cat "$work/client.log" >&2; exit 1
}
wait_client_count() {  # wait until $1 occurs at least $2 times
  for _ in $(seq 200); do [ "$(grep -c -- "$1" "$work/client.log" || true)" -ge "$2" ] && return 0; sleep 0.1; done
  echo "demo: the lock program printed '$1' fewer than $2 times" >&2; cat "$work/client.log" >&2; exit 1
}
band_after=0
band_stream() {  # the band's heart-rate values stored since the last call, with the counter
  wrist Events tu "$band_after" 10000 | python3 -c 'import json,sys
rows=json.load(sys.stdin)["data"][0]
vals=[]
for seq, kind, payload in rows:
    body=next(iter(json.loads(payload).values()))
    if kind=="value-notified":
        v=bytes(body["value"]); vals.append((seq, v[1], int.from_bytes(v[2:6], "little")))
    else:
        print(f"   wrist  #{seq:<4} {kind}")
if vals:
    gaps=[(a[2], b[2]) for a, b in zip(vals, vals[1:]) if b[2] != a[2] + 1]
    print(f"   wrist  #{vals[0][0]}..#{vals[-1][0]}: {len(vals)} heart-rate values, band counter {vals[0][2]}..{vals[-1][2]}"
          + ("" if not gaps else f"; counter jumps {gaps} (sent while relinkd was down: nobody was subscribed)"))
print(rows[-1][0] if rows else sys.argv[1], file=open(sys.argv[2], "w"))' "$band_after" "$work/band_after"
  band_after=$(cat "$work/band_after")
}

say "bench up: lock 00:00:00:00:00:02 and band $BAND on a private bus; relinkd starts with an empty store"
start_relinkd
note "relinkd $(manager_prop Version) on $(manager_prop Adapter), ready: $(manager_prop Ready)"

say "the lock program registers 'front-door', scans, connects the lock, subscribes to its state"
start_client
pushed=()
push_lock() { benchctl push lock state="$1"; pushed+=("$1"); }
wait_client "subscribe: lock state"
wait_client "^#[0-9]+ +connected"
push_lock unlocked; push_lock locked
wait_client_count "lock state = " 2
client_output

say "a second identifier 'wrist' streams the band's heart rate (2 values/s) through busctl"
bus call org.relink /org/relink org.relink.Manager1 Register 'sa{sv}' wrist 0 >/dev/null
wrist Connect 'sa{sv}' "$BAND" 0 >/dev/null
wrist Subscribe sss "$BAND" "$HR_SVC" "$HR_CHAR" >/dev/null
wait_links
sleep 2
band_stream

say "SIGKILL the lock program mid-stream: the lock keeps notifying; relinkd stores the events"
kill -9 "$client_pid"; wait "$client_pid" 2>/dev/null || true; client_pid=""
for s in unlocked locked unlocked; do push_lock $s; sleep 0.2; done
front_door() { bus get-property org.relink /org/relink/central/front_2ddoor org.relink.Central1 "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"])'; }
sleep 0.5
note "front-door: $(front_door LastSequence) events stored, acknowledged through $(front_door Acknowledged)"

say "SIGKILL relinkd too, with both links up and the band streaming; start it again, no client present"
kill -9 "$relinkd_pid"; wait "$relinkd_pid" 2>/dev/null || true; relinkd_pid=""
sleep 1
start_relinkd
wait_links
push_lock locked
sleep 2

say "the lock program comes back: restored state first, then every event it missed, once, in order"
last=$(front_door LastSequence)
start_client
wait_client_count "restored: identifier" 2
wait_client "^ack: through #$last\$"
client_output

say "the band's stream, across relinkd's SIGKILL"
band_stream

say "what relinkd logged (decisions carry RELINK_* fields; under systemd they go to the journal)"
grep -E "RELINK_DECISION=(connect-failed|scan-matched|connected|restored)" "$work/relinkd.log" | tail -6 | sed "s/ MESSAGE_ID=.*//" | cut -c1-160 || true
kill -TERM "$client_pid"; wait "$client_pid" 2>/dev/null || true; client_pid=""
client_output

say "check: every lock value pushed reached the lock program once, in order, across both kills"
got=$(sed -n "s/^#[0-9]* *value-notified *lock state = \(.*\)$/\1/p" "$work/client.log" | tr '\n' ' ')
want="${pushed[*]} "
note "pushed:  $want"
note "printed: $got"
[ "$got" = "$want" ] || { echo "demo: FAILED: the lock program did not print exactly the values pushed" >&2; exit 1; }
echo; echo "demo: OK"
