"""Random and malformed calls for relinkd's public API (the fuzz test).

Every generated call is one relinkd must reject (a wrong signature, a bad
argument, an unknown identifier or peripheral, an oversized value, an unknown
or mistyped option, a read-only property set), except calls marked read-only
(Events, Get, GetAll, ListIdentifiers, GetManagedObjects, Introspect), which
may succeed but change nothing. Deterministic for a given random.Random."""

from __future__ import annotations

import os
import random
import string
import sys
import uuid as uuidlib
from dataclasses import dataclass
from typing import Any

from dbus_fast import Variant

# The one copy of the path rule: bench/relinkbench/apipaths.py, or, in the
# other user's runtime directory (test_e2e_two_users copies it there), the
# same file beside this one.
_BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
if os.path.isdir(os.path.join(_BENCH, "relinkbench")):
    sys.path.insert(0, _BENCH)
try:
    from relinkbench.apipaths import central_path
except ImportError:
    from apipaths import central_path

MANAGER = "org.relink.Manager1"
CENTRAL = "org.relink.Central1"
PERIPHERAL = "org.relink.Peripheral1"
PROPS = "org.freedesktop.DBus.Properties"

# (interface, member) -> the right signature
METHODS = {
    (MANAGER, "Register"): "sa{sv}",
    (MANAGER, "Unregister"): "s",
    (MANAGER, "ListIdentifiers"): "",
    (CENTRAL, "Scan"): "asa{sv}",
    (CENTRAL, "StopScan"): "",
    (CENTRAL, "Connect"): "sa{sv}",
    (CENTRAL, "Cancel"): "s",
    (CENTRAL, "Subscribe"): "sss",
    (CENTRAL, "Unsubscribe"): "sss",
    (CENTRAL, "Read"): "sss",
    (CENTRAL, "Write"): "sssaya{sv}",
    (CENTRAL, "Events"): "tu",
    (CENTRAL, "Ack"): "t",
    (CENTRAL, "Watch"): "t",
    (CENTRAL, "Unwatch"): "",
    (PROPS, "Get"): "ss",
    (PROPS, "GetAll"): "s",
    (PROPS, "Set"): "ssv",
}
CENTRAL_PROPS = ["Identifier", "Owner", "NameRule", "Scanning", "ScanServices", "AllowDuplicates",
                 "LastSequence", "Acknowledged", "DroppedEvents", "EventLimit"]
MANAGER_PROPS = ["Version", "Adapter", "Ready", "Discovering", "Status"]
PERIPHERAL_PROPS = ["Id", "Address", "AddressType", "Adapter", "AdvertisingName", "AdvertisingNameSeen",
                    "GAPName", "GAPNameSeen", "Name", "NameSource", "Connected", "RSSI", "Services", "LastSeen"]
BASIC = "ybnqiuxtdsog"


@dataclass
class Call:
    path: str
    interface: str
    member: str
    signature: str
    body: list
    read_only: bool = False
    why: str = ""
    fds: int = 0   # file descriptors sent with the call (an 'h' argument takes the first)

    def describe(self) -> str:
        body = repr(self.body)
        return f"{self.path} {self.interface}.{self.member}({self.signature}) [{self.why}] {body[:300]}"


class Generator:
    def __init__(self, rng: random.Random, target: str, target_path: str, lock_address: str,
                 lock_id: str, peripheral_paths: list[str], last_sequence: int):
        self.r = rng
        self.target = target                # an identifier the caller owns
        self.target_path = target_path
        self.lock_address = lock_address
        self.lock_id = lock_id              # the lock's peripheral UUID
        self.peripheral_paths = peripheral_paths
        self.last_sequence = last_sequence  # Ack beyond it is invalid

    # -- random D-Bus types and values -----------------------------------------------

    def rand_type(self, depth: int = 0) -> str:
        roll = self.r.random()
        if depth > 2 or roll < 0.55:
            return self.r.choice(BASIC)
        if roll < 0.7:
            return "a" + self.rand_type(depth + 1)
        if roll < 0.8:
            return "a{" + self.r.choice(BASIC) + self.rand_type(depth + 1) + "}"
        if roll < 0.9:
            return "(" + "".join(self.rand_type(depth + 1) for _ in range(self.r.randint(1, 3))) + ")"
        return "v"

    def rand_signature(self, avoid: str) -> str:
        while True:
            sig = "".join(self.rand_type() for _ in range(self.r.randint(0, 4)))
            if sig != avoid:
                return sig

    def rand_string(self, max_len: int = 40) -> str:
        kind = self.r.random()
        n = self.r.randint(0, max_len)
        if kind < 0.4:
            return "".join(self.r.choice(string.printable) for _ in range(n))
        if kind < 0.7:
            return "".join(chr(self.r.randint(1, 0x2FF)) for _ in range(n))
        if kind < 0.85:
            return "".join(chr(self.r.choice([self.r.randint(1, 31), 127, 0x85, 0x2028, 0xFEFF]))
                           for _ in range(max(1, n)))
        return "x" * self.r.choice([256, 1000, 4096, 70000])

    def rand_value(self, t: str) -> Any:
        r = self.r
        if t == "y":
            return r.randint(0, 255)
        if t == "b":
            return r.random() < 0.5
        if t == "n":
            return r.randint(-2**15, 2**15 - 1)
        if t == "q":
            return r.randint(0, 2**16 - 1)
        if t == "i":
            return r.randint(-2**31, 2**31 - 1)
        if t == "u":
            return r.randint(0, 2**32 - 1)
        if t == "x":
            return r.randint(-2**63, 2**63 - 1)
        if t == "t":
            return r.choice([0, 1, r.randint(0, 2**64 - 1), 2**64 - 1])
        if t == "d":
            return r.choice([0.0, -1.0, 1e308, -1e-300, float("inf"), float("nan"), r.uniform(-1e6, 1e6)])
        if t == "s":
            return self.rand_string()
        if t == "o":
            return "/" + "/".join(f"p{r.randint(0, 99)}" for _ in range(r.randint(0, 3))) if r.random() < 0.8 \
                else "/org/relink/central/" + "".join(r.choice(string.ascii_letters) for _ in range(8))
        if t == "g":
            return r.choice(["", "s", "a{sv}", "(ii)", "aay"])
        if t == "v":
            inner = self.rand_type(2)
            return Variant(inner, self.rand_value(inner))
        return self.rand_container(t)

    def rand_container(self, t: str) -> Any:
        from dbus_fast.signature import SignatureTree
        tree = SignatureTree(t).types[0]
        return self._value_of(tree)

    def _value_of(self, node) -> Any:
        tok = node.token
        if tok == "a":
            child = node.children[0]
            n = self.r.choice([0, 1, 2, 3, 5])
            if child.token == "{":
                k, v = child.children
                return {self._value_of(k): self._value_of(v) for _ in range(n)}
            if child.token == "y":
                return bytes(self.r.randint(0, 255) for _ in range(self.r.choice([0, 1, 4, 600])))
            return [self._value_of(child) for _ in range(n)]
        if tok == "(":
            return [self._value_of(c) for c in node.children]
        return self.rand_value(node.signature)

    def rand_values(self, sig: str) -> list:
        from dbus_fast.signature import SignatureTree
        return [self._value_of(t) for t in SignatureTree(sig).types]

    # -- bad arguments -----------------------------------------------------------------

    def bad_identifier(self) -> str:
        return self.r.choice([
            "", "x" * self.r.randint(256, 2000), "bad\x01id", "tab\tid", "nl\nid", "\x7f",
            "é" * 128,  # 256 bytes of UTF-8
            "a\u0085b",
        ])

    def unknown_identifier(self) -> str:
        return "nx-" + "".join(self.r.choice(string.ascii_letters + string.digits + "-_. é")
                               for _ in range(self.r.randint(1, 40)))

    def bad_uuid(self) -> str:
        return self.r.choice([
            "", "xyz", "180", "0x180D", "180d-", "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6", "8e7f1a00_4b2c_4d1e_9a3f_72656c696e6b",
            "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6bb", "g" * 36, "{8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b}",
            "12345", "1234567", self.rand_string(80), "x" * 5000,
        ])

    def bad_address(self) -> str:
        return self.r.choice([
            "", "00:00:00:00:00", "00:00:00:00:00:02:03", "GG:00:00:00:00:02", "0:0:0:0:0:2",
            "00-00-00-00-00-02", "00:00:00:00:00:2", "00:00:00:00:00:0x", self.rand_string(30), "y" * 3000,
        ])

    def unknown_peripheral(self) -> str:
        return str(uuidlib.UUID(int=self.r.getrandbits(128), version=4))

    def bad_peripheral(self) -> tuple[str, str]:
        roll = self.r.random()
        if roll < 0.4:
            return self.bad_address(), "bad address"
        if roll < 0.8:
            return self.unknown_peripheral(), "unknown peripheral UUID"
        return self.bad_uuid(), "malformed peripheral"

    def bad_options(self, known: dict[str, str]) -> tuple[dict, str]:
        """Options with at least one defect: an unknown key, a known key with the
        wrong type, or too many keys."""
        opts: dict[str, Variant] = {}
        roll = self.r.random()
        if roll < 0.4 or not known:
            key = self.r.choice(["allow_duplicates_", "Timeout", "foo", "", "x" * 300, "replay ", "é"])
            t = self.rand_type(2)
            opts[key] = Variant(t, self.rand_value(t))
            why = f"unknown option {key[:20]!r}"
        elif roll < 0.85:
            key = self.r.choice(list(known))
            t = self.r.choice([c for c in "ybnqiuxtdsog" if c != known[key]])
            opts[key] = Variant(t, self.rand_value(t))
            why = f"option {key} as {t}"
        else:
            for i in range(self.r.randint(17, 40)):
                opts[f"k{i}"] = Variant("b", True)
            why = "too many option keys"
        return opts, why

    # -- one call ---------------------------------------------------------------------------

    def central_target(self) -> tuple[str, bool]:
        """The central path to call: mostly the target's, sometimes an unknown one."""
        if self.r.random() < 0.75:
            return self.target_path, True
        ident = self.unknown_identifier().encode()
        path = central_path(ident.decode())
        return path, False

    def next(self) -> Call:
        roll = self.r.random()
        if roll < 0.25:
            return self.wrong_signature()
        if roll < 0.35:
            return self.properties()
        iface, member = self.r.choice([k for k in METHODS if k[0] != PROPS])
        return getattr(self, f"m_{member}")(iface)

    def wrong_signature(self) -> Call:
        iface, member = self.r.choice(list(METHODS))
        right = METHODS[(iface, member)]
        sig = self.rand_signature(right)
        if iface == MANAGER:
            path = "/org/relink"
        elif iface == PROPS:
            path = self.r.choice(["/org/relink", self.target_path] + self.peripheral_paths)
        else:
            path, _ = self.central_target()
        return Call(path, iface, member, sig, self.rand_values(sig), why="wrong signature")

    def properties(self) -> Call:
        path = self.r.choice(["/org/relink", self.target_path] + self.peripheral_paths)
        iface = {"/org/relink": MANAGER, self.target_path: CENTRAL}.get(path, PERIPHERAL)
        props = {MANAGER: MANAGER_PROPS, CENTRAL: CENTRAL_PROPS, PERIPHERAL: PERIPHERAL_PROPS}[iface]
        roll = self.r.random()
        if roll < 0.6:
            name = self.r.choice(props + [self.rand_string(20)])
            t = self.rand_type(1)
            ifname = iface if self.r.random() < 0.8 else self.r.choice(["", "org.relink.Nope1", CENTRAL, MANAGER])
            return Call(path, PROPS, "Set", "ssv", [ifname, name, Variant(t, self.rand_value(t))],
                        why="Set of a read-only property")
        if roll < 0.85:
            name = self.r.choice(props + [self.rand_string(20)])
            ifname = iface if self.r.random() < 0.7 else self.rand_string(20)
            return Call(path, PROPS, "Get", "ss", [ifname, name], read_only=True, why="Get")
        return Call(path, PROPS, "GetAll", "s", [self.r.choice([iface, "", "org.relink.Nope1"])],
                    read_only=True, why="GetAll")

    def m_Register(self, iface: str) -> Call:
        if self.r.random() < 0.5:
            return Call("/org/relink", iface, "Register", "sa{sv}", [self.bad_identifier(), {}],
                        why="bad identifier")
        opts, why = self.bad_options({"name_rule": "s", "replay": "b"})
        if self.r.random() < 0.2:
            opts = {"name_rule": Variant("s", self.r.choice(["", "GAP", "both", self.rand_string(10)]))}
            why = "bad name_rule"
        ident = self.r.choice([self.target, self.unknown_identifier()])
        return Call("/org/relink", iface, "Register", "sa{sv}", [ident, opts], why=why)

    def m_Unregister(self, iface: str) -> Call:
        ident, why = self.r.choice([(self.bad_identifier(), "bad identifier"),
                                    (self.unknown_identifier(), "unknown identifier")])
        return Call("/org/relink", iface, "Unregister", "s", [ident], why=why)

    def m_ListIdentifiers(self, iface: str) -> Call:
        return Call("/org/relink", iface, "ListIdentifiers", "", [], read_only=True, why="list")

    def m_Scan(self, iface: str) -> Call:
        path, known = self.central_target()
        roll = self.r.random()
        if not known and roll < 0.5:
            return Call(path, iface, "Scan", "asa{sv}", [["180d"], {}], why="unknown identifier")
        if roll < 0.4:
            services = ["180d"] * self.r.randint(0, 2) + [self.bad_uuid()]
            self.r.shuffle(services)
            return Call(path, iface, "Scan", "asa{sv}", [services, {}], why="bad service UUID")
        if roll < 0.55:
            return Call(path, iface, "Scan", "asa{sv}", [[f"{i:04x}" for i in range(self.r.randint(65, 300))], {}],
                        why="too many UUIDs")
        if roll < 0.65:
            # A data prefix longer than any advertisement carries, or a mask of another length.
            n = self.r.randint(253, 600)
            prefix = ("manufacturer_data", Variant("a(qayay)", [[0x004C, bytes(n), b""]])) if self.r.random() < 0.5 else \
                ("service_data", Variant("a(sayay)", [["feaa", b"\x20\x00", b"\xff"]]))
            return Call(path, iface, "Scan", "asa{sv}", [["180d"], dict([prefix])], why="bad data prefix")
        opts, why = self.bad_options({"allow_duplicates": "b", "manufacturer_data": "a(qayay)", "service_data": "a(sayay)"})
        return Call(path, iface, "Scan", "asa{sv}", [["180d"], opts], why=why)

    def m_StopScan(self, iface: str) -> Call:
        path, _ = self.central_target()
        if path == self.target_path:
            sig = self.rand_signature("")
            return Call(path, iface, "StopScan", sig, self.rand_values(sig), why="wrong signature")
        return Call(path, iface, "StopScan", "", [], why="unknown identifier")

    def m_Unwatch(self, iface: str) -> Call:
        call = self.m_StopScan(iface)
        call.member = "Unwatch"
        return call

    def m_Connect(self, iface: str) -> Call:
        path, known = self.central_target()
        roll = self.r.random()
        if not known:
            return Call(path, iface, "Connect", "sa{sv}", [self.lock_address, {}], why="unknown identifier")
        if roll < 0.35:
            p, why = self.bad_peripheral()
            return Call(path, iface, "Connect", "sa{sv}", [p, {}], why=why)
        if roll < 0.45:
            return Call(path, iface, "Connect", "sa{sv}", [self.lock_address, {}], why="already exists")
        if roll < 0.6:
            opts = self.r.choice([
                {"timeout": Variant("d", self.r.choice([0.0, -1.0, float("nan"), float("-inf")]))},
                {"strategies": Variant("as", ["scan", self.r.choice(["", "teleport", "SCAN", "known"])])},
                {"address_type": Variant("s", self.r.choice(["", "static", "Public", self.rand_string(8)]))},
                {"services": Variant("as", [self.bad_uuid()])},
                {"services": Variant("as", [f"{i:04x}" for i in range(65)])},
            ])
            return Call(path, iface, "Connect", "sa{sv}", ["00:00:00:00:0A:0B", opts], why=f"bad option {list(opts)}")
        opts, why = self.bad_options({"timeout": "d", "pending_until_cancelled": "b", "services": "as",
                                      "strategies": "as", "address_type": "s"})
        return Call(path, iface, "Connect", "sa{sv}", ["00:00:00:00:0A:0B", opts], why=why)

    def m_Cancel(self, iface: str) -> Call:
        path, known = self.central_target()
        if not known:
            return Call(path, iface, "Cancel", "s", [self.lock_address], why="unknown identifier")
        p, why = self.bad_peripheral()
        return Call(path, iface, "Cancel", "s", [p], why=why)

    def _gatt_args(self) -> tuple[list, str]:
        roll = self.r.random()
        lock_svc = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
        lock_state = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
        if roll < 0.4:
            p, why = self.bad_peripheral()
            return [p, lock_svc, lock_state], why
        if roll < 0.7:
            return [self.lock_id, self.bad_uuid(), lock_state], "bad service UUID"
        return [self.lock_id, lock_svc, self.bad_uuid()], "bad characteristic UUID"

    def _gatt(self, iface: str, member: str) -> Call:
        path, known = self.central_target()
        if not known:
            return Call(path, iface, member, "sss",
                        [self.lock_id, "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b", "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"],
                        why="unknown identifier")
        args, why = self._gatt_args()
        return Call(path, iface, member, "sss", args, why=why)

    def m_Subscribe(self, iface: str) -> Call:
        return self._gatt(iface, "Subscribe")

    def m_Unsubscribe(self, iface: str) -> Call:
        return self._gatt(iface, "Unsubscribe")

    def m_Read(self, iface: str) -> Call:
        return self._gatt(iface, "Read")

    def m_Write(self, iface: str) -> Call:
        path, known = self.central_target()
        lock_svc = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
        lock_cmd = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"
        if not known:
            return Call(path, iface, "Write", "sssaya{sv}", [self.lock_id, lock_svc, lock_cmd, b"lock", {}],
                        why="unknown identifier")
        roll = self.r.random()
        if roll < 0.5:
            args, why = self._gatt_args()
            return Call(path, iface, "Write", "sssaya{sv}", args + [b"lock", {}], why=why)
        if roll < 0.7:
            return Call(path, iface, "Write", "sssaya{sv}",
                        [self.lock_id, lock_svc, lock_cmd, bytes(self.r.randint(513, 5000)), {}], why="value > 512 bytes")
        opts, why = self.bad_options({"with_response": "b"})
        return Call(path, iface, "Write", "sssaya{sv}", [self.lock_id, lock_svc, lock_cmd, b"lock", opts], why=why)

    def m_Events(self, iface: str) -> Call:
        path, known = self.central_target()
        after = self.rand_value("t")
        limit = self.r.choice([0, 1, 10000, 10001, 2**32 - 1, self.r.randint(0, 2**32 - 1)])
        return Call(path, iface, "Events", "tu", [after, limit], read_only=True,
                    why="events" if known else "unknown identifier")

    def m_Ack(self, iface: str) -> Call:
        path, known = self.central_target()
        seq = self.r.choice([self.last_sequence + 1, self.r.randint(self.last_sequence + 1, 2**64 - 1), 2**64 - 1])
        return Call(path, iface, "Ack", "t", [seq],
                    why="ack beyond LastSequence" if known else "unknown identifier")

    def m_Watch(self, iface: str) -> Call:
        path, known = self.central_target()
        if known:
            sig = self.rand_signature("t")
            return Call(path, iface, "Watch", sig, self.rand_values(sig), why="wrong signature")
        return Call(path, iface, "Watch", "t", [0], why="unknown identifier")


R = "org.relink.Error."
F = "org.freedesktop.DBus.Error."


def expected_errors(call: Call, known_paths: set[str]) -> set[str] | None:
    """The error names docs/api allows for a generated call; None: any
    documented error (read-only calls, property access)."""
    if call.read_only or call.interface == PROPS:
        return None
    if call.path not in known_paths:   # a central object that does not exist
        return {F + "UnknownObject", R + "UnknownIdentifier", R + "InvalidArguments"}
    why = call.why
    if why == "wrong signature":
        return {R + "InvalidArguments"}
    if why == "unknown peripheral UUID":
        return {R + "UnknownPeripheral"}
    if why == "already exists":
        return {R + "AlreadyExists"}
    if why == "value > 512 bytes":   # up to 4096 bytes are read, and refused as too long for the link
        return {R + "ValueTooLong", R + "InvalidArguments"}
    if why == "unknown identifier":   # Unregister of a name never registered (maybe malformed)
        return {R + "UnknownIdentifier", R + "InvalidArguments"}
    return {R + "InvalidArguments"}
