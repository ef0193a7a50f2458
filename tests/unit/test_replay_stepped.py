"""A summariser that awaits nothing a loop must complete (the offline mock) is run without one.

:func:`core.replay.engine._run_stepped` resumes a bare yield at once, as a loop would; a
summariser that awaits a future there is a broken promise (``needs_event_loop = False``), said
in one line. A summariser without the attribute runs in an event loop as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.llm.mock import MockSummarizer
from core.policy import get_preset
from core.replay import Replayer
from core.replay.engine import _run_stepped
from tests.support.sessions import read_bash_turns
from tests.support.summarizers import Forwarding


async def _yields_then_returns(times: int) -> Any:
    for _ in range(times):
        await asyncio.sleep(0)  # a bare yield
    return "done"


async def _awaits_a_future(loop: asyncio.AbstractEventLoop) -> Any:
    await loop.create_future()


def test_bare_yields_are_resumed_at_once() -> None:
    result: Any = _run_stepped(_yields_then_returns(3))
    assert result == "done"


def test_a_future_awaited_without_a_loop_is_said() -> None:
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(RuntimeError, match="awaited Future without an event loop"):
            _run_stepped(_awaits_a_future(loop))
    finally:
        loop.close()


class _LoopBound(Forwarding):
    """A summariser that needs a running loop (as a live client does): no needs_event_loop."""

    name = "loop-bound"

    def __init__(self) -> None:
        super().__init__()
        self.loops: list[bool] = []

    async def before(self) -> None:
        self.loops.append(asyncio.get_running_loop().is_running())
        await asyncio.sleep(0.0001)  # a timer: only a loop completes it


def test_the_mock_and_a_loop_bound_summariser_give_the_same_replay() -> None:
    session = read_bash_turns(30, 3_000)
    policy = get_preset("seed")
    policy.estimator = "chars/4"
    assert MockSummarizer.needs_event_loop is False
    stepped = Replayer(session).run(policy)
    bound = _LoopBound()
    looped = Replayer(session, summarizer_factory=lambda _policy: bound).run(policy)
    assert bound.loops and all(bound.loops)
    assert sum(event.kind == "compact" for event in stepped.events) >= 1
    assert looped.model_dump(mode="json") == stepped.model_dump(mode="json")
