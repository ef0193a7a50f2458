"""The compaction screen: a mock run with the template's headings, streaming and cancelling,
a live LLM that cannot be reached, stepping through the replay's compactions, jumping back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from textual.pilot import Pilot
from textual.widgets import Markdown, Static

from core.llm.summary_templates import get_template, split_sections
from core.model.session import Session
from core.policy import Policy
from core.replay import ReplayResult, replay
from tests.support.sessions import growing_session
from tests.support.tui_harness import HeldSummarizer, until
from tests.support.views_fixtures import Host, compacting_policy
from tools.scenes import COMPACTED, press, session_app, settle
from tui.figures import index_runs
from tui.messages import JumpToMessage
from tui.screens.compaction import CompactionScreen
from tui.screens.compaction_text import cut_of


@asynccontextmanager
async def opened(
    session: Session,
    policy: Policy,
    message_index: int,
    result: ReplayResult | None,
    *,
    size: tuple[int, int] = (120, 36),
    wait: bool = True,
    **kwargs: object,
) -> AsyncIterator[tuple[Host, Pilot[None], CompactionScreen]]:
    app = Host(Static("session screen"))
    async with app.run_test(size=size, notifications=True) as pilot:
        screen = CompactionScreen(session, policy, message_index, result, **kwargs)  # type: ignore[arg-type]
        app.push_screen(screen)
        await pilot.pause()
        if wait:
            await app.workers.wait_for_complete()
            await until(pilot, lambda: screen.drawn, "the compaction drawn")
        yield app, pilot, screen


async def _summary_shown(pilot: Pilot[None], screen: CompactionScreen) -> str:
    """The Markdown source once it shows the screen's summary (drawing is deferred a little)."""
    markdown = screen.query_one("#cs-summary", Markdown)
    await until(pilot, lambda: markdown.source == screen.summary_text, "the summary drawn")
    return markdown.source


def test_message_runs_never_span_a_message_outside_the_set() -> None:
    # Regression: "head #3–#267 / tail #3–#66" overlapped (a pinned lead in the tail)
    assert index_runs([4, 9, 6]) == "#4, #6, #9"
    assert index_runs([3, 60, 61, 62, 63]) == "#3, #60–#63"
    assert index_runs([3]) == "#3"
    assert index_runs([]) == "none"
    assert index_runs([1, 3, 5, 7, 9, 11]) == "#1, #3, #5, #7, … 2 more"


def test_the_cut_is_after_the_head_even_with_a_pinned_lead() -> None:
    from core.replay import ReplayEvent

    pinned = ReplayEvent(
        kind="compact",
        message_index=0,
        call_index=3,
        trigger="threshold",
        reason="",
        tokens_before=10,
        tokens_after=5,
        head_indices=[1, 2, 3, 4],
        tail_indices=[0, 5, 6],
    )
    assert cut_of(pinned) == 5
    plain = pinned.model_copy(update={"message_index": 5, "tail_indices": [5, 6]})
    assert cut_of(plain) == 5
    headless = pinned.model_copy(update={"head_indices": [], "message_index": 7})
    assert cut_of(headless) == 7


async def test_mock_compaction_shows_the_template_summary_and_fewer_tokens() -> None:
    session = growing_session(huge_at=3)
    policy = compacting_policy()
    last = len(session.messages) - 1
    async with opened(session, policy, last, None) as (_app, pilot, screen):
        assert screen.status == "done"
        result = screen.compaction
        assert result is not None and result.compacted
        assert result.tokens_after < result.tokens_before
        headings = get_template(policy.compaction.template).headings
        source = await _summary_shown(pilot, screen)
        for heading in headings:
            assert f"## {heading}" in source
        assert source == result.summary
        tokens = str(screen.query_one("#cs-tokens", Static).render())
        assert f"{result.tokens_before:,}" in tokens and f"{result.tokens_after:,}" in tokens
        split = str(screen.query_one("#cs-split", Static).render())
        assert f"head {len(result.head_ids)} messages" in split
        assert f"tail {len(result.tail_ids)} messages" in split
        next_rows = str(screen.query_one("#cs-next", Static).render()).splitlines()
        assert "summary" in next_rows[0]
        assert len(next_rows) == len(result.output_messages)


async def test_the_summary_streams_in_and_x_cancels() -> None:
    session = growing_session()
    slow = HeldSummarizer()
    last = len(session.messages) - 1
    async with opened(session, compacting_policy(), last, None, wait=False, summarizer=slow) as (
        app,
        pilot,
        screen,
    ):
        await until(pilot, lambda: "parser" in screen.summary_text, "the summary streamed")
        assert screen.status == "running"
        assert screen.summary_text == "## Goal\n\n- fix the parser\n"
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.status == "cancelled"
        assert slow.cancelled
        assert screen.compaction is None
        assert app.screen is screen  # cancelling keeps the screen; escape then closes it
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen


async def test_an_unreachable_live_llm_is_a_notification_and_the_screen_stays() -> None:
    session = growing_session()
    policy = compacting_policy()
    policy.llm = policy.llm.model_copy(
        update={
            "provider": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "nobody-home",
            "max_retries": 0,
            "timeout_s": 5.0,
        }
    )
    result = replay(session, compacting_policy())
    last = len(session.messages) - 1
    async with opened(session, policy, last, result) as (app, pilot, screen):
        assert screen.status == "failed"
        notes = [n.message for n in app._notifications]
        assert any("Compaction failed" in n for n in notes), notes
        assert app.screen is screen
        await pilot.press("left_square_bracket")  # the replay's compactions are still there
        await pilot.pause()
        assert screen.position is not None


async def test_brackets_step_through_the_replay_compactions() -> None:
    session = growing_session()
    policy = compacting_policy()
    result = replay(session, policy)
    compactions = [e for e in result.events if e.kind == "compact"]
    assert len(compactions) >= 3
    async with opened(session, policy, 0, result) as (_app, pilot, screen):
        assert screen.position is None
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.position == 0
        assert screen.current_message == cut_of(compactions[0])
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.position == 1
        event = compactions[1]
        assert screen.current_message == cut_of(event)
        mode = str(screen.query_one("#cs-mode").render())
        assert f"replay 2/{len(screen.events)}" in mode
        assert f"#{cut_of(event)}" in mode
        assert await _summary_shown(pilot, screen) == (event.summary or "")
        split = str(screen.query_one("#cs-split", Static).render())
        assert f"head {len(event.head_indices)} messages {index_runs(event.head_indices)}" in split
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert screen.position == 0


async def test_enter_jumps_to_the_message_and_closes() -> None:
    session = growing_session()
    policy = compacting_policy()
    result = replay(session, policy)
    async with opened(session, policy, 0, result) as (app, pilot, screen):
        await pilot.press("right_square_bracket", "enter")
        await pilot.pause()
        jumps = [m for m in app.posted if isinstance(m, JumpToMessage)]
        first = next(e for e in result.events if e.kind == "compact")
        assert [j.message_index for j in jumps] == [cut_of(first)]
        assert app.screen is not screen


@pytest.mark.skipif(not COMPACTED.exists(), reason="sample_sessions are not generated")
async def test_compaction_at_a_recorded_compaction_compacts_the_whole_context() -> None:
    # Regression: `]` to a recorded compaction then `c` ran on 2 messages (2,668 → 83,
    # "Goal (none)"); `r` on "replay 2/2" ran on 4. Both now run on the context the model had.
    app = session_app(COMPACTED)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "right_square_bracket", "c")
        screen = app.screen
        assert isinstance(screen, CompactionScreen)
        assert screen.status == "done" and screen.compaction is not None
        assert len(screen.compaction.head_ids) > 200
        assert split_sections(screen.compaction.summary)["Goal"].strip() != "(none)"
        run_now = screen.run_now
        assert run_now is not None and run_now.context.at_call
        result = screen.result
        assert result is not None
        point = next(p for p in result.points if p.message_index == screen.message_index)
        tokens = str(screen.query_one("#cs-tokens", Static).render())
        assert f"before {point.check_tokens:>9,}" in tokens  # the replay's figure, not an estimate
        await press(pilot, "right_square_bracket", "right_square_bracket")
        assert screen.position == 1 and "replay 2/2 (recorded)" in str(
            screen.query_one("#cs-mode").render()
        )
        event = screen.events[1].event
        assert event is not None
        await press(pilot, "r")
        assert screen.status == "done" and screen.compaction is not None
        assert not screen.through and screen.message_index == event.at_message_index
        assert len(screen.compaction.head_ids) >= len(event.head_indices) - 5


async def test_a_huge_message_is_compacted_from_a_window_of_it() -> None:
    """`c` on a session with one huge message (issue 26): the request carries a window of the
    message (its start and end around a marker), and what the summary kept is read from that
    window, not from the whole text."""
    from core.llm.summary_request import MAX_TEXT_CHARS, TEXT_CUT_MARKER
    from tests.support.builders import SessionBuilder, text_of_tokens

    huge = "start of the log\n" + "the quick brown fox jumps\n" * 200_000 + "end of the log"
    builder = SessionBuilder().user("hello").reply("hi", context=100).user(huge)
    for n in range(8):
        builder.user(f"more {n} " + text_of_tokens(5_000)).reply("ok", context=7_000 + n)
    session = builder.session(window=1_000_000_000)
    async with opened(session, compacting_policy(), len(session.messages) - 1, None) as (
        _app,
        _pilot,
        screen,
    ):
        assert screen.status == "done"
        assert screen.run_now is not None
        assert screen.run_now.result.head_ids[2] == "m2"  # the huge message is summarised
        request = "".join(m.content for m in screen.run_now.result.request_messages)
        assert len(huge) > 4 * MAX_TEXT_CHARS
        assert len(request) < MAX_TEXT_CHARS + 200_000
        assert "start of the log" in request and "end of the log" in request
        assert TEXT_CUT_MARKER.split("{n}")[1] in request
