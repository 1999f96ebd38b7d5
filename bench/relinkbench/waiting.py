"""The bench's one bounded wait, used by the bench tests, the e2e tests and
the real-BlueZ guest: poll a condition until it holds or a bound passes;
and its twin for asyncio code (the benchmarks under bench/relink)."""

import asyncio
import time
from typing import Any, Awaitable, Callable


class WaitTimeout(AssertionError, TimeoutError):
    """A condition did not hold within its bound. Both an AssertionError (a
    test's failed expectation) and a TimeoutError (a set-up step that took
    too long), so that callers catching either keep working."""


def wait_until(pred: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Returns pred()'s first true value; raises WaitTimeout naming `what`
    once `timeout` seconds have passed without one."""
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() > deadline:
            raise WaitTimeout(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


async def wait_until_async(pred: Callable[[], Awaitable[Any]], timeout: float, what: str,
                           interval: float = 0.05) -> Any:
    """As ``wait_until``, for a coroutine condition, sleeping in the event
    loop between tries."""
    deadline = time.monotonic() + timeout
    while True:
        got = await pred()
        if got:
            return got
        if time.monotonic() > deadline:
            raise WaitTimeout(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(interval)
