"""Run one simulated peripheral:
python -m relinkbench.peripheral --kind lock|band --name NAME --adapter hciN --bench-dir DIR"""

import argparse
import asyncio
import sys

from ..proc import die_with_parent
from .band import Band
from .beacon import Beacon
from .lock import Lock


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="relinkbench.peripheral")
    p.add_argument("--kind", choices=("lock", "band", "beacon"), required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--adapter", required=True)
    p.add_argument("--bench-dir", required=True, help="the bench's directory (tags this process)")
    p.add_argument("--adv-name", required=True)
    p.add_argument("--gap-name", required=True)
    p.add_argument("--rate", type=float, default=2.0, help="band: notifications per second")
    p.add_argument("--no-stream", action="store_true", help="band: do not stream at start")
    p.add_argument("--security", choices=("none", "encrypted"), default="none",
                   help="lock: encrypted makes its state characteristic need an encrypted link")
    args = p.parse_args(argv)
    die_with_parent()
    if args.kind == "lock":
        periph = Lock(args.name, args.adapter, args.adv_name, args.gap_name, encrypted=args.security == "encrypted")
    elif args.kind == "beacon":
        periph = Beacon(args.name, args.adapter, args.adv_name, args.gap_name)
    else:
        periph = Band(args.name, args.adapter, args.adv_name, args.gap_name,
                      rate=args.rate, streaming=not args.no_stream)
    asyncio.run(periph.run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
