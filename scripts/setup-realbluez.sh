#!/usr/bin/env bash
# Set-up for the real-bluetoothd bench backend (bench/realbluez, issue #20).
# Called only when the real backend is asked for, so ./scripts/setup.sh and the
# README's default commands stay fast. Idempotent: a second run installs and
# downloads nothing and prints the cached paths.
#
# What it makes, all from Debian packages and PyPI:
#   * apt: qemu, busybox-static (virtme-ng's initramfs), bluez (bluetoothd
#     5.66), bluez-test-tools (btvirt), bluez-test-scripts, dbus, kmod, and
#     python3-dbus/python3-gi for Debian's python3 in the guest;
#   * $CACHE/venv: virtme-ng (pinned) for `vng`;
#   * $CACHE/kernel: Debian's current linux-image-<abi>-amd64, unpacked with
#     dpkg -x (never installed) and depmod'ed (the .deb ships no modules.dep).
# Prints, as its last line, `kernel=<path of vmlinuz>`.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${RELINK_REALBLUEZ_CACHE:-$PWD/.cache/realbluez}
VIRTME_NG_VERSION=1.42
APT_PACKAGES=(
  qemu-system-x86 busybox-static bluez bluez-test-tools bluez-test-scripts
  dbus kmod python3-dbus python3-gi python3-venv
)

log() { echo "setup-realbluez: $*" >&2; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

mkdir -p "$CACHE"

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing apt packages: ${missing[*]}"
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
          $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$CACHE/apt.log" 2>&1; then
    tail -20 "$CACHE/apt.log" >&2; log "apt-get failed (log: $CACHE/apt.log)"; exit 1
  fi
fi

# virtme-ng in its own venv, from Debian's python3 (not whatever is on PATH).
if [ "$("$CACHE/venv/bin/vng" --version 2>/dev/null | awk '{print $NF}')" != "$VIRTME_NG_VERSION" ]; then
  log "installing virtme-ng $VIRTME_NG_VERSION into $CACHE/venv"
  [ -x "$CACHE/venv/bin/python" ] || /usr/bin/python3 -m venv "$CACHE/venv"
  "$CACHE/venv/bin/pip" install -q --disable-pip-version-check "virtme-ng==$VIRTME_NG_VERSION" >&2
fi

# Debian's kernel: resolve the ABI of the current linux-image-amd64, never a
# hard-coded one. A cached kernel of an older ABI is kept while apt cannot say
# (offline), and replaced when apt names a newer one.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ]; then
  pkg=$(cat "$CACHE/kernel.pkg" 2>/dev/null || true)
  [ -n "$pkg" ] || { log "cannot resolve linux-image-amd64 (apt-get update?)"; exit 1; }
fi
ver=${pkg#linux-image-}
vmlinuz="$CACHE/kernel/boot/vmlinuz-$ver"
if [ "$(cat "$CACHE/kernel.pkg" 2>/dev/null)" != "$pkg" ] || [ ! -f "$vmlinuz" ] \
   || [ ! -f "$CACHE/kernel/lib/modules/$ver/modules.dep" ]; then
  log "fetching $pkg"
  dl="$CACHE/download"
  rm -rf "$dl" "$CACHE/kernel" && mkdir -p "$dl"
  # _apt cannot write to a root-owned folder; the "unsandboxed" warning is harmless.
  (cd "$dl" && apt-get download -q "$pkg" 2>&1 | grep -v -i unsandboxed >&2 || true)
  deb=$(ls "$dl"/"$pkg"_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || { log "apt-get download $pkg failed"; exit 1; }
  dpkg -x "$deb" "$CACHE/kernel"
  depmod -b "$CACHE/kernel" "$ver"
  rm -rf "$dl"
  echo "$pkg" > "$CACHE/kernel.pkg"
fi
for m in bluetooth hci_vhci; do
  grep -q "/$m.ko" "$CACHE/kernel/lib/modules/$ver/modules.dep" \
    || { log "module $m missing from $pkg"; exit 1; }
done
echo "kernel=$vmlinuz"
