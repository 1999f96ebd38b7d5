"""Patch 17 (issue 23, pbench): a SIGTERMed bluetoothd.

BlueZoo dies at once on SIGTERM (Python's default action). Real bluetoothd
5.66 (docs/real-bluez.md, "kill -TERM bluetoothd") powers every adapter off
as it exits (`Powered` false signalled, links dropped) and calls
`LEAdvertisement1.Release` on each registered advertisement; the next
bluetoothd powers them on again and has forgotten every application and
advertisement. Patch: the same on SIGTERM (each Release bounded by 1 s),
then exit."""

import asyncio
import signal

from bluezoo.log import logger


async def _shut_down(loop: asyncio.AbstractEventLoop) -> None:
    from bluezoo import bluezoo
    service = getattr(bluezoo.startup, "service", None)
    try:
        for adapter in list(service.adapters.values()) if service else []:
            for adv in list(adapter.advertisements.values()):
                try:
                    async with asyncio.timeout(1):
                        await adv.Release()
                except Exception as e:
                    logger.debug(f"Release of {adv} failed: {e}")
            if adapter.powered:
                await adapter.Powered.set_async(False)
    finally:
        loop.stop()


def exit_like_bluetoothd_on_sigterm(loop: asyncio.AbstractEventLoop) -> None:
    loop.add_signal_handler(signal.SIGTERM, lambda: loop.create_task(_shut_down(loop)))
