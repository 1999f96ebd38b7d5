#!/usr/bin/env bash
# Restoration benchmark (issue 6): relinkd against a bleak-retry-connector
# script on the simulated bench. Builds the release relinkd, makes .venv if
# missing, runs bench/relink/restore_bench.py (extra arguments are passed on,
# e.g. --reps 3 --links 1,2 --json out.json) and prints its table.
# With --backend bluez the same runs on real bluetoothd 5.66 inside the VM of
# bench/realbluez (set up here if missing; about an hour under emulation).
# Every process started is stopped on exit, also on failure or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x .venv/bin/python ] || scripts/setup.sh >&2
limit=1500
for arg in "$@"; do
  case "$arg" in
    bluez|--backend=bluez) scripts/setup-realbluez.sh >/dev/null; limit=6000 ;;
  esac
done
scripts/build-release.sh relinkd >&2
driver=""
cleanup() {
  if [ -n "$driver" ] && kill -0 "$driver" 2>/dev/null; then
    kill -TERM "$driver" 2>/dev/null || true   # it stops its bench and clients
    for _ in $(seq 100); do kill -0 "$driver" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$driver" 2>/dev/null || true   # its children die with it (PDEATHSIG)
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)" >&2
timeout --signal=TERM "$limit" .venv/bin/python bench/relink/restore_bench.py --relinkd .build/release/relinkd "$@" &
driver=$!
status=0
wait "$driver" || status=$?   # the table is out also when a contender failed (status 3)
driver=""
echo "machine after: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit $status
