#!/usr/bin/env bash
# The test command of the README: sets up what is missing, builds, and runs
# every test suite (Swift and the bench's Python tests) on private buses.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

echo "== swift build (debug, with tests)"
swift build --build-tests

status=0
if [ -d bench/tests ] && ls bench/tests/test_*.py >/dev/null 2>&1; then
  echo "== bench tests (pytest)"
  .venv/bin/python -m pytest -q bench/tests bench/relink/tests bench/e2e/tests || status=$?
fi

echo "== swift test"
swift test --skip-build || status=$?

exit $status
