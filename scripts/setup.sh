#!/usr/bin/env bash
# Takes a fresh Debian 12 machine to a working build and bench. Idempotent:
# installs only what is missing, and leaves a ready .venv alone.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  libdbus-1-dev libsystemd-dev libsqlite3-dev pkg-config
  dbus-daemon dbus-bin bluez libglib2.0-bin
  python3 python3-venv python3-dev
  systemd util-linux procps psmisc
  debhelper lintian help2man
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The venv uses Debian's python3 so that the bench does not depend on
# whatever other Python happens to be first on PATH.
PY=/usr/bin/python3
stamp=.venv/.requirements.sha256
want=$(sha256sum bench/requirements.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: creating .venv from bench/requirements.txt"
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r bench/requirements.txt
  echo "$want" > "$stamp"
fi

# A second unprivileged user for the two-user end-to-end test (bench/e2e),
# beside nobody: a system user with no home and no login. Root only (as CI).
if [ "$(id -u)" -eq 0 ] && ! getent passwd relink-e2e >/dev/null; then
  echo "setup: adding system user relink-e2e (two-user tests)"
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin relink-e2e
fi

# relinkd's own user, as the package creates it (systemd/relink.sysusers), so
# that the access test runs relinkd as relink on a bus configured as the
# system bus with the shipped policy (Tests/RelinkDaemonTests/SystemBusAccessTests).
if [ "$(id -u)" -eq 0 ] && ! getent passwd relink >/dev/null; then
  echo "setup: adding system user relink (relinkd's, from systemd/relink.sysusers)"
  if command -v systemd-sysusers >/dev/null; then
    systemd-sysusers "$PWD/systemd/relink.sysusers"  # it takes a path, not a name, only when absolute
  else
    useradd --system --no-create-home --home-dir /var/lib/relink --shell /usr/sbin/nologin relink
  fi
fi

command -v swift >/dev/null || { echo "setup: swift not found on PATH (expected Swift 6.2 or newer)" >&2; exit 1; }
echo "setup: ok ($(swift --version 2>/dev/null | head -1))"
