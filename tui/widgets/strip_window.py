"""A window onto a long column of rendered rows: pieces measured lazily, few strips ever kept.

The detail pane shows a message of any size. Rendering all of it into :class:`Strip` rows at
once costs time at every key and memory without bound (a 50 MB tool output is gigabytes of
segments). A :class:`StripWindow` instead takes the content as a stream of small pieces (a few
source lines of a text each, :func:`text_pieces`), and

* measures pieces only as far as asked: the rows on screen first, the rest in bounded steps
  after the frame (:meth:`StripWindow.measure`), keeping one row offset per piece;
* renders the rows asked for from their piece, and keeps at most ``cache_rows`` rendered rows
  (least recently used pieces are dropped and rendered again if they scroll back into view).

So what it holds is the row offsets of the pieces measured so far plus ``cache_rows`` strips,
whatever the size of the content; a key press renders a screenful.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Span, Text
from textual.strip import Strip

CACHE_ROWS = 1_000
"""Most rendered rows a window keeps (a few screens; the rest is rendered again when shown)."""
PIECE_LINES = 8
"""Source lines of a text per piece."""
PIECE_ROWS = 32
"""A piece holds at most this many rows' worth of characters (``PIECE_ROWS × width``): a single
huge line is cut into parts of that size, each starting a new row."""


@dataclass(frozen=True, slots=True)
class Piece:
    """Part of the content, rendered on its own: a renderable (a few lines of a text, or a small
    block), or None for a blank row; ``bar`` marks a piece drawn with a bar on its left."""

    renderable: RenderableType | None
    bar: bool = False


RenderPiece = Callable[[Piece], list[Strip]]


class StripWindow:
    """The rows of a stream of pieces, measured and rendered on demand."""

    def __init__(
        self, pieces: Iterator[Piece], render: RenderPiece, cache_rows: int = CACHE_ROWS
    ) -> None:
        self._source: Iterator[Piece] | None = pieces
        self._render = render
        self.cache_rows = cache_rows
        self._pieces: list[Piece] = []
        self._starts: list[int] = []
        """The first row of each measured piece."""
        self.rows = 0
        """Rows of the pieces measured so far."""
        self._cache: OrderedDict[int, list[Strip]] = OrderedDict()
        self._cached_rows = 0
        self._out_of_reach: int | None = None
        """A row a budgeted :meth:`row` could not reach (rows from it wait for the steps)."""

    @property
    def complete(self) -> bool:
        """Every piece is measured: :attr:`rows` is the height of the whole content."""
        return self._source is None

    @property
    def held_rows(self) -> int:
        """Rendered rows kept right now (at most ``cache_rows``, or one piece's rows)."""
        return self._cached_rows

    def measure(self, rows: int | None = None, *, budget_s: float | None = None) -> None:
        """Measure pieces until at least ``rows`` rows are known (None: all of them, and rows
        found out of reach may be tried again), or until ``budget_s`` seconds have gone (then at
        least one more piece is measured)."""
        source = self._source
        if source is None:
            return
        if rows is None:
            self._out_of_reach = None
        deadline = None if budget_s is None else time.perf_counter() + budget_s
        while rows is None or self.rows < rows:
            piece = next(source, None)
            if piece is None:
                self._source = None
                return
            strips = self._render(piece)
            index = len(self._pieces)
            self._pieces.append(piece)
            self._starts.append(self.rows)
            self.rows += len(strips)
            self._keep(index, strips)
            if deadline is not None and time.perf_counter() >= deadline:
                return

    def row(self, y: int, *, budget_s: float | None = None) -> Strip | None:
        """Row ``y``, measuring up to it first, or None past the end of the content.

        With ``budget_s``, a row the measuring does not reach in that time is None, and so is
        every row past it until the next :meth:`measure` of everything (the steps after a
        frame): a screenful of rows far ahead costs one budget, not one per row.
        """
        if y >= self.rows:
            if self._out_of_reach is not None and y >= self._out_of_reach:
                return None
            self.measure(y + 1, budget_s=budget_s)
            if y >= self.rows:
                if self._source is not None:
                    self._out_of_reach = y
                return None
        index = bisect_right(self._starts, y) - 1
        strips = self._cache.get(index)
        if strips is None:
            strips = self._render(self._pieces[index])
            self._keep(index, strips)
        else:
            self._cache.move_to_end(index)
        offset = y - self._starts[index]
        return strips[offset] if offset < len(strips) else None

    def all_rows(self) -> list[Strip]:
        """Every row (for tests and copying: renders the whole content once, keeps little)."""
        self.measure(None)
        out: list[Strip] = []
        for y in range(self.rows):
            row = self.row(y)
            if row is not None:
                out.append(row)
        return out

    def _keep(self, index: int, strips: list[Strip]) -> None:
        self._cache[index] = strips
        self._cache.move_to_end(index)
        self._cached_rows += len(strips)
        while self._cached_rows > self.cache_rows and len(self._cache) > 1:
            _old, dropped = self._cache.popitem(last=False)
            self._cached_rows -= len(dropped)


def flatten(renderable: RenderableType) -> Iterator[RenderableType]:
    """The children of a group, recursively (a group renders its children one after another)."""
    if isinstance(renderable, Group):
        for child in renderable.renderables:
            yield from flatten(child)
    else:
        yield renderable


def text_pieces(part: RenderableType, width: int) -> Iterator[RenderableType]:
    """``part`` cut into pieces that each render as their part of the whole: a text into runs of
    :data:`PIECE_LINES` source lines (a text wraps line by line), a run longer than
    ``PIECE_ROWS × width`` characters cut at its last line break before that, a single longer
    line into parts of that size; anything else as it is. Lazy: a huge text is cut as far as
    it is read."""
    if not isinstance(part, Text) or part.end != "\n":
        yield part
        return
    plain = part.plain
    size = len(plain)
    max_chars = max(1, width) * PIECE_ROWS
    start = 0
    while True:
        stop, skip = _piece_end(plain, start, size, max_chars)
        if stop >= size:
            yield _slice(part, start, size) if start else part
            return
        yield _slice(part, start, stop)
        start = stop + skip


def _piece_end(plain: str, start: int, size: int, max_chars: int) -> tuple[int, int]:
    """Where the piece starting at ``start`` ends, and how many characters (the line break, or
    none for a cut inside a line) lie between it and the next piece."""
    limit = min(size, start + max_chars)
    pos = start
    for _ in range(PIECE_LINES):
        newline = plain.find("\n", pos, limit)
        if newline < 0 or newline >= size - 1:  # a break that ends the text is the text's own
            break
        pos = newline + 1
    else:
        return pos - 1, 1
    if limit >= size:
        return size, 0
    if pos > start:
        return pos - 1, 1
    return limit, 0


def _slice(part: Text, start: int, stop: int) -> Text:
    """``part[start:stop]`` with its styles, copying only those characters (``Text``'s own
    slicing copies the rest of the text too: quadratic over a huge one)."""
    spans = [
        Span(max(span.start, start) - start, min(span.end, stop) - start, span.style)
        for span in part.spans
        if span.start < stop and span.end > start
    ]
    return Text(
        part.plain[start:stop],
        style=part.style,
        justify=part.justify,
        overflow=part.overflow,
        no_wrap=part.no_wrap,
        end="\n",
        tab_size=part.tab_size,
        spans=spans,
    )
