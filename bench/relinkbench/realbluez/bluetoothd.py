"""Start, stop and wait for the real bluetoothd inside the VM (stdlib only)."""

import os
import signal
import subprocess
import time
from typing import Optional

BLUETOOTHD = "/usr/libexec/bluetooth/bluetoothd"
HERE = os.path.dirname(os.path.abspath(__file__))
# The bench's main.conf (see bench/realbluez/README.md for why each line).
MAIN_CONF = os.path.normpath(os.path.join(HERE, "..", "..", "realbluez", "main.conf"))


def dbus_get(path: str, interface: str, prop: str, timeout: float = 1.0) -> Optional[str]:
    """A property of org.bluez as dbus-send prints it, or None. Never
    auto-starts bluetoothd (dbus-send does not ask for it)."""
    try:
        out = subprocess.run(
            ["dbus-send", "--system", "--print-reply=literal", f"--reply-timeout={int(timeout * 1000)}",
             "--dest=org.bluez", path, "org.freedesktop.DBus.Properties.Get",
             f"string:{interface}", f"string:{prop}"],
            capture_output=True, text=True, timeout=timeout + 1)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        return None
    return out.stdout.split()[-1] if out.stdout.split() else ""


def adapters_powered(controllers: int) -> bool:
    return all(dbus_get(f"/org/bluez/hci{i}", "org.bluez.Adapter1", "Powered") == "true"
               for i in range(controllers))


class Bluetoothd:
    """One bluetoothd, logging (with -d) to `log_path` (appended across restarts)."""

    def __init__(self, log_path: str, controllers: int, main_conf: str = MAIN_CONF,
                 debug: bool = True):
        self.log_path = log_path
        self.controllers = controllers
        self.main_conf = main_conf
        self.debug = debug
        self.proc: Optional[subprocess.Popen] = None
        self.starts = 0

    def argv(self) -> list[str]:
        argv = [BLUETOOTHD, "-n", "-f", self.main_conf]
        if self.debug:
            argv.append("-d")
        return argv

    def start(self) -> None:
        self.starts += 1
        with open(self.log_path, "ab") as log:
            log.write(f"=== bluetoothd start #{self.starts}: {' '.join(self.argv())}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 20.0) -> float:
        """Until every adapter is on org.bluez and powered (bluetoothd powers
        them on). Returns the seconds waited."""
        t0 = time.monotonic()
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"bluetoothd exited with {self.proc.returncode} (log {self.log_path})")
            if adapters_powered(self.controllers):
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"bluetoothd not ready within {timeout} s (log {self.log_path})")
            time.sleep(0.05)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> Optional[int]:
        """Signal bluetoothd and reap it; SIGKILL if it outlives `timeout`."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
