"""`[` and `]` stop at every compaction the list draws, a recorded one the replay did not apply
(after a policy edit) included; the detail pane and the compaction screen show such a one as
recorded, not replayed, with its own figures."""

from __future__ import annotations

from textual.widgets import Static

from core.model.session import Session
from core.policy import get_preset
from core.replay import replay
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import open_session, quiet_app, settle, until
from tui.screens.compaction import CompactionScreen
from tui.widgets.forgotten_view import ForgottenView
from tui.widgets.policy_panel import PolicyPanel

from .test_compaction_screen import opened


def _session() -> Session:
    """A recorded auto compaction at message 24 (85,600 → 9,000), which the opencode preset
    does not make: it compacts by itself further on."""
    return claude_like_session(8, window=120_000, big_lines=200, with_compaction=True)


def _recorded_at(session: Session) -> int:
    (compaction,) = session.compactions
    return compaction.message_index


async def test_brackets_stop_at_the_recorded_compaction_after_a_policy_edit() -> None:
    session = _session()
    recorded_at = _recorded_at(session)
    app = quiet_app()
    async with app.run_test(size=(120, 34), notifications=True) as pilot:
        screen = await open_session(pilot, session)
        state = screen.state
        assert state is not None
        await pilot.press("p")
        await settle(pilot)
        edited = get_preset("opencode")
        screen.query_one(PolicyPanel).post_message(PolicyPanel.Changed(edited))
        await until(
            pilot,
            lambda: state.result is not None and state.result.policy.name == "opencode",
            "the edited policy replayed",
        )
        await settle(pilot)
        await pilot.press("p")  # the detail pane back
        result = state.result
        assert result is not None
        replayed = [e.message_index for e in result.events if e.kind == "compact"]
        assert replayed and recorded_at not in replayed  # the replay did not apply it
        drawn = sorted(
            {recorded_at, *replayed}
        )  # the list draws the recorded boundary and the replay's compactions

        screen.select_message(0)
        await settle(pilot)
        stops: list[int] = []
        for _ in drawn:
            await pilot.press("right_square_bracket")
            await settle(pilot)
            stops.append(screen.message_list.selected_message or 0)
        assert stops == drawn

        screen.select_message(drawn[-1])
        await settle(pilot)
        for _ in drawn[:-1]:
            await pilot.press("left_square_bracket")
            await settle(pilot)
        assert screen.message_list.selected_message == recorded_at
        titles = [n.title for n in app._notifications]
        assert f"recorded compaction #0 at message {recorded_at}" in titles, titles

        await until(pilot, lambda: screen.detail.message_index == recorded_at, "the detail pane")
        detail = " ".join(screen.detail.as_text(width=200).split())
        assert "recorded compaction #0" in detail, detail
        assert "agent's count 85,600" in detail  # (and the check on the recording, named)
        assert "→ tokens after 9,000 (next prompt) (recorded)" in detail
        assert "not replayed under “opencode”" in detail


async def test_the_compaction_screen_shows_an_unapplied_recorded_compaction() -> None:
    session = _session()
    recorded_at = _recorded_at(session)
    policy = get_preset("opencode")
    result = replay(session, policy)
    async with opened(session, policy, 0, result) as (_app, pilot, screen):
        assert isinstance(screen, CompactionScreen)
        assert not screen.events[0].replayed
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.position == 0 and screen.status == "recorded"
        assert screen.current_message == recorded_at
        mode = str(screen.query_one("#cs-mode").render())
        assert f"recorded 1/{len(screen.events)} (#0, not replayed) at message #{recorded_at}" in (
            mode
        )
        tokens = str(screen.query_one("#cs-tokens", Static).render())
        assert "before    85,600" in tokens and "after      9,000" in tokens
        assert "agent's count 85,600" in tokens and "→ tokens after 9,000 (next prompt)" in tokens
        assert "not replayed under “opencode”" in tokens
        summary = session.compactions[0].summary or ""
        assert summary
        await until(pilot, lambda: screen.summary_text == summary and screen.drawn, "summary")
        view = screen.query_one("#cs-forgotten", ForgottenView)
        await until(pilot, lambda: view.report is not None, "its report (why, cost, forgotten)")
        assert view.report is not None and view.report.why.recorded_index == 0

        await pilot.press("right_square_bracket")  # on to the replay's own
        await pilot.pause()
        assert screen.position == 1 and screen.status == "replay"
        assert "replay 2/" in str(screen.query_one("#cs-mode").render())
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert screen.position == 0 and screen.status == "recorded"

        await pilot.press("r")  # runs a compaction right before the recorded one
        await until(pilot, lambda: screen.status in ("done", "nothing", "failed"), "the run")
        assert screen.position is None and screen.message_index == recorded_at
        assert not screen.through


async def test_a_recorded_compaction_with_only_the_agents_count_draws_it() -> None:
    session = _session()
    session.compactions[0].tokens_after = None  # (Claude Code records no postTokens before 2.x)
    policy = get_preset("opencode")
    result = replay(session, policy)
    async with opened(session, policy, 0, result) as (_app, pilot, screen):
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.status == "recorded"
        tokens = str(screen.query_one("#cs-tokens", Static).render())
        # after: the named figure (the next call's prompt), as every output states it
        assert "before    85,600" in tokens and "after      9,000" in tokens, tokens
        assert "tokens after 9,000 (next prompt)" in tokens, tokens
        assert "No token figures" not in tokens
