"""The state one session screen shows: the session, the active policy, the latest replay result
and what the user has selected.

Widgets read this object; they never run an algorithm. Everything here is derived from the
:class:`~core.model.session.Session` and the :class:`~core.replay.ReplayResult` (docs/REPLAY_API.md) with
plain lookups, and every lookup a row needs while painting is O(1) (precomputed when the result or
the selection changes), so a 100,000-message list paints as fast as a 10-message one.

The per-message tables (rows, flags, calls) are :class:`array.array` of machine integers, not lists:
the cyclic garbage collector walks a list of 100,000 ints item by item at every full collection
(a few ms each, landing on random key presses), while an array's items are never visited.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import InitVar, dataclass, field
from enum import IntFlag
from itertools import compress
from operator import attrgetter
from struct import pack
from typing import TYPE_CHECKING, NamedTuple

from core.model.session import IS_MAIN_CALL, Message, Role, Session, message_flags
from core.policy import Policy, get_preset
from tui.columns import marked
from tui.compaction_stops import CompactionStop, compaction_stops
from tui.figures import event_before_name, recorded_compaction_figures, recorded_trigger

if TYPE_CHECKING:  # the replay engine is imported lazily, in the worker that runs it
    from core.replay import (
        CallPoint,
        InferredThreshold,
        MessageState,
        ReplayEvent,
        ReplayResult,
    )
    from tui.insights import Insights

INFERRED = "inferred"
"""The policy the session's own compactions imply (``core.replay.INFERRED``; not imported from
there: the replay package is loaded on first use)."""


class Inferred(NamedTuple):
    """The recording agent's threshold as the session's own compactions show it, and the
    ``inferred`` policy built on it."""

    threshold: InferredThreshold
    policy: Policy


def policy_for(session: Session, chosen: Policy | None) -> Policy:
    """The policy a session opens with, as ``ctxscope analyze`` picks it: the recording agent's
    preset as its recorded version behaves, unless another policy was chosen (the recording
    agent's own preset, chosen by name, follows the version too; ``inferred`` starts as it and
    is switched to once the first replay has worked it out)."""
    from core.replay import native_policy  # (the replay package: loaded with the session)

    native = native_policy(session)
    if chosen is None or (chosen.name == INFERRED and chosen == Policy(name=INFERRED)):
        return native  # (--policy inferred, not known yet; a Policy made only for that name: the
        # first one made in a process builds its validator, ~25 ms before the first screen)
    if chosen.name == native.name and chosen == get_preset(chosen.name):
        return native
    return chosen


class RowFlag(IntFlag):
    """What is special about one message under the active policy and selection."""

    NONE = 0
    PRUNED = 1
    PROTECTED = 2
    HEAD = 4
    TAIL = 8
    SUMMARY = 16
    SYNTHETIC = 32
    TRUNCATED = 64
    OVERFLOW = 128
    BOUNDARY = 256
    MATCH = 512
    COMPACTED_HERE = 1024
    META = 2048


_SUMMARY, _SYNTHETIC, _META, _BOUNDARY = (
    int(RowFlag.SUMMARY),
    int(RowFlag.SYNTHETIC),
    int(RowFlag.META),
    int(RowFlag.BOUNDARY),
)
_PRUNED, _PROTECTED, _TRUNCATED, _OVERFLOW = (
    int(RowFlag.PRUNED),
    int(RowFlag.PROTECTED),
    int(RowFlag.TRUNCATED),
    int(RowFlag.OVERFLOW),
)
_COMPACTED_HERE, _HEAD, _TAIL, _MATCH = (
    int(RowFlag.COMPACTED_HERE),
    int(RowFlag.HEAD),
    int(RowFlag.TAIL),
    int(RowFlag.MATCH),
)


class MessageTable(NamedTuple):
    """What a session's messages say of themselves, read in one pass (:func:`read_messages`):
    the same whatever the policy or the replay, so read once per message list."""

    messages_id: int
    """``id()`` of the message list read (a table is used only with that list)."""
    length: int
    """How many messages the list had."""
    flags: array[int]
    """Each message's own flags (summary, synthetic, meta, recorded boundary)."""
    calls: array[int]
    """The indices of the messages that are model calls, in order."""
    identity: array[int] | None = None
    """``0, 1, …, length - 1``: what the list's rows are sliced from (None: made when needed)."""


def read_messages(session: Session) -> MessageTable:
    """The table of ``session``'s messages (a worker that read a session reads it beside it, so
    that the interface thread does not walk 100,000 messages to show them)."""
    messages = session.messages
    count = len(messages)
    flags, calls = _message_flags(messages, count, message_flags(session))
    return MessageTable(id(messages), count, flags, calls, _identity(count))


@dataclass(frozen=True, slots=True)
class Marker:
    """A rule row the list draws between two messages (not a message itself)."""

    kind: str
    """``split`` (head/tail of the selected compaction) or ``boundary`` (recorded compaction)."""
    text: str
    message_index: int
    """The message the rule sits above."""


@dataclass
class SessionState:
    """One session as the screen shows it.

    ``rows`` maps each row of the message list to a message index (>= 0) or to a marker
    (``-1 - k`` for ``markers[k]``); it is rebuilt only when the markers change.
    """

    session: Session
    policy: Policy
    result: ReplayResult | None = None
    active_event: int | None = None
    """Event id (index into ``result.events``) of the compaction whose head/tail is shown."""
    matches: list[int] = field(default_factory=list)
    """Message indices matching the current search, in order."""
    search_text: str = ""
    replay_error: str | None = None
    insights: Insights | None = None
    """The breakdown, the cost and the compaction reports (worked out after each replay, in a
    worker; None until then)."""

    rows: array[int] = field(default_factory=lambda: _ints())
    markers: list[Marker] = field(default_factory=list)
    _flags: array[int] = field(default_factory=lambda: _ints())
    _call_messages: array[int] = field(default_factory=lambda: _ints())
    _marker_rows: list[int] = field(default_factory=list)
    """Where each rule sits (the message it is drawn above), in order: message ``m``'s row is
    ``m`` plus the rules at or before it."""
    _identity: array[int] = field(default_factory=lambda: _ints())
    """``0, 1, …`` for every message: the rows are slices of it (copied in C)."""
    _match_set: set[int] = field(default_factory=set)
    _marker_places: tuple[int, list[int]] | None = None
    """The message count and where each rule sat when the rows were last made."""
    _static: MessageTable | None = None
    """The messages' own flags and the messages that are model calls, for the message list and
    the count they were read at (one pass over the messages): they do not change with a replay
    (a limit change on 100,000 messages need not read them again)."""
    _stops: tuple[ReplayResult | None, tuple[int, int], list[CompactionStop]] | None = None
    """The compactions drawn in the list, and what they were read from."""
    _first_overflow: tuple[ReplayResult, tuple[int, int, bool] | None] | None = None
    """The result :meth:`first_overflow` was worked out for, and its answer."""
    _decided: _Decisions | None = None
    """What the replay decided about each message, read from the result's columns when a row
    asks (``_flags`` holds the rest; None: nothing decided, or already in ``_flags``)."""

    table: InitVar[MessageTable | None] = None
    """The messages' table, when a worker read it already (:func:`read_messages`)."""

    def __post_init__(self, table: MessageTable | None) -> None:
        self.use_table(table)
        self.rebuild()

    def use_table(self, table: MessageTable | None) -> None:
        """Take ``table`` as the messages' (read in a worker) for the next :meth:`rebuild`; one
        of another message list, or None, is not used (the messages are read then)."""
        if table is not None:
            self._static = table

    def __repr__(self) -> str:  # never the whole session (workers and logs repr their arguments)
        return (
            f"SessionState({self.session.id!r}, {self.message_count} messages, "
            f"policy={self.policy.name!r}, result={'yes' if self.result else 'no'})"
        )

    # -- basic facts ------------------------------------------------------------------------

    @property
    def message_count(self) -> int:
        return len(self.session.messages)

    @property
    def window(self) -> int | None:
        """The window the replay uses: the policy's override, else the session's."""
        if self.policy.context_window:
            return self.policy.context_window
        if self.result is not None and self.result.window:
            return int(self.result.window)
        return self.session.context_window

    @property
    def window_source(self) -> str:
        """Where the window comes from: ``recorded``, ``table``, ``inferred``, ``user``, or
        ``policy`` (the policy's override)."""
        if self.policy.context_window:
            return "policy"
        if self.result is not None and self.result.window_source:
            return self.result.window_source
        return str(self.session.window_source)

    @property
    def window_evidence(self) -> str | None:
        """Why the window is what it is (one sentence), when known."""
        if self.policy.context_window:
            return "The policy overrides the session's window (context_window)."
        if self.result is not None and self.result.window_evidence:
            return self.result.window_evidence
        return self.session.window_evidence

    def message(self, index: int) -> Message:
        return self.session.messages[index]

    def message_state(self, index: int) -> MessageState | None:
        if self.result is None or not 0 <= index < self.result.message_count:
            return None
        return self.result.message_state(index)  # one state, not the 100,000 of a big file

    def flags(self, index: int) -> int:
        if index < len(self._flags):
            decided = self._decided
            return self._flags[index] | (decided.of(index) if decided is not None else 0)
        return 0

    # -- calls (gauge <-> list) ---------------------------------------------------------------

    def call_for_message(self, index: int) -> int | None:
        """The model call a message belongs to: the last call at or before it (else the first)."""
        calls = self._call_messages
        if not calls:
            return None
        pos = bisect_right(calls, index) - 1
        return max(pos, 0)

    def point_of_message(self, index: int) -> CallPoint | None:
        """The replay's point of the call message ``index`` is (None: not a call, no result)."""
        call = self.call_for_message(index)
        if self.result is None or call is None or call >= self.result.call_count:
            return None
        if self._call_messages[call] != index:
            # Not a call (with a result the table is the points' own message column): no point
            # is built for it. The first point built reads the turn of every message (7-12 ms
            # at 100,000 messages), and the detail pane asks for the first message, a prompt,
            # on the frame that shows the replay's result.
            return None
        point = self.result.point(call)
        return point if point.message_index == index else None

    def message_for_call(self, call_index: int) -> int | None:
        if 0 <= call_index < len(self._call_messages):
            return self._call_messages[call_index]
        return None

    @property
    def call_count(self) -> int:
        return len(self._call_messages)

    @property
    def recorded_calls(self) -> Sequence[int] | None:
        """The message indices of the session's model calls, as read with the messages' flags
        (None: not read for the messages shown now)."""
        static = self._static
        messages = self.session.messages
        if static is None or static.messages_id != id(messages) or static.length != len(messages):
            return None
        return static.calls

    # -- compactions ---------------------------------------------------------------------------

    def compaction_events(self) -> list[tuple[int, int]]:
        """``(event_id, message_index)`` of every compaction the list draws, in order: the
        replay's (``event_id`` >= 0) and the recorded ones it did not apply (``-1 - k``)."""
        return [(stop.event_id, stop.message_index) for stop in self.compaction_stops()]

    def compaction_stops(self) -> list[CompactionStop]:
        """Every compaction the list draws (:func:`tui.compaction_stops.compaction_stops`; read
        again only when the result, the compactions or the messages change)."""
        session, result = self.session, self.result
        counts = (len(session.compactions), len(session.messages))
        cached = self._stops
        if cached is None or cached[0] is not result or cached[1] != counts:
            cached = self._stops = (result, counts, compaction_stops(session, result))
        return cached[2]

    def compaction_stop(self, event_id: int) -> CompactionStop | None:
        """The stop of ``event_id`` (a replay event, or ``-1 - k``: recorded compaction ``k``)."""
        return next((s for s in self.compaction_stops() if s.event_id == event_id), None)

    def unapplied_at(self, message_index: int) -> list[CompactionStop]:
        """The recorded compactions drawn above message ``message_index`` that the replay did
        not apply (none without a result: nothing is replayed yet)."""
        if self.result is None:
            return []
        return [
            stop
            for stop in self.compaction_stops()
            if not stop.replayed and stop.message_index == message_index
        ]

    def event(self, event_id: int | None) -> ReplayEvent | None:
        if event_id is None or event_id < 0 or self.result is None:
            return None
        if event_id >= len(self.result.events):
            return None
        return self.result.events[event_id]

    def first_overflow(self) -> tuple[int, int, bool] | None:
        """``(call_index, message_index, simulated)`` of the first call over the window.

        The policy's own (simulated) overflow comes first; else the recording's, which the
        policy avoided (``simulated`` False).
        """
        result = self.result
        if result is None:
            return None
        known = self._first_overflow
        if known is not None and known[0] is result:
            return known[1]  # (the status line asks at each redraw: worked out once per result)
        found = None
        for simulated in (True, False):
            column = result.point_column("overflow_simulated" if simulated else "overflow_recorded")
            call = next(marked(range(len(column)), column), None)
            if call is not None:
                found = call, result.point_column("message_index")[call], simulated
                break
        self._first_overflow = (result, found)
        return found

    # -- rows ----------------------------------------------------------------------------------

    def row_of_message(self, index: int) -> int:
        """The list row that shows message ``index``."""
        places = self._marker_rows
        if places and 0 <= index < self.message_count:
            return index + bisect_right(places, index)
        return index

    def _read_messages(self, messages: list[Message], count: int) -> tuple[array[int], array[int]]:
        """The messages' own flags and the indices of the model calls among them (read once per
        message list and length; the flags are the caller's copy)."""
        static = self._static
        if static is None or static.messages_id != id(messages) or static.length != count:
            static = self._static = read_messages(self.session)
        return static.flags[:], static.calls  # (a copy, made in C)

    def rebuild(self) -> None:
        """Recompute flags, markers and rows from the session, the result and the selection."""
        messages = self.session.messages
        count = len(messages)
        flags, calls = self._read_messages(messages, count)
        result = self.result
        self._decided = None
        if result is not None:
            self._decided = _Decisions.of_result(result)
            if self._decided is None:  # (a result whose states are not one per message)
                _mark_decisions(flags, result, count)
            self._call_messages = _ints(result.point_column("message_index"))
        else:
            self._call_messages = calls  # (never changed in place: shared with the cache)
        markers = self._mark_selected_compaction(flags, count)
        markers.extend(_boundary_markers(self.session, result, count))
        for i in self._match_set:
            if i < count:
                flags[i] |= _MATCH
        self._flags = flags
        self._set_markers(markers)

    def _mark_selected_compaction(self, flags: array[int], count: int) -> list[Marker]:
        """Flag the head and the tail of the selected compaction; its split rule, if any."""
        selected = self.event(self.active_event)
        if selected is None or selected.kind != "compact":
            return []
        for i in selected.head_indices:
            if i < count:
                flags[i] |= _HEAD
        for i in selected.tail_indices:
            if i < count:
                flags[i] |= _TAIL
        return [_split_marker(selected, count)]

    def _set_markers(self, markers: list[Marker]) -> None:
        count = self.message_count
        # split rules sort before boundary rules at the same message
        ordered = sorted(
            (m for m in markers if 0 <= m.message_index <= count),
            key=lambda m: (m.message_index, m.kind != "split"),
        )
        self.markers = ordered
        places = (count, [m.message_index for m in ordered])
        if places == self._marker_places:
            return  # the rules sit where they did: the rows are the same
        self._marker_places = places
        self._marker_rows = places[1]
        identity = self._identity
        if len(identity) != count:
            static = self._static  # (read for these messages: see rebuild)
            known = static.identity if static is not None else None
            identity = known if known is not None and len(known) == count else _identity(count)
            self._identity = identity
        rows = identity[:0]
        start = 0
        for k, marker in enumerate(ordered):
            stop = marker.message_index
            rows += identity[start:stop]
            start = stop
            rows.append(-1 - k)
        rows += identity[start:count]
        self.rows = rows

    # -- search --------------------------------------------------------------------------------

    def set_matches(self, text: str, matches: list[int]) -> None:
        self.search_text = text
        self.matches = matches
        old = self._match_set
        self._match_set = set(matches)
        count = len(self._flags)
        for i in old:
            if i < count:
                self._flags[i] &= ~RowFlag.MATCH
        for i in self._match_set:
            if i < count:
                self._flags[i] |= RowFlag.MATCH

    # -- replay --------------------------------------------------------------------------------

    def set_result(self, result: ReplayResult | None) -> None:
        self.result = result
        self._first_overflow = None  # (it held the result before)
        self.replay_error = None
        events = self.compaction_events()
        if self.event(self.active_event) is None or (
            result is not None
            and self.active_event is not None
            and result.events[self.active_event].kind != "compact"
        ):
            first_compact = next(
                (
                    event_id
                    for event_id, _ in events
                    if (e := self.event(event_id)) is not None and e.kind == "compact"
                ),
                None,
            )
            self.active_event = first_compact
        self.rebuild()


_INT = "i"
"""The tables' item: 4 bytes (message and call indices, row markers and flag masks fit in 31 bits
and a sign; 8 bytes a message, as before, was 1.7 MB more at 10^5 messages)."""


def _ints(values: Iterable[int] = ()) -> array[int]:
    """A table of machine integers (the garbage collector never visits its items, unlike a list's)."""
    return array(_INT, values)


def _identity(count: int) -> array[int]:
    """``0, 1, …, count - 1`` as a table. Packed in C: an array made from the range parses each
    int through PyArg_Parse (~10 ms at 10^5 messages against ~6). A worker that reads a session
    makes it with the messages' table (:func:`read_messages`), not the interface thread."""
    return array(_INT, pack(f"{count}{_INT}", *range(count)))


def _zeros(count: int) -> array[int]:
    return array(_INT, bytes(array(_INT).itemsize * count))


# (plain int masks below: IntFlag arithmetic is several times slower over 100,000 messages)


def _message_flags(
    messages: list[Message], count: int, loader_flags: bytes | bytearray
) -> tuple[array[int], array[int]]:
    """What the messages themselves say (summaries, injected, meta, recorded boundaries), and
    which of them are model calls (``loader_flags``: :func:`message_flags` of their session).

    Most messages say nothing of themselves: for them the pass reads their four marks and writes
    nothing (their zero is in the table already; only a repeated index, whose last message
    decides, is written over, ``flagged`` knowing which indices hold a flag). The model calls of
    the main conversation are read from the loader's column (:data:`IS_MAIN_CALL`, in C: the
    property :attr:`Message.is_model_call` is a Python call a message); a side chain's messages
    (0 there) are asked."""
    flags = _zeros(count)
    is_call = bytearray(loader_flags.translate(IS_MAIN_CALL))
    if 0 in loader_flags:
        for position in compress(range(len(messages)), loader_flags.translate(_IS_SIDE_CHAIN)):
            if messages[position].is_model_call:
                is_call[position] = 1
    flagged: set[int] = set()
    for message in messages:
        summary = message.summary
        if summary or message.synthetic or message.meta or message.compaction_boundary:
            index = message.index
            value = _SUMMARY if summary else 0
            if message.synthetic:
                value |= _SYNTHETIC
            if message.meta:
                value |= _META
            if message.compaction_boundary:
                value |= _BOUNDARY
            if index < count:
                flags[index] = value
                flagged.add(index)
        elif flagged and message.index in flagged:  # (a repeated index: its last message decides)
            flags[message.index] = 0
            flagged.discard(message.index)
    return flags, _ints(map(_INDEX, compress(messages, is_call)))


_IS_SIDE_CHAIN = bytes(code == 0 for code in range(256))
"""The same: a side chain's message (whose calls the loader's column does not mark) 1, else 0."""
_INDEX = attrgetter("index")


def _mark_decisions(flags: array[int], result: ReplayResult, count: int) -> None:
    """What the replay decided: pruned, protected and truncated outputs, overflowing calls and
    the policy's compactions."""
    from core.replay.timeline import PROTECTED_REASONS  # (a result exists: it is imported)

    # Read as columns, and only where a column says something (``compress`` walks them in C):
    # the states themselves are not built for this (a second on 100 MB).
    messages = result.message_column("message_index")
    for column, mask in (("pruned", _PRUNED), ("truncated", _TRUNCATED)):
        for i in compress(messages, result.message_column(column)):
            if i < count:
                flags[i] |= mask
    reasons = result.message_column("prune_reason")
    for i, why in zip(compress(messages, reasons), filter(None, reasons), strict=True):
        if i < count and why in PROTECTED_REASONS:
            flags[i] |= _PROTECTED
    calls = result.point_column("message_index")
    for column in ("overflow_simulated", "overflow_recorded"):
        for i in marked(calls, result.point_column(column)):
            if i < count:
                flags[i] |= _OVERFLOW
    for event in result.events:
        if event.kind == "compact" and event.message_index < count:
            flags[event.message_index] |= _COMPACTED_HERE


class _Decisions:
    """What a replay decided about each message, read per row from the result's columns (a
    limit change on 100,000 messages does not visit every message to flag the few shown)."""

    __slots__ = ("compacted", "count", "overflow", "protected", "pruned", "reasons", "truncated")

    def __init__(self, result: ReplayResult) -> None:
        from core.replay.timeline import PROTECTED_REASONS  # (a result exists: it is imported)

        self.protected = PROTECTED_REASONS
        self.count = result.message_count
        self.pruned: Sequence[bool] = result.message_column("pruned")
        self.truncated: Sequence[bool] = result.message_column("truncated")
        self.reasons: Sequence[str | None] = result.message_column("prune_reason")
        calls = result.point_column("message_index")
        self.overflow = set(marked(calls, result.point_column("overflow_simulated")))
        self.overflow.update(marked(calls, result.point_column("overflow_recorded")))
        self.compacted = {e.message_index for e in result.events if e.kind == "compact"}

    @classmethod
    def of_result(cls, result: ReplayResult) -> _Decisions | None:
        """The decisions of ``result``, when its message states are one per message in order
        (the columns are then indexed by message); else None."""
        messages = result.message_column("message_index")
        if not isinstance(messages, range) or messages != range(len(messages)):
            return None
        return cls(result)

    def of(self, index: int) -> int:
        """The flags the replay gives message ``index`` (as :func:`_mark_decisions` sets them)."""
        value = 0
        if index < self.count:
            if self.pruned[index]:
                value |= _PRUNED
            if self.truncated[index]:
                value |= _TRUNCATED
            why = self.reasons[index]
            if why and why in self.protected:
                value |= _PROTECTED
        if index in self.overflow:
            value |= _OVERFLOW
        if index in self.compacted:
            value |= _COMPACTED_HERE
        return value


def _boundary_markers(session: Session, result: ReplayResult | None, count: int) -> list[Marker]:
    """A rule above the first message after each compaction the recording made."""
    return [
        Marker("boundary", _boundary_text(session, result, k), compaction.message_index)
        for k, compaction in enumerate(session.compactions)
        if compaction.message_index < count
    ]


def _split_marker(event: ReplayEvent, count: int) -> Marker:
    head = [i for i in event.head_indices if i < count]
    tail = [i for i in event.tail_indices if i < count]
    # The rule goes where the head ends and the kept tail starts. Leading context a strategy
    # keeps verbatim (before the head) is tail too, but the cut is after the head.
    last_head = max(head) if head else -1  # (once, not once per tail message)
    after_head = [i for i in tail if i > last_head]
    if after_head:
        at = min(after_head)
    elif head:
        at = max(head) + 1
    else:
        at = min(event.message_index, count)
    head_text = f"head {len(head):,} msgs summarised" if head else "no head"
    tail_text = f"tail {len(tail):,} msgs kept" if tail else "no tail kept"
    tokens = ""
    if event.tokens_before is not None and event.tokens_after is not None:
        tokens = (
            f" · {event_before_name(event)} {event.tokens_before:,} → {event.tokens_after:,} after"
        )
    trigger = f" ({event.trigger})" if event.trigger else ""
    return Marker("split", f"split{trigger}: ↑ {head_text} · ↓ {tail_text}{tokens}", at)


def _boundary_text(session: Session, result: ReplayResult | None, k: int) -> str:
    trigger, _evidence = recorded_trigger(session, result, k)  # as every screen labels it
    parts = [f"recorded compaction #{k}", trigger]  # (numbered from 0, as recorded_index)
    figures = recorded_compaction_figures(session, result, k)  # the agent's count → tokens after
    if figures != "no recorded figures":
        parts.append(figures)
    return " · ".join(parts)


ROLE_LABELS = {
    Role.SYSTEM: "system",
    Role.USER: "user",
    Role.ASSISTANT: "assistant",
    Role.TOOL: "tool",
}
