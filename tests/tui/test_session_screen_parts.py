"""The session screen is composed, not inherited: a few project classes in its MRO, and the
controllers it owns run the workers (their groups as before)."""

from __future__ import annotations

from core.policy import get_preset
from tests.support.sessions import late_overflow_session
from tests.support.tui_harness import open_session, quiet_app
from tests.support.views_fixtures import Host
from tui.screens.session import SessionScreen
from tui.screens.session.controller import Controller
from tui.widgets.policy_panel import PolicyPanel


def test_the_screen_has_at_most_three_project_classes() -> None:
    ours = [c for c in SessionScreen.__mro__ if c.__module__.startswith(("tui", "core"))]
    assert len(ours) <= 3, ours


async def test_the_controllers_run_the_workers_and_never_draw() -> None:
    app = quiet_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_session(pilot, late_overflow_session())
        controllers = list(screen.query(Controller))
        assert {type(c).__name__ for c in controllers} == {
            "SessionLoader",
            "LiveTail",
            "ReplayRunner",
            "InsightsRunner",
        }
        assert not any(c.display for c in controllers)
        assert screen.state is not None and screen.state.result is not None  # replayed
        assert screen.state.insights is not None  # and its insights worked out
        assert screen.replays.replay_seconds is not None  # the replay controller's worker ran


async def test_the_policy_panel_asks_its_host_for_a_path() -> None:
    panel = PolicyPanel(get_preset("seed"))
    app = Host(panel)
    async with app.run_test(size=(100, 40)) as pilot:
        panel.focus()
        await pilot.press("ctrl+o")
        await pilot.pause()
        asked = [m for m in app.posted if isinstance(m, PolicyPanel.PathWanted)]
        assert [m.kind for m in asked] == ["load"] and asked[0].panel is panel
