#!/usr/bin/env bash
# The main job of the README: sets up, builds, and shows relink's bench at
# work. Today it starts the simulated bench (a lock and a band on a private
# bus) and walks through it with bluetoothctl; relinkd replaces the
# walk-through as it lands.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "== swift build"
swift build
exec bench/demo-bluetoothctl.sh
