"""Reading an Event's payload (the outbox's JSON): the peripheral it is
about, its address, a notified value, a one-line description."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

def _body(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload's fields: either flat, or one key (the event's case) around them."""
    if len(payload) == 1:
        (inner,) = payload.values()
        if isinstance(inner, dict):
            return inner
    return payload


def _address(value: Any) -> str:
    """An address written as "AA:BB:..." or as {"octets": [...], "kind": ...}."""
    if isinstance(value, str):
        return value.upper()
    if isinstance(value, dict):
        if isinstance(value.get("address"), (str, dict)):
            return _address(value["address"])
        octets = value.get("octets")
        if isinstance(octets, list):
            return ":".join(f"{int(o):02X}" for o in octets)
    return ""


def _peripheral(value: Any) -> str:
    """A peripheral id written as a UUID string or as {"uuid": "..."}."""
    if isinstance(value, dict):
        value = value.get("uuid", value.get("id", ""))
    return str(value).lower() if value else ""


def _value(value: Any) -> bytes:
    if isinstance(value, list):
        return bytes(int(v) & 0xFF for v in value)
    if isinstance(value, str):
        try:
            return bytes.fromhex(value)
        except ValueError:
            return value.encode()
    return b""


@dataclass
class Event:
    sequence: int
    kind: str
    payload: dict[str, Any]

    @classmethod
    def parse(cls, sequence: int, kind: str, payload: str) -> "Event":
        try:
            decoded = json.loads(payload)
        except ValueError:
            decoded = {"raw": payload}
        return cls(int(sequence), str(kind), decoded if isinstance(decoded, dict) else {"raw": decoded})

    @property
    def body(self) -> dict[str, Any]:
        return _body(self.payload)

    @property
    def peripheral(self) -> str:
        return _peripheral(self.body.get("peripheral", ""))

    @property
    def address(self) -> str:
        body = self.body
        for key in ("address", "advertisement"):
            if key in body:
                found = _address(body[key])
                if found:
                    return found
        return ""

    @property
    def characteristic(self) -> str:
        c = self.body.get("characteristic")
        if isinstance(c, dict):
            return str(c.get("characteristic", "")).lower()
        return str(c or "").lower()

    @property
    def value(self) -> bytes:
        return _value(self.body.get("value"))

    @property
    def advertised_services(self) -> list[str]:
        adv = self.body.get("advertisement")
        if isinstance(adv, dict):
            return [str(u).lower() for u in adv.get("serviceUUIDs", adv.get("services", []))]
        return []

    def describe(self, value_text: Callable[[str, bytes], str] | None = None) -> str:
        """One human-readable line (without the sequence). `value_text`
        words a notified value (characteristic, bytes); default: its hex."""
        body = self.body
        if self.kind == "value-notified":
            if value_text is not None:
                return value_text(self.characteristic, self.value)
            return f"{self.characteristic} = {self.value.hex()}"
        if self.kind == "discovered":
            adv = body.get("advertisement") if isinstance(body.get("advertisement"), dict) else {}
            return f"{self.address} {adv.get('localName') or ''}".strip()
        if self.kind in ("connected", "restored"):
            return f"{self.address} (peripheral {self.peripheral})"
        if self.kind == "name-updated":
            update = body.get("update") if isinstance(body.get("update"), dict) else {}
            resolved = update.get("resolved") if isinstance(update.get("resolved"), dict) else {}
            return f"name {resolved.get('name', '')!r} (from {resolved.get('source', '?')})"
        if self.kind == "notification-state":
            if body.get("notifying"):
                return f"{self.characteristic} notifying"
            reason = body.get("reason")
            return f"{self.characteristic} not notifying: " + (json.dumps(reason)[:100] if reason else "unsubscribed")
        if self.kind == "connection-event":
            reason = body.get("reason")
            return f"{self.address or self.peripheral} {body.get('event', '?')}" + (f": {json.dumps(reason)[:100]}" if reason else "")
        if self.kind == "subscription-failed":
            return f"subscription to {self.characteristic} failed: {json.dumps(body.get('reason'))[:100]}"
        if self.kind in ("disconnected", "failed-to-connect"):
            return f"peripheral {self.peripheral}: {json.dumps(body.get('reason'))[:100]}"
        if self.kind == "adapter-state":
            roles = ", ".join(str(r) for r in body.get("roles", []) or [])
            return f"adapter {body.get('adapter', '?')} {body.get('state', '?')}" + (f" (roles {roles})" if roles else "")
        return json.dumps(body)[:120]
