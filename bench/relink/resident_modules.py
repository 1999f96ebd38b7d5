"""Which parts of a running program's own file are resident: each resident
page of the executable's mappings, attributed to the Swift module (or C/C++
library) of the symbol at the page's middle, or to the ELF section when no
symbol covers it.

  .venv/bin/python bench/relink/resident_modules.py PID [--top 25]

relinkd is linked with the Swift standard library and Foundation inside it
(`--static-swift-stdlib`), so /proc/PID/smaps shows one mapping of about
22 MiB and cannot tell relinkd's own code from Foundation's or ICU's; this
can. Reads /proc/PID/maps and /proc/PID/pagemap (the present bit, readable
by the process's owner) and the file's symbols (`nm`) and sections
(`readelf`). startup_bench.py --modules runs it on each relinkd after READY.
"""
import argparse
import bisect
import collections
import os
import re
import struct
import subprocess
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")


def module_of(symbol: str) -> str:
    """The Swift module of a mangled symbol; for others, a coarse kind."""
    m = re.match(r"^\$s(\d+)([A-Za-z_]\w*)", symbol)
    if m:
        n = int(m.group(1))
        return m.group(2)[:n]
    if symbol.startswith("$s"):
        return "Swift (standard library, or a generic's specialisation)"
    if re.search(r"icu|^u[a-z]+_\w+_\d+$|^_ZN6icu_", symbol):
        return "ICU (C++)"
    if symbol.startswith("_ZN5swift") or symbol.startswith("swift_") or symbol.startswith("_swift"):
        return "Swift runtime (C++)"
    if symbol.startswith("_Z"):
        return "other C++"
    if symbol.startswith("_dispatch") or symbol.startswith("dispatch_"):
        return "Dispatch (C)"
    if symbol.startswith("__CF") or symbol.startswith("CF") or symbol.startswith("_CF"):
        return "CoreFoundation (C)"
    return "other C"


def symbols(path: str) -> tuple[list[int], list[str]]:
    # A stripped file has no symbols: its code is then counted as .text.
    out = subprocess.run(["nm", "--defined-only", "-n", path], capture_output=True, text=True).stdout
    addresses, names = [], []
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[1] in "tTrRdDbBvVwWuU":
            addresses.append(int(parts[0], 16))
            names.append(parts[2])
    return addresses, names


def sections(path: str) -> list[tuple[int, int, str]]:
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True).stdout
    result = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and int(m.group(2), 16):
            start = int(m.group(2), 16)
            result.append((start, start + int(m.group(3), 16), m.group(1)))
    return result


def resident_by_module(pid: int) -> tuple[str, collections.Counter]:
    exe = os.path.realpath(f"/proc/{pid}/exe")
    ranges = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == exe:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                ranges.append((start, end, int(parts[2], 16)))
    if not ranges:
        raise SystemExit(f"no mapping of {exe} in process {pid}")
    base = min(start - offset for start, _, offset in ranges)  # load bias of a PIE
    addresses, names = symbols(exe)
    secs = sections(exe)
    counts: collections.Counter = collections.Counter()
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for start, end, _ in ranges:
            pagemap.seek(start // PAGE * 8)
            data = pagemap.read((end - start) // PAGE * 8)
            for i in range(len(data) // 8):
                (entry,) = struct.unpack_from("<Q", data, i * 8)
                if not entry >> 63 & 1:
                    continue
                middle = start + i * PAGE + PAGE // 2 - base
                kind = None
                for s, e, name in secs:
                    if s <= middle < e:
                        kind = name
                        break
                if kind in (".text",):
                    j = bisect.bisect_right(addresses, middle) - 1
                    kind = module_of(names[j]) if j >= 0 else ".text"
                counts[kind or "(headers)"] += PAGE // 1024
    return exe, counts


def report(pid: int, top: int = 25) -> str:
    exe, counts = resident_by_module(pid)
    lines = [f"  resident pages of {os.path.basename(exe)}: {sum(counts.values())} KiB; code by module, other pages by section:"]
    for name, kib in counts.most_common(top):
        lines.append(f"    {kib:7d} KiB  {name}")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pid", type=int)
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args()
    print(report(args.pid, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
