"""resident_modules.py: symbols to modules, and a live process's resident
pages of its own file counted once each.

  .venv/bin/python -m pytest bench/relink/tests/test_resident_modules.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import resident_modules as rm  # noqa: E402


def test_swift_symbols_name_their_module():
    assert rm.module_of("$s12RelinkDaemon0B0C7startUpyyYaF") == "RelinkDaemon"
    assert rm.module_of("$s4DBus14ConnectionLoopC3runyyF") == "DBus"
    assert rm.module_of("$s20FoundationEssentials4DateV") == "FoundationEssentials"
    assert rm.module_of("$ss6HasherV7combine5bytesySW_tF").startswith("Swift (standard library")


def test_other_symbols_get_a_kind():
    assert rm.module_of("_ZN6icu_7413UnicodeString6appendEi") == "ICU (C++)"
    assert rm.module_of("swift_retain") == "Swift runtime (C++)"
    assert rm.module_of("_dispatch_worker_thread") == "Dispatch (C)"
    assert rm.module_of("main") == "other C"


def rss_of_own_file(pid: int) -> int:
    """smaps's Rss summed over the mappings of the process's executable."""
    exe = os.path.realpath(f"/proc/{pid}/exe")
    total, mine = 0, False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5:
                mine = len(fields) >= 6 and fields[5] == exe
            elif mine and fields[0] == "Rss:":
                total += int(fields[1])
    return total


def test_a_live_process_pages_are_counted_once_each():
    pid = os.getpid()
    _, counts = rm.resident_by_module(pid)
    counted = sum(counts.values())
    # The interpreter's own file: what smaps says is resident of it, page
    # for page (it may fault a page in between the two reads).
    assert counted > 0
    assert abs(counted - rss_of_own_file(pid)) <= 64
