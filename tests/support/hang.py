"""A hang guard that counts work, not time: ``within`` runs a piece of work in a thread and fails
the test when the work spins (spends more than its CPU budget) or blocks (spends nothing for a
while), whatever the load of the machine.

A guard measured in wall seconds fails a slow-but-finishing case on a machine whose cores are
busy with other work (a case that takes 4 s of CPU took over 30 s of wall time at a load of 15 on
two cores); a budget of CPU seconds does not, and a blocked read (a FIFO opened for reading) is
still caught, because it spends no CPU at all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

IDLE_S = 30.0
"""Wall seconds a piece of work may go without spending any CPU before it counts as blocked
(a thread that can run is given a core far sooner, however busy the machine)."""
_POLL_S = 0.25
_PROGRESS_S = 0.005
"""CPU seconds that count as progress (the guard's own reads of the clocks spend a little)."""


def _others_cpu() -> float:
    """CPU seconds spent by every thread of this process but the calling one."""
    mine = time.thread_time()
    return time.process_time() - mine


def within(cpu_seconds: float, work: Callable[[], T], idle_seconds: float = IDLE_S) -> T:
    """``work()``'s result (or its exception, raised again), run in a thread; a test failure
    when the work spends more than ``cpu_seconds`` of CPU (it spins), or goes ``idle_seconds``
    of wall time without spending any (it blocks). The CPU counted is the process's, less this
    thread's: the work may hand its parts to threads of its own."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    start = last = _others_cpu()
    thread.start()
    last_progress = time.monotonic()
    while True:
        thread.join(_POLL_S)
        if not thread.is_alive():
            break
        spent = _others_cpu()
        assert spent - start <= cpu_seconds, f"spun: more than {cpu_seconds:g} s of CPU"
        now = time.monotonic()
        if spent - last > _PROGRESS_S:
            last, last_progress = spent, now
        assert now - last_progress <= idle_seconds, (
            f"blocked: {idle_seconds:g} s without spending any CPU"
        )
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
