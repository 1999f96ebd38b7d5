"""Put the bench's subclasses in place of BlueZoo's before it starts."""

import bluezoo.bluezoo
import bluezoo.device

from . import adv_instances
from .device import BenchDevice
from .service import BenchService

_applied = False


def apply() -> None:
    global _applied
    if _applied:
        return
    # Devices are created by name inside bluezoo.device (a device's view of
    # its peer) and the service by name inside bluezoo.bluezoo (startup()).
    bluezoo.device.Device = BenchDevice
    bluezoo.bluezoo.BluezMockService = BenchService
    adv_instances.apply()
    _applied = True
