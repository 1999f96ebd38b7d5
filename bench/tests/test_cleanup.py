"""No process of a bench survives it, however it ends."""

import json
import os
import signal
import subprocess
import time

import pytest

from benchproc import BENCH, RUN_BENCH, BenchProcess, alive, bench_processes

BENCHCTL = os.path.join(BENCH, "benchctl")


def wait_gone(pids, timeout=10.0):
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids):
        assert time.monotonic() < deadline, [p for p in pids if alive(p)]
        time.sleep(0.05)


def started() -> tuple[BenchProcess, list[int]]:
    b = BenchProcess()
    pids = bench_processes(b.dir)
    # dbus-daemon, BlueZoo, lock, band: each carries the bench dir in its argv.
    assert len(pids) == 4, pids
    return b, pids


def test_stdin_eof_stops_everything_and_removes_the_dir():
    b, pids = started()
    assert b.stop() == 0
    wait_gone(pids + [b.proc.pid])
    assert bench_processes(b.dir) == []
    assert not os.path.exists(b.dir)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_everything(sig):
    b, pids = started()
    b.proc.send_signal(sig)
    assert b.proc.wait(20) == 0
    wait_gone(pids)
    assert bench_processes(b.dir) == []
    assert not os.path.exists(b.dir)


def test_sigkilled_launcher_takes_its_children_down():
    b, pids = started()
    b.proc.send_signal(signal.SIGKILL)
    b.proc.wait(5)
    wait_gone(pids)   # PR_SET_PDEATHSIG
    assert bench_processes(b.dir) == []
    subprocess.run(["rm", "-rf", b.dir], check=True)


def test_stop_command_and_benchctl():
    b, pids = started()
    out = subprocess.run([BENCHCTL, "--dir", b.dir, "get", "lock"], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["state"] in ("locked", "unlocked")
    bad = subprocess.run([BENCHCTL, "--dir", b.dir, "out_of_range", "nosuch"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1 and "unknown peripheral" in bad.stdout
    out = subprocess.run([BENCHCTL, "--dir", b.dir, "stop"], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0
    assert b.proc.wait(20) == 0
    wait_gone(pids)
    assert not os.path.exists(b.dir)


def test_failed_start_leaves_nothing_behind(tmp_path):
    # No dbus-daemon on PATH: the bench reports the error and cleans up.
    env = dict(os.environ, PATH="/nonexistent")
    parent = tmp_path / "benches"
    parent.mkdir()
    p = subprocess.run([RUN_BENCH, "--tmp", str(parent)], env=env, capture_output=True,
                       text=True, timeout=30, stdin=subprocess.DEVNULL)
    first = json.loads(p.stdout.splitlines()[0])
    assert first["event"] == "error" and p.returncode != 0
    assert list(parent.iterdir()) == []
    assert bench_processes(str(parent)) == []


def test_bad_options_are_refused():
    p = subprocess.run([RUN_BENCH, "--lock", "x", "--band", "x"], capture_output=True,
                       text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode == 2
    assert "used twice" in json.loads(p.stdout.splitlines()[0])["error"]
