"""The BlueZoo service with the bench's adapter and device classes, and a
scanner that reports advertisements as BlueZ does."""

import asyncio
from typing import Optional

from bluezoo.bluezoo import BluezMockService
from bluezoo.log import logger
from bluezoo.utils import BluetoothUUID, create_background_task

from . import privacy
from .adapter import BenchAdapter
from .config import CONFIG
from .control import ZooControl
from .device import LINK_POLL, AdvReport, BenchDevice


class BenchService(BluezMockService):

    def __init__(self, adapter_auto_enable: bool, scan_interval: float):
        super().__init__(adapter_auto_enable, scan_interval)
        self.control = ZooControl(self)
        self.control.export_to_dbus("/org/relinkbench")
        self.janitor = asyncio.create_task(self._expire_temporary_devices())
        self.auto_connector = asyncio.create_task(self._auto_connect())
        # Reports made of each adapter, to rotate its advertisements (patch 18).
        self.advertising_turns: dict[str, int] = {}

    async def cleanup(self):
        self.janitor.cancel()
        self.auto_connector.cancel()
        await super().cleanup()

    async def _auto_connect(self) -> None:
        """The kernel's auto-connect list: every LINK_POLL seconds (the same
        cadence at which a pending Connect looks for its peer), connect each
        device that wants it and whose peer advertises."""
        while True:
            await asyncio.sleep(LINK_POLL)
            try:
                for adapter in list(self.adapters.values()):
                    if not adapter.powered:
                        continue
                    uuids = adapter.auto_connect_uuids()
                    if not uuids:
                        continue
                    for dev in list(adapter.devices.values()):
                        if dev.wants_auto_connect(uuids):
                            peer = self.connectable_adapter(dev.address, adapter.address)
                            if peer is not None:
                                dev.auto_connect(peer)
            except Exception:
                logger.exception("Background auto-connect pass failed")

    async def _expire_temporary_devices(self) -> None:
        """BlueZ removes a temporary device TemporaryTimeout after it was last seen."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0.25)
            if CONFIG.temporary_timeout <= 0:
                continue
            now = loop.time()
            for adapter in list(self.adapters.values()):
                for dev in list(adapter.devices.values()):
                    if (dev.temporary and not dev.connected and dev.connecting_task.done()
                            and now - dev.last_seen > CONFIG.temporary_timeout):
                        logger.info(f"Temporary {dev} not seen for {CONFIG.temporary_timeout} s")
                        try:
                            await adapter.del_device(dev)
                        except Exception:
                            logger.exception(f"Removing {dev} failed")

    async def add_adapter(self, id: int, address: str):
        adapter = BenchAdapter(self, id, address)
        logger.info(f"Adding {adapter}")
        self.export_object(adapter.get_object_path(), adapter)
        self.adapters[id] = adapter
        if self.adapter_auto_enable and address.upper() not in CONFIG.unpowered:
            await adapter.Powered.set_async(True)
        return adapter

    async def del_adapter(self, id: int):
        adapter = self.adapters.get(id)
        if adapter is not None:
            self.peer_vanished(adapter)
        await super().del_adapter(id)

    def peer_vanished(self, peer_adapter) -> None:
        """A peripheral went away: every central linked to it loses the link."""
        for adapter in self.adapters.values():
            if adapter is peer_adapter:
                continue
            for dev in adapter.devices.values():
                if dev.connected and _links_to(dev, peer_adapter):
                    dev.link_lost()

    def peer_database_changed(self, peer_adapter) -> None:
        """A peripheral's GATT database changed on live links (its program
        ended or registered again): every central linked to it follows the
        Service Changed indication, the link itself stays."""
        for adapter in self.adapters.values():
            if adapter is peer_adapter:
                continue
            for dev in adapter.devices.values():
                if dev.connected and not dev.link_dead and _links_to(dev, peer_adapter):
                    create_background_task(dev.database_changed(peer_adapter))

    def connectable_adapter(self, address: str, central: Optional[str] = None) -> Optional[BenchAdapter]:
        """The adapter with this address if it is powered and advertising
        connectable (patch 14: a "broadcast" advertisement is
        ADV_NONCONN_IND, which no central can connect to). Patch 27: a
        private adapter is reached at its current RPA, or at its identity
        by a central that resolves it (`central`: that central's address)."""
        for adapter in self.adapters.values():
            if (privacy.answers_to(adapter, address, central) and adapter.powered
                    and any(_connectable(adv) for adv in adapter.advertisements.values())
                    and not adapter.is_peripheral_connected()):
                return adapter
        return None

    def _report(self, peer: BenchAdapter, filtered: bool) -> Optional[AdvReport]:
        # Patch 18: an adapter with several advertisements sends each in turn.
        advs = list(peer.advertisements.values())
        turn = self.advertising_turns.get(peer.address, 0)
        self.advertising_turns[peer.address] = turn + 1
        adv = advs[turn % len(advs)]
        # BlueZoo's rule: the advertisement's Discoverable, else the adapter's.
        # Patch 32: an advertisement without the discoverable flags (a
        # beacon: a broadcaster may not set them) has no Flags at all, and
        # bluetoothd still reports it while any of its discovery clients has
        # a discovery filter (adapter.c, device_is_discoverable:
        # filtered_discovery); BlueZoo dropped it.
        discoverable = adv.Discoverable.get(peer.discoverable)
        if not discoverable and not filtered:
            return None
        name = adv.LocalName.get(None)
        if name is None and "local-name" in (adv.Includes.get([]) or []):
            name = peer.name
        return AdvReport(
            address=privacy.air_address(peer),
            name=name,
            uuids=[BluetoothUUID(u) for u in adv.ServiceUUIDs.get([]) or []],
            manufacturer_data=dict(adv.ManufacturerData.get({}) or {}),
            service_data={BluetoothUUID(k): v for k, v in (adv.ServiceData.get({}) or {}).items()},
            advertising_data=dict(adv.Data.get({}) or {}),
            appearance=adv.Appearance.get(0) or 0,
            tx_power=adv.TxPower.get(None),
            rssi=CONFIG.rssi_for(peer.address),
            flags=b"\x06" if discoverable else b"",
        )

    async def scan_once(self, adapter: BenchAdapter) -> None:
        filters = adapter.active_filters()
        every_rssi = any(f is not None and f.wants_every_rssi for f in filters)
        duplicates = any(f is not None and f.duplicate_data for f in filters)
        for peer in list(self.adapters.values()):
            if peer is adapter or not peer.powered or not peer.advertisements:
                continue
            if peer.is_peripheral_connected():
                continue
            report = self._report(peer, filtered=any(f is not None for f in filters))
            if report is None:
                continue
            if not any(f is None or f.matches(report.address, report.name, report.uuids,
                                              report.rssi, report.tx_power) for f in filters):
                continue
            device = _resolved_device(adapter, peer)
            if device is None:
                path = f"{adapter.get_object_path()}/dev_{report.address.replace(':', '_')}"
                device = adapter.devices.get(path)
            if device is None:
                device = BenchDevice(peer, is_le=True)
                device.temporary = True
                if privacy.is_private(peer.address) and privacy.resolves(adapter.address, peer.address):
                    # Patch 27: resolved to a bonded identity (a restarted
                    # bluetoothd had it in storage: dev_<IDENTITY>).
                    device.temporary = False
                elif report.address != peer.address:
                    # Patch 27: an RPA this central cannot resolve.
                    device.address, device.address_type = report.address, "random"
                device.apply_first_report(report)
                await adapter.add_device(device)
            elif not device.connected:
                await device.apply_report(report, every_rssi, duplicates)
            device.last_seen = asyncio.get_running_loop().time()

    def create_discovering_task(self, id: int):
        adapter = self.adapters[id]

        async def task():
            # The first report comes after StartDiscovery has replied (the
            # controller needs a moment to start scanning), as on real BlueZ.
            await asyncio.sleep(min(0.05, self.scan_interval))
            while True:
                try:
                    await self.scan_once(adapter)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    logger.exception(f"Scan on {adapter} failed")
                await asyncio.sleep(self.scan_interval)

        return asyncio.create_task(task())


def _resolved_device(adapter, peer) -> Optional[BenchDevice]:
    """Patch 27: the central's device for a private peer whose RPA it
    resolves (it holds the IRK): the device that shows the identity,
    whatever its path; None if it has none yet or does not resolve."""
    if not privacy.is_private(peer.address) or not privacy.resolves(adapter.address, peer.address):
        return None
    for dev in adapter.devices.values():
        if not dev.is_peer_view and dev.address.upper() == peer.address.upper():
            return dev
    # Known under the identity after a restart: created at dev_<IDENTITY>.
    return adapter.devices.get(f"{adapter.get_object_path()}/dev_{peer.address.replace(':', '_')}")


def _links_to(dev, peer_adapter) -> bool:
    """Whether a device is this adapter's peer: by address, or (patch 27: a
    link made at an RPA that rotated since) by the adapter it is linked to."""
    return (dev.address.upper() in (peer_adapter.address.upper(), privacy.air_address(peer_adapter).upper())
            or getattr(dev, "peer_adapter", None) is peer_adapter)


def _connectable(adv) -> bool:
    """BlueZ: an advertisement of Type "broadcast" is non-connectable
    (advertising.c: no connectable flag); "peripheral" is connectable."""
    return (adv.Type.get("peripheral") or "peripheral") != "broadcast"
