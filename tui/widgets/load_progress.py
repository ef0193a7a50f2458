"""Progress of loading a session: bytes read and messages so far, fed by the loader's callback."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, ProgressBar

from core.model.write_numbers import format_bytes
from tui.widgets.title_bar import LineLabel, set_label


class QuietProgressBar(ProgressBar):
    """A :class:`ProgressBar` without the ETA, and without the timer that refreshes the ETA.

    Textual's bar wakes the interface thread every second, for as long as it is mounted (the
    progress box stays mounted, hidden, under the session it opened), to work out an ETA this
    one does not show: each wake-up takes the interpreter from the loader or the replay."""

    def __init__(self, total: float | None = None, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(total=total, show_eta=False, id=id)

    def _on_mount(self, event: events.Mount) -> None:
        event.prevent_default()  # (ProgressBar's on_mount: the same, and a one-second interval)
        self.update()
        self._clock.reset()


class LoadProgress(Vertical):
    """A titled progress bar: ``Reading x.jsonl — 12.3 MB of 100.0 MB · 45,210 messages``."""

    DEFAULT_CSS = """
    LoadProgress {
        height: 1fr;
        align: center middle;
    }
    LoadProgress #load-box {
        width: 90%;
        max-width: 100;
        height: auto;
        padding: 1 2;
        border: round $primary;
    }
    /* a big file's first part is shown while the rest is read: the bar shrinks to a strip */
    LoadProgress.-strip {
        height: auto;
        align: left top;
    }
    LoadProgress.-strip #load-box {
        width: 1fr;
        max-width: 100%;
        height: 2;
        padding: 0 1;
        border: none;
        background: $boost;
    }
    LoadProgress.-strip #load-title {
        display: none;
    }
    LoadProgress #load-title { text-style: bold; }
    LoadProgress ProgressBar { width: 1fr; }
    LoadProgress #load-bar Bar { width: 1fr; }
    /* as wide as the box: a report of another width is repainted, the screen not laid out */
    LoadProgress #load-detail { color: $text-muted; width: 1fr; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, classes=classes)
        self._path = ""
        self.bytes_read = 0
        self.total_bytes: int | None = None
        self.messages = 0
        self.shown: int | None = None
        """Messages of the file's first part on screen while the rest is read (None: none yet)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="load-box"):
            yield LineLabel("", id="load-title")
            # a known total from the start: an indeterminate bar animates at 15 fps, and every
            # frame is time the loader thread does not get
            yield QuietProgressBar(total=1, id="load-bar")
            yield LineLabel("", id="load-detail")

    def start(self, path: str, total_bytes: int | None) -> None:
        """Reset for a new file."""
        self._path = path
        self.bytes_read = 0
        self.total_bytes = total_bytes
        self.messages = 0
        self.shown = None
        self.query_one("#load-title", Label).update(f"Reading {Path(path).name}")
        bar = self.query_one(ProgressBar)
        bar.update(total=total_bytes or 1, progress=0)
        self._describe()

    def update_progress(self, bytes_read: int, total_bytes: int, messages: int) -> None:
        """A progress callback arrived (on the UI thread)."""
        self.bytes_read = bytes_read
        if total_bytes:
            self.total_bytes = total_bytes
        self.messages = messages
        self.query_one(ProgressBar).update(total=self.total_bytes or 1, progress=bytes_read)
        self._describe()

    def showing_part(self, messages: int) -> None:
        """The first ``messages`` are on screen: the bar now sits above them as one line."""
        self.shown = messages
        self._describe()

    def phase(self, text: str) -> None:
        """Say what happens after reading (counting tokens, replaying …)."""
        set_label(self.query_one("#load-detail", Label), text)

    def _describe(self) -> None:
        total = f" of {format_bytes(self.total_bytes)}" if self.total_bytes else ""
        done = bool(self.total_bytes) and self.bytes_read >= (self.total_bytes or 0)
        tail = " · putting the session together…" if done else ""
        if self.shown is not None:
            tail += f" · the first {self.shown:,} are shown meanwhile"
        set_label(
            self.query_one("#load-detail", Label),
            f"{format_bytes(self.bytes_read)}{total} · {self.messages:,} messages{tail}",
        )
