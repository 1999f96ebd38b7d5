"""Process helpers: children die with their parent (PR_SET_PDEATHSIG)."""

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send `sig` to this process when its parent exits.
    If the parent is already gone (we were re-parented), exit now."""
    parent = os.getppid()
    if _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        os._exit(1)


def reset_signals() -> None:
    """Undo what a parent may have left us (a Swift test runner blocks or
    ignores signals): nothing blocked, TERM/INT/HUP at their defaults."""
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def preexec_die_with_parent(expected_parent: int):
    """A preexec_fn for subprocess: PDEATHSIG set between fork and exec,
    default signal handling restored."""
    def fn():
        reset_signals()
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != expected_parent:
            os._exit(1)
    return fn
