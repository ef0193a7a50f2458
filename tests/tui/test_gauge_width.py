"""The gauge and the breakdown chart under it take their whole width, at any number of calls.

Buckets are of unequal width (:func:`tui.widgets.gauge_series.bucket_grid`): 86 calls on a
160-column terminal were drawn over 86 of its 154 cells (two cells per bucket of two calls,
while the breakdown chart drew three), 157 calls over 106. Each test here failed then.
"""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from core.insights.breakdown import CallBreakdown, ContextBreakdown
from core.model.session import Provenance
from tui.widgets.breakdown_chart import BreakdownChart
from tui.widgets.gauge import BLOCKS, GUTTER, TokenGauge
from tui.widgets.gauge_series import (
    COMPACT,
    RECORDED_COMPACT,
    Series,
    bucket_grid,
    bucket_series,
)

COUNTS = (1, 2, 3, 86, 153, 154, 155, 157, 1000, 100_000)
WIDTHS = (74, 153, 154, 155)  # the chart's width: an 80-, 159-, 160- and 161-column terminal
BARS = set(BLOCKS[1:])


def _series(n: int) -> Series:
    """``n`` calls, every one with both bars drawn, the recording's compactions every 37 calls
    and the policy's every 53."""
    recorded = [10_000 + (i * 7919) % 90_000 for i in range(n)]
    flags = [0] * n
    for call in range(5, n, 37):
        flags[call] |= RECORDED_COMPACT
    for call in range(11, n, 53):
        flags[call] |= COMPACT
    return Series(
        list(range(n)),
        recorded,
        [value // 2 + 5_000 for value in recorded],
        [Provenance.COUNTED] * n,
        flags,
        200_000,
        160_000,
        max(recorded),
    )


@pytest.mark.parametrize("calls", COUNTS)
@pytest.mark.parametrize("width", WIDTHS)
def test_the_buckets_share_out_every_cell_and_every_call(calls: int, width: int) -> None:
    grid = bucket_grid(calls, width)
    assert grid.x_of(0) == 0 and grid.x_of(grid.buckets) == width  # to the cell
    assert grid.first_call(0) == 0 and grid.first_call(grid.buckets) == calls
    assert grid.buckets == min(calls, width // 2)  # a bucket per call where each has two cells
    widths = {grid.width_of(b) for b in range(grid.buckets)}
    sizes = {len(grid.calls_of(b)) for b in range(grid.buckets)}
    assert max(widths) - min(widths) <= 1 and max(sizes) - min(sizes) <= 1
    assert min(widths) >= 2 * grid.cells_per_series
    for x in range(width):
        bucket = grid.bucket_at(x)
        assert bucket is not None and grid.x_of(bucket) <= x < grid.x_of(bucket + 1)
    for call in (0, calls // 3, calls - 1):
        assert call in grid.calls_of(grid.bucket_of(call))
    assert grid.bucket_at(-1) is None and grid.bucket_at(width) is None


def test_make_runs_sample_takes_the_width_of_a_160_column_terminal() -> None:
    layout = bucket_series(_series(86), 154)
    assert layout.grid.x_of(layout.buckets) == 154  # (was 86: 43 buckets of two cells)
    assert layout.buckets == 77
    layout = bucket_series(_series(157), 154)
    assert layout.grid.x_of(layout.buckets) == 154  # (was 106)


class Charts(App[None]):
    """The gauge and the breakdown chart, one above the other, as on the session screen."""

    CSS = "TokenGauge { height: 10; } BreakdownChart { height: 8; }"

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.calls = calls

    def compose(self) -> ComposeResult:
        yield TokenGauge()
        yield BreakdownChart()

    def on_mount(self) -> None:
        self.query_one(TokenGauge).show_series(_series(self.calls))
        self.query_one(BreakdownChart).show(_breakdown(self.calls))


def _breakdown(n: int) -> ContextBreakdown:
    calls = [
        CallBreakdown(
            call_index=i,
            message_index=i,
            total_tokens=10_000 + (i * 7919) % 90_000,
            total_provenance="recorded",
            system_and_tools=5_000,
            user=0,
            assistant_text=0,
            reasoning=0,
            tool_calls=0,
            tool_outputs=0,
            tool_outputs_by_tool={},
            summaries=0,
            attachments=0,
            residual=5_000 + (i * 7919) % 90_000,
        )
        for i in range(n)
    ]
    return ContextBreakdown(
        estimator="chars4", overhead_tokens=5_000, overhead_call_index=0, calls=calls, notes=[]
    )


def _bar_columns(row: str) -> list[int]:
    return [x for x, char in enumerate(row) if char in BARS]


@pytest.mark.parametrize("calls", COUNTS)
@pytest.mark.parametrize("columns", (80, 160, 161))
async def test_the_drawn_chart_spans_the_full_width(calls: int, columns: int) -> None:
    app = Charts(calls)
    async with app.run_test(size=(columns, 24)) as pilot:
        await pilot.pause()
        gauge = app.query_one(TokenGauge)
        chart = app.query_one(BreakdownChart)
        layout = gauge.layout_for(gauge.size.width)
        grid = layout.grid
        assert grid.x_of(grid.buckets) == columns - GUTTER
        bottom = gauge.render_line(gauge.size.height - 2).text  # every bar fills its lowest row
        drawn = _bar_columns(bottom)
        assert drawn[0] == GUTTER
        last = grid.buckets - 1
        assert drawn[-1] == GUTTER + grid.x_of(last) + 2 * grid.cells_per_series - 1
        assert columns - drawn[-1] <= 4  # at most the last bucket's gap is left
        assert len(drawn) == grid.buckets * 2 * grid.cells_per_series
        # the breakdown chart reads the same grid: a call's column is the gauge's
        chart.render_line(1)
        assert chart._grid == grid
        under = _bar_columns(chart.render_line(chart.size.height - 2).text)
        assert under == drawn


@pytest.mark.parametrize("calls", (2, 86, 157, 1000))
async def test_a_click_on_each_cell_selects_the_call_drawn_there(calls: int) -> None:
    app = Charts(calls)
    async with app.run_test(size=(160, 24)) as pilot:
        await pilot.pause()
        gauge = app.query_one(TokenGauge)
        chart = app.query_one(BreakdownChart)
        layout = gauge.layout_for(gauge.size.width)
        grid = layout.grid
        for x in range(GUTTER, 160):
            await pilot.click(TokenGauge, offset=(x, 4))
            bucket = grid.bucket_at(x - GUTTER)
            assert bucket is not None
            assert gauge.selected_call == layout.representative[bucket], x
            assert gauge.bucket_of(gauge.selected_call) == bucket
            # the label names the call drawn there, the cursor sits on its cells
            assert gauge.render_line(0).text.startswith(f" call {gauge.selected_call} ")
            markers = gauge.render_line(gauge.size.height - 1).text
            start, end = GUTTER + grid.x_of(bucket), GUTTER + grid.x_of(bucket + 1)
            cells = markers[start:end]  # (a bucket full of markers has no room for ▔)
            assert "▔" in cells or not cells.strip("◆◇")
            assert "▔" not in markers[:start] + markers[end:]
        for x in range(GUTTER, 160, 7):
            await pilot.click(BreakdownChart, offset=(x, 3))
            selected = chart.selected_call
            assert selected is not None
            assert grid.bucket_of(selected) == grid.bucket_at(x - GUTTER), x


@pytest.mark.parametrize("calls", (3, 86, 157, 1000, 100_000))
@pytest.mark.parametrize("columns", (80, 160))
async def test_markers_land_on_their_calls_cells(calls: int, columns: int) -> None:
    app = Charts(calls)
    async with app.run_test(size=(columns, 24)) as pilot:
        await pilot.pause()
        gauge = app.query_one(TokenGauge)
        grid = gauge.layout_for(gauge.size.width).grid
        gauge.select_call(0)
        await pilot.pause()
        markers = gauge.render_line(gauge.size.height - 1).text
        series = gauge.series
        for glyph, flag in (("◇", RECORDED_COMPACT), ("◆", COMPACT)):
            marked = {
                grid.bucket_of(call) for call in range(series.calls) if series.flags[call] & flag
            }
            for bucket in range(grid.buckets):
                cells = markers[GUTTER + grid.x_of(bucket) : GUTTER + grid.x_of(bucket + 1)]
                assert (glyph in cells) == (bucket in marked), (glyph, bucket, cells)
