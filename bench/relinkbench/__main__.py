"""bench/run-bench: start the simulated-Bluetooth bench.

Prints one ready line on stdout ({"event": "ready", "bus": ..., ...}), then
serves JSON-lines commands on stdin and on DIR/control.sock. Stops on stdin
EOF (unless --no-stdin), SIGTERM, SIGINT or the "stop" command, and removes
everything it started.
"""

import argparse
import asyncio
import os
import signal
import sys

from .bench import Bench, BenchError, Options
from .commands import Dispatcher
from .proc import reset_signals
from .server import StdinServer, serve_socket, write_stdout


class AddPeripheral(argparse.Action):
    def __call__(self, parser, namespace, value, option_string=None):
        items = getattr(namespace, "peripherals", None) or []
        items.append((self.const, value))
        namespace.peripherals = items


def parse(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="run-bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lock", action=AddPeripheral, const="lock", metavar="NAME",
                   help="add a lock peripheral named NAME (repeatable)")
    p.add_argument("--band", action=AddPeripheral, const="band", metavar="NAME",
                   help="add a band peripheral named NAME (repeatable)")
    p.add_argument("--beacon", action=AddPeripheral, const="beacon", metavar="NAME",
                   help="add a broadcast-only beacon named NAME (iBeacon and Eddystone data; repeatable)")
    p.add_argument("--remote-central", action=AddPeripheral, const="remote", metavar="NAME",
                   help="add an adapter with no program on it, for a remote central a test "
                        "drives itself (relinkd's peripheral role, issue 23; repeatable)")
    p.add_argument("--backend", choices=("mock", "bluez", "gateway"), default="mock",
                   help="mock: private bus + patched BlueZoo (default); bluez: real bluetoothd "
                        "inside the real-BlueZ VM (bench/realbluez/README.md); gateway: the system's "
                        "bluetooth.service in a booted gateway image (bench/gateway/README.md)")
    p.add_argument("--central-address", default="00:00:00:00:00:01")
    p.add_argument("--scan-interval", type=float, default=0.2, help="seconds between scan reports")
    p.add_argument("--connect-timeout", type=float, default=1.0,
                   help="seconds before Connect to an absent peer fails (real kernel: 20)")
    p.add_argument("--supervision-timeout", type=float, default=0.5,
                   help="seconds before a central notices a vanished peer")
    p.add_argument("--gap-service", choices=("exported", "hidden"), default="exported",
                   help="exported: 0x1800 visible on the central (BlueZ >= 5.80); hidden: 5.66")
    p.add_argument("--temporary-timeout", type=float, default=30.0,
                   help="seconds an unconnected discovered device stays after its last "
                        "advertisement (BlueZ's TemporaryTimeout); 0: forever")
    p.add_argument("--band-rate", type=float, default=2.0, help="band notifications per second")
    p.add_argument("--lock-security", choices=("none", "encrypted"), default="none",
                   help="encrypted: each lock's state characteristic needs an encrypted (paired) link "
                        "to be read or notified (issue 24, patch 22)")
    p.add_argument("--lock-privacy", action="store_true",
                   help="each lock advertises from a resolvable private address that rotates at each "
                        "power-on, bluetoothd restart and rotate_address (issue 24, patch 27)")
    p.add_argument("--tmp", dest="parent_dir", help="parent of the bench directory")
    p.add_argument("--keep-dir", action="store_true", help="keep the directory (logs) at exit")
    p.add_argument("--log-stderr", action="store_true", help="children log to stderr, not DIR/*.log")
    p.add_argument("--no-stdin", action="store_true", help="ignore stdin (run until a signal)")
    p.add_argument("-v", "--verbose", action="count", default=0)
    p.set_defaults(peripherals=None)
    args = p.parse_args(argv)
    if not args.peripherals:
        args.peripherals = [("lock", "lock"), ("band", "band")]
    return args


async def amain(args) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    opts = Options(peripherals=args.peripherals, central_address=args.central_address,
                   scan_interval=args.scan_interval, connect_timeout=args.connect_timeout,
                   supervision_timeout=args.supervision_timeout, gap_service=args.gap_service,
                   temporary_timeout=args.temporary_timeout,
                   band_rate=args.band_rate, lock_security=args.lock_security, lock_privacy=args.lock_privacy, parent_dir=args.parent_dir, keep_dir=args.keep_dir,
                   log_stderr=args.log_stderr, verbose=args.verbose)
    try:
        if args.backend == "bluez":
            from .realbluez.backend import RealBluezBench
            bench = RealBluezBench(opts)
        elif args.backend == "gateway":
            from .gateway.backend import GatewayBench
            bench = GatewayBench(opts)
        else:
            bench = Bench(opts)
    except BenchError as e:
        write_stdout({"event": "error", "error": str(e)})
        return 2
    code = 0
    try:
        start = loop.create_task(bench.start())
        stopper = loop.create_task(stop.wait())
        await asyncio.wait({start, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if not start.done():
            start.cancel()
            raise BenchError("stopped while starting")
        start.result()
        dispatcher = Dispatcher(bench, stop.set)
        server = await serve_socket(dispatcher, os.path.join(bench.dir, "control.sock"))
        write_stdout(bench.info())
        if not args.no_stdin:
            StdinServer(dispatcher, stop.set).start()
        await stop.wait()
        server.close()
    except (BenchError, OSError) as e:
        write_stdout({"event": "error", "error": str(e)})
        code = 1
    finally:
        await bench.stop()
    write_stdout({"event": "stopped"})
    return code


def main(argv=None) -> int:
    reset_signals()
    args = parse(argv if argv is not None else sys.argv[1:])
    return asyncio.run(amain(args))


if __name__ == "__main__":
    sys.exit(main())
