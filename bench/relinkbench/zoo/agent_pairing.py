"""Patch 26 (issue 24, pair3): a peripheral that pairs only with a passkey or
numeric comparison.

BlueZoo pairs only through a NoInputNoOutput agent (any other capability
raises NotImplementedError) and never calls an agent's RequestPasskey or
RequestConfirmation. Real BlueZ picks the SMP association model from both
sides' I/O capabilities and asks the pairing caller's agent: a peripheral
showing a passkey makes a keyboard central's agent RequestPasskey; two
displays with yes/no make RequestConfirmation (numeric comparison). Here a
peripheral adapter is told which it demands (org.relinkbench.Zoo1
SetPairingMethod: "just-works", "confirmation" or "passkey", and the
passkey it shows); the central's agent (the caller's own, as BlueZ asks it)
is asked, and the pairing fails as BlueZ reports it: the agent said no
(AuthenticationRejected), canceled (AuthenticationCanceled), typed the wrong
passkey or cannot answer (NoInputNoOutput: AuthenticationFailed)."""

import sdbus

from bluezoo.exceptions import (DBusBluezAuthenticationCanceledError, DBusBluezAuthenticationFailedError,
                                DBusBluezAuthenticationRejectedError)
from bluezoo.log import logger

from .config import CONFIG


def caller_agent(device):
    """The agent of the D-Bus client calling Device1.Pair (BlueZ asks it), or
    BlueZoo's default agent."""
    root = device.adapter.mock.root
    try:
        sender = sdbus.get_current_message().sender
    except Exception:
        sender = None
    return root.agents.get(sender) or root.agent


async def ask_agent(device, agent) -> None:
    """Asks `agent` what the peer demands; raises BlueZ's error when the
    pairing must fail. Just Works: nothing to ask."""
    method, passkey = CONFIG.pairing.get(device.peer_adapter.address.upper(), ("just-works", 0))
    if method == "just-works":
        return
    if agent is None or agent.capability == "NoInputNoOutput":
        raise DBusBluezAuthenticationFailedError(f"the peripheral needs a {method}; the agent has no input or output")
    path = device.get_object_path()
    logger.info(f"Pairing {device}: {method} asked of {agent}")
    try:
        if method == "confirmation":
            await agent.RequestConfirmation(path, passkey)
            return
        typed = await agent.RequestPasskey(path)
    except sdbus.DbusFailedError as e:
        name = getattr(e, "dbus_error_name", "") or type(e).__name__
        if "Canceled" in name:
            raise DBusBluezAuthenticationCanceledError("Authentication Canceled")
        raise DBusBluezAuthenticationRejectedError("Authentication Rejected")
    except Exception as e:  # noqa: BLE001 - any other agent failure ends the pairing
        name = str(getattr(e, "dbus_error_name", "")) + type(e).__name__ + str(e)
        if "Canceled" in name:
            raise DBusBluezAuthenticationCanceledError("Authentication Canceled")
        raise DBusBluezAuthenticationRejectedError("Authentication Rejected")
    if int(typed) != passkey:
        raise DBusBluezAuthenticationFailedError("Authentication Failed")
