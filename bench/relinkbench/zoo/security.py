"""Patch 22 (issue 24, pair2): a characteristic or descriptor that needs an
encrypted or authenticated link, as the remote central sees it.

BlueZoo ignores BlueZ's security flags: a central that never paired reads,
writes and is notified on an `encrypt-read` characteristic. BlueZ's server
(src/gatt-database.c parse_chrc_flags / parse_desc_flags, then
src/shared/gatt-server.c check_permissions) gives `encrypt-*` the
permission of an encrypted link (ATT 0x0F Insufficient Encryption without
one), `encrypt-authenticated-*` of an authenticated one and `secure-*` of
LE Secure Connections (ATT 0x05 Insufficient Authentication below either);
the `*-notify` / `*-indicate` forms put the permission on the CCCD, so the
central's StartNotify (its CCCD write) is refused. The central's bluetoothd
reports all three codes to its client as org.bluez.Error.NotPermitted "Not
paired" (src/gatt-client.c create_gatt_dbus_error).

Here a link is encrypted once the two adapters paired (BlueZoo pairs Just
Works only: never authenticated, so `encrypt-authenticated-*` and
`secure-*` are refused even then, as real BlueZ refuses them over a Just
Works bond). Real BlueZ's central raises the link's security and retries
by itself when it can (src/shared/att.c change_security); BlueZoo's central
does not, so the client sees the refusal and pairs (relinkd on demand)."""

from bluezoo.exceptions import DBusBluezNotPermittedError

READ = {"encrypt-read": "encrypted", "encrypt-authenticated-read": "authenticated", "secure-read": "secure"}
WRITE = {"encrypt-write": "encrypted", "encrypt-authenticated-write": "authenticated", "secure-write": "secure"}
NOTIFY = {"encrypt-notify": "encrypted", "encrypt-authenticated-notify": "authenticated", "secure-notify": "secure",
          "encrypt-indicate": "encrypted", "encrypt-authenticated-indicate": "authenticated",
          "secure-indicate": "secure"}


def _needed(flags, table) -> set:
    return {level for flag, level in table.items() if flag in (flags or [])}


def allowed(flags, table, device) -> bool:
    """Whether `device` (the central's view of the peer) may do what
    `table` guards on an attribute with `flags`."""
    needed = _needed(flags, table)
    if not needed:
        return True
    if needed - {"encrypted"}:
        return False  # Just Works only: never authenticated
    return bool(getattr(device, "paired", False))


def require(flags, table, device) -> None:
    """Raises what the central's bluetoothd answers when the link is not secure enough."""
    if not allowed(flags, table, device):
        raise DBusBluezNotPermittedError("Not paired")
