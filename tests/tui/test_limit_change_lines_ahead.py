"""Once the first result of a session is painted, the replay's worker counts the lines of every
tool output (what the first change of a line limit would read: 50 MB of outputs at 200,000
messages), so that the change itself reads none."""

from __future__ import annotations

import pytest

from core.model.session import ToolResult
from core.policy import get_preset
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import open_session, quiet_app, settle, until


async def test_a_line_limit_change_counts_no_output_after_the_first_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = claude_like_session(6, output_lines=40, big_lines=60)
    app = quiet_app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await open_session(pilot, session, get_preset("seed"))
        await settle(pilot)
        state = screen.state
        assert state is not None and state.result is not None
        replayer = screen.replays.replayer_for(session)
        assert replayer is not None
        assert replayer._truncations.uncounted_lines() == []

        def read(self: ToolResult) -> int:
            raise AssertionError("an output's lines counted during the change")

        monkeypatch.setattr(ToolResult, "output_lines", read)
        policy = get_preset("seed")
        policy.truncation.max_lines = 10
        screen.set_policy(policy)
        await until(pilot, lambda: state.result is not None and state.result.policy == policy, "")
        await settle(pilot)
        assert state.replay_error is None
        assert any(state.result.message_column("truncated"))
