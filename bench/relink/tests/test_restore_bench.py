"""Tests of the restoration benchmark: its pure helpers, and one short run of
both contenders on a real bench (needs the release relinkd:
`scripts/build-release.sh relinkd`).

  .venv/bin/python -m pytest bench/relink/tests
"""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import restore_bench  # noqa: E402

ROOT = restore_bench.ROOT
RELINKD = os.path.join(ROOT, ".build", "release", "relinkd")


def test_probe_values_round_trip_and_foreign_values_are_ignored():
    raw = bytes.fromhex(restore_bench.probe_hex(7, 1234))
    assert restore_bench.parse_probe(raw) == (7, 1234)
    assert restore_bench.parse_probe(b"locked") is None
    assert restore_bench.parse_probe(b"p1") is None
    assert restore_bench.parse_probe(b"\xff\xfe") is None


def test_contender_kinds_name_a_build_and_a_client():
    bench = restore_bench.Bench(1, 20.0, "/nonexistent")
    plain = restore_bench.relinkd_contender("relinkd", bench, "/tmp", "/bin/relinkd", 5)
    assert (plain.name, plain.binary, plain.client) == ("relinkd", "/bin/relinkd", "process")
    other = restore_bench.relinkd_contender("relinkd=/old/relinkd@signal", bench, "/tmp", "/bin/relinkd", 5)
    assert (other.name, other.binary, other.client) == ("relinkd=/old/relinkd@signal", "/old/relinkd", "signal")
    assert restore_bench.relinkd_contender("bleak", bench, "/tmp", "/bin/relinkd", 5) is None
    with pytest.raises(restore_bench.BenchFailure, match="unknown relinkd client"):
        restore_bench.relinkd_contender("relinkd@carrier-pigeon", bench, "/tmp", "/bin/relinkd", 5)


def test_the_relinkd_client_reads_the_value_of_a_value_notified_payload():
    sys.path.insert(0, os.path.join(ROOT, "bench", "relink"))
    import relinkd_client
    payload = json.dumps({"valueNotified": {"characteristic": {"characteristic": "c", "service": "s"},
                                            "peripheral": {"uuid": "u"}, "value": list(b"p0.7")}})
    assert relinkd_client.value_of(payload) == b"p0.7"
    assert relinkd_client.value_of("not json") is None
    assert relinkd_client.value_of(json.dumps({"c": {"value": [300]}})) is None


def test_fit_recovers_a_line_and_reports_a_poor_one():
    a, b, r2 = restore_bench.fit([1, 2, 4, 8], [0.1 + 0.01 * n for n in (1, 2, 4, 8)])
    assert a == pytest.approx(0.1) and b == pytest.approx(0.01) and r2 == pytest.approx(1.0)
    assert restore_bench.fit([1, 2, 4, 8], [1.0, 0.0, 1.0, 0.0])[2] < 0.5


def test_the_tail_row_is_the_mean_and_the_nearest_rank_90th_percentile():
    assert restore_bench.fmt_tail([i / 1000 for i in range(1, 11)]).split() == ["5.5;", "9.0"]
    # 4 of 30 samples a probe period late: the median hides it, these do not.
    late = [0.020] * 26 + [0.040] * 4
    assert restore_bench.fmt_tail(late).split() == ["22.7;", "40.0"]


def test_the_bluez_backend_has_its_own_defaults_and_a_bound_on_locks():
    mock = restore_bench.parse_args([])
    assert (mock.backend, mock.links, mock.probe_ms, mock.contenders) == ("mock", [1, 2, 4, 8], [2.0, 20.0],
                                                                          ["relinkd", "bleak"])
    real = restore_bench.parse_args(["--backend", "bluez", "--reps", "2"])
    assert (real.reps, real.links, real.probe_ms, real.contenders) == (2, [1, 2, 4], [20.0],
                                                                       ["relinkd", "bleak", "relay"])
    with pytest.raises(SystemExit):  # btvirt: 16 controllers, one of them the central
        restore_bench.parse_args(["--backend", "bluez", "--links", "1,16"])


def test_inside_the_vm_the_same_arguments_run_with_json_in_the_vm_log_directory():
    argv = ["--backend", "bluez", "--json", "/host/out.json", "--links=1,2", "--relinkd", "rel/relinkd"]
    args = restore_bench.parse_args(argv)
    guest = restore_bench.guest_argv(args, argv, "/logs")
    assert guest[1] == os.path.join(ROOT, "bench", "relink", "restore_bench.py")
    rest = guest[2:]
    assert "/host/out.json" not in rest and rest[-2:] == ["--json", "/logs/figures.json"]
    inside = restore_bench.parse_args(rest)
    assert (inside.relinkd, inside.links) == (os.path.abspath("rel/relinkd"), [1, 2])  # the VM's cwd may differ


def test_a_failed_turn_is_a_row_of_the_table_and_keeps_the_samples_before_it(capsys):
    results: dict = {}
    fig = restore_bench.Figures(results, "bleak-retry-connector", "in_range_20ms")
    fig[""].extend([1.5, 2.5])
    fig.fail("BenchFailure: no probe from links [0] in 60 s")
    restore_bench.Figures(results, "relinkd", "in_range_20ms")[""].extend([1.0, 1.2, 1.1])
    args = restore_bench.parse_args(["--backend", "bluez", "--links", "1", "--once-reps", "0"])
    rows = restore_bench.table_rows(args, results)
    assert ("  FAILED (no value in the bound)", "in_range_20ms_failed") in rows
    assert not any(key.startswith("restore_1_") for _, key in rows)  # no failure there: no row
    restore_bench.report(results, args)
    out = capsys.readouterr().out
    failed = next(line for line in out.splitlines() if "FAILED (no value" in line)
    assert "1 turn(s)" in failed and "n/a" in failed  # relinkd did not fail
    assert "2000.0 (1500-2500)" in out and "1100.0 (1000-1200)" in out
    assert "bleak-retry-connector: FAILED in_range_20ms: BenchFailure: no probe" in out


def test_the_link_watch_takes_services_resolved_for_the_link_up_when_no_connected_signal_came():
    from dbus_fast import Message, MessageType, Variant

    path = "/org/bluez/hci0/dev_00_AA_01_01_00_01"
    watch = restore_bench.LinkWatch(None, path)

    def device(**props):
        watch._on(Message(message_type=MessageType.SIGNAL, path=path, interface="org.freedesktop.DBus.Properties",
                          member="PropertiesChanged", signature="sa{sv}as",
                          body=["org.bluez.Device1", {k: Variant("b", v) for k, v in props.items()}, []]))

    device(Connected=True)                  # the mock, and real bluetoothd at times
    device(ServicesResolved=True)           # the same link: not a second link-up
    assert (watch.ups.qsize(), watch.fallbacks) == (1, 0)
    device(Connected=False, ServicesResolved=False)
    device(ServicesResolved=True)           # real bluetoothd 5.66 after Device1.Connect
    device(ServicesResolved=True)
    assert (watch.ups.qsize(), watch.fallbacks) == (2, 1)


def processes_mentioning(marker: str) -> list[str]:
    """Processes whose command line or environment contains marker."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if marker.encode() in cmd or marker.encode() in env:
            found.append(cmd.replace(b"\0", b" ").decode("utf-8", "replace"))
    return found


@pytest.mark.skipif(not os.access(RELINKD, os.X_OK), reason="release relinkd not built")
def test_a_short_run_measures_both_contenders_and_leaves_nothing_behind(tmp_path):
    out = tmp_path / "figures.json"
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "relink", "restore_bench.py"),
                        "--relinkd", RELINKD, "--reps", "1", "--reps-in-range", "1",
                        "--contenders", "relinkd,relay,bleak", "--once-reps", "1",
                        "--links", "1,2", "--probe-ms", "2,20", "--json", str(out)],
                       capture_output=True, text=True, timeout=240,
                       env=dict(os.environ, TMPDIR=str(tmp_path)))  # every child inherits it
    assert p.returncode == 0, p.stderr[-3000:]
    results = json.loads(out.read_text())["results"]
    assert set(results) == {"relinkd", "relay (floor)", "bleak-retry-connector"}
    for name, figures in results.items():
        keys = ["in_range_2ms", "in_range_20ms"]
        if name == "relay (floor)":
            assert "restore_1" not in figures  # it keeps nothing to restore
        else:
            keys += ["restore_1", "restore_2"]
        for key in keys:
            assert len(figures[key]) == 1 and 0 < figures[key][0] < 60, (key, figures)
        # The link-up stamp is the benchmark's own bus watch, in its own
        # busy process: a client in another process may read a value a
        # little before the watch reads the link coming up.
        for key in ("in_range_2ms_after_link_up", "in_range_20ms_after_link_up"):
            assert len(figures[key]) == 1 and -0.005 < figures[key][0] < 60, (key, figures)
        for key in ("in_range_2ms", "in_range_20ms"):
            assert figures[key + "_after_link_up"][0] < figures[key][0], (key, figures)
            assert figures[key + "_after_first_value_on_bus"][0] < figures[key + "_after_link_up"][0], (key, figures)
            assert len(figures[key + "_dropped"]) == 1 and figures[key + "_dropped"][0] >= 0, (key, figures)
    # relinkd delivers the first value bluetoothd delivered after the
    # reconnection (the peer may drop some: its callback comes later).
    assert results["relinkd"]["in_range_2ms_dropped"] == [0], results["relinkd"]
    assert results["relinkd"]["in_range_20ms_dropped"] == [0], results["relinkd"]
    # So does the floor, whose notify session bluetoothd keeps and re-arms.
    assert results["relay (floor)"]["in_range_20ms_dropped"] == [0], results["relay (floor)"]
    # A lock that sends its state once as its session is re-armed: relinkd
    # and the floor deliver it (the peer may miss it: its callback is not
    # registered again yet).
    for name in ("relinkd", "relay (floor)"):
        assert results[name]["once_missed"] == [0], (name, results[name])
        assert len(results[name]["once"]) == 1 and 0 < results[name]["once"][0] < 5, (name, results[name])
    assert len(results["bleak-retry-connector"]["once_missed"]) == 1
    assert "state sent once at re-arm" in p.stdout and "missed (lost for good)" in p.stdout
    assert "n/a" in next(line for line in p.stdout.splitlines() if line.startswith("restart -> 1 link"))
    assert "restart -> 2 link(s) restored" in p.stdout
    assert "back in range, probe 2 ms" in p.stdout and "back in range, probe 20 ms" in p.stdout
    assert "values dropped (total)" in p.stdout and "mean; 90th percentile" in p.stdout
    assert processes_mentioning(str(tmp_path)) == []
    assert [d.name for d in tmp_path.iterdir()] == ["figures.json"]  # work and bench directories gone


TORTURE = os.path.join(ROOT, ".build", "release", "relink-store-torture")


@pytest.mark.skipif(not (os.access(RELINKD, os.X_OK) and os.access(TORTURE, os.X_OK)),
                    reason="release relinkd and relink-store-torture not built")
def test_the_startup_benchmark_reports_ready_time_and_memory(tmp_path):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "relink", "startup_bench.py"),
                        "--identifiers", "3", "--per-identifier", "2", "--runs", "1"],
                       capture_output=True, text=True, timeout=240, env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert p.returncode == 0, p.stderr[-3000:]
    assert "3 identifiers, 6 connection intents: ready median" in p.stdout, p.stdout
    assert processes_mentioning("relink-startup-") == []
