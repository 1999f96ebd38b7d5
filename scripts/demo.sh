#!/usr/bin/env bash
# The main job of the README: sets up, builds, and shows relink on the
# simulated bench: first the bench itself through a third-party client
# (bluetoothctl), then relinkd keeping a lock link alive across a SIGKILL
# of relinkd and an out-of-range spell, with no client present.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "== swift build"
swift build
echo "== part 1: the simulated bench, walked through with bluetoothctl"
bench/demo-bluetoothctl.sh
echo "== part 2: relinkd keeps the link"
exec bench/demo-relinkd.sh
