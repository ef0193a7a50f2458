"""The detail pane's tokens table (:class:`TokenGrid`): labels, right-aligned figures and
wrapping notes, drawn as ``rich``'s ``Table.grid`` draws them, without its general machinery
when every cell is plain."""

from __future__ import annotations

import re
from itertools import pairwise

from rich._wrap import divide_line
from rich.cells import get_character_cell_size
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.table import Table


class TokenGrid:
    """The tokens table: labels, figures aligned right, notes; drawn as ``Table.grid`` draws it.

    ``Table.grid(padding=(0, 2))`` with a no-wrap label column, a right-justified no-wrap figure
    column and a wrapping note column, all cells plain strings. Rich's table measures and renders
    every cell through its general machinery (half the cost of drawing the pane at each cursor
    move); for cells of one-cell characters without markup, emoji codes or long words, this
    yields the very segments the table would (checked against it by the tests), and otherwise
    hands the work to the table itself.
    """

    def __init__(self, label_style: Style, note_style: Style) -> None:
        self.label_style = label_style
        self.note_style = note_style
        self.rows: list[tuple[str, str, str]] = []

    def add_row(self, label: str, figure: str, note: str) -> None:
        self.rows.append((label, figure, note))

    def table(self) -> Table:
        """The rich table these rows stand for."""
        table = Table.grid(padding=(0, 2))
        table.add_column(style=self.label_style, no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        table.add_column(style=self.note_style)
        for row in self.rows:
            table.add_row(*row)
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = self._lines(options.max_width)
        if lines is None:
            yield self.table()
            return
        new_line = Segment.line()
        for line in lines:
            yield from line
            yield new_line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table())

    def _lines(self, width: int) -> list[list[Segment]] | None:
        """The table's lines, or None when it needs rich's general rendering."""
        rows = self.rows
        if not rows or not all(_plain_cell(cell) for row in rows for cell in row):
            return None
        # column widths with their padding: 2 cells right of the first two columns
        label_width = max(len(row[0]) for row in rows) + 2
        figure_width = max(len(row[1]) for row in rows) + 2
        note_width = min(max(len(row[2]) for row in rows), width) or 1
        excess = label_width + figure_width + note_width - width
        if label_width > width or figure_width > width or excess >= note_width:
            return None  # rich would shrink the other columns too
        if excess > 0:
            note_width -= excess  # only the note column wraps
        label, note = self.label_style, self.note_style
        null = Style.null()
        lines: list[list[Segment]] = []
        for label_text, figure_text, note_text in rows:
            notes = _wrap_plain(note_text, note_width)
            if notes is None:
                return None
            first = [
                Segment(label_text.ljust(label_width - 2), label),
                Segment("  ", label),
                Segment(figure_text.rstrip().rjust(figure_width - 2)),
                Segment("  ", null),
                Segment(notes[0], note),
            ]
            lines.append([segment for segment in first if segment.text])  # as rich drops ""
            for more in notes[1:]:
                lines.append(
                    [
                        Segment(" " * label_width, label),
                        Segment(" " * figure_width, null),
                        Segment(more, note),
                    ]
                )
        return lines


_MARKUP_OR_EMOJI = re.compile(r"\[|:\S*?:")


def _plain_cell(text: str) -> bool:
    """Rendered by rich as its own characters, one cell each (no markup, emoji, tabs, wide)."""
    if _MARKUP_OR_EMOJI.search(text):
        return False
    return all(get_character_cell_size(char) == 1 for char in set(text))


def _wrap_plain(text: str, width: int) -> list[str] | None:
    """``text`` word-wrapped and padded to ``width`` as rich wraps a left-justified text (None: a
    word longer than the width, which rich would cut with an ellipsis)."""
    if len(text) <= width:
        return [text.ljust(width)]
    cuts = [0, *divide_line(text, width, fold=False), len(text)]
    lines = []
    for start, end in pairwise(cuts):
        line = text[start:end]
        if len(line) > width:
            trailing = len(line) - len(line.rstrip())
            line = line[: len(line) - min(trailing, len(line) - width)]
            if len(line) > width:
                return None
        lines.append(line.ljust(width))
    return lines
