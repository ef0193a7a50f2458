"""The breakdown chart, the one-call breakdown and the forgotten-facts view, each in a small app of
its own: Pilot tests on their state, SVG snapshots at a fixed size, and the chart drawn for every
real session of ../shared/samples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from core.formats import load_session
from core.insights.breakdown import ContextBreakdown, breakdown
from core.insights.compaction_records import CompactionReport, compaction_reports
from core.insights.cost import SessionCost, session_cost
from core.model.session import Session
from core.replay import native_policy, replay
from tests.support.paths import REPO
from tui.widgets.breakdown_call import BreakdownCall
from tui.widgets.breakdown_chart import BreakdownChart
from tui.widgets.forgotten_view import ForgottenView
from tui.widgets.gauge_series import GUTTER

ROOT = REPO
COMPACTED = ROOT / "sample_sessions" / "claude-code" / "compacted.jsonl"
SAMPLES = ROOT.parent / "shared" / "samples"
SAMPLE_FILES = (
    sorted(
        p
        for p in SAMPLES.rglob("*")
        if p.is_file() and p.suffix in (".jsonl", ".json") and "storage" not in p.parts
    )
    if SAMPLES.is_dir()
    else []
)
needs_sample = pytest.mark.skipif(not COMPACTED.exists(), reason="sample_sessions not generated")
SIZE = (100, 30)

SnapCompare = Callable[..., bool]


class WidgetsApp(App[None]):
    """The chart above, the selected call's breakdown and a compaction's report below."""

    CSS = "Screen { layout: vertical; } #below { layout: horizontal; height: 1fr; }"

    def __init__(
        self,
        data: ContextBreakdown,
        cost: SessionCost | None = None,
        report: CompactionReport | None = None,
    ) -> None:
        super().__init__()
        self.data, self.cost, self.report = data, cost, report
        self.selected: list[int] = []

    def compose(self) -> ComposeResult:
        from textual.containers import Horizontal

        yield BreakdownChart()
        with Horizontal(id="below"):
            yield BreakdownCall()
            yield ForgottenView()

    def on_mount(self) -> None:
        self.query_one(BreakdownChart).show(self.data)
        self.query_one(ForgottenView).show(self.report)
        self._show_call(self.query_one(BreakdownChart).selected_call)

    def on_breakdown_chart_call_selected(self, event: BreakdownChart.CallSelected) -> None:
        self.selected.append(event.call_index)
        self._show_call(event.call_index)

    def _show_call(self, call_index: int | None) -> None:
        call = self.data.at(call_index) if call_index is not None else None
        cost = None
        if self.cost is not None and call_index is not None:
            cost = next((c for c in self.cost.per_call if c.call_index == call_index), None)
        self.query_one(BreakdownCall).show(call, cost)


def _loaded() -> tuple[Session, WidgetsApp]:
    if not COMPACTED.exists():
        pytest.skip("sample_sessions not generated")
    session = load_session(COMPACTED)
    cost = session_cost(session)
    result = replay(session, native_policy(session))
    reports = compaction_reports(session, result, cost)
    return session, WidgetsApp(breakdown(session), cost, reports[0])


@needs_sample
async def test_the_chart_selects_calls_with_keys_and_says_so() -> None:
    _session, app = _loaded()
    async with app.run_test(size=SIZE) as pilot:
        chart = app.query_one(BreakdownChart)
        last = len(app.data.calls) - 1
        assert chart.selected_call == last
        chart.focus()
        await pilot.press("home")
        assert chart.selected_call == 0
        await pilot.press("right", "right")
        columns = chart._columns  # a column per call, or the largest of each group of calls
        assert chart.selected_call == columns[2]
        assert app.selected == [0, columns[1], columns[2]]
        assert app.query_one(BreakdownCall).call is app.data.calls[columns[2]]
        await pilot.press("end")
        assert chart.selected_call == last


@needs_sample
async def test_a_click_selects_the_call_of_its_column() -> None:
    _session, app = _loaded()
    async with app.run_test(size=SIZE) as pilot:
        chart = app.query_one(BreakdownChart)
        await pilot.click(BreakdownChart, offset=(1, 5))  # the axis: nothing
        await pilot.click(BreakdownChart, offset=(GUTTER + chart._grid.x_of(3), 5))
        assert chart.selected_call == chart._columns[3]


@needs_sample
async def test_the_forgotten_view_lists_recall_and_dropped_facts() -> None:
    _session, app = _loaded()
    async with app.run_test(size=SIZE):
        view = app.query_one(ForgottenView)
        assert view.report is not None
        text = view.describe(view.report).plain
        assert "What the summary kept" in text
        assert "facts" in text
        view.show(None)
        assert view.report is None


async def test_empty_data_draws_a_notice() -> None:
    app = WidgetsApp(
        ContextBreakdown(
            estimator="chars/4", overhead_tokens=0, overhead_call_index=None, calls=[], notes=[]
        )
    )
    async with app.run_test(size=SIZE):
        chart = app.query_one(BreakdownChart)
        assert chart.selected_call is None
        assert "No model calls" in chart.render_line(0).text
        assert "No call selected" in str(app.query_one(BreakdownCall).render())


@needs_sample
def test_snapshot_of_the_chart_the_call_and_the_forgotten_facts(snap_compare: SnapCompare) -> None:
    _session, app = _loaded()

    async def select(pilot: object) -> None:
        chart = app.query_one(BreakdownChart)
        chart.focus()
        chart.selected_call = 5
        app._show_call(5)

    assert snap_compare(app, terminal_size=SIZE, run_before=select)


@pytest.mark.skipif(not SAMPLE_FILES, reason="shared samples are not available")
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: str(p.relative_to(SAMPLES)))
async def test_the_chart_renders_every_sample(path: Path) -> None:
    session = load_session(path)
    data = breakdown(session)
    app = WidgetsApp(data)
    async with app.run_test(size=SIZE):
        chart = app.query_one(BreakdownChart)
        lines = [chart.render_line(y).text for y in range(chart.size.height)]
        if data.calls:
            assert lines[0].startswith(f"call {len(data.calls) - 1}")
            assert any("█" in line or any(c in line for c in "▁▂▃▄▅▆▇") for line in lines[1:-1])
            assert "system + tools" in lines[-1] or "sys" in lines[-1]


async def test_the_gauge_and_the_chart_share_one_x_scale() -> None:
    """With the band open, the selected call's column is the same in the gauge and the chart
    under it, for a call of every part of the session."""
    from tests.support.sessions import claude_like_session
    from tests.support.tui_harness import open_session, quiet_app, settle, until
    from tui.widgets.gauge import TokenGauge

    session = claude_like_session(30, big_lines=50)
    app = quiet_app()
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_session(pilot, session)
        await pilot.press("b")
        await settle(pilot)
        chart = screen.query_one(BreakdownChart)
        gauge = screen.query_one(TokenGauge)
        await until(pilot, lambda: chart.breakdown is not None, "the breakdown")
        assert chart.region.x == gauge.region.x and chart.region.width == gauge.region.width
        calls = len(chart.breakdown.calls) if chart.breakdown is not None else 0
        assert calls > 40
        for call in (0, calls // 3, calls - 1):
            at = screen.state.message_for_call(call) if screen.state is not None else None
            assert at is not None
            screen.select_message(at)
            await settle(pilot)
            assert gauge.selected_call == call
            assert chart.selected_call == call
            layout = gauge.layout_for(gauge.size.width)
            chart.render_line(1)  # (its rows, and so its x-scale, for this size)
            assert chart._grid == layout.grid  # one x-scale: the same buckets
            assert chart._grid.bucket_of(call) == gauge.bucket_of(call)
