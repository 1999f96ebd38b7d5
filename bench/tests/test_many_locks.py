"""A bench of 64 locks delivers a notification from every one of them (issue
31: restore at N = 64). BlueZoo takes a D-Bus match rule for every object a
peripheral registers (11 per lock); under the system bus's default limit of
512 per connection the rules of the 47th lock on were refused and that
lock's pushes never reached the central."""

import asyncio
import os

from busclient import Client

LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
CHR = "org.bluez.GattCharacteristic1"
LOCKS = 64


def refused_match_rules(bench) -> list[str]:
    try:
        with open(os.path.join(bench.dir, "dbus-daemon.log"), errors="replace") as f:
            return [line.strip() for line in f if "not allowed to add more match rules" in line]
    except OSError:
        return []


def test_a_push_from_every_one_of_64_locks_reaches_the_central(fresh_bench):
    names = [f"lock{i}" for i in range(LOCKS)]
    bench = fresh_bench(*[arg for n in names for arg in ("--lock", n)])

    async def go():
        async with Client(bench.bus) as c:
            devices = [bench.path(n) for n in names]

            async def all_found():
                objs = await c.objects()
                return all(d in objs for d in devices)
            await c.start_discovery()
            await c.wait_for(all_found, 60, f"all {LOCKS} locks to be found")
            await c.stop_discovery()
            await asyncio.gather(*(c.connect(d) for d in devices))
            chars = {n: await c.char_path(bench.path(n), LOCK_STATE) for n in names}
            await asyncio.gather(*(c.call("StartNotify", path=p, iface=CHR) for p in chars.values()))
            # A value of its own from each lock, the last ones included.
            wanted = {n: f"6c6f636b{i:04x}" for i, n in enumerate(names)}
            for n, value in wanted.items():
                bench.cmd("push", peripheral=n, value=value)

            def missing() -> list[str]:
                return [n for n in names
                        if bytes.fromhex(wanted[n]) not in [bytes(v) for v in c.values(chars[n], "Value")]]

            async def all_delivered():
                return not missing()
            try:
                await c.wait_for(all_delivered, 60, "a push from every lock")
            except AssertionError:
                raise AssertionError(f"no notification from {missing()}; dbus-daemon: "
                                     f"{refused_match_rules(bench)[:1]}")
            await asyncio.gather(*(c.disconnect(d) for d in devices))
    asyncio.run(asyncio.wait_for(go(), 300))
    assert refused_match_rules(bench) == []
