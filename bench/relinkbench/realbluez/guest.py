"""Inside the VM (run by run-vm as the guest's command): load hci_vhci, start a
system dbus-daemon, btvirt with N LE controllers and (unless --no-bluetoothd)
the real bluetoothd, wait until it is ready, run the given command, then stop
everything. Logs and `ready.json` go to --logdir (a --rwdir of the VM).

    python -m relinkbench.realbluez.guest --logdir DIR [--controllers N] [--no-bluetoothd] -- CMD...

Exit status: the command's, or 90 when the set-up failed. Stdlib only."""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from ..waiting import wait_until
from .bluetoothd import Bluetoothd, dbus_get

SETUP_FAILED = 90
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
RELINK_POLICY = os.path.join(REPO, "systemd", "org.relink.conf")
RELINK_UID = 990


def uptime() -> float:
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


class Guest:
    def __init__(self, logdir: str, controllers: int, btmon: bool):
        self.logdir = logdir
        self.controllers = controllers
        self.btmon = btmon
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.dbus_pid = None
        self.bluetoothd = None
        self.timings: dict[str, float] = {"uptime_at_start": uptime()}

    def mark(self, step: str) -> None:
        self.timings[step] = round(uptime(), 2)
        print(f"guest: {step} at uptime {self.timings[step]:.2f} s", file=sys.stderr, flush=True)

    def spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(os.path.join(self.logdir, f"{name}.log"), "ab")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append((name, proc))
        return proc

    def machine(self) -> None:
        """The parts that stand for the hardware and the OS: kernel module,
        system bus, emulated controllers."""
        subprocess.run(["modprobe", "hci_vhci"], check=True)
        wait_until(lambda: os.path.exists("/dev/vhci"), 10, "/dev/vhci")
        self.mark("hci_vhci")
        for d in ("/run/dbus", "/var/lib/bluetooth"):
            os.makedirs(d, exist_ok=True)
        self.relink_user()
        out = subprocess.run(["dbus-daemon", "--system", "--fork", "--print-pid"],
                             check=True, capture_output=True, text=True)
        self.dbus_pid = int(out.stdout.split()[0])
        wait_until(lambda: os.path.exists("/run/dbus/system_bus_socket"), 10, "the system bus")
        self.mark("dbus")
        self.start_btvirt()
        self.mark("btvirt")
        if self.btmon:
            self.spawn("btmon", ["btmon", "-w", os.path.join(self.logdir, "hci.btsnoop")])

    def start_btvirt(self, attempts: int = 3) -> None:
        """btvirt with N LE-only controllers. A controller is usable once the
        kernel has set it up and lists it on its management interface
        (/sys/class/bluetooth/hciN appears before that). On a loaded host the
        kernel's HCI Reset to btvirt can time out ("hci0: Opcode 0x0c03
        failed: -110"): that controller never comes up, so btvirt is started
        again (its controllers go with it), a bounded number of times."""
        for attempt in range(1, attempts + 1):
            proc = self.spawn("btvirt", ["btvirt", "-L", f"-l{self.controllers}"])
            try:
                wait_until(lambda: self.mgmt_controllers() >= self.controllers, 20,
                         f"{self.controllers} controllers on the kernel's management interface")
                return
            except TimeoutError:
                if attempt == attempts:
                    raise
                print(f"guest: btvirt attempt {attempt}: only {self.mgmt_controllers()} "
                      f"controller(s) came up; starting it again", file=sys.stderr, flush=True)
                self.procs.remove(("btvirt", proc))
                proc.terminate()
                proc.wait(10)
                wait_until(lambda: self.mgmt_controllers() == 0, 10, "btvirt's controllers gone")

    @staticmethod
    def mgmt_controllers() -> int:
        out = subprocess.run(["btmgmt", "--index", "none", "info"], capture_output=True,
                             text=True, timeout=10)
        return sum(1 for line in out.stdout.splitlines() if re.match(r"hci\d+:\s", line))

    @staticmethod
    def relink_user() -> None:
        """relinkd runs as on a gateway: as the user `relink` (systemd's
        relink.sysusers), with the project's D-Bus policy, which lets only
        that user own org.relink. useradd fails on the guest's overlay
        /etc/shadow, so the entries are appended (guest /etc is volatile)."""
        with open("/etc/passwd") as f:
            known = any(line.startswith("relink:") for line in f)
        if not known:
            with open("/etc/passwd", "a") as f:
                f.write(f"relink:x:{RELINK_UID}:{RELINK_UID}:relink:/nonexistent:/usr/sbin/nologin\n")
            with open("/etc/group", "a") as f:
                f.write(f"relink:x:{RELINK_UID}:\n")
        shutil.copy(RELINK_POLICY, "/etc/dbus-1/system.d/org.relink.conf")

    def start_bluetoothd(self) -> None:
        self.bluetoothd = Bluetoothd(os.path.join(self.logdir, "bluetoothd.log"), self.controllers)
        self.bluetoothd.start()
        self.bluetoothd.wait_ready()
        self.mark("bluetoothd_ready")

    def ready(self, bluetoothd: bool) -> None:
        info = {"controllers": self.controllers, "bluetoothd": bluetoothd,
                "addresses": [self._address(i) for i in range(self.controllers)],
                "timings": self.timings}
        tmp = os.path.join(self.logdir, "ready.json.tmp")
        with open(tmp, "w") as f:
            json.dump(info, f)
        os.rename(tmp, os.path.join(self.logdir, "ready.json"))

    @staticmethod
    def _address(i: int) -> str:
        """hciN's address, known once bluetoothd runs ("" before)."""
        return dbus_get(f"/org/bluez/hci{i}", "org.bluez.Adapter1", "Address") or ""

    def save_dmesg(self) -> None:
        with open(os.path.join(self.logdir, "dmesg.log"), "wb") as f:
            subprocess.run(["dmesg"], stdout=f, stderr=subprocess.STDOUT)

    def teardown(self) -> None:
        self.save_dmesg()
        if self.bluetoothd is not None:
            self.bluetoothd.stop(signal.SIGTERM, timeout=5)
        for name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT if name == "btmon" else signal.SIGTERM)
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self.dbus_pid:
            try:
                os.kill(self.dbus_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="relinkbench.realbluez.guest")
    p.add_argument("--logdir", required=True)
    p.add_argument("--controllers", type=int, default=2)
    p.add_argument("--no-bluetoothd", action="store_true",
                   help="leave bluetoothd to the command (the bench's --backend bluez starts its own)")
    p.add_argument("--btmon", action="store_true", help="HCI trace to LOGDIR/hci.btsnoop")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    with open("/proc/cmdline") as f:
        if "virtme" not in f.read():
            # It edits /etc/passwd and the D-Bus policy, loads modules and
            # starts a system bus: only ever in run-vm's volatile guest.
            print("guest: not inside a virtme-ng VM; use bench/realbluez/run-vm", file=sys.stderr)
            return SETUP_FAILED
    os.makedirs(args.logdir, exist_ok=True)
    guest = Guest(args.logdir, args.controllers, args.btmon)
    try:
        try:
            guest.machine()
            if not args.no_bluetoothd:
                guest.start_bluetoothd()
            guest.ready(not args.no_bluetoothd)
        except Exception as e:
            print(f"guest: set-up failed: {e}", file=sys.stderr, flush=True)
            return SETUP_FAILED
        if not cmd:
            return 0
        env = dict(os.environ, RELINK_REALBLUEZ_GUEST="1", RELINK_REALBLUEZ_LOGDIR=args.logdir,
                   RELINK_REALBLUEZ_CONTROLLERS=str(args.controllers), PYTHONDONTWRITEBYTECODE="1")
        status = subprocess.run(cmd, env=env).returncode
        guest.mark("command_done")
        return status
    finally:
        guest.teardown()
        with open(os.path.join(args.logdir, "guest-timings.json"), "w") as f:
            json.dump(guest.timings, f)


if __name__ == "__main__":
    sys.exit(main())
