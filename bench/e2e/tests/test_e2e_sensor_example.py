"""The Python peripheral-role example (examples/python-sensor, issue 23)
against relinkd on the bench, with a remote central on another adapter:
it publishes and advertises, answers reads and writes, updates its level;
SIGKILLed, relinkd answers the cached level and stores the central's
writes, which the restarted example gets once, in order, after its
restored state (services not published again); relinkd SIGKILLed under it:
it registers again and the central, subscribed again, gets its updates."""

import os
import shutil
import tempfile

from e2e_harness import ROOT, ExampleClient, Relinkd, wait_until
from pbench_fixtures import RELINKD_ADDRESS
from remote_central import RemoteCentral, full_uuid

SERVICE = "8e7f4a00-4b2c-4d1e-9a3f-72656c696e6b"
LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
UPTIME = "8e7f4a01-4b2c-4d1e-9a3f-72656c696e6b"
COMMAND = "8e7f4a02-4b2c-4d1e-9a3f-72656c696e6b"


class SensorClient(ExampleClient):
    module = "relink_sensor"
    directory = os.path.join(ROOT, "examples", "python-sensor")



def lines_of(client: ExampleClient, kind: str) -> list[dict]:
    return [l for l in client.snapshot() if l.get("type") == kind]


def test_the_sensor_example_serves_a_remote_central_across_its_crash_and_relinkds(pbench):
    work = tempfile.mkdtemp(prefix="relink-sensor-")
    relinkd = Relinkd(pbench.bus, os.path.join(work, "state"), os.path.join(work, "relinkd.log")).start()
    central = RemoteCentral(pbench.bus, pbench.peripherals["remote"]["adapter"])
    sensors: list[SensorClient] = []

    def start() -> SensorClient:
        s = SensorClient(pbench.bus, "example-sensor", "--interval", "0.2")
        sensors.append(s)
        return s
    try:
        sensor = start()
        sensor.wait_for(lambda l: l.get("type") == "advertising", 15, "advertising")
        central.discover("Sensor-1")
        central.connect(RELINKD_ADDRESS)
        wait_until(lambda: full_uuid(SERVICE) in central.services(RELINKD_ADDRESS), 15, "the sensor service")
        path = {c: central.char_path(RELINKD_ADDRESS, SERVICE, c) for c in (LEVEL, UPTIME, COMMAND)}
        assert len(central.read(path[UPTIME])) == 4
        sensor.wait_for(lambda l: l.get("type") == "read" and l["characteristic"] == UPTIME, 10, "the uptime read")
        central.write(path[COMMAND], b"\x01")
        sensor.wait_for(lambda l: l.get("type") == "write" and l["value"] == "01" and l["request"] > 0, 10, "the write")
        central.start_notify(path[LEVEL])
        sensor.wait_for(lambda l: l.get("type") == "subscribed", 10, "subscribed")
        wait_until(lambda: central.notifications(path[LEVEL]), 10, "a level notification")

        # The example is SIGKILLed: relinkd answers the cached level and keeps the writes.
        sensor.kill9()
        last_level = lines_of(sensor, "update")[-1]["level"]
        assert central.read(path[LEVEL]) == bytes([last_level])
        central.write(path[COMMAND], b"\x02")
        central.write(path[COMMAND], b"\x03", with_response=False)

        sensor = start()
        first = sensor.wait_for(lambda l: l.get("type") == "restored", 15, "the restored state")
        assert sensor.snapshot()[0] is first, "the restored state comes first"
        assert first["services"] == [SERVICE] and first["advertising"] is True
        assert first["subscribers"] == [[LEVEL, ["unknown"]]]
        sensor.wait_for(lambda l: l.get("type") == "write" and l["value"] == "03", 10, "the stored writes")
        writes = [(l["value"], l["request"], l["with_response"]) for l in lines_of(sensor, "write")]
        assert writes == [("02", 0, True), ("03", 0, False)], "each stored write once, in order"
        assert not lines_of(sensor, "published"), "the restored services are not published again"
        before = len(central.notifications(path[LEVEL]))
        wait_until(lambda: len(central.notifications(path[LEVEL])) > before, 10, "updates from the new run")

        # relinkd is SIGKILLed under the running example.
        relinkd.kill9()
        relinkd.start()
        sensor.wait_for(lambda l: l.get("type") == "relinkd" and l["present"], 15, "relinkd back")
        wait_until(lambda: len(lines_of(sensor, "restored")) == 2, 15, "registered again")
        wait_until(lambda: full_uuid(SERVICE) in central.services(RELINKD_ADDRESS), 15, "the service again")
        level = central.char_path(RELINKD_ADDRESS, SERVICE, LEVEL)
        central.start_notify(level)
        before = len(central.notifications(level))
        wait_until(lambda: len(central.notifications(level)) > before, 10, "updates after relinkd's restart")
        assert sensor.terminate() == 0
    finally:
        for s in sensors:
            s.kill9()
        central.disconnect(RELINKD_ADDRESS)
        central.close()
        relinkd.kill9()
        shutil.rmtree(work, ignore_errors=True)
