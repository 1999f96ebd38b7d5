"""Issue 39 on real bluetoothd 5.66, inside the VM: the peripheral role used
by a program run as an ordinary Unix user (`nobody`: not root, not relink),
through relinkd run as relink on a system bus whose policy for org.relink is
the shipped systemd/org.relink.conf (the guest installs it), as on a gateway.
The program (user_peripheral_program.py) registers, publishes the hub's
service and advertises; a remote central on hci2 (plain org.bluez calls,
bench/e2e/tests/remote_central.py) discovers it, connects, reads, writes
(the writes reach the program as write-request events), subscribes and
gets the program's value. Before issue 39's policy change, the program's
first PeripheralManager1 call was refused by the bus (AccessDenied).
Run by bench/realbluez/tests/test_real_peripheral.py with RELINK_REALBLUEZ=full."""

import json
import os
import pwd
import queue
import subprocess
import sys
import threading
import time

import pytest

from realenv import IN_GUEST, LOGDIR, REPO, bluez_get, ctl_ok, lock_world, wait_for

sys.path.insert(0, os.path.join(REPO, "bench", "e2e", "tests"))
from pbench_fixtures import COMMAND, LOCAL_NAME, SERVICE, STATIC, STREAM  # noqa: E402
from remote_central import RemoteCentral, full_uuid  # noqa: E402
from test_peripheral_guest import SYSTEM_BUS, active_advertisements, discover  # noqa: E402

pytestmark = pytest.mark.skipif(
    not IN_GUEST, reason="runs inside the real-BlueZ VM (bench/realbluez/tests/test_real_peripheral.py)")

USER = "nobody"
IDENTIFIER = "org.example.user-hub"
PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "user_peripheral_program.py")


@pytest.fixture
def world():
    # The bench wants a peripheral: the lock takes hci1, the remote central hci2.
    yield from lock_world("peripheral-user.json")


class UserProgram:
    """user_peripheral_program.py run as USER with setpriv (its own UID and
    group, no others), driven line by line; every wait is bounded."""

    def __init__(self, user: str, identifier: str):
        entry = pwd.getpwnam(user)
        self.uid = entry.pw_uid
        self.stderr = open(os.path.join(LOGDIR, "user-program.log"), "ab")
        self.proc = subprocess.Popen(
            ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups", "--",
             "env", "-i", "PYTHONDONTWRITEBYTECODE=1", f"DBUS_SYSTEM_BUS_ADDRESS={SYSTEM_BUS}",
             sys.executable, PROGRAM, identifier],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True, cwd="/")
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def reply(self, timeout: float) -> dict:
        try:
            answer = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the program as {USER} said nothing in {timeout} s (log: user-program.log)")
        assert answer is not None, f"the program as {USER} exited with {self.proc.poll()} (log: user-program.log)"
        assert "error" not in answer, f"the program as {USER}: {answer['error']}"
        return answer

    def ask(self, timeout: float = 30, **cmd) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self.reply(timeout + 5)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


def test_the_peripheral_role_for_a_program_of_an_ordinary_user(world):
    bench, relinkd, figures = world
    address = bluez_get("/org/bluez/hci0", "org.bluez.Adapter1", "Address")
    assert address, "hci0 has no address"
    relinkd.start()
    t0 = time.monotonic()
    program = UserProgram(USER, IDENTIFIER)
    central = RemoteCentral(SYSTEM_BUS, "hci2")
    try:
        hello = program.reply(60)
        assert hello.get("published") and hello["uid"] == program.uid and program.uid not in (0, pwd.getpwnam("relink").pw_uid), hello
        figures["user"] = {"name": USER, "uid": program.uid}
        # The identifier is the user's: root's Status shows it among theirs
        # (a published service, against their bounds).
        status = json.loads(ctl_ok("--json", "status"))
        assert IDENTIFIER in [i["id"] for i in status["identifiers"]], status
        use = next((u["use"] for u in status.get("quotas", {}).get("users", []) if u["uid"] == program.uid), None)
        assert use and use["identifiers"] == 1 and use["publishedServices"] == 1, status.get("quotas")
        figures["quota_use"] = use

        wait_for(lambda: active_advertisements() >= 1, 15, "relinkd's advertisement (the user's) registered with bluetoothd")
        discover(central)
        central.connect(address, timeout=30)
        wait_for(lambda: full_uuid(SERVICE) in central.services(address), 20, "the user's service on the remote central")
        figures["published_to_services_on_central_s"] = round(time.monotonic() - t0, 2)
        assert central.read(central.char_path(address, SERVICE, STATIC)) == b"S1"

        # Writes reach the program (as in test_peripheral_guest: bluetoothd
        # 5.66 hands both kinds to relinkd without a reply expected).
        command = central.char_path(address, SERVICE, COMMAND)
        central.write(command, b"open", with_response=False)
        first = program.ask(cmd="wait_event", kind="write-request", timeout=15)
        assert first["payload"]["writeRequest"]["value"] == list(b"open"), first
        central.write(command, b"shut", with_response=True)
        second = program.ask(cmd="wait_event", kind="write-request", after=first["sequence"], timeout=15)
        assert second["payload"]["writeRequest"]["value"] == list(b"shut"), second
        figures["write_requests"] = [first["payload"], second["payload"]]

        # The central subscribes; the program hears of it and notifies.
        stream = central.char_path(address, SERVICE, STREAM)
        central.start_notify(stream)
        program.ask(cmd="wait_event", kind="subscribed", timeout=15)
        program.ask(cmd="update", hex="2a")
        wait_for(lambda: b"\x2a" in central.notifications(stream), 15, "the user's value at the central")
        program.ask(cmd="ack")
        figures["published_to_value_at_central_s"] = round(time.monotonic() - t0, 2)
    finally:
        program.close()
        central.close()
