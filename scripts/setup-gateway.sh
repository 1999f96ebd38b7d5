#!/usr/bin/env bash
# Bootable Debian images for the gateway bench (bench/gateway, issue 32).
#
#   scripts/setup-gateway.sh [bookworm|trixie ...]     (default: both)
#   scripts/setup-gateway.sh --host-packages            (the host's apt packages only)
#
# Each image is Debian's own: mmdebstrap from the release's archive (main and
# security), that release's kernel and initramfs, systemd as PID 1, dbus,
# bluez, bluez-test-tools (btvirt), python3 and python3-pytest (the
# restart-survival suite runs in the guest), with the bench's pinned
# dbus-fast (bench/requirements.txt, from PyPI: Debian's is too old for the
# bench's peripheral programs and the example lock) installed by pip for the
# guest's Python under /usr/local, btvirt rebuilt from the release's bluez
# source with the bench's fix (build_btvirt below), plus the files under bench/gateway/image (the
# host's command agent on a virtio serial port, the btvirt unit). relink is
# NOT in the image: a test installs it with apt from the share.
#
# Cached outside the clone, in ${RELINK_GATEWAY_CACHE:-$XDG_CACHE_HOME/relink/gateway}
# (default ~/.cache/relink/gateway)/<release>/: rootfs.img (raw ext4, sparse),
# vmlinuz, initrd.img, packages.txt, inputs.sha256. Built again only when an
# input (this script, bench/gateway/image, the release) changes; a second run
# prints the paths and does nothing else. Last line per release:
# `image=<dir>`.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${RELINK_GATEWAY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/relink/gateway}
MIRROR=${RELINK_GATEWAY_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${RELINK_GATEWAY_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
IMAGE_SIZE=4G
PACKAGES=(
  systemd-sysv dbus udev kmod linux-image-amd64 initramfs-tools
  bluez bluez-test-tools python3 sqlite3 procps python3-pytest
)
HOST_PACKAGES=(mmdebstrap qemu-system-x86 qemu-utils e2fsprogs curl dpkg-dev patch
  autoconf automake libtool pkg-config libglib2.0-dev libdbus-1-dev)
BTVIRT_PATCH=bench/gateway/btvirt/btvirt-handles.patch

log() { echo "setup-gateway: $*" >&2; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
for p in "${HOST_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing apt packages: ${missing[*]}"
  mkdir -p "$CACHE"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$CACHE/apt.log" 2>&1 \
    || { tail -20 "$CACHE/apt.log" >&2; log "apt-get failed (log: $CACHE/apt.log)"; exit 1; }
fi

inputs_hash() {  # $1 release
  { echo "$1"; echo "${PACKAGES[*]}"; grep -E '^dbus-fast==' bench/requirements.txt; cat "$0" "$BTVIRT_PATCH";
    (cd bench/gateway/image && find . -type f | LC_ALL=C sort | while read -r f; do
       echo "$f $(stat -c %a "$f")"; cat "$f"; done); } | sha256sum | cut -d' ' -f1
}

# btvirt from the release's own bluez source (Debian's .dsc, its patches
# applied by dpkg-source) with bench/gateway/btvirt/btvirt-handles.patch: the
# emulator gave a controller's second and later links a handle its peer did
# not know, so only the first link of hci0 carried data (README.md there).
# Built on the host (it links libc only); cached per bluez version and patch.
build_btvirt() {  # $1 Debian version of bluez; prints the binary's path
  local ver=$1 sum out src
  sum=$(sha256sum "$BTVIRT_PATCH" | cut -c1-12)
  out="$CACHE/btvirt/$ver-$sum"
  if [ -x "$out/btvirt" ]; then echo "$out/btvirt"; return; fi
  rm -rf "$out"; mkdir -p "$out/dl"
  local dsc="bluez_${ver#*:}.dsc" pool="$MIRROR/pool/main/b/bluez"
  log "btvirt: bluez $ver source from $pool"
  curl -sfL -o "$out/dl/$dsc" "$pool/$dsc" || { log "cannot fetch $pool/$dsc"; exit 1; }
  for f in $(awk '/^Files:/{f=1;next} /^[^ ]/{f=0} f && NF==3 {print $3}' "$out/dl/$dsc"); do
    curl -sfL -o "$out/dl/$f" "$pool/$f" || { log "cannot fetch $pool/$f"; exit 1; }
  done
  src="$out/src"
  (cd "$out/dl" && dpkg-source --no-check -x "$dsc" "$src") >"$out/build.log" 2>&1
  (cd "$src" && patch -p1 <"$OLDPWD/$BTVIRT_PATCH" && autoreconf -fi \
     && ./configure -q --disable-obex --disable-client --disable-cups --disable-systemd \
          --disable-udev --disable-manpages --disable-mesh --disable-midi --disable-monitor \
          --disable-tools --enable-testing \
     && mkdir -p lib/bluetooth && for h in lib/*.h; do ln -sf "../${h#lib/}" "lib/bluetooth/${h#lib/}"; done \
     && make -j2 emulator/btvirt) >>"$out/build.log" 2>&1 \
    || { tail -20 "$out/build.log" >&2; log "btvirt build failed (log: $out/build.log)"; exit 1; }
  cp "$src/emulator/btvirt" "$out/btvirt"
  rm -rf "$src" "$out/dl"
  echo "$out/btvirt"
}

build() {  # $1 release
  local rel=$1 out="$CACHE/$1" hash
  hash=$(inputs_hash "$rel")
  if [ "$(cat "$out/inputs.sha256" 2>/dev/null)" = "$hash" ] && [ -f "$out/rootfs.img" ] \
     && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.img" ]; then
    echo "image=$out"; return
  fi
  local work="$CACHE/.build-$rel" t0=$SECONDS
  $SUDO rm -rf "$work"; mkdir -p "$work" "$out"
  log "$rel: mmdebstrap (log: $work/mmdebstrap.log)"
  local include; include=$(IFS=,; echo "${PACKAGES[*]}")
  if ! $SUDO mmdebstrap --variant=minbase --include="$include" \
        --skip=cleanup/apt/lists \
        --customize-hook='chroot "$1" passwd -d root' \
        --customize-hook='chroot "$1" systemd-machine-id-setup' \
        "$rel" "$work/root" \
        "deb $MIRROR $rel main" "deb $MIRROR $rel-updates main" \
        "deb $SECURITY_MIRROR $rel-security main" >"$work/mmdebstrap.log" 2>&1; then
    tail -30 "$work/mmdebstrap.log" >&2; log "$rel: mmdebstrap failed"; exit 1
  fi
  local root="$work/root" pv dbusfast
  pv=$($SUDO chroot "$root" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  dbusfast=$(grep -E '^dbus-fast==' bench/requirements.txt)
  log "$rel: $dbusfast for the guest's Python $pv"
  $SUDO python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --only-binary=:all: \
    --implementation cp --python-version "$pv" --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --target "$root/usr/local/lib/python$pv/dist-packages" "$dbusfast" >&2
  $SUDO cp -a bench/gateway/image/. "$root/"
  local bluez_ver btvirt
  bluez_ver=$($SUDO chroot "$root" dpkg-query -W -f='${Version}' bluez)
  btvirt=$(build_btvirt "$bluez_ver")
  $SUDO install -m 0755 "$btvirt" "$root/usr/local/bin/btvirt"
  $SUDO chroot "$root" systemctl enable relink-gateway-agent.service btvirt.service >/dev/null 2>&1
  $SUDO chroot "$root" systemctl enable bluetooth.service >/dev/null 2>&1 || true
  $SUDO mkdir -p "$root/srv/relink" "$root/var/log/journal"
  # The serial console shows the boot; no getty needed (the agent is the way in).
  $SUDO chroot "$root" systemctl mask serial-getty@ttyS0.service getty@tty1.service >/dev/null 2>&1 || true
  $SUDO chroot "$root" dpkg-query -W -f='${Package} ${Version}\n' >"$work/packages.txt"
  local kver; kver=$(ls "$root/boot" | sed -n 's/^vmlinuz-//p' | sort -V | tail -1)
  [ -n "$kver" ] || { log "$rel: no kernel in the image"; exit 1; }
  $SUDO cp "$root/boot/vmlinuz-$kver" "$work/vmlinuz"
  $SUDO cp "$root/boot/initrd.img-$kver" "$work/initrd.img"
  $SUDO rm -f "$work/rootfs.img"
  $SUDO mkfs.ext4 -q -F -L relinkroot -d "$root" "$work/rootfs.img" "$IMAGE_SIZE"
  $SUDO rm -rf "$root"
  mv "$work/rootfs.img" "$work/vmlinuz" "$work/initrd.img" "$work/packages.txt" "$out/"
  echo "$kver" >"$out/kernel.version"
  echo "$hash" >"$out/inputs.sha256"
  rm -rf "$work"
  log "$rel: built in $((SECONDS - t0)) s (kernel $kver, bluez $(awk '$1=="bluez"{print $2}' "$out/packages.txt"))"
  echo "image=$out"
}

# --host-packages: only the host's apt packages (.ci/run does this first, so
# that the image builds can go on beside check-deb.sh's own apt-get calls).
[ "${1:-}" = "--host-packages" ] && exit 0
releases=("$@"); ((${#releases[@]})) || releases=(bookworm trixie)
for r in "${releases[@]}"; do
  case $r in bookworm|trixie) build "$r" ;; *) log "unknown release $r (bookworm or trixie)"; exit 2 ;; esac
done
