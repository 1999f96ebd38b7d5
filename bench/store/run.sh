#!/bin/sh
# Restore-store benchmark (issue 5): open+load time of a full population,
# acknowledged durable mutations/s from concurrent clients, and the disk's own
# fdatasync rate measured in the same run. Usage: bench/store/run.sh [DIR]
# DIR is an empty directory on the disk to measure (default: a new one under /var/tmp).
set -eu
cd "$(dirname "$0")/../.."
scripts/build-release.sh relink-store-torture >&2
dir="${1:-$(mktemp -d /var/tmp/relink-store-bench.XXXXXX)}"
trap 'rm -rf "$dir"' EXIT
.build/release/relink-store-torture bench --directory "$dir" \
    --identifiers 1000 --per-identifier 10 --events 10 --loads 20 --clients 1,8,64 --seconds 3
