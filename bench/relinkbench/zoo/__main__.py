"""Run BlueZoo with the bench's patches:
python -m relinkbench.zoo --bench-dir DIR -a ADDR [-a ADDR ...] [options]"""

import argparse
import asyncio
import logging
import sys

from ..proc import die_with_parent
from .config import CONFIG, RssiModel
from . import bonds, pair_calls, patch, privacy, term


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="relinkbench.zoo", description=__doc__)
    p.add_argument("--bench-dir", required=True, help="the bench's directory (tags this process)")
    p.add_argument("-a", "--adapter", dest="adapters", action="append", default=[])
    p.add_argument("--scan-interval", type=float, default=0.2)
    p.add_argument("--connect-timeout", type=float, default=1.0)
    p.add_argument("--supervision-timeout", type=float, default=0.5)
    p.add_argument("--temporary-timeout", type=float, default=30.0)
    p.add_argument("--gap-service", choices=("exported", "hidden"), default="exported")
    p.add_argument("--advertising-instances", type=int, default=15,
                   help="advertisements each adapter's controller sends at once (patch 24)")
    p.add_argument("--rssi", action="append", default=[], metavar="ADDR=BASE:NOISE")
    p.add_argument("--unpowered", action="append", default=[], metavar="ADDR",
                   help="an adapter that comes up powered off")
    p.add_argument("--privacy", action="append", default=[], metavar="ADDR",
                   help="an adapter that advertises from a rotating resolvable private address (patch 27)")
    p.add_argument("-v", "--verbose", action="count", default=0)
    args = p.parse_args(argv)
    die_with_parent()

    logging.basicConfig(level=logging.WARNING - 10 * args.verbose,
                        format="zoo %(levelname)s %(message)s", stream=sys.stderr)
    CONFIG.scan_interval = args.scan_interval
    CONFIG.connect_timeout = args.connect_timeout
    CONFIG.supervision_timeout = args.supervision_timeout
    CONFIG.gap_service = args.gap_service
    CONFIG.temporary_timeout = args.temporary_timeout
    CONFIG.unpowered = {a.upper() for a in args.unpowered}
    CONFIG.advertising_instances = args.advertising_instances
    for addr in args.privacy:
        privacy.enable(addr)   # a (re)started bluetoothd: a fresh RPA
    for spec in args.rssi:
        addr, _, rest = spec.partition("=")
        base, _, noise = rest.partition(":")
        CONFIG.rssi[addr.upper()] = RssiModel(int(base), int(noise or 0))

    bonds.use_directory(args.bench_dir)
    pair_calls.use_directory(args.bench_dir)
    patch.apply()
    from bluezoo import bluezoo
    from bluezoo.utils import BluetoothAddress
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(bluezoo.startup(
        bus="system", adapters=[BluetoothAddress(a) for a in args.adapters],
        auto_enable=True, scan_interval=args.scan_interval))
    term.exit_like_bluetoothd_on_sigterm(loop)
    loop.run_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
