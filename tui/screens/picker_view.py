"""What the picker lists, in what order, and the text of each cell (no drawing).

The picker's table has the discovered session's own columns (agent, project, title, the time of
its last message) and the fleet's figures (:class:`core.fleet.session_rows.FleetRow`: peak, its share
of the window, compactions, overflows, cost), worded by :mod:`tui.figures` as ``ctxscope fleet``
words them. :class:`PickerView` holds what the user chose — the sort column and direction, the
agent, the near-overflow view, the fuzzy filter — and :meth:`PickerView.visible` applies it.

A session's figures are a :class:`FleetRow` once analysed (or read from the cache), else
:data:`PENDING` (being analysed) or :data:`SKIPPED` (too big to analyse here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, NamedTuple, TypeAlias

from rich.style import Style
from rich.text import Text
from textual.fuzzy import Matcher

from core.model.session import SourceFormat
from tui.figures import (
    COMPACTIONS_COLUMN,
    COST_COLUMN,
    LAST_MESSAGE_COLUMN,
    OVERFLOW_COLUMN,
    PEAK_COLUMN,
    SHARE_COLUMN,
    local_minute,
    row_compactions,
    row_cost,
    row_overflow,
    row_peak,
    row_share,
    share_level,
)

if TYPE_CHECKING:
    from core.fleet.session_rows import FleetRow
    from core.formats.discovery import DiscoveredSession

PENDING: Final = "pending"
"""The session is being analysed (its figures show ``…``)."""
SKIPPED: Final = "skipped"
"""The session is too big to analyse in the picker (its figures stay empty)."""
Figures: TypeAlias = "FleetRow | Literal['pending', 'skipped']"

FILE_TIME_MARK = "~"
"""Marks a date that is the file's modification time: the session records no time of its own."""
TITLE_CELLS = 24
"""A session's title is cut to this many cells (the fleet's columns need the room)."""
REASON_CELLS = 24
"""Why a session could not be read, cut to this many cells (the full text opens with it)."""
AGENTS: tuple[str | None, ...] = (
    None,
    SourceFormat.CLAUDE_CODE.value,
    SourceFormat.CODEX.value,
    SourceFormat.OPENCODE.value,
    SourceFormat.PI.value,
    SourceFormat.GEMINI_CLI.value,
    SourceFormat.QWEN_CODE.value,
    SourceFormat.COPILOT_CLI.value,
)
"""The agent filter's steps (None: every agent)."""

SortValue = str | float


class Column(NamedTuple):
    """A column of the picker's table."""

    key: str
    label: str
    value: Callable[[DiscoveredSession, FleetRow | None], SortValue | None]
    """What it sorts by (None: sorted last, whichever the direction)."""
    descending: bool = False
    """Its first direction: figures and dates biggest first, names from A."""
    right: bool = False
    """Right-aligned (figures)."""


def _figure(read: Callable[[FleetRow], SortValue | None]) -> Callable[..., SortValue | None]:
    def value(_found: DiscoveredSession, row: FleetRow | None) -> SortValue | None:
        return read(row) if row is not None and row.error is None else None

    return value


def project_name(found: DiscoveredSession) -> str:
    """The project's folder name (the whole path when it has none)."""
    project = found.project or ""
    return Path(project).name or project


def title_of(found: DiscoveredSession) -> str:
    """The session's title, else its file name."""
    return found.title or Path(found.path).name


COLUMNS: tuple[Column, ...] = (
    Column("agent", "agent", lambda found, _row: str(found.format)),
    Column("project", "project", lambda found, _row: project_name(found).lower()),
    Column("title", "session", lambda found, _row: title_of(found).lower()),
    Column("date", LAST_MESSAGE_COLUMN, lambda found, _row: found.when, descending=True),
    Column("peak", PEAK_COLUMN, _figure(lambda r: r.peak_tokens), descending=True, right=True),
    Column("share", SHARE_COLUMN, _figure(lambda r: r.peak_share), descending=True, right=True),
    Column("compactions", COMPACTIONS_COLUMN, _figure(lambda r: r.compactions), descending=True),
    Column("overflow", OVERFLOW_COLUMN, _figure(lambda r: r.overflows_recorded), descending=True),
    Column("cost", COST_COLUMN, _figure(lambda r: r.cost_usd), descending=True, right=True),
)
BY_KEY = {column.key: column for column in COLUMNS}
SORT_KEYS = ("date", "share", "peak", "compactions", "overflow", "cost")
"""The columns ``s`` steps through (a click on any header sorts by it)."""
FIGURE_KEYS = frozenset({"peak", "share", "compactions", "overflow", "cost"})
"""The columns filled in by the analysis: sorting by one reorders rows as they arrive."""


def session_date(found: DiscoveredSession) -> str:
    """The picker's date of a session: its own time (its last message's), local, to the minute;
    the file's modification time, marked, when the session records none."""
    text = local_minute(datetime.fromtimestamp(found.when, UTC))
    return text if found.last_active is not None else f"{FILE_TIME_MARK}{text}"


def short_reason(row: FleetRow) -> str:
    """Why the session could not be read, in a few words (its path left out)."""
    error = row.error or ""
    error = error.removeprefix(f"{row.path}: ")
    return error if len(error) <= REASON_CELLS else error[: REASON_CELLS - 1] + "…"


def _cut(text: str, cells: int) -> str:
    return text if len(text) <= cells else text[: cells - 1] + "…"


class Palette(NamedTuple):
    """The styles of the cells, from the app's theme."""

    error: Style
    warning: Style
    muted: Style


def cells(found: DiscoveredSession, figures: Figures, palette: Palette) -> list[str | Text]:
    """The row of ``found`` in :data:`COLUMNS` order (figures right-aligned)."""
    row = _cells(found, figures, palette)
    return [_right(c) if column.right else c for column, c in zip(COLUMNS, row, strict=True)]


def _right(cell: str | Text) -> Text:
    text = Text(cell) if isinstance(cell, str) else cell
    text.justify = "right"
    return text


def _cells(found: DiscoveredSession, figures: Figures, palette: Palette) -> list[str | Text]:
    mark = CHILD_MARK if found.parent_session_id else ""
    own: list[str | Text] = [
        str(found.format),
        project_name(found),
        mark + _cut(title_of(found), TITLE_CELLS - len(mark)),
        session_date(found),
    ]
    if figures == SKIPPED:
        return [*own, "", "", "", "", ""]
    if figures == PENDING:
        return [*own, Text("…", palette.muted), "", "", "", ""]
    assert not isinstance(figures, str)
    if figures.error is not None:
        own[2] = Text(f"✗ {short_reason(figures)}", palette.error)
        return [*own, Text("✗", palette.error), "", "", "", ""]
    level = share_level(figures.peak_share)
    share_style = {"over": palette.error, "near": palette.warning, "": Style()}[level]
    return [
        *own,
        row_peak(figures),
        Text(row_share(figures.peak_share), share_style),
        row_compactions(figures),
        Text(row_overflow(figures), palette.error),
        row_cost(figures),
    ]


def near_overflow_label() -> str:
    """What the near-overflow view shows, in a few words."""
    from core.insights.diagnosis import (
        MARGIN,  # (with the replay's models: loaded when first asked)
    )

    return f"near overflow: within {MARGIN:.0%} of the window, or over it"


CHILD_MARK = "└ "
"""Starts the title of a sub-agent listed under its parent."""


def grouped(ordered: Sequence[DiscoveredSession]) -> list[DiscoveredSession]:
    """``ordered`` with each sub-agent moved right under its parent (in their own order), when
    the parent is listed; a sub-agent whose parent is not listed stays where it is."""
    listed = {s.session_id for s in ordered if s.session_id}
    children: dict[str, list[DiscoveredSession]] = {}
    for found in ordered:
        parent = found.parent_session_id
        if parent and parent in listed and parent != found.session_id:
            children.setdefault(parent, []).append(found)
    out: list[DiscoveredSession] = []
    placed: set[int] = set()

    def place(found: DiscoveredSession) -> None:
        if id(found) in placed:
            return
        placed.add(id(found))
        out.append(found)
        for child in children.get(found.session_id or "", []):
            place(child)

    for found in ordered:
        parent = found.parent_session_id
        if not (parent and parent in listed and parent != found.session_id):
            place(found)
    for found in ordered:  # (a loop of parents: keep them all)
        place(found)
    return out


def _fields(found: DiscoveredSession) -> list[str]:
    """What the filter matches against: each field on its own (a fuzzy match across a long
    joined string would match almost anything)."""
    return [str(found.format), project_name(found), found.title or "", Path(found.path).name]


def _closeness(query: str, found: DiscoveredSession) -> int:
    """0: a field is the filter's text (case aside); 1: a field holds it; 2: a fuzzy match."""
    text = query.casefold()
    fields = [field.casefold() for field in _fields(found)]
    if text in fields:
        return 0
    return 1 if any(text in field for field in fields) else 2


@dataclass
class PickerView:
    """What the user chose to see: the sort, the agent, the near-overflow view, the filter."""

    sort: str = "date"
    """The key of the column rows are sorted by."""
    descending: bool = True
    agent: str | None = None
    """Only this agent's sessions (None: all)."""
    near: bool = False
    """Only the sessions that overflowed or came within the diagnosis' margin of the window
    (:meth:`core.fleet.session_rows.FleetRow.near_overflow`)."""
    query: str = ""
    """The fuzzy filter's text."""

    def next_sort(self) -> None:
        """Sort by the next of :data:`SORT_KEYS`, in its first direction."""
        position = SORT_KEYS.index(self.sort) if self.sort in SORT_KEYS else -1
        self.sort_by(SORT_KEYS[(position + 1) % len(SORT_KEYS)])

    def sort_by(self, key: str) -> None:
        """Sort by column ``key``; the column already sorted by is reversed."""
        if key == self.sort:
            self.descending = not self.descending
        else:
            self.sort = key
            self.descending = BY_KEY[key].descending

    def next_agent(self) -> None:
        """The next step of :data:`AGENTS`."""
        self.agent = AGENTS[(AGENTS.index(self.agent) + 1) % len(AGENTS)]

    @property
    def sorts_by_figures(self) -> bool:
        """The order (or the rows shown) depends on figures still arriving."""
        return self.near or self.sort in FIGURE_KEYS

    def visible(
        self, sessions: Sequence[DiscoveredSession], rows: dict[str, FleetRow]
    ) -> list[DiscoveredSession]:
        """The sessions to list, in order: filtered, then sorted (sessions without the sorted
        figure last)."""
        shown = [s for s in sessions if self.agent is None or str(s.format) == self.agent]
        if self.near:
            shown = [s for s in shown if (row := rows.get(s.path)) and row.near_overflow()]
        if self.query:
            matcher = Matcher(self.query)
            shown = [s for s in shown if max(matcher.match(f) for f in _fields(s)) > 0]
        value = BY_KEY[self.sort].value
        keyed = [(value(s, rows.get(s.path)), s) for s in shown]
        present = [(v, s) for v, s in keyed if v is not None]
        present.sort(key=lambda pair: pair[0], reverse=self.descending)  # (stable: ties stay)
        ordered = [s for _, s in present] + [s for v, s in keyed if v is None]
        if self.query:  # a session the text names exactly first, then the sort's order
            ordered.sort(key=lambda found: _closeness(self.query, found))
        return grouped(ordered)

    def label(self, key: str) -> str:
        """A column's header, with the sort's arrow on the sorted one."""
        label = BY_KEY[key].label
        if key != self.sort:
            return label
        return f"{label} {'↓' if self.descending else '↑'}"

    def describe(self) -> str:
        """The choices in a few words, for the picker's count line."""
        parts = [f"sorted by {self.label(self.sort)}"]
        if self.agent is not None:
            parts.append(f"{self.agent} only")
        if self.near:
            parts.append(near_overflow_label())
        return " · ".join(parts)
