"""The session picker: sessions found on this machine, a fuzzy filter and a path field.

Discovery runs in a thread worker (it stats folders and reads small heads). The peak context of
each listed session is computed afterwards, newest first, in another worker: a session is loaded
only when it is small enough to be cheap (``PEAK_MAX_BYTES``), and the column fills in as
results arrive, so the picker is usable at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.fuzzy import Matcher
from textual.message import Message as TextualMessage
from textual.screen import Screen
from textual.widgets import DataTable, Input, Label, Static
from textual.worker import get_current_worker

from core.units import format_bytes
from tui.widgets.footer import KeysFooter
from tui.widgets.title_bar import TitleBar

if TYPE_CHECKING:  # discovery is imported by the worker that runs it
    from core.discovery import DiscoveredSession

PEAK_MAX_BYTES = 32 * 1000 * 1000
"""Sessions larger than this get no peak in the picker (it would mean loading them)."""
MAX_LISTED = 2000
"""The picker lists at most this many sessions (the newest)."""

FILE_TIME_MARK = "~"
"""Marks a date that is the file's modification time: the session records no time of its own."""

DiscoverFn = Callable[[], Sequence["DiscoveredSession"]]


def session_date(found: DiscoveredSession) -> str:
    """The picker's date of a session: its own time (its last message's), local, to the minute;
    the file's modification time, marked, when the session records none."""
    text = datetime.fromtimestamp(found.when).strftime("%Y-%m-%d %H:%M")
    return text if found.last_active is not None else f"{FILE_TIME_MARK}{text}"


def default_discover() -> Sequence[DiscoveredSession]:
    """The sessions :func:`core.discovery.discover_sessions` finds, newest first."""
    from core.discovery import discover_sessions

    return discover_sessions(limit=MAX_LISTED)


def _peak_of(path: str) -> int | None:
    """The largest recorded context of any call in the session at ``path``."""
    from core.formats import load_session

    session = load_session(path)
    peak: int | None = None
    for message in session.messages:
        if message.usage is not None:
            tokens = message.usage.context_tokens
            if peak is None or tokens > peak:
                peak = tokens
    return peak


class _Discovered(TextualMessage):
    def __init__(self, sessions: list[DiscoveredSession], error: str | None) -> None:
        super().__init__()
        self.sessions = sessions
        self.error = error


class _PeakFound(TextualMessage):
    def __init__(self, path: str, peak: int | None) -> None:
        super().__init__()
        self.path = path
        self.peak = peak


class PickerScreen(Screen[None]):
    """Choose a session: from the discovered list (Enter) or by path."""

    CSS_PATH = Path(__file__).with_name("picker.tcss")

    class OpenSession(TextualMessage):
        """The user chose a session (a row, or a typed path); the app opens it."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Filter", key_display="/"),
        Binding("ctrl+o", "focus_path", "Path"),
        Binding("ctrl+r", "refresh", "Rescan"),
        Binding("escape", "clear", "Clear", show=False),
        Binding("down", "focus_table", "List", show=False),
    ]

    def __init__(self, discover: DiscoverFn | None = None) -> None:
        super().__init__()
        self._discover_fn = discover or default_discover
        self.sessions: list[DiscoveredSession] = []
        self.peaks: dict[str, int | None] = {}
        self.shown: list[DiscoveredSession] = []
        self.discovering = True
        self._discovery_started = False

    def compose(self) -> ComposeResult:
        yield TitleBar("a debugger for the context window of coding agents", id="picker-header")
        with Horizontal(id="picker-inputs"):
            yield Input(
                placeholder="Open a path: type it, press Enter (ctrl+o)",
                id="picker-path",
            )
            yield Input(
                placeholder="Filter: project, title, format (fuzzy; / )",
                id="picker-filter",
            )
        yield Static("", id="picker-error")
        table: DataTable[str] = DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield table
        yield Label("Looking for sessions…", id="picker-count")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one("#sessions", DataTable)
        table.add_column("Format", key="format")
        table.add_column("Project", key="project")
        table.add_column("Session", key="title")
        table.add_column("Date", key="date")
        table.add_column("Size", key="size")
        table.add_column("Peak", key="peak")
        self.query_one("#picker-error", Static).display = False
        self.query_one("#picker-filter", Input).focus()  # typing filters at once

    def on_screen_resume(self) -> None:
        # Discover when the picker is first shown (not while a session opened from the command
        # line is loading on top of it).
        if not self._discovery_started:
            self._discovery_started = True
            self._discover()

    # -- discovery ---------------------------------------------------------------------------------

    @work(
        thread=True,
        exclusive=True,
        group="discover",
        exit_on_error=False,
        description="Discovering sessions",
    )
    def _discover(self) -> None:
        try:
            found = list(self._discover_fn())
        except Exception as exc:  # discovery is a convenience: report, keep the path field
            self.post_message(_Discovered([], f"session discovery failed: {exc}"))
            return
        self.post_message(_Discovered(found, None))

    def on__discovered(self, event: _Discovered) -> None:
        self.discovering = False
        self.sessions = event.sessions
        if event.error:
            self.show_error(event.error)
        self._fill_table()
        if self.sessions:
            self._compute_peaks([s for s in self.sessions])

    @work(
        thread=True,
        exclusive=True,
        group="peaks",
        exit_on_error=False,
        description="Computing peak contexts",
    )
    def _compute_peaks(self, sessions: list[DiscoveredSession]) -> None:
        worker = get_current_worker()
        for found in sessions:
            if worker.is_cancelled:
                return
            size = found.size_bytes
            path = str(found.path)
            if size is None or size > PEAK_MAX_BYTES or path in self.peaks:
                continue
            try:
                peak = _peak_of(path)
            except Exception:
                peak = None
            self.post_message(_PeakFound(path, peak))

    def on__peak_found(self, event: _PeakFound) -> None:
        self.peaks[event.path] = event.peak
        table = self.query_one("#sessions", DataTable)
        with contextlib.suppress(Exception):  # the row may be filtered out right now
            table.update_cell(event.path, "peak", self._peak_text(event.path), update_width=True)

    def action_refresh(self) -> None:
        self.discovering = True
        self.query_one("#picker-count", Label).update("Looking for sessions…")
        self._discover()

    # -- table ---------------------------------------------------------------------------------------

    def _peak_text(self, path: str) -> str:
        if path not in self.peaks:
            return "…"
        peak = self.peaks[path]
        return f"{peak:,}" if peak is not None else "—"

    @staticmethod
    def _fields(found: DiscoveredSession) -> list[str]:
        """What the filter matches against: each field on its own (a fuzzy match across a long
        joined string would match almost anything)."""
        project = found.project or ""
        return [
            str(found.format),
            Path(project).name or project,
            found.title or "",
            Path(found.path).name,
        ]

    def _fill_table(self) -> None:
        table = self.query_one("#sessions", DataTable)
        query = self.query_one("#picker-filter", Input).value.strip()
        if query:
            matcher = Matcher(query)
            scored = [
                (max(matcher.match(field) for field in self._fields(s)), s) for s in self.sessions
            ]
            visible = [s for score, s in sorted(scored, key=lambda p: -p[0]) if score > 0]
        else:
            visible = list(self.sessions)
        self.shown = visible
        table.clear()
        for found in visible:
            project = found.project or ""
            if project:
                project = Path(project).name or project
            size = found.size_bytes
            table.add_row(
                str(found.format),
                project,
                (found.title or Path(found.path).name)[:60],
                session_date(found),
                format_bytes(size, missing="db"),
                self._peak_text(str(found.path))
                if size is not None and size <= PEAK_MAX_BYTES
                else "",
                key=str(found.path),
            )
        count = self.query_one("#picker-count", Label)
        if not self.sessions:
            text = (
                "No sessions found in the usual places (Claude Code, Codex, pi, opencode). "
                "Type a path above."
            )
        elif query:
            text = f"{len(visible):,} of {len(self.sessions):,} sessions match “{query}”"
        else:
            text = f"{len(self.sessions):,} sessions · Enter opens · / filters"
        if any(found.last_active is None for found in visible):
            text += f" · {FILE_TIME_MARK}date: the file's time (the session records none)"
        count.update(text)

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._fill_table()

    @on(Input.Submitted, "#picker-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        table = self.query_one("#sessions", DataTable)
        if self.shown:
            table.focus()

    @on(Input.Submitted, "#picker-path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self.show_error("Type the path of a session file first.")
            return
        self.open(text)

    @on(DataTable.RowSelected, "#sessions")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.open(event.row_key.value)

    def open(self, path: str) -> None:
        """Open ``path`` in a session screen (errors come back to :meth:`show_error`)."""
        self.clear_error()
        self.post_message(self.OpenSession(path))

    # -- errors ----------------------------------------------------------------------------------------

    def show_error(self, text: str) -> None:
        """Show ``text`` above the list until the next action."""
        error = self.query_one("#picker-error", Static)
        error.update(text)
        error.display = True

    def clear_error(self) -> None:
        error = self.query_one("#picker-error", Static)
        error.update("")
        error.display = False

    @property
    def error_text(self) -> str:
        error = self.query_one("#picker-error", Static)
        return str(error.render()) if error.display else ""

    # -- actions ---------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``/`` types a slash in a text field: the footer offers it only elsewhere."""
        return not (action == "focus_filter" and isinstance(self.focused, Input))

    def action_focus_filter(self) -> None:
        self.query_one("#picker-filter", Input).focus()

    def action_focus_table(self) -> None:
        table = self.query_one("#sessions", DataTable)
        if table.row_count:
            table.focus()

    def action_focus_path(self) -> None:
        self.query_one("#picker-path", Input).focus()

    def action_clear(self) -> None:
        self.clear_error()
        field = self.query_one("#picker-filter", Input)
        if field.value:
            field.value = ""
        self.query_one("#sessions", DataTable).focus()
