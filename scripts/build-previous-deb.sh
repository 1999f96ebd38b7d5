#!/bin/sh
# An earlier relink .deb, for the gateway's upgrade scenario
# (bench/gateway/tests/test_upgrade.py): relink as of COMMIT, built by that
# tree's own scripts/build-deb.sh with its version set to 0.0.99, so that
# installing today's .deb over it is an upgrade (0.0.99 -> the current
# version) with everything an upgrade does: dpkg's conffile handling, the
# maintainer scripts, systemd restarting relinkd, and relinkd migrating the
# store that the earlier relinkd wrote.
#
#     scripts/build-previous-deb.sh [COMMIT]
#
# COMMIT defaults to a77dce1 (2026-11-26), the last one before store v11:
# the upgrade migrates a v10 store to the current schema. The .deb is cached
# in ~/.cache/relink/previous/COMMIT/ and built only once (about 10 minutes
# on two cores: a release build from scratch); prints its path.
set -eu

commit=${1:-a77dce1}
here=$(cd "$(dirname "$0")/.." && pwd)
full=$(git -C "$here" rev-parse --verify "$commit^{commit}")
cache=${RELINK_CACHE:-$HOME/.cache/relink}/previous/$full
deb=$cache/relink_0.0.99_amd64.deb
if [ -f "$deb" ]; then
    echo "$deb"
    exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/relink-previous.XXXXXX")
cleanup() {
    git -C "$here" worktree remove --force "$work/tree" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
git -C "$here" worktree add --detach --quiet "$work/tree" "$full"
version_file=$work/tree/Sources/RelinkAPI/Names/RelinkVersion.swift
grep -q 'static let string = "' "$version_file" || { echo "build-previous-deb.sh: no RelinkVersion in $commit" >&2; exit 1; }
sed -i 's/static let string = "[^"]*"/static let string = "0.0.99"/' "$version_file"
echo "== relink at $full as 0.0.99 (its own scripts/build-deb.sh)" >&2
(cd "$work/tree" && scripts/build-deb.sh >&2)
built=$work/tree/.build/deb/relink_0.0.99_amd64.deb
[ -f "$built" ] || { echo "build-previous-deb.sh: $built was not built" >&2; exit 1; }
mkdir -p "$cache"
cp "$built" "$deb.tmp"
mv "$deb.tmp" "$deb"
echo "$deb"
