"""Adapter1, patched: per-client discovery sessions and filters (applied),
power-off that drops links, peripherals whose application vanishes, and
GattManager1 applications whose GattProfile1 objects ask for background
auto-connect."""

from typing import Any, Optional

import sdbus

from bluezoo import events
from bluezoo.adapter import Adapter
from bluezoo.adv.manager import LEAdvertisingManager
from bluezoo.exceptions import (DBusBluezAlreadyExistsError, DBusBluezDoesNotExistError,
                                DBusBluezFailedError, DBusBluezInProgressError,
                                DBusBluezNotReadyError)
from bluezoo.gatt import GattManager
from bluezoo.gatt.service import GattServiceClient
from bluezoo.log import logger
from bluezoo.utils import (BluetoothUUID, NoneTask, create_background_task,
                           dbus_method_async_except_logging, dbus_property_async_except_logging)

from bluezoo.gatt.application import GattApplicationClient

from . import bonds, privacy
from .discovery_filter import DiscoveryFilter
from .gap import RESERVED_HANDLES, GapDatabase, refused_service


class BenchAdapter(Adapter):

    def __init__(self, mock, id: int, address: str):
        super().__init__(mock, id, address)
        # D-Bus client -> service-lost subscription, one per discovery session
        self.sessions: dict[str, Any] = {}
        # D-Bus client -> its filter (kept until it sets another or leaves the bus)
        self.filters: dict[str, DiscoveryFilter] = {}
        self.filter_subscriptions: dict[str, Any] = {}
        # (D-Bus client, application path) -> the service UUIDs of its
        # GattProfile1 objects, read once at RegisterApplication (bluetoothd
        # never reads them again: a client changes them by registering anew).
        self.profiles: dict[tuple[str, str], frozenset[BluetoothUUID]] = {}
        # bluetoothd's own GAP service, named by the adapter's Alias; the
        # applications' handles start after it.
        self.gap_database = GapDatabase(self)
        self.gatt_handle_counter = RESERVED_HANDLES
        self.gatt_handles.update(range(1, RESERVED_HANDLES + 1))

    def auto_connect_uuids(self) -> frozenset[BluetoothUUID]:
        """Service UUIDs of every registered application's GattProfile1
        objects: known devices offering one are auto-connected."""
        live = [uuids for key, uuids in self.profiles.items() if key in self.gatt_apps]
        return frozenset().union(*live) if live else frozenset()

    def active_filters(self) -> list[Optional[DiscoveryFilter]]:
        """The filter of every client with a discovery session (None: no filter)."""
        return [self.filters.get(sender) for sender in self.sessions]

    def is_peripheral_connected(self) -> bool:
        """True while a central holds a link to this adapter (then it stops
        advertising, as a controller does on connection)."""
        return any(d.connected for d in self.devices.values())

    async def _start_scanning(self) -> None:
        if self.discovering_task.done():
            self.discovering_task = self.mock.create_discovering_task(self.id)
        if not self.discovering:
            await self.Discovering.set_async(True)

    async def _stop_scanning(self) -> None:
        self.discovering_task.cancel()
        self.discovering_task = NoneTask()
        if self.discovering:
            await self.Discovering.set_async(False)
        # BlueZ's discovery_cleanup(): found devices lose their RSSI (the
        # property is invalidated), so the first report of the next discovery
        # is always signalled. Clients such as bleak rely on that.
        for dev in self.devices.values():
            dev.forget_rssi()

    def _drop_all_sessions(self) -> None:
        for sub in list(self.sessions.values()) + list(self.filter_subscriptions.values()):
            sub.unsubscribe()
        self.sessions.clear()
        self.filters.clear()
        self.filter_subscriptions.clear()

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def StartDiscovery(self) -> None:
        sender = sdbus.get_current_message().sender
        if not self.powered:
            raise DBusBluezNotReadyError("Resource Not Ready")
        if sender in self.sessions:
            raise DBusBluezInProgressError("Operation already in progress")
        logger.info(f"Starting discovery on {self} for {sender}")

        async def on_sender_lost():
            self.sessions.pop(sender, None)
            if not self.sessions:
                await self._stop_scanning()

        self.sessions[sender] = events.subscribe(f"service:lost:{sender}", on_sender_lost, once=True)
        await self._start_scanning()

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def StopDiscovery(self) -> None:
        sender = sdbus.get_current_message().sender
        if not self.powered:
            raise DBusBluezNotReadyError("Resource Not Ready")
        sub = self.sessions.pop(sender, None)
        if sub is None:
            raise DBusBluezFailedError("No discovery started")
        sub.unsubscribe()
        logger.info(f"Stopping discovery on {self} for {sender}")
        if not self.sessions:
            await self._stop_scanning()

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def SetDiscoveryFilter(self, properties: dict[str, tuple[str, Any]]) -> None:
        sender = sdbus.get_current_message().sender
        if not self.powered:
            raise DBusBluezNotReadyError("Resource Not Ready")
        parsed = DiscoveryFilter.parse(properties)
        if not properties:
            self.filters.pop(sender, None)
            return
        self.filters[sender] = parsed
        if sender not in self.filter_subscriptions:
            async def on_sender_lost():
                self.filters.pop(sender, None)
                self.filter_subscriptions.pop(sender, None)
            self.filter_subscriptions[sender] = events.subscribe(
                f"service:lost:{sender}", on_sender_lost, once=True)

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def RegisterApplication(self, application: str, options: dict[str, tuple[str, Any]]) -> None:
        """BlueZ (src/gatt-database.c): a second registration of the same
        application is AlreadyExists; each GattProfile1 object's UUIDs become
        auto-connect profiles, and a profile without UUIDs fails the
        registration; an application exporting the GAP (0x1800) or GATT
        (0x1801) service fails (`parse_uuid`: bluetoothd serves both itself).
        BlueZoo ignores GattProfile1, re-registers silently and accepts any
        service."""
        sender = sdbus.get_current_message().sender
        if (sender, application) in self.gatt_apps:
            raise DBusBluezAlreadyExistsError("Already Exists")
        refused = refused_service(
            await GattApplicationClient(sender, application, options, None).get_managed_objects())
        if refused is not None:
            logger.info(f"{self}: refusing application {application} of {sender}: "
                        f"it exports {refused}, which BlueZ serves itself")
            raise DBusBluezFailedError("Failed to create entry in database")
        await super().RegisterApplication(application, options)
        app = self.gatt_apps.get((sender, application))
        if app is None:
            raise DBusBluezFailedError("Failed to register application")
        try:
            profiles = profile_uuids(await app.get_managed_objects())
        except ValueError as e:
            await super().UnregisterApplication(application)
            raise DBusBluezFailedError(f"Failed to register application: {e}")
        self.profiles[sender, application] = profiles
        if profiles:
            logger.info(f"Background auto-connect on {self} for {sorted(profiles)} ({sender})")
            # A new profile probes every known device again, which turns
            # auto-connect back on after a Disconnect (device_probe_profile).
            for dev in self.devices.values():
                if profiles & {BluetoothUUID(u) for u in dev.uuids}:
                    dev.auto_connect_disabled = False
        for key in [k for k in self.profiles if k not in self.gatt_apps]:
            del self.profiles[key]
        if any(isinstance(obj, GattServiceClient) for obj in app.objects.values()):
            # New services on live links: the centrals' GATT objects are added.
            self.mock.peer_database_changed(self)

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def RegisterAdvertisement(self, path: str, options: dict[str, tuple[str, Any]]) -> None:
        # Patch 30: the same client registering the same path again is
        # AlreadyExists, before any instance is counted (bluetoothd's
        # register_advertisement); BlueZoo 1.0.2 answered NotPermitted when
        # no instance was left, as for a new advertisement.
        sender = sdbus.get_current_message().sender
        if (sender, path) in self.advertisements:
            raise DBusBluezAlreadyExistsError("Already Exists")
        await LEAdvertisingManager.__dict__["RegisterAdvertisement"].original_method(self, path, options)
        # Patch 31: a broadcast advertisement that sets Discoverable true is
        # refused whole, as bluetoothd 5.66 to 5.8x do ("Broadcast cannot
        # set flags", then `Failed` "Failed to parse advertisement.");
        # BlueZoo 1.0.2 advertised it.
        adv = self.advertisements.get((sender, path))
        if adv is not None and adv.Type.get("peripheral") == "broadcast" and adv.Discoverable.get(False):
            await self._LEAdvertisingManager__del_advertisement(adv)
            raise DBusBluezFailedError("Failed to parse advertisement.")

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def RemoveDevice(self, device: str) -> None:
        if device not in self.devices:
            raise DBusBluezDoesNotExistError("Does Not Exist")
        # Patch 23: RemoveDevice deletes the stored bond (both ends' keys
        # are the peer's business; the peer keeps its own).
        bonds.forget(self.address, self.devices[device].address)
        await self.del_device(self.devices[device])

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def Powered(self) -> bool:
        return self.powered

    @Powered.setter
    def Powered_setter(self, value: bool):
        was = self.powered
        # BlueZoo's own setter: PowerState transitions, stops discovery.
        Adapter.__dict__["Powered"].property_setter(self, value)
        if not was and value:
            privacy.rotate(self.address)   # patch 27: a new RPA at each power-on
        if was and not value:
            logger.info(f"{self} powered off: dropping links and discovery sessions")
            self._drop_all_sessions()
            self.discovering_task.cancel()
            for dev in list(self.devices.values()):
                if dev.connected:
                    # Our side of each link goes down at once.
                    create_background_task(dev.disconnect())
            # Centrals linked to us notice after their supervision timeout.
            self.mock.peer_vanished(self)

    async def _GattManager__del_gatt_application(self, app) -> None:
        served = any(isinstance(obj, GattServiceClient) for obj in app.objects.values())
        await GattManager._GattManager__del_gatt_application(self, app)
        # A peripheral program is gone; its controller is not: the links stay
        # (real bluetoothd 5.66, docs/real-bluez.md difference 8). bluetoothd
        # removes its services and sends Service Changed, and each central
        # removes the GATT objects of those services. An application with no
        # services (a central's GattProfile1) changes no database.
        if served:
            self.mock.peer_database_changed(self)


GATT_PROFILE = "org.bluez.GattProfile1"


def profile_uuids(managed: dict) -> frozenset[BluetoothUUID]:
    """The UUIDs of every GattProfile1 object in a GetManagedObjects reply
    (values plain or as (signature, value) variants)."""
    uuids: set[BluetoothUUID] = set()
    for path, interfaces in managed.items():
        props = interfaces.get(GATT_PROFILE)
        if props is None:
            continue
        value = props.get("UUIDs")
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
            value = value[1]
        if not value:
            raise ValueError(f"{path}: GattProfile1 without UUIDs")
        uuids.update(BluetoothUUID(u) for u in value)
    return frozenset(uuids)
