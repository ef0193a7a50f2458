"""A limit change holds the insights of the result it replaces.

The insights (breakdown, cost, compaction reports) of a shown result start a moment after it is
shown; a limit change in that moment replaces the result, so they are not started: they would
take the interpreter from the new replay, and the new result's own follow.
"""

from __future__ import annotations

from typing import Any

import pytest

import tui.insights
import tui.screens.session.insights as insights_module
from core.policy import Policy, get_preset
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import open_session, quiet_app, settle, until


def _lines(n: int) -> Policy:
    policy = get_preset("seed")
    policy.truncation.max_lines = n
    return policy


async def test_a_limit_change_holds_the_insights_of_the_result_it_replaces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    computed: list[int] = []
    real = tui.insights.compute_insights

    def counted(*args: Any, **kwargs: Any) -> Any:
        computed.append(args[1].policy.truncation.max_lines)
        return real(*args, **kwargs)

    monkeypatch.setattr(insights_module, "compute_insights", counted)
    session = claude_like_session(3, output_lines=40, big_lines=60)
    app = quiet_app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await open_session(pilot, session, get_preset("seed"))
        state = screen.state
        assert state is not None
        computed.clear()
        monkeypatch.setattr(insights_module, "INSIGHTS_DELAY_S", 60.0)  # (never by itself)
        first = _lines(30)
        screen.set_policy(first)
        await until(pilot, lambda: state.result is not None and state.result.policy == first, "1")
        assert screen.insights_runner.pending  # the first result's insights wait to start
        monkeypatch.setattr(insights_module, "INSIGHTS_DELAY_S", 0.01)
        second = _lines(10)
        screen.set_policy(second)
        assert not screen.insights_runner.pending  # held: the first result's never start
        await settle(pilot)
        assert state.result is not None and state.result.policy == second
        await until(
            pilot,
            lambda: (
                state.insights is not None
                and state.insights.result is state.result
                and state.insights.reports is not None
            ),
            "the second result's insights",
        )
        assert computed == [10]
