"""relinkd's peripheral role with characteristics that need an encrypted
link (issue 24): a remote central that has not paired is refused a read
of an `encrypt-read` characteristic, a notification session of an
`encrypt-notify` one and a read of an `encrypt-read` descriptor, as
bluetoothd refuses it (org.bluez.Error.NotPermitted "Not paired", BlueZoo
patch 22); once it paired (Just Works) it is served, and it still is
after a relinkd SIGKILL, when relinkd registers the service again with
the same flags by itself."""

import pytest

from e2e_harness import DBusCallError, wait_until
from pbench_fixtures import RELINKD_ADDRESS
from remote_central import full_uuid

SECRET_SERVICE = "8e7f3b00-4b2c-4d1e-9a3f-72656c696e6b"
SECRET = "8e7f3b01-4b2c-4d1e-9a3f-72656c696e6b"      # static value, encrypted read
ALARM = "8e7f3b02-4b2c-4d1e-9a3f-72656c696e6b"       # notify over an encrypted link only
LABEL = "00002901-0000-1000-8000-00805f9b34fb"        # descriptor of SECRET, encrypted read

SECRET_SERVICE_JSON = {
    "uuid": SECRET_SERVICE,
    "characteristics": [
        {"uuid": SECRET, "properties": ["read"], "permissions": ["encrypt-read"], "value": list(b"K1"),
         "descriptors": [{"uuid": "2901", "value": list(b"key"), "permissions": ["readEncryptionRequired"]}]},
        {"uuid": ALARM, "properties": ["notifyEncryptionRequired"], "permissions": []},
    ],
}

GATT_DESC = "org.bluez.GattDescriptor1"


def not_paired(call) -> None:
    with pytest.raises(DBusCallError) as e:
        call()
    assert (e.value.name, e.value.text) == ("org.bluez.Error.NotPermitted", "Not paired")


def descriptor_path(central, characteristic_path: str) -> str:
    for path, ifaces in central.objects().items():
        d = ifaces.get(GATT_DESC)
        if path.startswith(characteristic_path + "/") and d and d.get("UUID") == LABEL:
            return path
    raise AssertionError(f"no descriptor {LABEL} under {characteristic_path}")


def test_an_unpaired_central_is_refused_and_a_paired_one_is_served_also_after_a_relinkd_sigkill(hub):
    c, program = hub.central, hub.program
    program.publish(SECRET_SERVICE_JSON)
    hub.connect()
    wait_until(lambda: full_uuid(SECRET_SERVICE) in c.services(RELINKD_ADDRESS), 15, "the secret service")
    secret = c.char_path(RELINKD_ADDRESS, SECRET_SERVICE, SECRET)
    alarm = c.char_path(RELINKD_ADDRESS, SECRET_SERVICE, ALARM)
    label = descriptor_path(c, secret)
    assert c.get(secret, "org.bluez.GattCharacteristic1", "Flags") == ["read", "encrypt-read"]
    assert c.get(label, GATT_DESC, "Flags") == ["read", "encrypt-read"]

    not_paired(lambda: c.read(secret))
    not_paired(lambda: c.bluez(label, GATT_DESC, "ReadValue", "a{sv}", [{}]))
    not_paired(lambda: c.start_notify(alarm))

    # The remote central pairs (Just Works: BlueZoo pairs through a NoInputNoOutput agent).
    c.bluez("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", "os", ["/org/example/agent", "NoInputNoOutput"])
    c.bluez(c.device_path(RELINKD_ADDRESS), "org.bluez.Device1", "Pair")
    assert c.read(secret) == b"K1"
    assert bytes(c.bluez(label, GATT_DESC, "ReadValue", "a{sv}", [{}])[0]) == b"key"
    c.start_notify(alarm)
    program.wait_event("subscribed")
    program.update(SECRET_SERVICE, ALARM, b"\x01")
    wait_until(lambda: c.notifications(alarm) == [b"\x01"], 15, "the alarm notified to the paired central")

    # relinkd restarts: it registers the service again with the same flags; the bond still serves.
    hub.relinkd.kill9()
    hub.relinkd.start()
    if not c.connected(RELINKD_ADDRESS):
        c.connect(RELINKD_ADDRESS)  # not forget + discover: RemoveDevice would remove the bond
    wait_until(lambda: full_uuid(SECRET_SERVICE) in c.services(RELINKD_ADDRESS), 30, "the secret service again")
    secret = c.char_path(RELINKD_ADDRESS, SECRET_SERVICE, SECRET)
    assert c.get(secret, "org.bluez.GattCharacteristic1", "Flags") == ["read", "encrypt-read"]
    assert wait_until(lambda: c.read(secret) == b"K1", 15, "the secret read over the bond after the restart")
