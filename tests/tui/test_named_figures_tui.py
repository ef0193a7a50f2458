"""The TUI names the figure it shows of a compaction as every output does (agent's count, check,
tokens after), and says "at message N" with one number: the list's rule, the detail pane, the
notice of `]` and the compaction screen."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from core.formats import load_session
from core.insights.named_figures import compaction_at
from tests.support.paths import REPO
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import open_session, quiet_app, settle, until
from tui.screens.compaction import CompactionScreen

COMPACTED = REPO / "sample_sessions" / "claude-code" / "compacted.jsonl"


async def test_the_list_names_the_agents_count_and_the_check() -> None:
    session = claude_like_session(8, window=120_000, big_lines=200, with_compaction=True)
    app = quiet_app()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_session(pilot, session)
        state = screen.state
        assert state is not None and state.result is not None
        (boundary,) = [m for m in state.markers if m.kind == "boundary"]
        assert "auto · agent's count 85,600 · check on the recording" in boundary.text
        assert "→ tokens after 9,000 (next prompt)" in boundary.text
        split = next(m for m in state.markers if m.kind == "split")
        event = state.event(state.active_event)
        assert event is not None and event.tokens_before is not None
        name = "check" if event.trigger in ("threshold", "projection", "overflow") else "before"
        assert f"{name} {event.tokens_before:,} → {event.tokens_after:,} after" in split.text


@pytest.mark.skipif(not COMPACTED.exists(), reason="samples not generated")
async def test_at_message_is_one_number_everywhere() -> None:
    session = load_session(str(COMPACTED))
    app = quiet_app()
    async with app.run_test(size=(160, 44), notifications=True) as pilot:
        screen = await open_session(pilot, session)
        state = screen.state
        assert state is not None and state.result is not None
        taken = next(
            (k, e)
            for k, e in enumerate(state.result.events)
            if e.kind == "compact" and e.recorded_index == 0
        )
        event_id, event = taken
        at = compaction_at(session, event, None)
        assert at == session.compactions[0].message_index  # the list's rule is above it
        assert at != event.message_index  # (the cut the replay drew is elsewhere)
        head = event.head_indices[-1]
        screen.select_message(head)
        await until(pilot, lambda: screen.detail.message_index == head, "the detail pane")
        detail = " ".join(screen.detail.as_text(width=200).split())
        assert f"summarised by the compaction at message {at}:" in detail, detail

        screen.select_message(0)
        await settle(pilot)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        titles = [n.title for n in app._notifications]
        assert f"compact at message {at}" in titles, titles

        await pilot.press("c")
        await settle(pilot)
        compaction = app.screen
        assert isinstance(compaction, CompactionScreen)
        position = next(p for p, s in enumerate(compaction.events) if s.event_id == event_id)
        compaction.show_event(position)
        await pilot.pause()
        assert f"at message #{at} " in str(compaction.query_one("#cs-mode").render())
        tokens = str(compaction.query_one("#cs-tokens", Static).render())
        assert "agent's count" in tokens and "before: check" in tokens
