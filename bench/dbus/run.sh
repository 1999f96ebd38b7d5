#!/usr/bin/env bash
# D-Bus binding benchmark: method-call round trips/s and signals received/s,
# for relink's binding, Python dbus-fast and a minimal C loop over libdbus,
# all on one private dbus-daemon, in one run.
#   bench/dbus/run.sh [CALLS] [SIGNALS] [ROUNDS]
# relink runs twice: with its defaults (tasks on the global pool) and with
# the connection's executor as task executor preference (relink-loop).
# Needs scripts/setup.sh's .venv (dbus-fast).
set -euo pipefail
cd "$(dirname "$0")/../.."
CALLS=${1:-20000}
SIGNALS=${2:-200000}
ROUNDS=${3:-3}

work=$(mktemp -d /tmp/relink-dbus-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

echo "building (release) ..." >&2
scripts/build-release.sh relink-dbus-bench >&2
cc -O2 -o "$work/bench-c" bench/dbus/bench.c $(pkg-config --cflags --libs dbus-1)
PY=.venv/bin/python
[ -x "$PY" ] || { echo "run scripts/setup.sh first (.venv with dbus-fast)" >&2; exit 1; }

cat > "$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
</busconfig>
CONF
dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile 2>"$work/daemon.log" &
pids+=($!)
disown $!  # killed by the exit trap; spare the "Killed" message
ADDR="unix:path=$work/bus"
# The socket file appears at bind(), a moment before the daemon listens.
for _ in $(seq 100); do
  dbus-send --bus="$ADDR" --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetId >/dev/null 2>&1 && break
  sleep 0.05
done

declare -A CMD=(
  [c]="$work/bench-c"
  [relink]=".build/release/relink-dbus-bench"
  [relink-loop]="env RELINK_BENCH_ON_LOOP=1 .build/release/relink-dbus-bench"
  [dbus-fast]="$PY bench/dbus/bench_dbus_fast.py"
)

wait_ready() { for _ in $(seq 400); do [ -f "$1" ] && return 0; sleep 0.025; done; echo "timeout waiting for $1" >&2; exit 1; }

calls() { # binding round -> "calls/s cpu-µs-per-call" (server and client both in the binding)
  # CPU per call (client + server processes, user + system) is also
  # reported: unlike the rate, it hardly depends on other load.
  local b=$1 name="org.relink.Bench.r$2${1//-/}"
  rm -f "$work/ready"
  ${CMD[$b]} serve "$ADDR" "$name" "$work/ready" & local srv=$!
  pids+=($srv)
  wait_ready "$work/ready"
  local s0 s1 out rate ccpu
  s0=$(awk '{print $14+$15}' /proc/$srv/stat)
  out=$( { /usr/bin/time -f "cpu=%U %S" ${CMD[$b]} call "$ADDR" "$name" "$CALLS"; } 2>&1 )
  s1=$(awk '{print $14+$15}' /proc/$srv/stat)
  kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true
  rate=$(sed -n 's/calls_per_sec=//p' <<<"$out")
  ccpu=$(sed -n 's/cpu=//p' <<<"$out")
  awk -v r="$rate" -v c="$ccpu" -v s=$((s1 - s0)) -v n="$CALLS" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { split(c, u, " "); printf "%d %.0f\n", r, 1e6 * (u[1] + u[2] + s / hz) / n }'
}

signals() { # binding -> signals/s received
  # The receiver subscribes, is stopped (SIGSTOP) while the C loop emits all
  # signals into the bus, then continued: it drains the backlog the bus
  # holds for it, so the figure is the receiving side's capacity, not the
  # emitter's pace. Timed from the first to the last signal received.
  local b=$1
  rm -f "$work/ready"
  ${CMD[$b]} receive "$ADDR" "$SIGNALS" "$work/ready" > "$work/recv.out" & local rcv=$!
  pids+=($rcv)
  wait_ready "$work/ready"
  kill -STOP "$rcv"
  "$work/bench-c" emit "$ADDR" "$SIGNALS"
  sleep 1
  kill -CONT "$rcv"
  wait "$rcv"
  sed -n 's/signals_per_sec=//p' "$work/recv.out"
}

# Rounds interleave the bindings, so that load from elsewhere on the machine
# hits all of them alike. Reported: the median round (and the best).
BINDINGS=(c relink relink-loop dbus-fast)
declare -A RTS SIGS CPUS
for r in $(seq "$ROUNDS"); do
  for b in "${BINDINGS[@]}"; do
    read -r x cpu < <(calls "$b" "$r"); y=$(signals "$b")
    RTS[$b]+="${x:-0} "; SIGS[$b]+="${y:-0} "; CPUS[$b]+="${cpu:-0} "
    echo "round $r $b: $x calls/s ($cpu µs CPU/call), $y signals/s" >&2
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
best() { tr ' ' '\n' | grep . | sort -n | tail -1; }
declare -A RT SIG RTB SIGB CPU
for b in "${BINDINGS[@]}"; do
  CPU[$b]=$(echo "${CPUS[$b]}" | median)
  RT[$b]=$(echo "${RTS[$b]}" | median); SIG[$b]=$(echo "${SIGS[$b]}" | median)
  RTB[$b]=$(echo "${RTS[$b]}" | best); SIGB[$b]=$(echo "${SIGS[$b]}" | best)
done

pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * a / b }'; }
times() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / b }'; }
echo
echo "| binding | round trips/s (median) | (best) | CPU µs per round trip (median) | signals received/s (median) | (best) |"
echo "|---|---:|---:|---:|---:|---:|"
for b in "${BINDINGS[@]}"; do echo "| $b | ${RT[$b]} | ${RTB[$b]} | ${CPU[$b]} | ${SIG[$b]} | ${SIGB[$b]} |"; done
echo
for r in relink relink-loop; do
  echo "$r vs C: round trips $(pct "${RT[$r]}" "${RT[c]}"), signals $(pct "${SIG[$r]}" "${SIG[c]}") (target >= 80%)"
  echo "$r vs dbus-fast: round trips $(times "${RT[$r]}" "${RT[dbus-fast]}"), signals $(times "${SIG[$r]}" "${SIG[dbus-fast]}") (target >= 5x)"
done
echo "($CALLS sequential calls, $SIGNALS signals, median of $ROUNDS interleaved rounds; $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ))"
