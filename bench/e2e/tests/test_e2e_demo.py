"""The README's main job, bench/demo-relinkd.sh (run by scripts/demo.sh after
the build), runs to its end: relinkd with the lock and the band, the lock
program and relinkd SIGKILLed mid-stream, every lock value reaching the lock
program once, in order; and it leaves nothing behind."""

import os
import subprocess

from e2e_harness import RELINKD, ROOT


def test_demo_runs_and_checks_every_lock_value_came_back_once(workdir):
    tmp = os.path.join(workdir, "tmp")
    os.mkdir(tmp)
    env = dict(os.environ, RELINKD=RELINKD, TMPDIR=tmp)   # the demo's and the bench's directories
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    run = subprocess.run([os.path.join(ROOT, "bench", "demo-relinkd.sh")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=240)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert out.rstrip().endswith("demo: OK"), out[-2000:]
    assert "lock program | restored: identifier 'front-door' is new" in out
    assert out.count("link  front-door  00:00:00:00:00:02  connected") >= 2, out[-3000:]
    assert out.count("link  wrist       00:00:00:00:00:03  connected") >= 2, out[-3000:]
    assert "lock program | restore: the lock is already known (connected); subscribed" in out
    assert os.listdir(tmp) == [], "the demo left directories behind"
