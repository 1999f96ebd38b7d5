"""Patch 16 (issue 23, pbench): a server application's error as the remote
central sees it.

BlueZoo hands the error of a peripheral program's ReadValue/WriteValue to
the central as org.freedesktop.DBus.Error.Failed with the program's error
name as its text. BlueZ turns the program's error into an ATT error code
(src/gatt-database.c, dbus_error_to_att_ecode: Failed 0x80, NotSupported
0x06, NotAuthorized 0x08, InvalidValueLength 0x0D, InvalidOffset 0x07,
NotPermitted the attribute's read/write-not-permitted 0x02/0x03, any other
name 0x0E) and sends it over the air; the central's bluetoothd reports the
code to its D-Bus client (src/gatt-client.c, create_gatt_dbus_error):
NotPermitted for 0x02/0x03, InvalidArguments for 0x07 and 0x0D,
NotAuthorized for 0x08, NotSupported for 0x06, and otherwise
org.bluez.Error.Failed "Operation failed with ATT error: 0x%02x" (seen on
5.66 for 0x0e, docs/real-bluez.md)."""

import sdbus

from bluezoo.exceptions import (DBusBluezFailedError, DBusBluezInvalidArgumentsError,
                                DBusBluezNotAuthorizedError, DBusBluezNotPermittedError,
                                DBusBluezNotSupportedError)

ERROR = "org.bluez.Error."
TO_ATT = {ERROR + "Failed": 0x80, ERROR + "NotSupported": 0x06, ERROR + "NotAuthorized": 0x08,
          ERROR + "InvalidValueLength": 0x0D, ERROR + "InvalidOffset": 0x07}


def error_name(e: Exception) -> str:
    if isinstance(e, sdbus.SdBusUnmappedMessageError) and e.args:
        return str(e.args[0])
    return getattr(e, "dbus_error_name", "") or ""


def att_code(name: str, write: bool) -> int:
    if name == ERROR + "NotPermitted":
        return 0x03 if write else 0x02
    return TO_ATT.get(name, 0x0E)


# The central's bluetoothd's error for an ATT code (create_gatt_dbus_error).
CENTRAL_ERRORS = {
    0x02: (DBusBluezNotPermittedError, "Read not permitted"),
    0x03: (DBusBluezNotPermittedError, "Write not permitted"),
    0x07: (DBusBluezInvalidArgumentsError, "Invalid offset"),
    0x0D: (DBusBluezInvalidArgumentsError, "Invalid Length"),
    0x08: (DBusBluezNotAuthorizedError, "Not Authorized"),
    0x06: (DBusBluezNotSupportedError, "Operation is not supported"),
}


def central_error(e: Exception, write: bool) -> Exception:
    """What the central's bluetoothd answers its client for the program's error `e`."""
    code = att_code(error_name(e), write)
    error, text = CENTRAL_ERRORS.get(code, (DBusBluezFailedError, f"Operation failed with ATT error: 0x{code:02x}"))
    return error(text)
