#!/usr/bin/env bash
# The main job of the README: sets up, builds, and shows relink on the
# simulated bench: first the bench itself through a third-party client
# (bluetoothctl), then relinkd with the lock and the band and a client
# program (examples/python-lock): the client and relinkd are SIGKILLed
# mid-stream, and the links and every missed event come back.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "== swift build"
swift build
echo "== part 1: the simulated bench, walked through with bluetoothctl"
bench/demo-bluetoothctl.sh
echo "== part 2: relinkd and a client, both killed mid-stream; links and events come back"
exec bench/demo-relinkd.sh
