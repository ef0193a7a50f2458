"""The status line and the ``w`` dialog end cleanly at any width."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Label

from tui.screens.window_prompt import WindowPrompt
from tui.widgets.status_line import StatusLine, fitting

PARTS = [
    "cost $5.37",
    "322 msgs",
    "157 calls",
    "rec. overflow at call 80 avoided (o)",
    "2 compactions ([ ])",
]


def test_fitting_keeps_whole_parts() -> None:
    assert fitting(PARTS, 1_000) == PARTS
    assert fitting(PARTS, 33) == ["cost $5.37", "322 msgs", "157 calls"]
    assert fitting(PARTS, 32) == ["cost $5.37", "322 msgs"]
    assert fitting(PARTS, 3) == []
    ranks = [3, 5, 5, 1, 2]  # the overflow and the compactions outlast the counts
    assert fitting(PARTS, 60, ranks=ranks) == [
        "rec. overflow at call 80 avoided (o)",
        "2 compactions ([ ])",
    ]


class _Line(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusLine()


async def test_the_status_line_leaves_out_what_does_not_fit() -> None:
    app = _Line()
    async with app.run_test(size=(90, 3)) as pilot:
        line = app.query_one(StatusLine)
        line._peak_text = "peak 166,874 / 200,000 · 83% recorded (simulated 167,117 · 84%)"
        line.query_one("#status-peak", Label).update(line._peak_text)
        line._parts = tuple((k, part) for k, part in enumerate(PARTS))
        line.activity("")
        await pilot.pause()
        info = str(line.query_one("#status-info", Label).render())
        assert info == "cost $5.37 · 322 msgs", info  # 21 cells of room: two parts whole
        assert "([" not in info


class _Dialog(App[None]):
    def on_mount(self) -> None:
        self.push_screen(WindowPrompt("claude-sonnet-4-5-20250929-with-a-long-name", None))


async def test_the_window_dialog_help_wraps_whole() -> None:
    app = _Dialog()
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        dialog = app.screen.query_one("#window-dialog")
        help_label = next(
            label for label in app.screen.query(Label) if "Esc to cancel" in str(label.render())
        )
        assert help_label.region.right <= dialog.content_region.right
        assert help_label.region.height >= 2  # wrapped, not cut at the dialog's edge
