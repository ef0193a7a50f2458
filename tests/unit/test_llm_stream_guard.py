"""The stall deadline of a streamed answer (:class:`core.llm.live_stream.StreamGuard`), on a loop
whose clock the test moves: a line only notes its time, a watchdog makes one timer per stall
period however many lines come, the deadline passes ``stall_s`` after the last line and not
before, and nothing is left scheduled once the guard is left."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from core.llm.live_stream import StreamGuard


class _ClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose time is :attr:`now`, moved by the test; it counts the timers made."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 1_000.0
        self.timers: list[asyncio.TimerHandle] = []

    def time(self) -> float:
        return self.now

    def call_at(  # type: ignore[override]  # (the same call, counted)
        self, when: float, callback: Callable[..., object], *args: Any, **kw: Any
    ) -> asyncio.TimerHandle:
        handle = super().call_at(when, callback, *args, **kw)
        self.timers.append(handle)
        return handle


def _run(loop: _ClockLoop, body: Callable[[StreamGuard], Any], stall_s: float = 1.0) -> Any:
    async def main() -> Any:
        guard = StreamGuard(5.0, stall_s)
        async with guard:
            return await body(guard)

    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()


async def _tick(loop: _ClockLoop, seconds: float) -> None:
    """Move the clock and let the loop run what is due."""
    loop.now += seconds
    for _ in range(3):
        await asyncio.sleep(0)


def test_lines_within_the_stall_period_keep_a_long_answer_going_with_few_timers() -> None:
    loop = _ClockLoop()

    async def body(guard: StreamGuard) -> int:
        guard.first_byte()
        made = len(loop.timers)
        for _ in range(200):  # 20 s of lines, 0.1 s apart, against a 1 s stall deadline
            await _tick(loop, 0.1)
            guard.progress()
        assert not guard.timeout.expired()
        return len(loop.timers) - made

    timers = _run(loop, body)
    # about one a stall period (a watchdog sets the next from the last line, up to 0.1 s
    # before it wakes: ~0.9 s apart), not one a line (200)
    assert timers <= 25


def test_the_deadline_passes_stall_s_after_the_last_line_and_not_before() -> None:
    loop = _ClockLoop()
    seen: list[float] = []

    async def body(guard: StreamGuard) -> None:
        guard.first_byte()
        await _tick(loop, 0.7)
        guard.progress()  # the last line, at +0.7: the deadline is +1.7
        last = loop.now
        await _tick(loop, 0.5)  # the first watchdog (due at +1.0) sets it again
        seen.append(loop.now - last)
        await _tick(loop, 0.49)
        seen.append(loop.now - last)
        assert not guard.timeout.expired()
        while True:
            await _tick(loop, 0.02)
            seen.append(loop.now - last)

    with pytest.raises(TimeoutError):
        _run(loop, body)
    # still going 0.99 s after the last line; cut at the next tick (1.01 s), the first past 1 s
    assert seen[-1] == pytest.approx(0.99)


def test_no_timer_is_left_once_the_guard_is_left() -> None:
    loop = _ClockLoop()

    async def body(guard: StreamGuard) -> None:
        guard.first_byte()
        await _tick(loop, 0.3)
        guard.progress()

    _run(loop, body)
    assert all(handle.cancelled() or handle.when() <= loop.now for handle in loop.timers)


def test_without_lines_the_first_byte_deadline_still_passes() -> None:
    loop = _ClockLoop()

    async def body(guard: StreamGuard) -> None:
        while True:
            await _tick(loop, 1.0)

    with pytest.raises(TimeoutError):
        _run(loop, body)
