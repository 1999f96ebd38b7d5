"""Device1 on the central, patched to connect, disconnect, lose and regain its
link the way real BlueZ does (see bench/README.md, "BlueZoo patches")."""

import asyncio
from dataclasses import dataclass, field
from typing import Any, Optional

import sdbus

from bluezoo.device import Device
from bluezoo.exceptions import (DBusBluezFailedError, DBusBluezInProgressError,
                                DBusBluezNotConnectedError, DBusBluezNotReadyError)
from bluezoo.gatt import GattCharacteristicClient, GattDescriptorClient, GattServiceClient
from bluezoo.log import logger
from bluezoo.utils import (BluetoothUUID, NoneTask, dbus_method_async_except_logging,
                           dbus_property_async_except_logging)

from . import agent_pairing, bonds, pair_calls, privacy
from .config import CONFIG
from .gap import GAP_SERVICE
from .gatt_links import BenchCharLink, BenchDescriptorLink, BenchServiceLink

# How often a pending connection (Connect or background auto-connect) looks
# for its peer advertising, in seconds.
LINK_POLL = 0.05


@dataclass
class AdvReport:
    """One advertising report of a peer, as the scanning adapter receives it."""
    address: str
    name: Optional[str]
    uuids: list[str]
    manufacturer_data: dict[int, Any]
    service_data: dict[str, Any]
    advertising_data: dict[int, Any]
    appearance: int
    tx_power: Optional[int]
    rssi: int
    flags: bytes = field(default=b"\x06")


class _JustWorks:
    """An agent as BlueZoo's own pairing step sees it once patch 26 asked the
    real one: it only checks for NoInputNoOutput."""
    capability = "NoInputNoOutput"

    def __init__(self, agent):
        self.agent = agent


class BenchDevice(Device):

    def __init__(self, peer_adapter, **kwargs):
        # True for the peripheral adapter's view of a central linked to it.
        self.is_peer_view = False
        # Found by discovery and not yet connected: removed when not seen for
        # TemporaryTimeout (BlueZ); a connection makes the device permanent.
        self.temporary = False
        self.last_seen = 0.0
        self.link_dead = False
        self.cancel_reason: Optional[str] = None
        self.user_alias: Optional[str] = None
        self.lost_task = NoneTask()
        # BlueZ's disable_auto_connect: Disconnect() on a device that is not
        # Trusted stops background auto-connect until the next Connect().
        self.auto_connect_disabled = False
        super().__init__(peer_adapter, **kwargs)

    # -- bonds (patch 23) ----------------------------------------------------

    def attach_to_adapter(self, adapter):
        super().attach_to_adapter(adapter)
        # Patch 27: the object path is the address the device was first
        # known by; the Address shown may change (an RPA resolved).
        if getattr(self, "path_address", None) is None:
            self.path_address = self.address
        # A bond bluetoothd stored: the device comes back paired and bonded.
        if bonds.bonded(adapter.address, self.address):
            self.paired = self.bonded = True
        # Patch 28: and so does its Trusted.
        if bonds.trusted(adapter.address, self.address):
            self.trusted = True

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def Pair(self) -> None:
        pair_calls.count(self.adapter.address, self.address)  # the bench's counter (Zoo1 GetState)
        await self.pair(agent_pairing.caller_agent(self))

    async def pair(self, agent=None) -> None:
        # Patch 26: the caller's agent is asked what the peer demands
        # (BlueZoo: NoInputNoOutput only, no agent call); then BlueZoo's own
        # pairing, through a NoInputNoOutput agent as it requires.
        agent = agent or self.adapter.mock.root.agent
        if not self.paired:
            await agent_pairing.ask_agent(self, agent)
        root = self.adapter.mock.root
        kept = root.agent
        if agent is not None and agent.capability != "NoInputNoOutput":
            root.agent = _JustWorks(agent)
        try:
            await super().pair()
        finally:
            root.agent = kept
        if self.paired:
            self._identity_learnt()
            bonds.remember(self.adapter.address, self.address)
            bonds.remember(self.peer_adapter.address, self.adapter.address)

    def _identity_learnt(self) -> None:
        """Patch 27: pairing with a private peer exchanged its IRK and
        identity address: the same Device1 shows the identity now (BlueZ's
        device_update_addr), and a device with keys is no longer temporary."""
        identity = self.peer_adapter.address
        if not privacy.is_private(identity) or self.address.upper() == identity.upper():
            return
        logger.info(f"{self}: identity address {identity} resolved on pairing")
        self.address, self.address_type, self.temporary = identity, "public", False
        self.properties_changed.emit(("org.bluez.Device1", {
            "Address": ("s", identity), "AddressType": ("s", "public")}, []))

    def get_object_path(self):
        return "/".join((self.adapter.get_object_path(),
                         f"dev_{getattr(self, 'path_address', self.address).replace(':', '_')}"))

    # -- advertising reports -------------------------------------------------

    def apply_first_report(self, report: AdvReport) -> None:
        """Fill the properties of a device found for the first time (before export)."""
        if report.name is not None:
            self.name_ = report.name
        self.uuids = sorted(BluetoothUUID(u) for u in report.uuids)
        self.manufacturer_data = dict(report.manufacturer_data)
        self.service_data = dict(report.service_data)
        self.advertising_data = dict(report.advertising_data)
        self.advertising_flags = report.flags
        self.appearance = report.appearance
        self.tx_power = report.tx_power
        self.rssi = report.rssi

    async def apply_report(self, report: AdvReport, every_rssi: bool, duplicates: bool) -> None:
        """Update from a later report: only real changes are signalled, as in
        BlueZ's device.c, except RSSI with an RSSI/Pathloss filter and
        ManufacturerData/ServiceData with DuplicateData (signalled every time).
        Every change of one report goes out in ONE PropertiesChanged, as
        bluetoothd's GDBus gathers the properties an object changed in one
        main-loop turn (patch 15); a client sees one report as one signal."""
        changes: dict[str, tuple[str, Any]] = {}
        # A Complete Local Name always overwrites Name (last writer wins).
        if report.name is not None and report.name != self.name_:
            self.name_ = report.name
            changes["Name"] = ("s", report.name)
            if self.user_alias is None:
                changes["Alias"] = ("s", report.name)
        # EIR UUIDs are added (never removed) until services are resolved.
        if not self.services_resolved:
            merged = sorted(set(self.uuids) | {BluetoothUUID(u) for u in report.uuids})
            if merged != self.uuids:
                self.uuids = merged
                changes["UUIDs"] = ("as", merged)
        md = dict(self.manufacturer_data)
        md.update(report.manufacturer_data)
        if report.manufacturer_data and (duplicates or md != self.manufacturer_data):
            self.manufacturer_data = md
            changes["ManufacturerData"] = ("a{qv}", md)
        sd = dict(self.service_data)
        sd.update(report.service_data)
        if report.service_data and (duplicates or sd != self.service_data):
            self.service_data = sd
            changes["ServiceData"] = ("a{sv}", sd)
        ad = dict(self.advertising_data)
        ad.update(report.advertising_data)
        if ad != self.advertising_data:
            self.advertising_data = ad
            changes["AdvertisingData"] = ("a{yv}", ad)
        if report.appearance != self.appearance:
            self.appearance = report.appearance
            changes["Appearance"] = ("q", report.appearance)
        if report.tx_power is not None and report.tx_power != self.tx_power:
            self.tx_power = report.tx_power
            changes["TxPower"] = ("n", report.tx_power)
        threshold = 0 if every_rssi else CONFIG.rssi_threshold
        if report.rssi != self.rssi and (self.rssi == 0 or abs(report.rssi - self.rssi) >= threshold):
            self.rssi = report.rssi
            changes["RSSI"] = ("n", report.rssi)
        if changes:
            self.properties_changed.emit(("org.bluez.Device1", changes, []))

    def forget_rssi(self) -> None:
        """Discovery ended: RSSI becomes unknown (BlueZ then drops the property;
        here it reads 0, and is signalled as invalidated)."""
        if self.rssi != 0 and not self.connected:
            self.rssi = 0
            self.properties_changed.emit(("org.bluez.Device1", {}, ["RSSI"]))

    def _alias_follows_name(self) -> None:
        """Without a user alias, Alias is Name: signal it too (not through the
        D-Bus setter, which would make it a user alias)."""
        if self.user_alias is None:
            self.properties_changed.emit(("org.bluez.Device1", {"Alias": ("s", self.name_)}, []))

    # -- connection ------------------------------------------------------------

    def _mock(self):
        return self.adapter.mock

    def _peer_device_path(self, peer_adapter) -> str:
        return "/".join((peer_adapter.get_object_path(),
                         f"dev_{self.adapter.address.replace(':', '_')}"))

    async def connect(self, uuid: Optional[str] = None) -> None:
        if self.connected and not self.link_dead:
            return
        if not self.adapter.powered:
            raise DBusBluezNotReadyError("Resource Not Ready")
        if not self.connecting_task.done():
            raise DBusBluezInProgressError("In Progress")
        self.cancel_reason = None
        self.connecting_task = asyncio.create_task(self._attempt())
        try:
            await self.connecting_task
        except asyncio.CancelledError:
            if self.cancel_reason is not None:
                raise DBusBluezFailedError(self.cancel_reason)
            raise
        except sdbus.SdBusBaseError:
            raise
        except Exception as e:
            # BlueZoo's method wrapper would log this and reply success.
            logger.exception(f"Connecting {self} failed")
            raise DBusBluezFailedError(f"bench: {e}")

    async def _attempt(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CONFIG.connect_timeout
        if not self.lost_task.done():
            # The previous link is still going away (supervision timeout).
            await asyncio.shield(self.lost_task)
        while True:
            peer_adapter = self._mock().connectable_adapter(self.address, self.adapter.address)
            if peer_adapter is not None:
                break
            if loop.time() >= deadline:
                logger.info(f"Connecting {self} failed: peer not reachable")
                raise DBusBluezFailedError("le-connection-abort-by-local")
            await asyncio.sleep(LINK_POLL)
        await self._establish(peer_adapter)

    def on_auto_connect_list(self, uuids) -> bool:
        """BlueZ: a known (non-temporary) LE device offering a service of an
        auto-connect profile is on the kernel's auto-connect list, unless a
        Disconnect() turned that off (mgmt Add Device, action 0x02)."""
        return (not self.is_peer_view and not self.temporary and not self.auto_connect_disabled
                and bool(uuids & {BluetoothUUID(u) for u in self.uuids}))

    def wants_auto_connect(self, uuids) -> bool:
        """On the auto-connect list and not linked or linking: the kernel
        connects it when it advertises."""
        return (self.on_auto_connect_list(uuids) and not self.connected
                and self.connecting_task.done() and self.lost_task.done())

    def auto_connect(self, peer_adapter) -> None:
        """The kernel's background connection to an advertising peer: no
        Connect() call; clients see Connected and ServicesResolved."""
        async def attempt():
            logger.info(f"Auto-connecting {self} (background)")
            try:
                await self._establish(peer_adapter)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception(f"Auto-connecting {self} failed")

        self.cancel_reason = None
        self.connecting_task = asyncio.create_task(attempt())

    async def _establish(self, peer_adapter) -> None:
        logger.info(f"Connected {self} on {self.adapter}")
        self.peer_adapter = peer_adapter
        self.temporary = False
        await peer_adapter.add_device(self.peer)
        # The peer adapter may already know us: use the exported object.
        self.peer = peer_adapter.devices[self._peer_device_path(peer_adapter)]
        self.peer.peer = self
        self.peer.is_peer_view = True
        self.link_dead = False
        await self.peer.Connected.set_async(True)
        await self.Connected.set_async(True)
        await self._sync_gatt(peer_adapter)
        uuids = sorted(set(self.uuids) | {GAP_SERVICE}
                       | set(peer_adapter.get_gatt_registered_primary_services()))
        if uuids != self.uuids:
            await self.UUIDs.set_async(uuids)
        await self.peer.ServicesResolved.set_async(True)
        await self.ServicesResolved.set_async(True)
        # Notify sessions are re-armed after ServicesResolved is signalled.
        # BlueZ (src/device.c, gatt_client_ready_cb) re-registers them and
        # signals ServicesResolved in the same turn, but each session's CCCD
        # write needs at least one connection interval on the air before
        # the peripheral may notify: no value precedes ServicesResolved.
        for link in list(self.services.values()):
            if isinstance(link, BenchCharLink):
                await link.arm()
        await self._read_gap_name(peer_adapter)

    def _wanted_links(self, peer_adapter):
        """(path, class, client, parent path) for every GATT object to export,
        parents first: the peer adapter's own GAP service unless it is hidden
        (BlueZ before 5.80), then every application's."""
        wanted = []
        databases = list(peer_adapter.gatt_apps.values())
        if CONFIG.gap_service == "exported":
            databases.insert(0, peer_adapter.gap_database)
        for app in databases:
            paths: dict[str, str] = {}   # peripheral path -> central path
            for obj_path, obj in sorted(app.objects.items(), key=lambda x: x[0]):
                handle = f"{obj.Handle.get():04x}"
                kind = _gatt_kind(obj)
                if kind == "service":
                    path = f"{self.get_object_path()}/service{handle}"
                    wanted.append((path, BenchServiceLink, obj, None))
                elif kind == "characteristic":
                    parent = paths.get(obj.Service.get())
                    if parent is None:
                        continue
                    path = f"{parent}/char{handle}"
                    wanted.append((path, BenchCharLink, obj, parent))
                elif kind == "descriptor":
                    parent = paths.get(obj.Characteristic.get())
                    if parent is None:
                        continue
                    path = f"{parent}/desc{handle}"
                    wanted.append((path, BenchDescriptorLink, obj, parent))
                else:
                    continue
                paths[obj_path] = path
        return wanted

    async def _sync_gatt(self, peer_adapter) -> None:
        """Keep the GATT objects of an unchanged database (BlueZ's GATT cache),
        replace those that changed, export the new ones."""
        wanted = self._wanted_links(peer_adapter)
        wanted_paths = {w[0] for w in wanted}
        for path in sorted(list(self.services), reverse=True):
            link = self.services[path]
            same = next((w for w in wanted if w[0] == path), None)
            if (same is None or not isinstance(link, same[1])
                    or BluetoothUUID(link.client.UUID.get()) != BluetoothUUID(same[2].UUID.get())):
                await self._remove_link(path)
        mock = self._mock()
        for path, cls, client, parent in wanted:
            link = self.services.get(path)
            if link is not None:
                if isinstance(link, BenchCharLink):
                    await link.rebind(client)
                else:
                    link.rebind(client)
                continue
            if cls is BenchServiceLink:
                link = BenchServiceLink(client, self)
            else:
                link = cls(client, self.services[parent])
            mock.export_object(link.get_object_path(), link)
            self.services[path] = link
        if wanted_paths != set(self.services):
            raise RuntimeError(f"GATT objects of {self} out of step with the peripheral")
        for link in list(self.services.values()):
            if isinstance(link, BenchServiceLink):
                await link.sync_includes()   # patch 13

    async def database_changed(self, peer_adapter) -> None:
        """Service Changed on a live link: the objects of services that are
        gone are removed (their notify sessions end), those of new services
        are exported under their new handles; nothing is re-armed."""
        if not self.connected or getattr(self, "peer_adapter", None) is not peer_adapter:
            return
        await self._sync_gatt(peer_adapter)
        uuids = sorted({GAP_SERVICE} | set(peer_adapter.get_gatt_registered_primary_services()))
        if uuids != self.uuids:
            await self.UUIDs.set_async(uuids)

    async def _remove_link(self, path: str) -> None:
        link = self.services.pop(path)
        if isinstance(link, BenchCharLink):
            await link.drop_sessions()
        self._mock().remove_object(link)

    async def remove_all_links(self) -> None:
        for path in sorted(list(self.services), reverse=True):
            await self._remove_link(path)

    async def _read_gap_name(self, peer_adapter) -> None:
        """BlueZ's GAP plugin: read Device Name (0x2A00) after connecting and
        make it the device's Name (PropertiesChanged only on a real change).
        The peer's Device Name is its adapter's Alias (BlueZ serves 0x1800)."""
        name = peer_adapter.name
        if name and name != self.name_ and _link_ok(self):
            await self.Name.set_async(name)
            self._alias_follows_name()

    async def _teardown(self) -> None:
        """Take the link down: ServicesResolved, then Connected, go false."""
        if not self.connected:
            return
        # Patch 19: however the link went down, the peripheral's bluetoothd
        # clears a non-bonded central's CCCDs and calls StopNotify on the
        # program (gatt-database.c: att_disconnected, clear_ccc_state);
        # patch 29: a bonded central's stay set, nothing is called.
        for link in list(self.services.values()):
            if isinstance(link, BenchCharLink):
                await link.link_down(bonded=self.bonded)
        peer = self.peer
        if peer is not None and peer.connected:
            await peer.ServicesResolved.set_async(False)
            await peer.Connected.set_async(False)
        await self.ServicesResolved.set_async(False)
        await self.Connected.set_async(False)
        self.link_dead = False
        logger.info(f"Disconnected {self}")

    async def _drop_view(self) -> None:
        if self.connected:
            await self.ServicesResolved.set_async(False)
            await self.Connected.set_async(False)

    async def disconnect(self, uuid: Optional[str] = None) -> None:
        """Local disconnect (also used when the device or adapter is removed)."""
        if self.is_peer_view:
            # The peripheral side lets go: the central notices.
            await self._drop_view()
            if self.peer is not None and getattr(self.peer, "peer", None) is self:
                self.peer.link_lost()
            return
        if not self.connecting_task.done():
            self.cancel_reason = "br-connection-canceled"
            self.connecting_task.cancel()
        self.lost_task.cancel()
        await self._teardown()

    def link_lost(self) -> None:
        """The peer vanished: values stop at once; the central notices after
        the supervision timeout."""
        if not self.connected or self.link_dead:
            return
        self.link_dead = True

        async def after_timeout():
            await asyncio.sleep(CONFIG.supervision_timeout)
            await self._teardown()

        self.lost_task = asyncio.create_task(after_timeout())

    async def cleanup(self):
        await super().cleanup()
        self.lost_task.cancel()
        await self.remove_all_links()

    # -- D-Bus -------------------------------------------------------------------

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def Connect(self) -> None:
        self.auto_connect_disabled = False
        await self.connect()

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def Disconnect(self) -> None:
        # BlueZ (src/device.c dev_disconnect): a device that is not Trusted
        # leaves the auto-connect list until the next Connect(), also when
        # it is not connected; then the call succeeds at once.
        if not self.trusted:
            self.auto_connect_disabled = True
        if self.connecting_task.done() and not self.connected:
            return
        await self.disconnect()

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def Bonded(self) -> bool:
        return self.bonded

    @Bonded.setter_private
    def Bonded_setter(self, value):
        # Patch 21: BlueZoo's setter stores `self.bond`, so Bonded read
        # back (GetAll, GetManagedObjects) stays false after a pairing.
        self.bonded = value

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def AddressType(self) -> str:
        # Patch 27: an RPA not (yet) resolved is a random address.
        return getattr(self, "address_type", "public")

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def Trusted(self) -> bool:
        return self.trusted

    @Trusted.setter
    def Trusted_setter(self, value):
        # Patch 28: BlueZ stores Trusted with the device (its info file), so
        # a restarted bluetoothd has it again.
        self.trusted = value
        if self.adapter is not None:
            bonds.set_trusted(self.adapter.address, self.address, value)

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def Alias(self) -> str:
        return self.user_alias if self.user_alias is not None else self.name_

    @Alias.setter
    def Alias_setter(self, value):
        # Setting "" resets the alias (BlueZ).
        self.user_alias = value or None

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def RSSI(self) -> int:
        return self.rssi

    @RSSI.setter_private
    def RSSI_setter(self, value: int):
        self.rssi = value

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def TxPower(self) -> int:
        return self.tx_power or 0

    @TxPower.setter_private
    def TxPower_setter(self, value: int):
        self.tx_power = value

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def ManufacturerData(self) -> dict[int, tuple[str, Any]]:
        return self.manufacturer_data

    @ManufacturerData.setter_private
    def ManufacturerData_setter(self, value):
        self.manufacturer_data = value

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def AdvertisingData(self) -> dict[int, tuple[str, Any]]:
        return self.advertising_data

    @AdvertisingData.setter_private
    def AdvertisingData_setter(self, value):
        self.advertising_data = value


def _gatt_kind(obj) -> Optional[str]:
    """service, characteristic or descriptor, for an application's client
    objects and the adapter's own GAP objects alike."""
    kind = getattr(obj, "gatt_kind", None)
    if kind is not None:
        return kind
    if isinstance(obj, GattServiceClient):
        return "service"
    if isinstance(obj, GattCharacteristicClient):
        return "characteristic"
    if isinstance(obj, GattDescriptorClient):
        return "descriptor"
    return None


def _link_ok(device) -> bool:
    return device.connected and not device.link_dead


# Real BlueZ: ManufacturerData is a{qv} (company id -> bytes) and
# AdvertisingData is a{yv} (AD type -> bytes); BlueZoo declares both a{sv}.
BenchDevice.__dict__["ManufacturerData"].property_signature = "a{qv}"
BenchDevice.__dict__["AdvertisingData"].property_signature = "a{yv}"
