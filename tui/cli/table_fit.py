"""A command's table that fits the terminal it prints to, whole numbers included.

A command prints to a terminal of ``console.width`` columns (rich reads ``COLUMNS``, else the
terminal, else 80 when the output is not a terminal). A table wider than that loses columns by
a stated priority (the least important first) rather than having rich cut its numbers
("400…"); labels (a model, a path) wrap. :func:`fit_table` says which columns it left out, so
the command can print that under the table.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box as boxes
from rich.table import Table
from rich.text import Text

from tui.cli.table_column import Column

Cell = str | Text


def _cell_width(cell: Cell) -> int:
    text = cell if isinstance(cell, Text) else Text(cell)
    return max((Text(line).cell_len for line in text.plain.splitlines()), default=0)


def _needed(column: Column, index: int, rows: Sequence[Sequence[Cell]]) -> int:
    widest = max((_cell_width(row[index]) for row in rows), default=0)
    widest = max(widest, len(column.header))
    return min(widest, max(column.min_width, len(column.header))) if column.wrap else widest


def kept_columns(
    columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int, gap: int
) -> list[int]:
    """The indexes of the columns that fit ``width``, in their order: the columns of the
    largest ``priority`` are left out first until the rest fit (priority 1 always stays)."""
    needed = [_needed(column, i, rows) for i, column in enumerate(columns)]
    kept = list(range(len(columns)))
    by_drop = sorted(kept, key=lambda i: (-columns[i].priority, -i))
    for index in by_drop:
        total = sum(needed[i] for i in kept) + gap * (len(kept) - 1)
        if total <= width or columns[index].priority <= 1:
            break
        kept.remove(index)
    return kept


def _widths(
    columns: Sequence[Column], rows: Sequence[Sequence[Cell]], kept: list[int], room: int
) -> dict[int, int]:
    """Each kept column's width: its whole content for a number, at least its ``min_width``
    for a label; the room left goes to the labels, the one that needs least to be whole first
    (a long path takes what the others leave)."""
    widths = {i: _needed(columns[i], i, rows) for i in kept}
    widest: dict[int, int] = {}
    for i in (i for i in kept if columns[i].wrap):
        whole = max([len(columns[i].header)] + [_cell_width(row[i]) for row in rows])
        limit = columns[i].max_width
        widest[i] = min(whole, limit) if limit is not None else whole
    spare = room - sum(widths.values())
    for i in sorted(widest, key=lambda i: widest[i] - widths[i]):
        grow = max(0, min(spare, widest[i] - widths[i]))
        widths[i] += grow
        spare -= grow
    return widths


def fit_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    width: int,
    *,
    box: boxes.Box | None = boxes.SIMPLE,
) -> tuple[Table, list[str]]:
    """A table of ``rows`` that fits ``width`` columns, and the headers left out to fit it."""
    gap = 3 if box is not None else 2  # padding either side, and the box's divider
    kept = kept_columns(columns, rows, width, gap)
    widths = _widths(columns, rows, kept, width - gap * (len(kept) - 1))
    table = Table(box=box, pad_edge=False, show_edge=False, header_style="bold")
    for i in kept:
        column = columns[i]
        table.add_column(
            column.header,
            justify=column.justify,
            no_wrap=column.ellipsis or not column.wrap,
            overflow=("ellipsis" if column.ellipsis else "fold") if column.wrap else "ignore",
            width=widths[i],
        )
    for row in rows:
        table.add_row(*(row[i] for i in kept))
    dropped = [columns[i].header for i in range(len(columns)) if i not in kept]
    return table, dropped


def dropped_note(dropped: Sequence[str], width: int, hint: str = "--json") -> str:
    """The line under a table that lost columns: which, and how to see them."""
    names = ", ".join(dropped)
    return f"left out at {width} columns: {names} (set COLUMNS wider, or use {hint})"
