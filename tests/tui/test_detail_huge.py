"""The detail pane on a huge message: a window onto the text, never the whole of it in strips.

A tool output of megabytes (one line, or a hundred thousand) is shown, paged through with ``m``,
scrolled to its end and back: the pane never keeps more than ``CACHE_ROWS`` rendered rows, and
the rows it shows are the rows the text renders to. Its token count is taken in pieces the worker
can stop between (and that hold no huge token list). Time is not asserted here; bench/detail.py
prints the figures for a 50 MB message.
"""

from __future__ import annotations

import pytest

from core.model.session import Session
from core.model.tokens import get_counter
from tests.support.builders import SessionBuilder
from tests.support.tui_harness import open_session, quiet_app, settle
from tui.widgets.detail import COUNT_PIECE_CHARS, DetailPane, count_in_pieces
from tui.widgets.strip_window import (
    CACHE_ROWS,
    PIECE_LINES,
    PIECE_ROWS,
    StripWindow,
    text_pieces,
)

SIZE = (120, 34)


def huge_output(kind: str, size: int = 3_000_000) -> str:
    if kind == "one line":
        return "x" * size
    line = "the quick brown fox jumps over the lazy dog, again and again and again\n"
    return line * (size // len(line))


def session_with(output: str) -> Session:
    return (
        SessionBuilder()
        .user("show me the log")
        .tool("bash", output, {"command": "cat build.log"})
        .reply("done", context=6_000)
        .session(window=200_000)
    )


@pytest.mark.parametrize("kind", ["one line", "many lines"])
async def test_the_pane_keeps_a_window_of_rows_whatever_the_size(kind: str) -> None:
    output = huge_output(kind)
    app = quiet_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_session(pilot, session_with(output))
        screen.select_message(2)
        await settle(pilot)
        pane = screen.query_one(DetailPane)
        pane.focus()
        most = pane.held_rows
        for key in ["m"] * 6 + ["end", "pagedown", "m", "end", "home"]:
            await pilot.press(key)
            await pilot.pause()
            most = max(most, pane.held_rows)
        await settle(pilot)
        most = max(most, pane.held_rows)
        assert pane.measured and pane.line_count > 2 * CACHE_ROWS  # far more than it keeps
        assert 0 < most <= CACHE_ROWS
        assert "characters (m: more)" in pane.section_text("body", width=200)


def test_the_window_renders_the_rows_of_the_whole() -> None:
    """Rows from pieces equal the rows of the whole text (wrapping restarts only where a single
    line longer than a piece is cut)."""
    from rich.console import Console
    from rich.text import Text
    from textual.strip import Strip

    console = Console(width=40, color_system=None)
    options = console.options.update(width=40, height=None)
    text = Text("".join(f"line {n} " + "word " * (n % 23) + "\n" for n in range(500)))

    def render(piece: object) -> list[Strip]:
        renderable = getattr(piece, "renderable", None)
        assert renderable is not None
        return [Strip(line, 40) for line in console.render_lines(renderable, options, pad=True)]

    from tui.widgets.strip_window import Piece

    pieces = (Piece(chunk) for chunk in text_pieces(text, 40))
    window = StripWindow(pieces, render, cache_rows=50)
    whole = [Strip(line, 40) for line in console.render_lines(text, options, pad=True)]
    assert [row.text for row in window.all_rows()] == [row.text for row in whole]
    assert window.held_rows <= 50 + PIECE_LINES * 3  # one piece beyond the cache at most
    assert [window.row(y).text for y in (0, 400, 7, len(whole) - 1)] == [  # type: ignore[union-attr]
        whole[y].text for y in (0, 400, 7, len(whole) - 1)
    ]


def test_a_single_huge_line_is_cut_into_pieces_of_bounded_size() -> None:
    from rich.text import Text

    pieces = [piece for piece in text_pieces(Text("y" * 100_000), 50) if isinstance(piece, Text)]
    assert len(pieces) > 1
    assert sum(len(piece.plain) for piece in pieces) == 100_000
    assert max(len(piece.plain) for piece in pieces) <= 50 * PIECE_ROWS


def test_huge_texts_are_counted_in_pieces_that_add_up_and_can_be_stopped() -> None:
    spec = "tiktoken:cl100k_base"
    text = huge_output("many lines", 4 * COUNT_PIECE_CHARS) + "tail without a break " * 500
    assert count_in_pieces(text, spec, lambda: False) == get_counter(spec).count(text)
    calls: list[int] = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2

    assert count_in_pieces(text, spec, cancelled) is None
    assert len(calls) == 3  # stopped at the third piece, not at the end
