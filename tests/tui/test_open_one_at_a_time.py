"""After a session's first replay result, the work that follows it runs one step at a time: the
inferred threshold (a walk of the whole session), then the insights, then the detail pane's
tokenizer count. Each holds data of its own while it runs; all three at once made the peak
memory of opening a big session. Each step gives the C heap's free pages back when it is done
(:func:`tui.malloc_arenas.release_free_memory`), so that the next one does not map new memory
beside them.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import tui.screens.session.insights as insights_module
import tui.screens.session.loading as loading_module
import tui.screens.session.replaying as replaying_module
import tui.widgets.detail as detail_module
from core.replay import Replayer
from tests.support.claude_jsonl import write_claude_session
from tests.support.tui_harness import settle, until
from tui.app import CtxscopeApp
from tui.screens.session import SessionScreen


class Timeline:
    """What ran, in order: ``("start", step)``, ``("end", step)`` and ``("release", step)``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def add(self, kind: str, step: str) -> None:
        with self._lock:
            self.events.append((kind, step))

    def timed(self, step: str, function: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            self.add("start", step)
            try:
                return function(*args, **kwargs)
            finally:
                self.add("end", step)

        return run

    def releases(self, step: str) -> Any:
        def release() -> bool:
            self.add("release", step)
            return True

        return release

    def steps(self) -> list[str]:
        return [step for kind, step in self.events if kind == "start"]

    def overlapping(self) -> list[tuple[str, str]]:
        """Pairs of steps where the second started before the first ended."""
        running: list[str] = []
        pairs = []
        for kind, step in self.events:
            if kind == "start":
                pairs += [(other, step) for other in running]
                running.append(step)
            elif kind == "end":
                running.remove(step)
        return pairs


@pytest.fixture
def timeline(monkeypatch: pytest.MonkeyPatch) -> Timeline:
    timeline = Timeline()
    real_inferred = replaying_module.ReplayRunner._inferred_of
    monkeypatch.setattr(
        replaying_module.ReplayRunner, "_inferred_of", timeline.timed("inferred", real_inferred)
    )
    monkeypatch.setattr(Replayer, "run", timeline.timed("replay", Replayer.run))
    for module, name, step in (
        (insights_module, "compute_insights", "insights"),
        (detail_module, "get_counter", "count"),
    ):
        monkeypatch.setattr(module, name, timeline.timed(step, getattr(module, name)))
    monkeypatch.setattr(
        detail_module, "_LOADED_TOKENIZERS", set(), raising=False
    )  # (a new process)
    for module, step in (
        (loading_module, "load"),
        (replaying_module, "replay or inferred"),
        (insights_module, "insights"),
        (detail_module, "count"),
    ):
        monkeypatch.setattr(module, "release_free_memory", timeline.releases(step), raising=False)
    return timeline


def _opened(path: Path) -> Any:
    """The ``run_test`` context of an app on a 60-turn Claude Code session (at ``path``)."""
    write_claude_session(path, 60)
    app = CtxscopeApp(str(path), discover=lambda: [], live=False)
    return app.run_test(size=(120, 34))


async def _settled_with_count(pilot: Any, timeline: Timeline) -> SessionScreen:
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    await settle(pilot)
    await until(pilot, lambda: "count" in timeline.steps(), "the count started")
    await settle(pilot)
    return screen


async def test_after_the_first_result_the_inferred_threshold_the_insights_and_the_count_run_in_turn(
    tmp_path: Path, timeline: Timeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the count that waited for the open starts as soon as it may, not once a cursor has rested
    monkeypatch.setattr(detail_module, "SLOW_FACTS_DELAY_S", 3600.0)
    async with _opened(tmp_path / "session.jsonl") as pilot:
        screen = await _settled_with_count(pilot, timeline)
        assert screen.inferred is not None
        assert screen.state is not None and screen.state.insights is not None
        assert not screen.opening()

    assert timeline.steps() == ["replay", "inferred", "insights", "count"]
    assert timeline.overlapping() == []
    # each step gives back what it freed in the C heap before the next one starts
    assert [step for kind, step in timeline.events if kind == "release"] == [
        "load",
        "replay or inferred",  # after the replay
        "replay or inferred",  # after the inferred threshold
        "insights",
        "count",  # (once: the first count loaded the tokenizer)
    ]
    order = [(kind, step) for kind, step in timeline.events if kind != "end"]
    assert order.index(("release", "insights")) < order.index(("start", "count"))


async def test_a_limit_change_does_not_hold_the_count_back(
    tmp_path: Path, timeline: Timeline
) -> None:
    """Only the open waits: once the first insights are shown, a new result's insights and a
    new selection's count do not wait for one another."""
    async with _opened(tmp_path / "session.jsonl") as pilot:
        screen = await _settled_with_count(pilot, timeline)
        state = screen.state
        assert state is not None and state.result is not None
        policy = state.policy.model_copy(deep=True)
        policy.compaction.reserve_tokens = 1_000
        screen.set_policy(policy)
        await until(pilot, lambda: screen.replaying, "the new replay running")
        assert not screen.opening()  # (a new result's insights are not waited for)
        await settle(pilot)
