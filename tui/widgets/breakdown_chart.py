"""What fills the window, call after call: a stacked column per model call, one colour per category
of :mod:`core.insights.breakdown` (system + tools at the bottom, the residual on top).

The widget draws a :class:`~core.insights.breakdown.ContextBreakdown` it is given (:meth:`BreakdownChart.show`)
and computes nothing itself. Its x-scale is the token gauge's (:func:`~tui.widgets.gauge_series.bucket_grid`,
after the same gutter): a call, or a bucket of calls, sits in the same columns in both, the bucket
showing the call with the largest total of its group. A cell takes the colour of
the category at its middle; the top cell of a column is a partial block. ``←``/``→``, ``home``/``end``
and a click select a call; :class:`BreakdownChart.CallSelected` says which.

Wiring: the session screen gives it ``breakdown(session)`` once the session is loaded (a worker:
it walks every message) and keeps its ``selected_call`` in step with the gauge's.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from core.insights.breakdown import (
    CATEGORIES,
    CATEGORY_LABELS,
    CATEGORY_SHORT,
    CallBreakdown,
    ContextBreakdown,
)
from core.model.write_numbers import short_tokens
from tui.widgets.gauge_series import GUTTER, BucketGrid, bucket_grid

_EIGHTHS = " ▁▂▃▄▅▆▇█"


class BreakdownChart(Widget, can_focus=True):
    """The categories of the context at every call, stacked (see the module docstring)."""

    DEFAULT_CSS = """
    BreakdownChart {
        height: 12;
        min-height: 5;
        background: $surface;
    }
    BreakdownChart > .breakdown-chart--system_and_tools { color: $secondary; }
    BreakdownChart > .breakdown-chart--user { color: magenta; }
    BreakdownChart > .breakdown-chart--assistant_text { color: $primary-lighten-1; }
    BreakdownChart > .breakdown-chart--reasoning { color: mediumpurple; }
    BreakdownChart > .breakdown-chart--tool_calls { color: $warning-darken-2; }
    BreakdownChart > .breakdown-chart--tool_outputs { color: $warning; }
    BreakdownChart > .breakdown-chart--summaries { color: $success; }
    BreakdownChart > .breakdown-chart--attachments { color: $error-lighten-2; }
    BreakdownChart > .breakdown-chart--residual { color: $foreground 30%; }
    BreakdownChart > .breakdown-chart--cursor { background: $foreground 14%; }
    BreakdownChart:focus > .breakdown-chart--cursor { background: $accent 35%; }
    BreakdownChart > .breakdown-chart--label { text-style: bold; }
    BreakdownChart > .breakdown-chart--muted { color: $text-muted; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *(f"breakdown-chart--{category}" for category in CATEGORIES),
        "breakdown-chart--cursor",
        "breakdown-chart--label",
        "breakdown-chart--muted",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "Prev call", show=False, id="breakdown.prev-call"),
        Binding("right", "move(1)", "Next call", show=False, id="breakdown.next-call"),
        Binding("home", "edge(0)", "First call", show=False, id="breakdown.first-call"),
        Binding("end", "edge(1)", "Last call", show=False, id="breakdown.last-call"),
    ]

    class CallSelected(Message):
        """The user selected a call in the chart."""

        def __init__(self, call_index: int) -> None:
            super().__init__()
            self.call_index = call_index

    selected_call: reactive[int | None] = reactive(None)
    """The selected call (``call_index``), None when there is nothing to select."""

    def __init__(
        self,
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's name
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.breakdown: ContextBreakdown | None = None
        self._rows: list[Strip] = []
        self._rows_key: tuple[int, int, int | None, int] | None = None
        self._columns: list[int] = []
        """The call each bucket shows."""
        self._grid = bucket_grid(0, 0)
        """The x-scale the buckets are drawn on (the gauge's)."""

    # -- data ----------------------------------------------------------------------------------

    def show(self, breakdown: ContextBreakdown | None, selected_call: int | None = None) -> None:
        """Draw ``breakdown`` (None: nothing), selecting ``selected_call`` (default: the last)."""
        self.breakdown = breakdown
        self._rows_key = None
        calls = breakdown.calls if breakdown is not None else []
        if not calls:
            self.selected_call = None
        elif selected_call is not None and 0 <= selected_call < len(calls):
            self.selected_call = selected_call
        else:
            self.selected_call = len(calls) - 1
        self.refresh()

    def watch_selected_call(self) -> None:
        self._rows_key = None
        self.refresh()

    # -- actions -------------------------------------------------------------------------------

    def action_move(self, delta: int) -> None:
        calls = self._calls()
        if not calls or self.selected_call is None:
            return
        columns = self._columns or list(range(len(calls)))
        if self._grid.buckets == len(columns):
            here = self._grid.bucket_of(self.selected_call)
        else:
            here = _column_of(columns, self.selected_call)
        target = columns[max(0, min(len(columns) - 1, here + delta))]
        self._select(target)

    def action_edge(self, end: int) -> None:
        calls = self._calls()
        if calls:
            self._select(len(calls) - 1 if end else 0)

    def on_click(self, event: events.Click) -> None:
        bucket = self._grid.bucket_at(event.x - GUTTER)
        if bucket is not None and bucket < len(self._columns):
            self._select(self._columns[bucket])

    def _select(self, call_index: int) -> None:
        if call_index != self.selected_call:
            self.selected_call = call_index
            self.post_message(self.CallSelected(call_index))

    def _calls(self) -> list[CallBreakdown]:
        return self.breakdown.calls if self.breakdown is not None else []

    # -- drawing -------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        key = (width, height, self.selected_call, id(self.breakdown))
        if key != self._rows_key:
            self._rows = self._build_rows(width, height)
            self._rows_key = key
        if y < len(self._rows):
            return self._rows[y]
        return Strip.blank(width, self.rich_style)

    def _style(self, name: str) -> Style:
        return self.rich_style + self.get_component_rich_style(f"breakdown-chart--{name}")

    def _build_rows(self, width: int, height: int) -> list[Strip]:
        calls = self._calls()
        if not calls or width <= 0 or height < 3:
            text = "No model calls to break down." if self.breakdown is not None else ""
            return [self._text_row([(text, self._style("muted"))], width)]
        self._grid = bucket_grid(len(calls), width - GUTTER)
        self._columns = _columns(calls, self._grid)
        bars = height - 2
        ceiling = max(call.total_tokens for call in calls) or 1
        label = self._label_row(width)
        body = [self._bar_row(calls, bars - 1 - r, bars, ceiling, width) for r in range(bars)]
        return [label, *body, self._legend_row(width)]

    def _label_row(self, width: int) -> Strip:
        selected = self.selected_call
        calls = self._calls()
        if selected is None or not 0 <= selected < len(calls):
            return self._text_row([], width)
        call = calls[selected]
        total = max(call.total_tokens, 1)
        ranked = sorted(CATEGORIES, key=lambda c: -call.tokens(c))[:3]
        parts = ", ".join(
            f"{CATEGORY_LABELS[c]} {call.tokens(c) / total:.0%}" for c in ranked if call.tokens(c)
        )
        estimated = "" if call.total_provenance == "recorded" else " (estimated)"
        return self._text_row(
            [
                (f"call {call.call_index}", self._style("label")),
                (f" · {short_tokens(call.total_tokens)}{estimated} · {parts}", self.rich_style),
            ],
            width,
        )

    def _bar_row(
        self, calls: list[CallBreakdown], row: int, bars: int, ceiling: int, width: int
    ) -> Strip:
        per_cell = ceiling / bars
        low, high = row * per_cell, (row + 1) * per_cell
        cursor = self._style("cursor")
        muted = self._style("muted")
        axis = short_tokens(ceiling) if row == bars - 1 else "0" if row == 0 else ""
        segments: list[Segment] = [Segment(f"{axis:>{GUTTER - 1}}│", muted)]
        grid = self._grid
        bars_cells = 2 * grid.cells_per_series
        selected = self.selected_call
        chosen = grid.bucket_of(selected) if selected is not None and grid.buckets else None
        for bucket, call_index in enumerate(self._columns):
            call = calls[call_index]
            char, category = _cell(call, low, high)
            style = self._style(category) if category is not None else self.rich_style
            if bucket == chosen:
                style = style + Style(bgcolor=cursor.bgcolor)
            segments.append(Segment(char * bars_cells, style))
            gap = grid.width_of(bucket) - bars_cells
            if gap > 0:
                segments.append(Segment(" " * gap, self.rich_style))
        return _fit(Strip(segments), width, self.rich_style)

    def _legend_row(self, width: int) -> Strip:
        wide = sum(len(CATEGORY_LABELS[c]) + 3 for c in CATEGORIES) <= width
        names = CATEGORY_LABELS if wide else CATEGORY_SHORT
        parts: list[tuple[str, Style]] = []
        for category in CATEGORIES:
            parts.append(("█", self._style(category)))
            parts.append((f"{names[category]}  ", self._style("muted")))
        return self._text_row(parts, width)

    def _text_row(self, parts: list[tuple[str, Style]], width: int) -> Strip:
        return _fit(Strip([Segment(text, style) for text, style in parts]), width, self.rich_style)


def _columns(calls: list[CallBreakdown], grid: BucketGrid) -> list[int]:
    """The call each bucket of ``grid`` shows: every call, or the largest of each bucket."""
    if grid.one_call_each:
        return list(range(len(calls)))
    return [
        max(grid.calls_of(b), key=lambda c: (calls[c].total_tokens, -c))
        for b in range(grid.buckets)
    ]


def _column_of(columns: list[int], call_index: int) -> int:
    """The column showing ``call_index``, or the last one before it."""
    best = 0
    for k, shown in enumerate(columns):
        if shown <= call_index:
            best = k
    return best


def _cell(call: CallBreakdown, low: float, high: float) -> tuple[str, str | None]:
    """The character and category of the cell covering ``low``..``high`` tokens of ``call``."""
    total = call.total_tokens
    if total <= low:
        return " ", None
    middle = (low + high) / 2
    if total < high:
        eighths = max(1, min(8, round((total - low) / (high - low) * 8)))
        return _EIGHTHS[eighths], _category_at(call, min(middle, (low + total) / 2))
    return "█", _category_at(call, middle)


def _category_at(call: CallBreakdown, tokens: float) -> str:
    """The category stacked at height ``tokens`` of ``call``'s column."""
    reached = 0
    for category in CATEGORIES:
        reached += call.tokens(category)
        if tokens < reached:
            return category
    return CATEGORIES[-1]


def _fit(strip: Strip, width: int, style: Style) -> Strip:
    return strip.extend_cell_length(width, style).crop(0, width)
