"""The central's view of a peer's GATT objects, patched.

BlueZoo forwards StartNotify straight to the peripheral and keeps forwarding
values whatever the link does. Real BlueZ (src/gatt-client.c) keeps notify
sessions per D-Bus client: a second StartNotify from the same client
succeeds, StartNotify while disconnected succeeds and the CCCD is written at
the next connection, sessions are re-armed on every reconnection while the
client stays on the bus and end when it leaves; reads and writes while
disconnected fail with org.bluez.Error.Failed "Not connected".
"""

import asyncio
from typing import Any

import sdbus

from bluezoo import events
from bluezoo.exceptions import DBusBluezFailedError, DBusBluezNotSupportedError
from bluezoo.gatt import (GattCharacteristicClientLink, GattDescriptorClientLink,
                          GattServiceClientLink)
from bluezoo.log import logger
from .att_errors import central_error
from . import security
from bluezoo.utils import (create_background_task, dbus_method_async_except_logging,
                           dbus_property_async_except_logging)


def _link_up(device) -> bool:
    return device.connected and not device.link_dead


class BenchServiceLink(GattServiceClientLink):

    def __init__(self, client, device):
        super().__init__(client, device)
        self.includes: list[str] = []

    def rebind(self, client) -> None:
        self.client = client

    # Patch 13 (issue 22, gattdb): BlueZoo hands the central the
    # peripheral program's own object paths as `Includes`; BlueZ
    # (src/gatt-client.c, service_get_includes) gives the central's
    # service objects of the included services, all of them already in the
    # first InterfacesAdded (gdbus sends it once every service is exported).
    # The device sets them with `sync_includes` once all its links exist.
    async def sync_includes(self) -> None:
        wanted = self.client.Includes.get([]) or []
        # The adapter's own GAP service (zoo/gap.py) is no proxy: it has no remote path.
        links = {getattr(getattr(link.client, "_dbus", None), "object_path", None): path
                 for path, link in self.device.services.items() if isinstance(link, BenchServiceLink)}
        mapped = [links[p] for p in wanted if p in links]
        if mapped != self.includes:
            await self.Includes.set_async(mapped)

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def Includes(self) -> list[str]:
        return self.includes

    @Includes.setter_private
    def Includes_setter(self, value: list[str]):
        self.includes = value


class BenchCharLink(GattCharacteristicClientLink):

    def __init__(self, client, service):
        super().__init__(client, service)
        # D-Bus clients with a notify session: sender -> service-lost subscription
        self.sessions: dict[str, Any] = {}
        self.armed = False
        # Patch 29: the peripheral's bluetoothd kept a bonded central's CCCD
        # across the link's loss (no StopNotify); the next arm() finds it set.
        self.cccd_kept = False
        self.value = b""
        self.value_subscription = events.Subscription()

    @property
    def device(self):
        return self.service.device

    def _options(self, options: dict) -> dict:
        return self._GattCharacteristicClientLink__prepare_options(dict(options))

    async def rebind(self, client) -> None:
        """Point this object at a (possibly new) peripheral-side characteristic."""
        if client is self.client:
            return
        await self.disarm(remote=False)
        # Patch 29: the application's services were registered anew; BlueZ
        # removed the CCCD states with the old ones (remove_device_ccc).
        self.cccd_kept = False
        self.client = client

    async def link_down(self, bonded: bool) -> None:
        """The link went down (patches 19 and 29): bluetoothd clears an
        unbonded central's CCCD, a StopNotify for the program; a bonded
        central's stays set (att_disconnected), nothing is called."""
        if bonded and self.armed:
            self.cccd_kept = True
            await self.disarm(remote=False)
        else:
            await self.disarm(remote=True)

    async def arm(self) -> None:
        """Write the CCCD: ask the peripheral to notify, forward its values."""
        if self.armed or not self.sessions:
            return
        # Patch 22: the CCCD write of a session kept across links is refused
        # over a link that is not secure enough; bluetoothd tells no client.
        if not security.allowed(self.client.Flags.get([]), security.NOTIFY, self.device):
            return
        # Armed from now on: a second arm() while this one waits for the
        # peripheral (a client's StartNotify as the link comes up) must not
        # subscribe twice, which would double every value.
        self.armed = True
        self.value_subscription = events.subscribe(
            f"properties:changed:{id(self.client)}", self._on_client_properties)
        kept, self.cccd_kept = self.cccd_kept, False
        if kept:
            # Patch 29: the CCCD is still set on the peripheral's side: the
            # central's write of the same value changes nothing (ccc_write_cb).
            await self.Notifying.set_async(True)
            return
        try:
            await self.client.StartNotify()
        except Exception as e:
            logger.warning(f"StartNotify on peripheral {self} failed: {e}")
        await self.Notifying.set_async(True)

    async def disarm(self, remote: bool) -> None:
        self.value_subscription.unsubscribe()
        if self.armed:
            self.armed = False
            await self.Notifying.set_async(False)
            if remote:
                try:
                    async with asyncio.timeout(1):
                        await self.client.StopNotify()
                except Exception as e:
                    logger.debug(f"StopNotify on peripheral {self} failed: {e}")

    async def drop_sessions(self) -> None:
        for sub in self.sessions.values():
            sub.unsubscribe()
        self.sessions.clear()
        await self.disarm(remote=False)

    async def _on_client_properties(self, properties: dict[str, Any]):
        if "Value" in properties and self.armed and _link_up(self.device):
            await self.Value.set_async(properties["Value"])
            # Patch 20: Confirm only for an indication, which is what the
            # central's bluetoothd enables when the characteristic cannot notify.
            flags = self.client.Flags.get([]) or []
            if "indicate" in flags and "notify" not in flags:
                create_background_task(self._confirm())

    async def _confirm(self):
        try:
            await self.client.Confirm()
        except Exception:
            pass

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def ReadValue(self, options: dict[str, tuple[str, Any]]) -> bytes:
        if not _link_up(self.device):
            raise DBusBluezFailedError("Not connected")
        security.require(self.client.Flags.get([]), security.READ, self.device)
        try:
            value = await self.client.ReadValue(self._options(options))
        except sdbus.SdBusBaseError as e:
            raise central_error(e, write=False) from None
        if value != self.value:
            await self.Value.set_async(value)
        return value

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def WriteValue(self, value: bytes, options: dict[str, tuple[str, Any]]) -> None:
        if not _link_up(self.device):
            raise DBusBluezFailedError("Not connected")
        security.require(self.client.Flags.get([]), security.WRITE, self.device)
        try:
            await self.client.WriteValue(value, self._options(options))
        except sdbus.SdBusBaseError as e:
            raise central_error(e, write=True) from None

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def StartNotify(self) -> None:
        sender = sdbus.get_current_message().sender
        flags = self.client.Flags.get([])
        # Patch 22: BlueZ's encrypt-/secure- notify and indicate flags give the property too.
        if "notify" not in flags and "indicate" not in flags and not security.NOTIFY.keys() & set(flags):
            raise DBusBluezNotSupportedError("Operation is not supported")
        if sender in self.sessions:
            return
        if _link_up(self.device):
            security.require(flags, security.NOTIFY, self.device)  # patch 22: the CCCD write refused

        async def on_sender_lost():
            self.sessions.pop(sender, None)
            if not self.sessions:
                await self.disarm(remote=_link_up(self.device))

        self.sessions[sender] = events.subscribe(
            f"service:lost:{sender}", on_sender_lost, once=True)
        if _link_up(self.device):
            await self.arm()

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def StopNotify(self) -> None:
        sender = sdbus.get_current_message().sender
        sub = self.sessions.pop(sender, None)
        if sub is None:
            raise DBusBluezFailedError("No notify session started")
        sub.unsubscribe()
        if not self.sessions:
            await self.disarm(remote=_link_up(self.device))

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def Notifying(self) -> bool:
        return self.armed

    @Notifying.setter_private
    def Notifying_setter(self, value: bool):
        pass

    @sdbus.dbus_property_async_override()
    @dbus_property_async_except_logging
    def Value(self) -> bytes:
        return self.value

    @Value.setter_private
    def Value_setter(self, value: bytes):
        self.value = value


class BenchDescriptorLink(GattDescriptorClientLink):

    def rebind(self, client) -> None:
        self.client = client

    def _options(self, options: dict) -> dict:
        return self._GattDescriptorClientLink__prepare_options(dict(options))

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def ReadValue(self, options: dict[str, tuple[str, Any]]) -> bytes:
        if not _link_up(self.characteristic.service.device):
            raise DBusBluezFailedError("Not connected")
        security.require(self.client.Flags.get([]), security.READ, self.characteristic.service.device)
        return await self.client.ReadValue(self._options(options))

    @sdbus.dbus_method_async_override()
    @dbus_method_async_except_logging
    async def WriteValue(self, value: bytes, options: dict[str, tuple[str, Any]]) -> None:
        if not _link_up(self.characteristic.service.device):
            raise DBusBluezFailedError("Not connected")
        security.require(self.client.Flags.get([]), security.WRITE, self.characteristic.service.device)
        try:
            await self.client.WriteValue(value, self._options(options))
        except sdbus.SdBusBaseError as e:
            raise central_error(e, write=True) from None
