"""The session picker: sessions found on this machine with the fleet's figures, sortable and
filtered, and a path field.

Discovery runs in a thread worker (it stats folders and reads small heads). Then the ``rows``
worker gives each listed session its row of figures (:class:`core.fleet.session_rows.FleetRow`, as
``ctxscope fleet`` has it): at once for the sessions the analysis cache already holds
(:func:`core.fleet.survey.cached_rows`), then, newest first, by analysing the others in processes
(:func:`core.fleet.survey.fleet_rows`, which caches them for the next time). Rows fill in as they
arrive; the worker stops when the picker is covered (a session opened) and goes on when it
comes back. Sessions bigger than :data:`ANALYSE_MAX_BYTES` are not analysed here (their figures
show once ``ctxscope fleet`` has cached them). What the table shows and in what order is
:class:`~tui.screens.picker_view.PickerView`'s business.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message as TextualMessage
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, Static
from textual.worker import Worker, WorkerState, get_current_worker

from core.model.write_numbers import counted, format_bytes
from tui.screens.picker_view import (
    COLUMNS,
    FILE_TIME_MARK,
    PENDING,
    SKIPPED,
    Figures,
    Palette,
    PickerView,
    cells,
)
from tui.widgets.footer import KeysFooter
from tui.widgets.title_bar import TitleBar

if TYPE_CHECKING:  # discovery and the fleet are imported by the workers that run them
    from core.fleet.session_rows import FleetRow
    from core.formats.discovery import DiscoveredSession

ANALYSE_MAX_BYTES = 32 * 1000 * 1000
"""Sessions larger than this are not analysed by the picker (a few of them would keep every
core busy for minutes); ``ctxscope fleet`` analyses them, and the picker shows its cached rows."""
MAX_LISTED = 2000
"""The picker lists at most this many sessions (the newest)."""
SESSIONS_PER_JOB = 4
"""Sessions analysed per process in one round (each round's rows are cached when it ends)."""
REORDER_S = 0.5
"""While rows arrive, a table sorted or filtered by their figures is redrawn at most this often."""

DiscoverFn = Callable[[], Sequence["DiscoveredSession"]]
_AT_WORK = (WorkerState.PENDING, WorkerState.RUNNING)


def default_discover() -> Sequence[DiscoveredSession]:
    """The sessions :func:`core.formats.discovery.discover_sessions` finds, newest first."""
    from core.formats.discovery import discover_sessions

    return discover_sessions(limit=MAX_LISTED)


class _Discovered(TextualMessage):
    def __init__(self, sessions: list[DiscoveredSession], error: str | None) -> None:
        super().__init__()
        self.sessions = sessions
        self.error = error


class _RowsFound(TextualMessage):
    def __init__(self, rows: list[FleetRow], from_cache: bool) -> None:
        super().__init__()
        self.rows = rows
        self.from_cache = from_cache


class PickerScreen(Screen[None]):
    """Choose a session: from the discovered list (Enter) or by path."""

    CSS_PATH = Path(__file__).with_name("picker.tcss")
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "picker-screen--error",
        "picker-screen--warning",
        "picker-screen--muted",
    }

    class OpenSession(TextualMessage):
        """The user chose a session (a row, or a typed path); the app opens it."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Filter", key_display="/", id="picker.filter"),
        Binding("ctrl+o", "focus_path", "Path", id="picker.path"),
        Binding("ctrl+r", "refresh", "Rescan", id="picker.rescan"),
        Binding("s", "next_sort", "Sort", id="picker.sort"),
        Binding("S", "reverse_sort", "Reverse", id="picker.reverse-sort"),
        Binding("a", "next_agent", "Agent", id="picker.agent"),
        Binding("n", "toggle_near", "Near overflow", id="picker.near-overflow"),
        Binding("x", "stop", "Stop", id="picker.stop"),
        Binding("escape", "clear", "Clear", show=False, id="picker.clear"),
        Binding("down", "focus_table", "List", show=False, id="picker.list"),
    ]
    TYPED_ACTIONS = frozenset(
        {"focus_filter", "next_sort", "reverse_sort", "next_agent", "toggle_near", "stop"}
    )
    """Keys that are characters: in a text field they type, so the footer offers them elsewhere."""

    def __init__(
        self,
        discover: DiscoverFn | None = None,
        *,
        use_cache: bool = True,
        jobs: int | None = None,
        deferred: bool = False,
    ) -> None:
        """``deferred``: a session opens on top at once (a path on the command line): the
        widgets are built when the picker is first uncovered or has an error to show, not
        while that session loads (they take ~60 ms to mount and paint)."""
        super().__init__()
        self.built = not deferred
        """The widgets are mounted (see ``deferred``)."""
        self._building = False
        self._covered = False
        self._pending_error: str | None = None
        self._discover_fn = discover or default_discover
        self._use_cache = use_cache
        self._jobs = jobs
        self.sessions: list[DiscoveredSession] = []
        self.rows: dict[str, FleetRow] = {}
        """Each session's figures, by path, as they arrive."""
        self.shown: list[DiscoveredSession] = []
        """The sessions listed, in order."""
        self._shown_by_path: dict[str, DiscoveredSession] = {}
        self.view = PickerView()
        self.discovering = True
        self.analysing = False
        self.from_cache = 0
        """Rows read from the analysis cache (since the last scan)."""
        self.analysed = 0
        """Rows analysed here (since the last scan)."""
        self._discovery_started = False
        self._reorder_pending = False

    def compose(self) -> ComposeResult:
        if self.built:
            yield from self._widgets()

    def _widgets(self) -> list[Widget]:
        """The picker's widgets (built whole: mounted by compose, or later by :meth:`build`)."""
        table: DataTable[str | Text] = DataTable(
            id="sessions", cursor_type="row", zebra_stripes=True
        )
        return [
            TitleBar("a debugger for the context window of coding agents", id="picker-header"),
            Horizontal(
                Input(placeholder="Open a path: type it, press Enter (ctrl+o)", id="picker-path"),
                Input(placeholder="Filter: project, title, format (fuzzy; / )", id="picker-filter"),
                id="picker-inputs",
            ),
            Static("", id="picker-error"),
            table,
            Label("Looking for sessions…", id="picker-count"),
            KeysFooter(rows=2),  # (every key the picker offers, at 80 columns too)
        ]

    def on_mount(self) -> None:
        if self.built:
            self._set_up()

    def _set_up(self) -> None:
        self._set_columns()
        self.query_one("#picker-error", Static).display = False
        self.query_one("#picker-filter", Input).focus()  # typing filters at once

    def build(self) -> None:
        """Mount the widgets of a deferred picker (soon: an error shown meanwhile waits for
        them, and discovery starts once they are there if the picker is on screen)."""
        if self.built or self._building:
            return
        self._building = True
        self.call_later(self._build)

    async def _build(self) -> None:
        await self.mount_all(self._widgets())
        self.built = True
        self._set_up()
        if self._pending_error is not None:
            text, self._pending_error = self._pending_error, None
            self.show_error(text)
        if self.is_current:  # (its resume found nothing to show yet)
            self.on_screen_resume()

    def on_screen_resume(self) -> None:
        if not self.built:
            if not self._covered:
                return  # the session opened from the command line is about to cover it
            self.build()
            return
        # Discover when the picker is first shown (not while a session opened from the command
        # line is loading on top of it); afterwards, go on analysing what is left.
        if not self._discovery_started:
            self._discovery_started = True
            self._discover()
        elif not self.discovering:
            self._start_rows()

    def on_screen_suspend(self) -> None:
        self._covered = True
        # A session on top needs the cores: the analysis goes on when the picker comes back.
        self.workers.cancel_group(self, "rows")

    @property
    def table(self) -> DataTable[str | Text]:
        return self.query_one("#sessions", DataTable)

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
        self.rows = {}
        self.from_cache = self.analysed = 0
        if event.error:
            self.show_error(event.error)
        self._fill_table()
        self._start_rows()

    def action_refresh(self) -> None:
        self.discovering = True
        self.workers.cancel_group(self, "rows")
        self.query_one("#picker-count", Label).update("Looking for sessions…")
        self._discover()

    # -- the figures of each session -------------------------------------------------------------

    def figures(self, found: DiscoveredSession) -> Figures:
        """The figures of ``found``: its row, else whether it is being analysed."""
        row = self.rows.get(found.path)
        if row is not None:
            return row
        return SKIPPED if self._too_big(found) else PENDING

    @staticmethod
    def _too_big(found: DiscoveredSession) -> bool:
        return found.size_bytes is not None and found.size_bytes > ANALYSE_MAX_BYTES

    def _start_rows(self) -> None:
        missing = [s for s in self.sessions if s.path not in self.rows]
        if missing:
            self._analyse([s.path for s in missing], {s.path for s in missing if self._too_big(s)})

    @work(
        thread=True,
        exclusive=True,
        group="rows",
        exit_on_error=False,
        description="Analysing sessions",
    )
    def _analyse(self, paths: list[str], too_big: set[str]) -> None:
        from core.fleet.session_pool import default_jobs
        from core.fleet.survey import cached_rows, default_cache, fleet_rows

        worker = get_current_worker()
        cache = default_cache() if self._use_cache else None
        hits = cached_rows(paths, cache) if cache is not None else {}
        if hits:
            self.post_message(_RowsFound(list(hits.values()), from_cache=True))
        todo = [p for p in paths if p not in hits and p not in too_big]  # newest first
        jobs = self._jobs or default_jobs()
        step = jobs * SESSIONS_PER_JOB
        for start in range(0, len(todo), step):
            rows = fleet_rows(
                todo[start : start + step],
                jobs=jobs,
                cache=cache,
                stop=lambda: worker.is_cancelled,
            )
            for row, _ in rows:
                self.post_message(_RowsFound([row], from_cache=False))
            if worker.is_cancelled:
                return

    def on__rows_found(self, event: _RowsFound) -> None:
        for row in event.rows:
            self.rows[row.path] = row
        if event.from_cache:
            self.from_cache += len(event.rows)
        else:
            self.analysed += len(event.rows)
        if self.view.sorts_by_figures:
            self._reorder_soon()
        else:
            self._update_cells(event.rows)
        self._update_count()

    def _update_cells(self, rows: list[FleetRow]) -> None:
        table = self.table
        palette = self._palette()
        for row in rows:
            found = self._shown_by_path.get(row.path)
            if found is None:
                continue  # filtered out right now
            for column, value in zip(COLUMNS, cells(found, row, palette), strict=True):
                with contextlib.suppress(Exception):  # the row may have just gone
                    table.update_cell(row.path, column.key, value, update_width=True)

    def _reorder_soon(self) -> None:
        """Redraw the table in its order at most every :data:`REORDER_S` while rows arrive."""
        if not self._reorder_pending:
            self._reorder_pending = True
            self.set_timer(REORDER_S, self._reorder)

    def _reorder(self) -> None:
        if self._reorder_pending:  # (not again when the run's end already did it)
            self._reorder_pending = False
            self._fill_table()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "rows":
            return
        # (a cancelled run may end after its successor started: ask every run of the group)
        self.analysing = any(
            w.group == "rows" and w.node is self and w.state in _AT_WORK for w in self.app.workers
        )
        if event.state == WorkerState.ERROR:
            self.show_error(f"analysing the sessions failed: {event.worker.error}")
        if not self.analysing:
            self._reorder()  # the last rows in their place at once
        self._update_count()
        self.refresh_bindings()

    def action_stop(self) -> None:
        self.workers.cancel_group(self, "rows")

    # -- table ---------------------------------------------------------------------------------------

    def _palette(self) -> Palette:
        def style(name: str) -> Style:
            return self.get_component_rich_style(f"picker-screen--{name}", partial=True)

        return Palette(style("error"), style("warning"), style("muted"))

    def _set_columns(self) -> None:
        table = self.table
        table.clear(columns=True)
        for column in COLUMNS:
            table.add_column(self.view.label(column.key), key=column.key)

    def _fill_table(self) -> None:
        table = self.table
        highlighted = self._highlighted_path()
        self.view.query = self.query_one("#picker-filter", Input).value.strip()
        self.shown = self.view.visible(self.sessions, self.rows)
        self._shown_by_path = {found.path: found for found in self.shown}
        self._set_columns()
        palette = self._palette()
        for found in self.shown:
            table.add_row(*cells(found, self.figures(found), palette), key=found.path)
        if highlighted is not None:
            with contextlib.suppress(Exception):  # no longer listed: the cursor stays at the top
                table.move_cursor(row=table.get_row_index(highlighted))
        self._update_count()

    def _highlighted_path(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        with contextlib.suppress(Exception):
            return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return None

    def _update_count(self) -> None:
        count = self.query_one("#picker-count", Label)
        if self.discovering:
            return
        if not self.sessions:
            count.update(
                "No sessions found in the usual places (Claude Code, Codex, pi, opencode). "
                "Type a path above."
            )
            return
        total = len(self.sessions)
        shown = len(self.shown)
        parts = [
            f"{shown:,} of {counted(total, 'session')}"
            if shown != total
            else counted(total, "session")
        ]
        if self.view.query:
            parts[0] += f" match “{self.view.query}”"
        parts.append(self.view.describe())
        parts.append(self._progress_text())
        if any(found.last_active is None for found in self.shown):
            parts.append(f"{FILE_TIME_MARK}date: the file's time (the session records none)")
        count.update(" · ".join(p for p in parts if p))

    def _progress_text(self) -> str:
        waiting = sum(1 for s in self.sessions if self.figures(s) == PENDING)
        skipped = sum(1 for s in self.sessions if self.figures(s) == SKIPPED)
        broken = sum(1 for row in self.rows.values() if row.error is not None)
        parts = []
        if waiting and self.analysing:
            parts.append(f"analysing {waiting:,}… (x stops)")
        elif waiting:
            parts.append(f"{waiting:,} not analysed (ctrl+r)")
        if self.from_cache:
            parts.append(f"{self.from_cache:,} from the cache")
        if skipped:
            parts.append(
                f"{skipped:,} over {format_bytes(ANALYSE_MAX_BYTES)} not analysed (ctxscope fleet)"
            )
        if broken:
            parts.append(f"{broken:,} unreadable")
        return ", ".join(parts)

    @on(DataTable.HeaderSelected, "#sessions")
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        if event.column_key.value is not None:
            self.view.sort_by(event.column_key.value)
            self._fill_table()

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._fill_table()

    @on(Input.Submitted, "#picker-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.shown:
            self.table.focus()

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
        """Show ``text`` above the list until the next action. The focus leaves the filter (the
        list takes it), so that after a failed open ``q`` quits and the other keys act at once
        (``/`` goes back to filtering); a path being typed in the path field keeps it there, to
        be corrected (Esc leaves it)."""
        if not self.built:
            self._pending_error = text
            self.build()
            return
        error = self.query_one("#picker-error", Static)
        error.update(text)
        error.display = True
        path_field = self.query_one("#picker-path", Input)
        if self.focused is not path_field:
            self.table.focus()

    def clear_error(self) -> None:
        error = self.query_one("#picker-error", Static)
        error.update("")
        error.display = False

    @property
    def error_text(self) -> str:
        if not self.built:
            return self._pending_error or ""
        error = self.query_one("#picker-error", Static)
        return str(error.render()) if error.display else ""

    # -- actions ---------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that are characters type into a text field: the footer offers them elsewhere;
        Stop is shown always, usable only while sessions are being analysed."""
        if action in self.TYPED_ACTIONS and isinstance(self.focused, Input):
            return False
        if action == "stop":
            return True if self.analysing else None
        return True

    def action_focus_filter(self) -> None:
        self.query_one("#picker-filter", Input).focus()

    def action_focus_table(self) -> None:
        table = self.table
        if table.row_count:
            table.focus()

    def action_focus_path(self) -> None:
        self.query_one("#picker-path", Input).focus()

    def action_next_sort(self) -> None:
        self.view.next_sort()
        self._fill_table()

    def action_reverse_sort(self) -> None:
        self.view.sort_by(self.view.sort)
        self._fill_table()

    def action_next_agent(self) -> None:
        self.view.next_agent()
        self._fill_table()

    def action_toggle_near(self) -> None:
        self.view.near = not self.view.near
        self._fill_table()

    def action_clear(self) -> None:
        self.clear_error()
        field = self.query_one("#picker-filter", Input)
        if field.value:
            field.value = ""
        self.table.focus()
