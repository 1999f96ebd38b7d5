"""The package's life on a gateway (issue 32): an earlier relink installed
by apt with three links up and values stored, upgraded by apt to this
build's .deb (its relinkd migrates the earlier one's store), removed with
the state kept, installed again, and purged. One fresh boot per release;
RELINK_GATEWAY=full only, since the earlier .deb is a release build of an
earlier tree (scripts/build-previous-deb.sh, about 10 minutes once, then
cached).

    scripts/build-previous-deb.sh && RELINK_GATEWAY=full .venv/bin/python -m pytest -q -rsx bench/gateway/tests/test_upgrade.py
"""

import glob
import os

import pytest

from gatewayenv import (GatewayEnv, lock_values, main_pid, newest_deb, register_three_links, relinkd_active,
                        values_on_all_three, deliver_lock_value, wait_three_links, BOOTED_RELEASES, boot_or_skip)

PREVIOUS_VERSION = "0.0.99"


def previous_deb():
    """The newest earlier .deb scripts/build-previous-deb.sh cached."""
    root = os.path.join(os.environ.get("RELINK_CACHE", os.path.expanduser("~/.cache/relink")), "previous")
    debs = sorted(glob.glob(os.path.join(root, "*", f"relink_{PREVIOUS_VERSION}_amd64.deb")), key=os.path.getmtime)
    return debs[-1] if debs else None


@pytest.fixture(scope="module", params=BOOTED_RELEASES)
def gw(request):
    yield from boot_or_skip(request.param, newest_deb(), previous_deb(), name="upgrade",
                            full_only="needs an earlier release build",
                            needs=((previous_deb(), "scripts/build-previous-deb.sh"),))


def apt(gw: GatewayEnv, args: str, what: str, earlier: bool = False):
    """apt-get ARGS; it must succeed, and this build's maintainer scripts
    must start relinkd at once. `earlier`: the earlier package's postinst
    started relinkd before dbus-daemon had read its policy (fixed in
    session 17, packaging/debian/relink.postinst), so apt printed `Could not
    execute systemctl` and systemd started it again 2 s later: tolerated
    there only."""
    out = gw.sh(f"DEBIAN_FRONTEND=noninteractive apt-get {args} 2>&1", timeout=600, check=False)
    gw.save(f"apt-{what}.txt", out.out)
    assert out.rc == 0, f"apt-get {args}: {out.out[-2000:]}"
    if not earlier:
        assert "Could not execute systemctl" not in out.out, out.out[-2000:]
    return out.out


def test_upgrade_remove_reinstall_purge(gw):
    """0.0.99 with three links and stored values; apt upgrades it to this
    build: systemd restarts relinkd once, the store is migrated, the values
    stored before are still there, the links come back and values flow;
    `apt remove` keeps the store, so installing again restores every link;
    `apt purge` removes the store and the configuration."""
    record: dict = {"scenario": "upgrade"}
    try:
        apt(gw, f"install -y /srv/relink/deb/relink_{PREVIOUS_VERSION}_amd64.deb", "previous", earlier=True)
        relinkd_active(gw)
        record["previous"] = gw.sh("relinkd --version").out.strip()
        gw.start_bench()
        register_three_links(gw)
        wait_three_links(gw, 180, "three links up on the earlier relinkd")
        values_on_all_three(gw, "e", None)  # e1 on lock A, e2 on lock B, stored by 0.0.99
        gw.sh("cp /etc/relink/relinkd.conf /root/relinkd.conf.before 2>/dev/null || true")
        gw.sh("systemctl stop relink-bench")  # the locks go quiet; nothing is pushed meanwhile
        before_pid = main_pid(gw)
        before_restarts = int(gw.sh("systemctl show -p NRestarts --value relinkd").out.strip() or -1)

        out = apt(gw, f"install -y /srv/relink/deb/{gw.deb}", "upgrade")
        record["apt_says_upgrade"] = f"{PREVIOUS_VERSION} => " in out or "Unpacking relink" in out
        relinkd_active(gw)
        after_pid = main_pid(gw)
        record["version"] = gw.sh("relinkd --version").out.strip()
        record["restarted"] = before_pid != after_pid
        # Automatic restarts since the upgrade: none (systemd may reset the
        # count when a job starts the unit, so it is at most what it was).
        after_restarts = int(gw.sh("systemctl show -p NRestarts --value relinkd").out.strip() or -1)
        record["restarts"] = max(0, after_restarts - before_restarts) if after_restarts >= 0 else -1
        journal = gw.journal()
        gw.save("relinkd-upgrade.journal", journal)
        record["migration_lines"] = [line for line in journal.splitlines() if "store migrated from schema" in line][:5]
        record["errors"] = [line for line in journal.splitlines() if "quarantin" in line.lower() or "cannot" in line][:5]
        # Values stored by the earlier relinkd, read back through the new one.
        record["kept"] = {n: lock_values(gw.events(f"gw-{n}")) for n in ("locka", "lockb")}
        gw.sh("rm -f /run/relink-bench.json; systemctl start --no-block relink-bench")
        gw.bench_after_boot()
        wait_three_links(gw, 240, "three links back after the upgrade")
        values_on_all_three(gw, "f", None)

        apt(gw, "remove -y relink", "remove")
        record["state_kept_on_remove"] = gw.sh("test -d /var/lib/relink", check=False).rc == 0
        apt(gw, f"install -y /srv/relink/deb/{gw.deb}", "reinstall")
        relinkd_active(gw)
        wait_three_links(gw, 240, "three links restored after remove and install")
        deliver_lock_value(gw, "locka", "91", 60)

        apt(gw, "purge -y relink", "purge")
        record["state_after_purge"] = gw.sh("ls -A /var/lib/relink 2>&1", check=False).out.strip()
        record["conf_after_purge"] = gw.sh("ls /etc/relink 2>&1", check=False).out.strip()
        record["unit_after_purge"] = gw.sh("systemctl list-unit-files relinkd.service --no-legend", check=False).out.strip()
    finally:
        gw.results.add(record)
    assert record["previous"] == PREVIOUS_VERSION, record
    assert record["version"] != PREVIOUS_VERSION, record
    assert record["restarted"] and record["restarts"] == 0, f"relinkd restarted by the upgrade, not by a failure: {record}"
    assert not record["errors"], record
    assert record["migration_lines"], f"the journal says the store was migrated: {record}"
    assert "e1" in record["kept"]["locka"] and "e2" in record["kept"]["lockb"], f"values stored before the upgrade: {record}"
    assert record["state_kept_on_remove"], record
    assert "No such file" in record["state_after_purge"], f"purge leaves the store: {record}"
    assert "No such file" in record["conf_after_purge"], f"purge leaves /etc/relink: {record}"
    assert record["unit_after_purge"] == "", record
