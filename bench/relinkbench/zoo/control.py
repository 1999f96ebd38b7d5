"""org.relinkbench.Zoo1 on /org/relinkbench: the launcher's handle on the
patched BlueZoo (not part of the BlueZ API; not under the ObjectManager)."""

import json

import sdbus

from bluezoo.utils import dbus_method_async_except_logging

from . import pair_calls, privacy
from .config import CONFIG, RssiModel


class ZooControl(sdbus.DbusInterfaceCommonAsync, interface_name="org.relinkbench.Zoo1"):

    def __init__(self, mock):
        super().__init__()
        self.mock = mock

    @sdbus.dbus_method_async(input_signature="snn", input_args_names=["address", "base", "noise"],
                             flags=sdbus.DbusUnprivilegedFlag)
    @dbus_method_async_except_logging
    async def SetRSSI(self, address: str, base: int, noise: int) -> None:
        CONFIG.rssi[address.upper()] = RssiModel(base, max(0, noise))

    @sdbus.dbus_method_async(input_signature="dd",
                             input_args_names=["connect_timeout", "supervision_timeout"],
                             flags=sdbus.DbusUnprivilegedFlag)
    @dbus_method_async_except_logging
    async def SetTiming(self, connect_timeout: float, supervision_timeout: float) -> None:
        CONFIG.connect_timeout = connect_timeout
        CONFIG.supervision_timeout = supervision_timeout

    @sdbus.dbus_method_async(input_signature="u", input_args_names=["instances"], flags=sdbus.DbusUnprivilegedFlag)
    @dbus_method_async_except_logging
    async def SetAdvertisingInstances(self, instances: int) -> None:
        """Patch 24: each adapter's controller now sends this many advertisements
        at once; those already registered stay."""
        CONFIG.advertising_instances = instances

    @sdbus.dbus_method_async(input_signature="ssu", input_args_names=["address", "method", "passkey"],
                             flags=sdbus.DbusUnprivilegedFlag)
    @dbus_method_async_except_logging
    async def SetPairingMethod(self, address: str, method: str, passkey: int) -> None:
        """Patch 26: what the peripheral adapter at `address` demands of the
        central's agent to pair ("just-works", "confirmation", "passkey")."""
        CONFIG.pairing[address.upper()] = (method, passkey)

    @sdbus.dbus_method_async(input_signature="s", result_signature="s", input_args_names=["address"], result_args_names=["rpa"],
                             flags=sdbus.DbusUnprivilegedFlag)
    @dbus_method_async_except_logging
    async def RotateAddress(self, address: str) -> str:
        """Patch 27: the private adapter at `address` (its identity) takes a
        new resolvable private address now; returns it ("" without privacy)."""
        return privacy.rotate(address) or ""

    @sdbus.dbus_method_async(result_signature="s", flags=sdbus.DbusUnprivilegedFlag)
    @dbus_method_async_except_logging
    async def GetState(self) -> str:
        adapters = {}
        for a in self.mock.adapters.values():
            uuids = a.auto_connect_uuids()
            adapters[a.get_object_path()] = {
                "address": a.address, "air_address": privacy.air_address(a), "powered": a.powered,
                "advertisements": len(a.advertisements), "applications": len(a.gatt_apps),
                "discovering": a.discovering, "sessions": sorted(a.sessions),
                "devices": {p: {"connected": d.connected, "address": d.address, "rssi": d.rssi, "name": d.name_,
                                "auto_connect": d.on_auto_connect_list(uuids)}
                            for p, d in a.devices.items()},
            }
        return json.dumps({"adapters": adapters, "scan_interval": CONFIG.scan_interval,
                           "connect_timeout": CONFIG.connect_timeout,
                           "supervision_timeout": CONFIG.supervision_timeout,
                           "gap_service": CONFIG.gap_service, "advertising_instances": CONFIG.advertising_instances,
                           "pair_calls": pair_calls.load()})
