"""The token gauge's vertical scale: how tokens map onto the chart's rows, where each bucket's
threshold line, reserve band and window fall (:mod:`tui.widgets.gauge` draws them)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.model.write_numbers import short_tokens
from tui.widgets.gauge_series import THRESHOLD_INFERRED, Layout, Series


def one_value(values: Sequence[int]) -> bool:
    """``values`` holds one value at most (an array of machine integers is compared as bytes,
    in C, without making an int of each item)."""
    if isinstance(values, array):
        return values.tobytes() == values[:1].tobytes() * len(values)
    return len(set(values)) <= 1


def largest(values: Sequence[int], default: int = 0) -> int:
    """``max(values, default=default)``; an array holding one value (a window, a threshold at
    every call) is read as that value, without making an int of each item."""
    if not values:
        return default
    if isinstance(values, array) and one_value(values):
        return int(values[0])
    return max(values)


@dataclass(frozen=True, slots=True)
class Scale:
    """How tokens map onto a chart of ``rows`` rows, and where its lines and its bands fall.

    Rows are counted from the bottom; each row is eight levels (eighth blocks).
    """

    rows: int
    top: int
    """Tokens at the top of the chart."""
    threshold: int | None
    window: int | None
    threshold_row: int | None
    window_row: int | None
    reserve_rows: range
    """The reserve band: from the threshold's row up to (not into) the window's row."""

    @classmethod
    def fit(cls, series: Series, top: int, rows: int) -> Scale:
        """The scale of ``rows`` rows up to ``top`` tokens, with ``series``' threshold and window
        placed as any bucket's are (:meth:`lines_of`)."""
        bare = cls(rows, top, series.threshold, series.window, None, None, range(0))
        lines = bare.lines_of(series.threshold, series.window, inferred=False)
        return replace(
            bare,
            threshold_row=lines.threshold_row,
            window_row=lines.window_row,
            reserve_rows=lines.reserve_rows,
        )

    def row_of(self, tokens: int) -> int:
        """Row counted from the bottom whose band holds ``tokens``."""
        return min(self.rows - 1, int(tokens * self.rows * 8 / self.top) // 8)

    def lines_of(self, threshold: int | None, window: int | None, inferred: bool) -> BucketLines:
        """Where one bucket's threshold line, reserve band and window fall."""
        threshold_row = self.row_of(threshold) if threshold else None
        window_row = self.row_of(window) if window and window < self.top else None
        reserve_rows = range(0)
        if threshold_row is not None:
            # the threshold row is shaded too, or a band narrower than a row would not show
            reserve_to = self.rows if window_row is None else max(window_row, threshold_row + 1)
            reserve_rows = range(threshold_row, reserve_to)
        return BucketLines(threshold_row, window_row, reserve_rows, inferred, window)

    def height_of(self, tokens: int) -> int:
        """Filled levels (eighths of a row) of a bar of ``tokens``."""
        if tokens <= 0:
            return 0
        return max(1, round(tokens * (self.rows * 8) / self.top))

    def axis_label(self, k: int) -> str:
        """The figure on the axis at row ``k``: the threshold, the window, the top, or zero."""
        if k == self.threshold_row:
            return short_tokens(self.threshold or 0)
        if k == self.window_row:
            return short_tokens(self.window or 0)
        if k == self.rows - 1:
            return short_tokens(self.top)
        if k == 0 and self.rows > 2:
            return "0"
        return ""

    def line(self, k: int) -> tuple[str, str]:
        """How an empty cell of row ``k`` looks (glyph, component): the threshold's dotted line,
        the window's rule, or blank. The axis at that row takes the same colour."""
        if k == self.threshold_row:
            return "┈", "threshold"
        if k == self.window_row:
            return "─", "window"
        return " ", "axis"

    def zone(self, k: int) -> str | None:
        """The background band of row ``k``: above the window, the reserve, or none."""
        if self.window_row is not None and k > self.window_row:
            return "over-window"
        if k in self.reserve_rows:
            return "reserve"
        return None


@dataclass(frozen=True, slots=True)
class BucketLines:
    """Where one bucket's lines fall (rows from the bottom)."""

    threshold_row: int | None
    window_row: int | None
    reserve_rows: range
    inferred: bool
    """The bucket's threshold is inferred from the recording (drawn ┄, its own colour)."""
    window: int | None

    def cell(self, k: int) -> tuple[str, str, str | None]:
        """How an empty cell of row ``k`` looks in this bucket: glyph, colour, background."""
        if k == self.threshold_row:
            line = ("┄", "threshold-inferred") if self.inferred else ("┈", "threshold")
        elif k == self.window_row:
            line = ("─", "window")
        else:
            line = (" ", "axis")
        if self.window_row is not None and k > self.window_row:
            zone: str | None = "over-window"
        elif k in self.reserve_rows:
            zone = "reserve"
        else:
            zone = None
        return (*line, zone)


def bucket_lines(layout: Layout, scale: Scale) -> list[BucketLines]:
    """Each bucket's threshold, window and whether its threshold is inferred, placed on the
    scale (the series' single threshold and window where the layout has none per bucket)."""
    count = layout.buckets
    thresholds = layout.thresholds if len(layout.thresholds) == count else [scale.threshold] * count
    windows = layout.windows if len(layout.windows) == count else [scale.window] * count
    return [
        scale.lines_of(thresholds[b], windows[b], bool(layout.flags[b] & THRESHOLD_INFERRED))
        for b in range(count)
    ]


def over_window(values: Sequence[int], windows: Sequence[int | None]) -> list[bool]:
    """Which bars are over their bucket's window."""
    return [bool(w) and v > (w or 0) for v, w in zip(values, windows, strict=False)]
