#!/bin/sh
# The release build of relink's products, with the flags the Debian package
# ships (docs/packaging.md): the Swift runtime and Foundation linked in
# statically, no RUNPATH, bind-now (-z now: with the relro the linker adds by
# itself, a read-only GOT). scripts/build-deb.sh packages what this builds and
# bench/gate measures it, so the gate times the binary users install, and one
# .build/release serves both: SwiftPM rebuilds everything when the flags
# change (5 minutes on 2 cores).
#
#   scripts/build-release.sh PRODUCT...      (e.g. relinkd relinkctl)
set -eu
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: scripts/build-release.sh PRODUCT..." >&2; exit 2; }
# One product per swift build: with two --product flags it builds only the last.
for product in "$@"; do
    swift build -c release --static-swift-stdlib --disable-local-rpath \
        -Xlinker -z -Xlinker now --product "$product"
done
