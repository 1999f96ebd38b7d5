"""One booted Debian gateway: qemu, a persistent disk, the guest's agent.

The image (scripts/setup-gateway.sh) is never written: each gateway boots a
qcow2 overlay of its own on top of it, and that overlay is its disk across
reboots and power cuts. The host speaks to the guest only through the agent
on the virtio serial port org.relink.gateway.0 (bench/gateway/image); the
serial console goes to `console.log` in the gateway's directory. Stdlib only."""

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("RELINK_GATEWAY_CACHE") or os.path.join(base, "relink", "gateway")


class GatewayError(RuntimeError):
    """The gateway could not be booted, or stopped answering."""


@dataclass
class Result:
    """What one command in the guest did."""
    rc: int
    out: str
    err: str

    def __str__(self) -> str:
        return f"rc={self.rc}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


class Gateway:
    """A Debian release booted in qemu with systemd as PID 1.

    `share` is the host folder the guest mounts read-only at /srv/relink
    (9p): the .deb to install and the bench's peripheral programs."""

    def __init__(self, release: str, workdir: str, share: str, memory_mb: int = 2048,
                 cpus: int = int(os.environ.get("RELINK_GATEWAY_CPUS", "2"))):
        self.release = release
        self.image = os.path.join(cache_dir(), release)
        self.workdir = workdir
        self.share = share
        self.memory_mb = memory_mb
        self.cpus = cpus
        self.disk = os.path.join(workdir, "disk.qcow2")
        self.sock_path = os.path.join(workdir, "agent.sock")
        self.console = os.path.join(workdir, "console.log")
        self.proc: Optional[subprocess.Popen] = None
        self.sock: Optional[socket.socket] = None
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._replies: dict[int, dict] = {}
        self._hellos: list[dict] = []
        self._next_id = 1
        self._reader: Optional[threading.Thread] = None
        self.boots: list[dict] = []  # {"boot_id", "os", "seconds"} per boot

    # ---- life cycle

    def boot(self, timeout: float = 600.0) -> dict:
        """Start qemu on the gateway's disk (made from the image the first
        time) and wait until the agent says hello. Returns the hello."""
        for f in ("rootfs.img", "vmlinuz", "initrd.img"):
            if not os.path.exists(os.path.join(self.image, f)):
                raise GatewayError(f"no {f} in {self.image}: run scripts/setup-gateway.sh {self.release}")
        os.makedirs(self.workdir, exist_ok=True)
        if not os.path.exists(self.disk):
            subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b",
                            os.path.join(self.image, "rootfs.img"), self.disk], check=True)
        if os.path.exists(self.sock_path):
            os.unlink(self.sock_path)
        seen = len(self._hellos)
        t0 = time.monotonic()
        with open(self.console, "ab") as console:
            console.write(f"\n=== host: boot {len(self.boots) + 1} at {time.time():.3f}\n".encode())
        argv = [
            "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-cpu", "max",
            "-m", str(self.memory_mb), "-smp", str(self.cpus),
            "-display", "none", "-monitor", "none", "-nic", "none",
            "-chardev", f"file,id=console,path={self.console},append=on", "-serial", "chardev:console",
            "-kernel", os.path.join(self.image, "vmlinuz"),
            "-initrd", os.path.join(self.image, "initrd.img"),
            "-append", "root=/dev/vda rw console=ttyS0 systemd.firstboot=off panic=-1",
            "-drive", f"file={self.disk},if=virtio,format=qcow2,cache=writeback",
            "-device", "virtio-rng-pci",
            "-device", "virtio-serial-pci",
            "-chardev", f"socket,id=agent,path={self.sock_path},server=on,wait=off",
            "-device", "virtserialport,chardev=agent,name=org.relink.gateway.0",
            "-virtfs", f"local,path={self.share},mount_tag=relinkshare,security_model=none,readonly=on",
        ]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.workdir, "qemu.log"), "ab"),
                                     start_new_session=True)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.sock_path):
            if self.proc.poll() is not None:
                raise GatewayError(f"qemu exited with {self.proc.returncode} ({self.workdir}/qemu.log)")
            if time.monotonic() > deadline:
                raise GatewayError("qemu made no agent socket in 30 s")
            time.sleep(0.05)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.sock_path)
        self._reader = threading.Thread(target=self._read, args=(self.sock,), daemon=True)
        self._reader.start()
        hello = self._wait_hello(seen, t0 + timeout)
        hello["state"] = self._wait_booted(t0 + timeout)
        hello["seconds"] = round(time.monotonic() - t0, 1)
        self.boots.append(hello)
        return hello

    def _wait_booted(self, deadline: float) -> str:
        """The agent starts early: until systemd says the boot is over
        (`running`, or `degraded` when a unit failed), so that the share is
        mounted and bluetooth.service started. Returns that state."""
        left = max(10.0, deadline - time.monotonic())
        res = self.run("systemctl is-system-running --wait", timeout=left, check=False)
        state = res.out.strip()
        if state not in ("running", "degraded"):
            raise GatewayError(f"the boot did not finish: {state or res}")
        return state

    def _wait_hello(self, seen: int, deadline: float) -> dict:
        with self._cond:
            while len(self._hellos) <= seen:
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc is not None and self.proc.poll() is not None):
                    raise GatewayError(f"no agent hello (qemu {'exited' if self.proc.poll() is not None else 'running'}; "
                                       f"console: {self.console})")
                self._cond.wait(min(left, 1.0))
            return dict(self._hellos[-1])

    def reboot(self, timeout: float = 600.0) -> dict:
        """`systemctl reboot` in the guest (a clean shutdown, then the same
        qemu boots again on the same disk); returns the new boot's hello."""
        seen = len(self._hellos)
        t0 = time.monotonic()
        self._send({"id": 0, "sh": "systemctl reboot", "timeout": 30})
        hello = self._wait_hello(seen, t0 + timeout)
        if self.boots and hello["hello"] == self.boots[-1]["hello"]:
            raise GatewayError("the agent said hello again with the same boot id: no reboot happened")
        hello["state"] = self._wait_booted(t0 + timeout)
        hello["seconds"] = round(time.monotonic() - t0, 1)
        self.boots.append(hello)
        return hello

    def power_cut(self, timeout: float = 600.0) -> dict:
        """qemu SIGKILLed (no shutdown: what the guest had not written to its
        disk is lost), then booted again on the same disk."""
        self._kill()
        return self.boot(timeout)

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None

    def shutdown(self, timeout: float = 120.0) -> None:
        """`systemctl poweroff`, bounded; qemu killed if it outlives it."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            self._send({"id": 0, "sh": "systemctl poweroff", "timeout": 30})
            self.proc.wait(timeout)
        except (OSError, subprocess.TimeoutExpired, GatewayError):
            pass
        self._kill()

    # ---- commands

    def _send(self, req: dict) -> None:
        if self.sock is None:
            raise GatewayError("the gateway is not running")
        try:
            self.sock.sendall((json.dumps(req) + "\n").encode())
        except OSError as e:
            raise GatewayError(f"the agent's socket failed: {e}") from e

    def run(self, sh: str, timeout: float = 120.0, check: bool = True) -> Result:
        """One shell command in the guest, as root, bounded by `timeout`
        (the guest kills it then; rc 124). With `check`, a non-zero rc raises."""
        with self._lock:
            rid = self._next_id
            self._next_id += 1
        self._send({"id": rid, "sh": sh, "timeout": timeout})
        deadline = time.monotonic() + timeout + 30
        with self._cond:
            while rid not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc is not None and self.proc.poll() is not None):
                    raise GatewayError(f"no answer to {sh!r} (console: {self.console})")
                self._cond.wait(min(left, 1.0))
            rep = self._replies.pop(rid)
        res = Result(rep.get("rc", 125), rep.get("out", ""), rep.get("err", ""))
        if check and res.rc != 0:
            raise GatewayError(f"{sh!r} in the guest failed: {res}")
        return res

    def _read(self, sock: socket.socket) -> None:
        buf = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue  # a partial line from a boot that ended mid-write
                with self._cond:
                    if "hello" in msg:
                        self._hellos.append(msg)
                    elif isinstance(msg.get("id"), int):
                        self._replies[msg["id"]] = msg
                    self._cond.notify_all()


def make_share(root: str, deb: str, *more_debs: str) -> str:
    """The folder the guest sees at /srv/relink: the .deb (and `more_debs`,
    e.g. an earlier release to upgrade from), the bench's Python package and
    peripheral programs, the real-bluetoothd guest suites and their helpers, and the example
    lock program (copied, so the guest never sees the host's build tree)."""
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(os.path.join(root, "deb"))
    for d in (deb, *more_debs):
        shutil.copy2(d, os.path.join(root, "deb", os.path.basename(d)))
    bench = os.path.join(REPO, "bench")
    shutil.copytree(os.path.join(bench, "relinkbench"), os.path.join(root, "bench", "relinkbench"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("run-bench", "benchctl"):
        shutil.copy2(os.path.join(bench, f), os.path.join(root, "bench", f))
    # The real-bluetoothd bench and its guest suites (the restart-survival
    # suite runs in a gateway too: bench/gateway/tests/test_survival.py),
    # with the test helper they start the bench with.
    shutil.copytree(os.path.join(bench, "realbluez"), os.path.join(root, "bench", "realbluez"),
                    ignore=shutil.ignore_patterns("__pycache__", "tests"))
    os.makedirs(os.path.join(root, "bench", "tests"))
    shutil.copy2(os.path.join(bench, "tests", "benchproc.py"), os.path.join(root, "bench", "tests", "benchproc.py"))
    # The peripheral role's guest suites drive a remote central with the
    # simulated bench's helpers (bench/gateway/tests/test_roles.py).
    os.makedirs(os.path.join(root, "bench", "e2e", "tests"))
    for helper in ("e2e_harness.py", "pbench_fixtures.py", "remote_central.py"):
        shutil.copy2(os.path.join(bench, "e2e", "tests", helper), os.path.join(root, "bench", "e2e", "tests", helper))
    # The example lock program and its relaunch files (docs/relaunch.md).
    for example in ("python-lock", "python-common"):
        shutil.copytree(os.path.join(REPO, "examples", example), os.path.join(root, "examples", example),
                        ignore=shutil.ignore_patterns("__pycache__", ".venv"))
    return root
