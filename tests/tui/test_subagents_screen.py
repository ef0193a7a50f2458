"""The session screen drills into a sub-agent (its own session screen, its own gauge) and back."""

from __future__ import annotations

from pathlib import Path

from core.formats import load_session
from core.formats.subagents import child_paths
from tests.support.tui_harness import quiet_app, settle
from tests.unit.test_subagents import SID, _family  # the family written for the core tests
from tui.screens.session import SessionScreen
from tui.screens.subagents import SubagentsScreen, child_label
from tui.widgets.gauge_series import SUBAGENT, build_series


def test_a_row_names_the_sub_agent_and_a_compaction_run() -> None:
    assert child_label("/x/agent-abc.jsonl") == "abc  (sub-agent)"
    assert child_label("/x/agent-acompact-9f.jsonl") == "acompact-9f  (the run of a compaction)"
    assert child_label("/c/events.jsonl#explore-1") == "explore-1  (sub-agent)"


def test_a_row_says_where_the_sub_agent_ran(tmp_path: Path) -> None:
    parent = load_session(_family(tmp_path))
    [path] = child_paths(parent)
    # calls are numbered from 0, as everywhere: it started after call 0, call 1 read its answer
    assert child_label(path, parent) == "abc123  (sub-agent, between calls 0 and 1)"


def test_the_parents_gauge_marks_where_the_sub_agent_ran(tmp_path: Path) -> None:
    parent = load_session(_family(tmp_path))
    series = build_series(parent, None)
    # the sub-agent started after call 0 and its answer was read by call 1
    assert [bool(flag & SUBAGENT) for flag in series.flags] == [True, True]
    child = load_session(child_paths(parent)[0])
    assert not any(flag & SUBAGENT for flag in build_series(child, None).flags)


async def test_drill_into_a_sub_agent_and_back(tmp_path: Path) -> None:
    parent = load_session(_family(tmp_path))
    app = quiet_app()
    async with app.run_test(size=(120, 34)) as pilot:
        app.push_screen(SessionScreen(session=parent, live=False))
        await settle(pilot)
        parent_screen = app.screen
        assert isinstance(parent_screen, SessionScreen) and parent_screen.state is not None
        parent_state = parent_screen.state
        assert parent_screen.check_action("subagents", ()) is True
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, SubagentsScreen)
        await pilot.press("enter")
        await settle(pilot)
        child_screen = app.screen
        assert isinstance(child_screen, SessionScreen) and child_screen is not parent_screen
        assert child_screen.state is not None
        child = child_screen.state.session
        assert (child.id, child.parent_session_id) == ("abc123", SID)
        assert child_screen.state.result is not None
        assert len(child_screen.state.result.points) == 1  # its own gauge: its one call
        assert child_screen.check_action("subagents", ()) is False  # it started none
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen_stack[-1] is parent_screen
        assert parent_state.session is parent


async def test_a_copilot_sub_agent_opens_from_the_same_file(tmp_path: Path) -> None:
    from tests.unit.test_formats_copilot import _session

    parent = load_session(_session(tmp_path))
    app = quiet_app()
    async with app.run_test(size=(120, 34)) as pilot:
        app.push_screen(SessionScreen(session=parent, live=False))
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        child_screen = app.screen
        assert isinstance(child_screen, SessionScreen) and child_screen.state is not None
        assert child_screen.state.session.id == "explore-1"
        assert child_screen.state.session.parent_session_id == parent.id
