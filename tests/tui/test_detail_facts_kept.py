"""After a limit change, the detail pane counts the selected message and works out its preview
again only when what they depend on changed (the counting encoding, the truncation limits):
otherwise it is drawn once with them, not with "…" and then again once the same text is counted
again."""

from __future__ import annotations

import re
from typing import Any

import pytest

import tui.widgets.detail as detail_module
from core.model.session import Role
from core.model.tokens import get_counter, message_text
from core.policy import Policy, get_preset
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import open_session, quiet_app, settle, until
from tui.screens.session import SessionScreen


def _counted(text: str) -> int | None:
    found = re.search(r"counted\s+([\d,]+) C", text)
    return int(found.group(1).replace(",", "")) if found else None


def _policy(**changes: int) -> Policy:
    policy = get_preset("seed")
    policy.truncation.max_lines = changes.get("max_lines", 2000)
    policy.compaction.reserve_tokens = changes.get("reserve", policy.compaction.reserve_tokens)
    return policy


def _recorded_draws(screen: SessionScreen, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The detail pane's text at each of its draws from now on (the list fills as it draws)."""
    draws: list[str] = []
    draw = screen.detail._draw

    def recorded_draw() -> None:
        draw()
        draws.append(screen.detail.as_text())

    monkeypatch.setattr(screen.detail, "_draw", recorded_draw)
    return draws


async def _opened_counting(
    pilot: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[SessionScreen, list[str]]:
    """A session opened with a big tool output, and the estimators the detail pane asks for a
    counter from then on (one per count it makes)."""
    counters: list[str] = []

    def counter(spec: str) -> Any:
        counters.append(spec)
        return get_counter(spec)

    monkeypatch.setattr(detail_module, "get_counter", counter)
    screen = await open_session(pilot, claude_like_session(3, big_lines=200), _policy())
    return screen, counters


async def _opened_on_a_big_tool_output(
    pilot: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[SessionScreen, list[str]]:
    screen, counters = await _opened_counting(pilot, monkeypatch)
    state = screen.state
    assert state is not None
    tool = next(
        i
        for i in range(state.message_count)
        if state.message(i).role is Role.TOOL
        and state.message(i).tool_result is not None
        and message_text(state.message(i)).count("\n") > 100
    )
    screen.select_message(tool)
    await until(pilot, lambda: _counted(screen.detail.as_text()) is not None, "the count shown")
    await settle(pilot)
    return screen, counters


async def test_a_change_that_keeps_the_encoding_and_limits_keeps_the_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with quiet_app().run_test(size=(120, 34)) as pilot:
        screen, counters = await _opened_on_a_big_tool_output(pilot, monkeypatch)
        counted = _counted(screen.detail.as_text())
        before = len(counters)
        draws = _recorded_draws(screen, monkeypatch)
        screen.set_policy(_policy(reserve=40_000))
        await settle(pilot)
        assert screen.state is not None and screen.state.result is not None
        assert screen.state.result.policy.compaction.reserve_tokens == 40_000
        assert len(counters) == before  # not counted again
        assert draws and all(_counted(text) == counted for text in draws)  # never "…"


async def test_a_change_of_the_truncation_limits_works_the_preview_out_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with quiet_app().run_test(size=(120, 34)) as pilot:
        screen, counters = await _opened_on_a_big_tool_output(pilot, monkeypatch)
        before = screen.detail.section_text("model-sees")
        counted_before = len(counters)
        screen.set_policy(_policy(max_lines=5))
        await settle(pilot)
        await until(pilot, lambda: _counted(screen.detail.as_text()) is not None, "the count shown")
        after = screen.detail.section_text("model-sees")
        assert after != before
        assert after == screen.detail.section_text("model-sees")  # (settled)
        assert len(counters) == counted_before + 1  # worked out again under the new limits


async def test_a_change_of_the_limits_keeps_the_count_of_a_message_without_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message with no tool output has no preview: the truncation limits are nothing its slow
    facts depend on, so a change of them draws it once, with its count, as a fresh open under
    the new limits shows it."""
    async with quiet_app().run_test(size=(120, 34)) as pilot:
        screen, counters = await _opened_counting(pilot, monkeypatch)
        state = screen.state
        assert state is not None
        user = next(i for i in range(state.message_count) if state.message(i).role is Role.USER)
        screen.select_message(user)
        await until(pilot, lambda: _counted(screen.detail.as_text()) is not None, "the count shown")
        await settle(pilot)
        counted = _counted(screen.detail.as_text())
        before = len(counters)
        draws = _recorded_draws(screen, monkeypatch)
        screen.set_policy(_policy(max_lines=5))
        await settle(pilot)
        assert screen.state is not None and screen.state.result is not None
        assert screen.state.result.policy.truncation.max_lines == 5
        assert len(counters) == before  # not counted again
        assert draws and all(_counted(text) == counted for text in draws)  # never "…"
        shown = screen.detail.as_text()

    async with quiet_app().run_test(size=(120, 34)) as pilot:
        fresh = await open_session(
            pilot, claude_like_session(3, big_lines=200), _policy(max_lines=5)
        )
        fresh.select_message(user)
        await until(pilot, lambda: _counted(fresh.detail.as_text()) is not None, "the count shown")
        await settle(pilot)
        assert fresh.detail.as_text() == shown


async def test_the_policy_panel_is_found_once_mounted_and_not_before() -> None:
    """(each result shown asks for the panel, to show its evidence: looked for in its slot)"""
    async with quiet_app().run_test(size=(120, 34)) as pilot:
        screen = await open_session(pilot, claude_like_session(2), _policy())
        assert screen.policy_panel() is None
        screen.action_toggle_policy()
        await settle(pilot)
        panel = screen.policy_panel()
        assert panel is not None and panel is screen.query_one("#policy-panel")
        screen.set_policy(_policy(reserve=40_000))
        await settle(pilot)
        assert screen.policy_panel() is panel
