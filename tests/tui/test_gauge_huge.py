"""The gauge with absurd token counts (2^63 and more, from a damaged transcript): drawn, never an
``OverflowError`` (its series are machine integers, ``array("q")``)."""

from __future__ import annotations

from core.model.session import Session
from core.policy import get_preset
from core.replay import replay
from tests.support.builders import SessionBuilder
from tests.support.tui_harness import open_session, quiet_app, settle
from tests.support.views_fixtures import Host
from tui.widgets.gauge import TokenGauge
from tui.widgets.gauge_series import MAX_DRAWN, build_series

HUGE = [2**63, 10**20, 2**64 - 1, 2**70]


def huge_session() -> Session:
    convo = SessionBuilder().user("go")
    for n, tokens in enumerate([1_000, *HUGE, 2_000]):
        convo.reply(f"step {n}", context=tokens).user(f"next {n}")
    return convo.session(window=200_000)


def test_the_series_clamp_what_a_machine_integer_cannot_hold() -> None:
    series = build_series(huge_session(), None)
    assert list(series.recorded) == [1_000, *[MAX_DRAWN] * len(HUGE), 2_000]
    assert series.peak == MAX_DRAWN


async def test_the_gauge_draws_counts_of_2_to_the_63_and_more() -> None:
    session = huge_session()
    gauge = TokenGauge()
    gauge.styles.height = 10
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        gauge.update_result(session, None)
        await pilot.pause()
        rows = [gauge.render_line(y).text for y in range(gauge.size.height)]
        assert any("█" in row for row in rows)
        for _ in range(len(HUGE) + 2):
            await pilot.press("right")
        gauge.update_result(session, replay(session, get_preset("seed")))
        await pilot.pause()
        assert gauge.series.has_simulated


async def test_the_app_shows_a_session_with_such_counts() -> None:
    app = quiet_app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await open_session(pilot, huge_session())
        for _ in range(6):
            await pilot.press("down")
        await settle(pilot)
        assert app.is_running and app.screen is screen
