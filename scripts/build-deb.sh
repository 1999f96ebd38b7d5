#!/bin/sh
# Builds the Debian package relink_VERSION_ARCH.deb (docs/packaging.md):
#  1. relinkd and relinkctl in release, with the Swift runtime and Foundation
#     linked in statically (--static-swift-stdlib), no RUNPATH and bind-now,
#     so the package needs no Swift toolchain, only Debian's own libraries;
#  2. their man pages from their --help texts (scripts/manpages.sh);
#  3. a source tree in .build/deb/ with packaging/debian/ as debian/ and a
#     changelog written for this version, where dpkg-buildpackage (debian/rules,
#     debhelper) stages the files with scripts/install.sh and makes the
#     maintainer scripts, the dependencies (dpkg-shlibdeps) and the .deb.
#
#   scripts/build-deb.sh [OUTDIR]      (default: .build/deb; prints the .deb's path last)
#
# The version is relink's own (RelinkVersion in Sources/RelinkAPI), read back
# from the built relinkctl, so it is written in one place. The package is
# native (debian/ lives in this tree): its version has no Debian revision.
# RELINK_DEB_SKIP_BUILD=1 packages the binaries already in .build/release.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/.build/deb}
bindir=$here/.build/release

for tool in dpkg-buildpackage dh help2man; do
    command -v "$tool" > /dev/null || { echo "build-deb.sh: $tool not found (scripts/setup.sh installs debhelper and help2man)" >&2; exit 1; }
done

cd "$here"
if [ "${RELINK_DEB_SKIP_BUILD:-0}" != 1 ]; then
    echo "== scripts/build-release.sh relinkd relinkctl"
    "$here/scripts/build-release.sh" relinkd relinkctl
fi
for binary in relinkd relinkctl; do
    # A build without --static-swift-stdlib would need the toolchain at run time.
    if readelf -d "$bindir/$binary" | grep -q -e 'libswiftCore' -e 'RUNPATH' -e 'RPATH'; then
        echo "build-deb.sh: $bindir/$binary links the Swift runtime dynamically or has a RUNPATH; build it as above" >&2
        exit 1
    fi
done

version=$("$bindir/relinkctl" --version)
daemon_version=$("$bindir/relinkd" --version)
[ "$version" = "$daemon_version" ] || { echo "build-deb.sh: relinkctl says $version, relinkd $daemon_version" >&2; exit 1; }
case $version in
    [0-9]*) ;;
    *) echo "build-deb.sh: '$version' is no Debian version" >&2; exit 1 ;;
esac

# Dates come from the last commit, so two builds of one commit are the same.
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2> /dev/null || date +%s)
export SOURCE_DATE_EPOCH
commit=$(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)

src=$out/relink-$version
rm -rf "$src"
mkdir -p "$src/man"
cp -R packaging/debian "$src/debian"
maintainer=$(sed -n 's/^Maintainer: //p' packaging/debian/control)
cat > "$src/debian/changelog" <<CHANGELOG
relink ($version) unstable; urgency=medium

  * relink $version, built from commit $commit by scripts/build-deb.sh.

 -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")
CHANGELOG

"$here/scripts/manpages.sh" "$bindir" "$src/man" > /dev/null

rm -f "$out"/relink_*.deb
echo "== debian/rules binary (relink $version)"
(
    cd "$src"
    export RELINK_TREE="$here" RELINK_BINDIR="$bindir" RELINK_MAN_DIR="$src/man"
    dpkg-buildpackage --build=binary --no-sign --no-check-builddeps --no-pre-clean
)
deb=$(ls "$out"/relink_"$version"_*.deb)
echo "$deb"
