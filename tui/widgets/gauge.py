"""The token-budget gauge: the context at every model call against the window.

One column pair per call (or per bucket of calls when there are more calls than columns): the
*recorded* context (what the agent actually sent) and the *simulated* one (what the active policy
would have sent) side by side, drawn with eighth blocks. Behind the bars: the threshold line, the
reserve band between the threshold and the window, and the zone above the window. Under them: a
marker row with the compactions (the policy's ◆, the recording's ◇) and the overflows (simulated ▲,
recorded △). The top row labels the selected call.

Drawing uses the line API: :meth:`TokenGauge.render_line` returns pre-built
:class:`~textual.strip.Strip` rows. The per-call series are flattened once per result
(:meth:`TokenGauge.update_result`); the buckets are computed once per width (slices and
C-level ``max``, so 100,000 calls bucket in milliseconds); the rows are built only when the size,
the theme or the result changes. Moving the selection (every key press in the message list moves
it) redraws the label and splices the cursor column into the cached chart rows, and repaints only
the label row and the old and new cursor columns. Colours are component classes styled in
its ``DEFAULT_CSS`` from the theme's variables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from core.model.session import Provenance, Session
from core.model.write_numbers import format_tokens, short_tokens
from tui.figures import call_label
from tui.widgets.gauge_scale import Scale, bucket_lines, largest, one_value, over_window
from tui.widgets.gauge_series import (
    COMPACT,
    EMPTY_SERIES,
    OVERFLOW_RECORDED,
    OVERFLOW_SIMULATED,
    RECORDED_COMPACT,
    SUBAGENT,
    THRESHOLD_INFERRED,
    Layout,
    Series,
    bucket_series,
    build_series,
)
from tui.widgets.gauge_series import GUTTER as GUTTER  # (the charts' one x-scale)
from tui.widgets.message_list import fit_strip

if TYPE_CHECKING:
    from core.replay import ReplayResult

BLOCKS = " ▁▂▃▄▅▆▇█"
"""Eighth blocks, index = filled eighths of a cell."""


MARKERS: tuple[tuple[int, str, str, tuple[str, str, str]], ...] = (
    (OVERFLOW_SIMULATED, "▲", "overflow", ("simulated overflow", "sim. overflow", "ovf")),
    (OVERFLOW_RECORDED, "△", "overflow-recorded", ("recorded overflow", "rec. overflow", "ovf")),
    (COMPACT, "◆", "compact", ("compaction", "compact", "cmp")),
    (RECORDED_COMPACT, "◇", "compact-recorded", ("recorded compaction", "rec. compact", "cmp")),
    (SUBAGENT, "↳", "subagent", ("sub-agent ran", "sub-agent", "sub")),
)
"""Marker glyphs in priority order: flag, glyph, component suffix, words (long to short)."""

PROVENANCE_SHORT = {
    Provenance.RECORDED: "rec.",
    Provenance.COUNTED: "cnt.",
    Provenance.ESTIMATED: "est.",
}


class TokenGauge(Widget, can_focus=True):
    """Context at every model call against the window: recorded and simulated series side by side,
    threshold line, reserve band, compaction and overflow markers. Left/right move the selection."""

    DEFAULT_CSS = """
    TokenGauge {
        height: 1fr;
        min-height: 3;
        background: $surface;
    }
    TokenGauge > .token-gauge--recorded { color: $foreground 45%; }
    TokenGauge > .token-gauge--recorded-over { color: $error 65%; }
    TokenGauge > .token-gauge--simulated { color: $primary-lighten-1; }
    TokenGauge > .token-gauge--simulated-over { color: $error; text-style: bold; }
    TokenGauge > .token-gauge--threshold { color: $warning; }
    TokenGauge > .token-gauge--threshold-inferred { color: $accent; text-style: bold; }
    TokenGauge > .token-gauge--window { color: $error; }
    TokenGauge > .token-gauge--reserve { background: $warning 14%; }
    TokenGauge > .token-gauge--over-window { background: $error 14%; }
    TokenGauge > .token-gauge--cursor { background: $foreground 14%; }
    TokenGauge:focus > .token-gauge--cursor { background: $accent 40%; }
    TokenGauge > .token-gauge--axis { color: $text-muted; }
    TokenGauge > .token-gauge--label { color: $foreground; text-style: bold; }
    TokenGauge:focus > .token-gauge--label { color: $text-accent; text-style: bold; }
    TokenGauge > .token-gauge--muted { color: $text-muted; }
    TokenGauge > .token-gauge--warning { color: $text-warning; text-style: bold; }
    TokenGauge > .token-gauge--overflow { color: $error; text-style: bold; }
    TokenGauge > .token-gauge--overflow-recorded { color: $error-lighten-1; }
    TokenGauge > .token-gauge--compact { color: $success; text-style: bold; }
    TokenGauge > .token-gauge--compact-recorded { color: $success-darken-1; }
    TokenGauge > .token-gauge--subagent { color: $accent; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "Prev call", show=False, id="gauge.prev-call"),
        Binding("right", "move(1)", "Next call", show=False, id="gauge.next-call"),
        Binding(
            "shift+left", "step(-1)", "Prev call (exact)", show=False, id="gauge.prev-call-exact"
        ),
        Binding(
            "shift+right", "step(1)", "Next call (exact)", show=False, id="gauge.next-call-exact"
        ),
        Binding("home", "edge(0)", "First call", show=False, id="gauge.first-call"),
        Binding("end", "edge(1)", "Last call", show=False, id="gauge.last-call"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "token-gauge--recorded",
        "token-gauge--recorded-over",
        "token-gauge--simulated",
        "token-gauge--simulated-over",
        "token-gauge--threshold",
        "token-gauge--threshold-inferred",
        "token-gauge--window",
        "token-gauge--reserve",
        "token-gauge--over-window",
        "token-gauge--cursor",
        "token-gauge--axis",
        "token-gauge--label",
        "token-gauge--muted",
        "token-gauge--warning",
        "token-gauge--overflow",
        "token-gauge--overflow-recorded",
        "token-gauge--compact",
        "token-gauge--compact-recorded",
        "token-gauge--subagent",
    }

    selected_call: reactive[int | None] = reactive(None, init=False, layout=False, repaint=False)
    """Index into the result's call points of the selected call (None: nothing to select).

    Not a repainting reactive: :meth:`watch_selected_call` repaints only what a move changes."""

    class CallSelected(Message):
        """The user selected a call in the gauge (keys or mouse)."""

        def __init__(self, call_index: int, message_index: int) -> None:
            super().__init__()
            self.call_index = call_index
            """Index into ``ReplayResult.points`` (call order)."""
            self.message_index = message_index
            """Index into ``Session.messages`` of that call's assistant message."""

    def __init__(
        self,
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's keyword
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self.series: Series = EMPTY_SERIES
        self._layout: Layout | None = None
        self._layout_width = -1
        self._rows: list[Strip] = []
        self._rows_key: tuple[object, ...] | None = None
        self._base = _Base([], False, None)
        self._base_key: tuple[object, ...] | None = None
        self._styles: dict[tuple[str, ...], Style] = {}
        self._drawn_key: tuple[object, ...] | None = None
        """What the chart rows last built draw (:meth:`_chart`), and those rows."""
        self._drawn_rows: list[Strip] = []
        self._drawn_before: tuple[Series, Layout] | None = None
        """The series drawn before the one shown and its buckets, until those are worked out."""

    # -- data ------------------------------------------------------------------------------------

    def update_result(
        self, session: Session, result: ReplayResult | None, calls: Sequence[int] | None = None
    ) -> None:
        """Draw ``result`` (both series); with None, the session's recorded usage only
        (``calls``: the indices of its model calls, when known: it is not walked again)."""
        self.show_series(build_series(session, result, self.series, calls))

    def show_series(self, series: Series) -> None:
        """Draw ``series`` (:func:`~tui.widgets.gauge_series.build_series` flattens a result)."""
        if self._layout is not None:
            self._drawn_before = (self.series, self._layout)
        self.series = series
        self._layout = None
        self._base_key = None
        n = self.series.calls
        if n == 0:
            self.set_reactive(TokenGauge.selected_call, None)
        elif self.selected_call is None or self.selected_call >= n:
            self.set_reactive(TokenGauge.selected_call, min(self.selected_call or 0, n - 1))
        self.refresh()

    def forget(self) -> None:
        """Draw nothing, and hold nothing of what was drawn (the screen is closed)."""
        self.show_series(EMPTY_SERIES)
        self._drawn_before = None

    def select_call(self, call_index: int) -> None:
        """Select a call (from outside: no :class:`CallSelected` is posted)."""
        n = self.series.calls
        if n == 0:
            return
        self.selected_call = max(0, min(call_index, n - 1))

    def watch_selected_call(self, old: int | None, new: int | None) -> None:
        width = self.size.width
        layout = self._layout
        if (
            old is None
            or new is None
            or layout is None
            or self._layout_width != width
            or self._base_key is None
            or not layout.buckets
        ):
            self.refresh()
            return
        # Only the label row and the two cursor columns change.
        height = self.size.height
        grid = layout.grid
        regions = [Region(0, 0, width, 1)]
        for call in (old, new):
            bucket = grid.bucket_of(call)
            regions.append(Region(GUTTER + grid.x_of(bucket), 0, grid.width_of(bucket), height))
        self.refresh(*regions)

    @property
    def selected_message(self) -> int | None:
        """The message index of the selected call."""
        call = self.selected_call
        if call is None or call >= self.series.calls:
            return None
        return self.series.message_index[call]

    def _choose(self, call_index: int) -> None:
        n = self.series.calls
        if n == 0:
            return
        call_index = max(0, min(call_index, n - 1))
        changed = call_index != self.selected_call
        self.selected_call = call_index
        if changed:
            self.post_message(self.CallSelected(call_index, self.series.message_index[call_index]))

    # -- keys and mouse --------------------------------------------------------------------------

    def layout_for(self, width: int) -> Layout:
        """The bucketed series for a widget ``width`` (cached per width)."""
        if self._layout is None or self._layout_width != width:
            # (the buckets of the series drawn before whose calls did not change are kept)
            self._layout = bucket_series(self.series, width - GUTTER, self._drawn_before)
            self._layout_width = width
            self._drawn_before = None
        return self._layout

    def bucket_of(self, call_index: int) -> int:
        """The column (bucket) that draws ``call_index`` at the current width."""
        return self.layout_for(self.size.width).grid.bucket_of(call_index)

    def action_move(self, step: int) -> None:
        """Move one column: one call, or one bucket (to its peak call) when calls are bucketed."""
        layout = self.layout_for(self.size.width)
        if not layout.buckets:
            return
        if self.selected_call is None:
            self._choose(0 if step > 0 else self.series.calls - 1)
            return
        if layout.grid.one_call_each:
            self._choose(self.selected_call + step)
            return
        bucket = max(0, min(self.bucket_of(self.selected_call) + step, layout.buckets - 1))
        self._choose(layout.representative[bucket])

    def action_step(self, step: int) -> None:
        """Move exactly one call, even when calls are bucketed."""
        if self.selected_call is None:
            self._choose(0)
        else:
            self._choose(self.selected_call + step)

    def action_edge(self, end: int) -> None:
        """Select the first (0) or last (1) call."""
        self._choose(self.series.calls - 1 if end else 0)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.x < GUTTER:
            return
        layout = self.layout_for(self.size.width)
        bucket = layout.grid.bucket_at(offset.x - GUTTER)
        if bucket is not None:
            event.stop()
            self.focus()
            self._choose(layout.representative[bucket])

    # -- styles ----------------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._base_key = None
        self._drawn_key = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def on_unmount(self) -> None:
        # (Textual drops a removed node's subscription only at the next theme change: until then
        # its callback, a method of this gauge, would keep the gauge and the session it drew)
        self.app.theme_changed_signal.unsubscribe(self)

    def _theme_changed(self, _theme: object) -> None:
        self._styles.clear()
        self._base_key = None
        self._drawn_key = None
        self.refresh()

    def _style(self, *names: str) -> Style:
        """The combined style of component classes (fg from the first, bg from the last)."""
        cached = self._styles.get(names)
        if cached is None:
            base = self.rich_style
            parts = [self.get_component_rich_style(f"token-gauge--{n}") for n in names]
            style = base + parts[0]
            for extra in parts[1:]:
                if extra.bgcolor is not None:
                    style += Style(bgcolor=extra.bgcolor)
            cached = self._styles[names] = style
        return cached

    # -- drawing ---------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width, height = self.size.width, self.size.height
        base_key = (width, height, self.has_focus, id(self.series))
        if base_key != self._base_key:
            self._base = self._build_base(width, height)
            self._base_key = base_key
            self._rows_key = None
        key = (base_key, self.selected_call)
        if key != self._rows_key:
            self._rows = self._place_cursor(self._base, width)
            self._rows_key = key
        if 0 <= y < len(self._rows):
            return self._rows[y]
        return Strip.blank(width, self.rich_style)

    def _text_strip(self, text: Text, width: int) -> Strip:
        segments = Segment.apply_style(text.render(self.app.console), self.rich_style)
        return fit_strip(Strip(list(segments)), width, self.rich_style)

    def _build_rows(self, width: int, height: int) -> list[Strip]:
        """Every row for the current selection, built from scratch."""
        return self._place_cursor(self._build_base(width, height), width)

    def _build_base(self, width: int, height: int) -> _Base:
        """The rows without the selection: the label row is a placeholder, no cursor column.

        Built once per result, size, focus and theme; moving the selection only redraws the label
        and splices the cursor column into the chart and marker rows (:meth:`_place_cursor`).
        """
        if width <= 0 or height <= 0:
            return _Base([], False, None)
        series = self.series
        legend_row = height >= 8 and series.calls > 0
        rows: list[Strip] = [Strip.blank(width, self.rich_style)]  # the label goes here
        if height == 1:
            return _Base(rows, not legend_row, None)
        if series.calls == 0:
            note = Text("  no model calls to draw", style=self._style("muted"))
            rows.append(self._text_strip(note, width))
            rows.extend(Strip.blank(width, self.rich_style) for _ in range(height - 2))
            return _Base(rows, not legend_row, None)
        marker_row = height >= 4
        chart_rows = height - 1 - int(legend_row) - int(marker_row)
        if legend_row:
            rows.append(self._text_strip(self._legend(width), width))
        layout = self.layout_for(width)
        first_chart_row = len(rows)
        chart, plan = self._chart(layout, width, max(chart_rows, 1))
        rows.extend(chart)
        plan.first_row = first_chart_row
        if marker_row:
            plan.marker_row = len(rows)
            rows.append(self._markers(layout, width))
        return _Base(rows[:height], not legend_row, plan)

    def _place_cursor(self, base: _Base, width: int) -> list[Strip]:
        """The base rows with the selected call's label and its column highlighted."""
        rows = list(base.rows)
        if not rows:
            return rows
        rows[0] = self._text_strip(self._label(width, base.with_legend), width)
        plan = base.plan
        if plan is None or self.selected_call is None:
            return rows
        layout = plan.layout
        if not layout.buckets:
            return rows
        bucket = layout.grid.bucket_of(self.selected_call)
        x0 = GUTTER + layout.grid.x_of(bucket)
        for r, chart_row in enumerate(plan.rows):
            y = plan.first_row + r
            if y < len(rows):
                rows[y] = _splice(rows[y], x0, self._cursor_cells(plan, chart_row, bucket), width)
        if plan.marker_row is not None and plan.marker_row < len(rows):
            cells = self._marker_cells(layout, bucket, True)
            rows[plan.marker_row] = _splice(rows[plan.marker_row], x0, cells, width)
        return rows

    def _top_tokens(self) -> int:
        series = self.series
        window = max(series.window or 0, largest(series.windows))
        return max(window, series.peak, 1)

    def _chart(self, layout: Layout, width: int, rows: int) -> tuple[list[Strip], _ChartPlan]:
        """The chart rows without a cursor, and what :meth:`_cursor_cells` needs to add one.

        The threshold line, the reserve band and the zone above the window are drawn per bucket:
        the threshold can change between stretches of calls (a window that changes, a stretch
        where the recording shows another threshold, drawn ┄ in its own colour)."""
        scale = Scale.fit(self.series, self._top_tokens(), rows)
        lines = bucket_lines(layout, scale)
        windows = [line.window for line in lines]
        plan = _ChartPlan(
            layout=layout,
            rec_h=[scale.height_of(v) for v in layout.recorded],
            sim_h=[scale.height_of(v) for v in layout.simulated],
            rec_over=over_window(layout.recorded, windows),
            sim_over=over_window(layout.simulated, windows),
        )
        labels: list[str] = []
        for r in range(rows):
            k = rows - 1 - r  # row from the bottom
            empty, empty_fg = scale.line(k)
            plan.rows.append(_ChartRow(k * 8, [line.cell(k) for line in lines], (empty, empty_fg)))
            labels.append(scale.axis_label(k))
        # What the rows draw: a new result whose bars, lines and labels come out the same cell
        # for cell (a limit change that moves no bar by an eighth) keeps the strips drawn.
        drawn: tuple[object, ...] = (width, self.has_focus, layout.grid, plan.rec_h, plan.sim_h)
        drawn += (plan.rec_over, plan.sim_over, plan.rows, labels)
        if drawn == self._drawn_key:
            return list(self._drawn_rows), plan
        out: list[Strip] = []
        for chart_row, label in zip(plan.rows, labels, strict=True):
            empty_fg = chart_row.axis[1]
            cells_out = [(f"{label:>5}{'┤' if label else '│'}", self._style(empty_fg))]
            cells_out.extend(self._bar_cells(plan, chart_row, width))
            out.append(_strip(cells_out, width, self.rich_style))
        self._drawn_key, self._drawn_rows = drawn, out
        return list(out), plan

    def _bar_cells(self, plan: _ChartPlan, row: _ChartRow, width: int) -> list[tuple[str, Style]]:
        """A chart row right of the axis: both bars of every bucket, the gaps between buckets
        and the width left after the last one, each on its bucket's zone (reserve band,
        over-window)."""
        layout = plan.layout
        grid = layout.grid
        cells = layout.cells_per_series

        def style(fg: str, zone: str | None) -> Style:
            return self._style(fg, zone) if zone else self._style(fg)

        out: list[tuple[str, Style]] = []
        for b in range(layout.buckets):
            empty, empty_fg, zone = row.cells[b]
            for glyph, fg in self._glyphs(plan, row, b):
                out.append((glyph * cells, style(fg, zone)))
            gap = grid.width_of(b) - 2 * cells
            if gap > 0:
                out.append((empty * gap, style(empty_fg, zone)))
        unused = width - GUTTER - grid.x_of(grid.buckets)
        if unused > 0:
            empty, empty_fg, zone = row.cells[-1] if row.cells else (" ", "axis", None)
            out.append((empty * unused, style(empty_fg, zone)))
        return out

    @staticmethod
    def _glyphs(plan: _ChartPlan, row: _ChartRow, b: int) -> tuple[tuple[str, str], ...]:
        """Glyph and colour of the recorded and the simulated bar of bucket ``b`` in ``row``."""
        fill = plan.rec_h[b] - row.base
        rec_glyph = BLOCKS[max(0, min(8, fill))]
        if plan.sim_h:
            fill_s = plan.sim_h[b] - row.base
            sim_glyph = BLOCKS[max(0, min(8, fill_s))]
        else:
            sim_glyph = " "
        rec_fg = "recorded-over" if plan.rec_over[b] else "recorded"
        sim_fg = "simulated-over" if plan.sim_h and plan.sim_over[b] else "simulated"
        empty, empty_fg, _zone = row.cells[b]
        return tuple(
            (empty, empty_fg) if glyph == " " else (glyph, fg)
            for glyph, fg in ((rec_glyph, rec_fg), (sim_glyph, sim_fg))
        )

    def _cursor_cells(self, plan: _ChartPlan, row: _ChartRow, b: int) -> list[tuple[str, Style]]:
        """Both bars of the selected bucket on the cursor's background (the gap keeps its own)."""
        cells = plan.layout.cells_per_series
        return [
            (glyph * cells, self._style(fg, "cursor")) for glyph, fg in self._glyphs(plan, row, b)
        ]

    def _marker_cells(self, layout: Layout, b: int, is_cursor: bool) -> list[tuple[str, Style]]:
        value = layout.flags[b]
        glyphs = [(glyph, part) for flag, glyph, part, _ in MARKERS if value & flag]
        out: list[tuple[str, Style]] = []
        for c in range(layout.grid.width_of(b)):
            if c < len(glyphs):
                glyph, part = glyphs[c]
            else:
                glyph, part = ("▔" if is_cursor else " "), "label"
            out.append((glyph, self._style(part, "cursor") if is_cursor else self._style(part)))
        return out

    def _markers(self, layout: Layout, width: int) -> Strip:
        cells_out: list[tuple[str, Style]] = [(" " * GUTTER, self._style("axis"))]
        for b in range(layout.buckets):
            cells_out.extend(self._marker_cells(layout, b, False))
        return _strip(cells_out, width, self.rich_style)

    # -- the label and the legend ---------------------------------------------------------------

    def _label(self, width: int, with_legend: bool) -> Text:
        """The selected call: its number and message, both figures with provenance and % of the
        window, and what happened there; the legend follows when there is room."""
        series = self.series
        call = self.selected_call
        if series.calls == 0 or call is None:
            text = Text(" token gauge ", style=self._style("label"))
            text.append("· no model calls yet", style=self._style("muted"))
            return text
        for tier in (0, 1, 2):
            text = self._label_text(call, tier)
            if cell_len(text.plain) <= width:
                break
        if not with_legend or cell_len(text.plain) + 12 >= width:
            return text
        legend = self._legend(width - cell_len(text.plain) - 2)
        if legend.plain:
            pad = width - cell_len(text.plain) - cell_len(legend.plain)
            text.append(" " * max(pad, 2))
            text.append_text(legend)
        return text

    def _label_text(self, call: int, tier: int) -> Text:
        """The label of ``call``: tier 0 spells everything out, 1 and 2 shorten it."""
        series = self.series
        window = series.window_at(call)
        rec = series.recorded[call]
        sim = series.simulated[call] if series.has_simulated else None
        number = format_tokens if tier == 0 else short_tokens
        sep = " │ " if tier < 2 else " "

        def share(tokens: int, over_part: str) -> None:
            if window:
                over = tokens > window
                text.append(
                    f" {tokens / window:.0%}", style=self._style(over_part if over else "muted")
                )

        text = Text()
        text.append(f" {call_label(call)}", style=self._style("label"))
        text.append(
            f" · msg #{series.message_index[call]}"
            if tier < 2
            else f" #{series.message_index[call]}",
            style=self._style("muted"),
        )
        text.append(sep, style=self._style("axis"))
        if rec >= 0:
            text.append("recorded " if tier == 0 else "rec ", style=self._style("recorded"))
            text.append(number(rec), style=self._style("label"))
            share(rec, "recorded-over")
        else:
            text.append("recorded: no usage" if tier == 0 else "rec —", style=self._style("muted"))
        if sim is not None:
            text.append(sep, style=self._style("axis"))
            prov = series.simulated_provenance[call]
            text.append("simulated " if tier == 0 else "sim ", style=self._style("simulated"))
            text.append(number(sim), style=self._style("label"))
            said = str(prov) if tier == 0 else PROVENANCE_SHORT.get(prov, str(prov))
            text.append(f" {said}", style=self._style("muted"))
            share(sim, "simulated-over")
        text.append(sep, style=self._style("axis"))
        if window:
            text.append(
                f"window {number(window)}" if tier < 2 else f"/{number(window)}",
                style=self._style("muted"),
            )
        else:
            text.append("window unknown" if tier < 2 else "win ?", style=self._style("warning"))
        figure = series.threshold_figure(call) if series.has_simulated else None
        if tier < 2 and figure is not None and figure.tokens is not None:
            inferred = bool(series.flags[call] & THRESHOLD_INFERRED)
            text.append(
                f" · {'threshold' if tier == 0 else 'thr'} {number(figure.tokens)} "
                f"({figure.source})",
                style=self._style("threshold-inferred" if inferred else "muted"),
            )
            if figure.window is not None and not figure.usable:  # at or above the window
                text.append(
                    " ≥ window: never reached" if tier == 0 else " ≥ window",
                    style=self._style("warning"),
                )
        flag = series.flags[call]
        for bit, glyph, part, words in MARKERS:
            if flag & bit:
                text.append(
                    f"  {glyph} {words[tier]}" if tier < 2 else f" {glyph}", style=self._style(part)
                )
        return text

    def _legend(self, width: int) -> Text:
        """The legend: both series, threshold and reserve, markers (shortened to fit ``width``)."""
        series = self.series
        every_flag = series.every_flag()
        items: list[tuple[str, str, tuple[str, str, str]]] = [
            ("█", "recorded", ("recorded", "recorded", "rec")),
        ]
        if series.has_simulated:
            items.append(("█", "simulated", ("simulated", "simulated", "sim")))
        if series.window and series.threshold:
            threshold = short_tokens(series.threshold)
            reserve = short_tokens(max(series.window - series.threshold, 0))
            changes = not one_value(series.thresholds)
            if changes:  # it changes: the label says each call's
                threshold = reserve = ""
            above = not changes and series.threshold >= series.window
            if above:  # it can never fire before the provider refuses the call
                words = (
                    f"threshold {threshold} ≥ window: never reached",
                    "threshold ≥ window",
                    "thr≥win",
                )
            else:
                words = (f"threshold {threshold}".rstrip(), "threshold", "thr")
            items.append(("┈", "threshold", words))
            if every_flag & THRESHOLD_INFERRED:
                inferred = ("inferred threshold", "inferred thr.", "inf")
                items.append(("┄", "threshold-inferred", inferred))
            if not above:
                items.append(("  ", "reserve", (f"reserve {reserve}".rstrip(), "reserve", "rsv")))
        elif not series.window:
            items.append(("", "warning", ("window unknown", "window unknown", "win ?")))
        for flag, glyph, part, words in MARKERS:
            if flag == SUBAGENT and not every_flag & SUBAGENT:
                continue  # (a session without sub-agents keeps its legend)
            items.append((glyph, part, words))
        for tier in (0, 1, 2):
            text = Text(" ")
            for glyph, part, words in items:
                if part == "reserve":
                    text.append(glyph, style=self._style("muted", "reserve"))
                elif glyph:
                    text.append(glyph, style=self._style(part))
                word_style = self._style("warning" if part == "warning" else "muted")
                text.append(f" {words[tier]}" if glyph else words[tier], style=word_style)
                text.append("  " if tier < 2 else " ")
            text.rstrip()
            if cell_len(text.plain) <= width:
                return text
        return Text()


@dataclass(slots=True)
class _ChartRow:
    """One chart row: its lowest eighth (``base``), how an empty cell looks in each bucket
    (glyph, colour, background) and on the axis."""

    base: int
    cells: list[tuple[str, str, str | None]]
    axis: tuple[str, str]


@dataclass(slots=True)
class _ChartPlan:
    """The chart as drawn for one result and size, kept to splice the cursor column in."""

    layout: Layout
    rec_h: list[int]
    sim_h: list[int]
    rec_over: list[bool]
    sim_over: list[bool]
    rows: list[_ChartRow] = field(default_factory=list)
    first_row: int = 0
    marker_row: int | None = None


@dataclass(frozen=True, slots=True)
class _Base:
    """The gauge's rows without the selection (row 0 is a placeholder for the label)."""

    rows: list[Strip]
    with_legend: bool
    """The label row carries the legend (no room for a row of its own)."""
    plan: _ChartPlan | None


def _splice(strip: Strip, x: int, cells: list[tuple[str, Style]], width: int) -> Strip:
    """``strip`` with the cells from ``x`` on replaced by ``cells``.

    Neighbours of the same style are merged, so the result has exactly the segments
    :func:`_strip` would have built for the whole row.
    """
    end = x + sum(cell_len(text) for text, _ in cells)
    before: list[Segment] = []
    after: list[Segment] = []
    pos = 0
    for segment in strip:  # (not Strip.crop: that caches every crop in the base row)
        length = cell_len(segment.text)
        if pos + length <= x:
            before.append(segment)
        elif pos >= end:
            after.append(segment)
        else:
            if pos < x:
                before.append(segment.split_cells(x - pos)[0])
            if pos + length > end:
                after.append(segment.split_cells(end - pos)[1])
        pos += length
    segments: list[Segment] = []
    for segment in (*before, *(Segment(text, style) for text, style in cells), *after):
        if not segment.text:
            continue
        if segments:
            last = segments[-1]
            if segment.style is last.style or segment.style == last.style:
                segments[-1] = Segment(last.text + segment.text, last.style)
                continue
        segments.append(segment)
    return Strip(segments, width)


def _strip(cells: list[tuple[str, Style]], width: int, base: Style) -> Strip:
    """A strip from ``(text, style)`` runs, merging neighbours of the same style."""
    segments: list[Segment] = []
    run_text: list[str] = []
    run_style: Style | None = None
    for text, style in cells:
        if style is run_style or style == run_style:
            run_text.append(text)
            continue
        if run_text and run_style is not None:
            segments.append(Segment("".join(run_text), run_style))
        run_text, run_style = [text], style
    if run_text and run_style is not None:
        segments.append(Segment("".join(run_text), run_style))
    return fit_strip(Strip(segments), width, base)
