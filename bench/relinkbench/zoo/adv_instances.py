"""Patch 24 (issue 23, preq): the controller's advertising instances.

BlueZoo gives every adapter 15 (a class constant). A controller has its own
number (bluetoothd reads it from the kernel: `SupportedInstances` is what is
left, `ActiveInstances` what is taken) and bluetoothd 5.66 refuses one more
advertisement with `org.bluez.Error.NotPermitted` (src/advertising.c; BlueZoo
raises the same name). Here the number comes from the bench's configuration
(`--advertising-instances`, the `set_advertising_instances` command), so a
test can reach the limit with two programs instead of sixteen."""

from bluezoo.adv.manager import LEAdvertisingManager

from .config import CONFIG


def apply() -> None:
    # BlueZoo reads the class constant through `self`: a property takes its place.
    LEAdvertisingManager.SUPPORTED_ADVERTISEMENT_INSTANCES = property(lambda self: CONFIG.advertising_instances)
