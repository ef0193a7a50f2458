"""The state of a run: the context as a list of items, the run state at every model call (a
checkpoint), and the trace a run leaves for the next one to resume from.

A :class:`State` is copied at every call (``copy``); its items are shared, never modified.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import compress, product, repeat
from operator import is_, ne, truth
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, overload

import msgspec

from core.model.session import Message, Provenance
from core.policy import Policy
from core.replay.results import ReplayEvent

if TYPE_CHECKING:
    from core.replay.points import CallPoint

CHECKPOINTS_KEPT = 4096
"""A walk keeps the state before every call up to this many calls; beyond, before every k-th call
(:func:`checkpoint_spacing`)."""


def checkpoint_spacing(calls: int) -> int:
    """Every how many calls a walk over ``calls`` calls keeps the state (a checkpoint): before
    calls 0, k, 2k, ... with at most about :data:`CHECKPOINTS_KEPT` of them. A run resuming at
    another call resumes from the last checkpoint before it and walks the calls in between again
    (they are the same under both policies): copying the state at each of 10^5 calls was a sixth
    of a walk."""
    return max(1, -(-calls // CHECKPOINTS_KEPT))


class Item(msgspec.Struct, gc=False, eq=False):
    """One message of a rebuilt context: the object the model sees, its session index (-1: not a
    session message) and its tokens (``Item(message, index, tokens)``).

    A slotted msgspec struct made in C (a third of the time of a class with an ``__init__``, and
    16 bytes smaller: a replay of 100,000 messages makes one per message); compared by identity
    (``eq=False``) like any object, and left out of the cyclic collector (``gc=False``: it holds a
    message and two ints, never a cycle)."""

    message: Message
    index: int
    tokens: int


class State:
    """What a run knows between two messages: the context (a rebuilt base plus the messages walked
    since), the figures the next threshold check starts from, and the events waiting for a call."""

    __slots__ = (
        "base",
        "base_pos",
        "base_tokens",
        "e_sim",
        "n_events",
        "pending",
        "pending_events",
        "prev_baseline_figure",
        "prev_call",
        "prev_e_cov",
        "prev_e_rec_cov",
        "prev_figure",
        "reasoning_before",
        "reasoning_before_prev",
        "reasoning_turn",
        "rebased",
        "rec_base_change",
        "since_call",
        "since_prompt",
        "stuck",
    )

    def __init__(self) -> None:
        self.base: tuple[Item, ...] = ()
        self.base_pos = 0
        self.base_tokens = 0
        self.e_sim = 0
        self.n_events = 0
        self.pending = False
        self.pending_events: tuple[int, ...] = ()
        self.prev_call = -1
        self.prev_e_cov = 0
        self.prev_figure = 0
        self.prev_baseline_figure = 0
        self.prev_e_rec_cov = 0
        self.rebased = False
        self.rec_base_change = False
        self.stuck: Stuck | None = None
        """The last compaction attempt changed nothing, and the context has not been rebuilt
        since (cleared by every rebase)."""
        self.since_call = 0
        """Check tokens (the agent's own estimates where the policy uses them) of the messages
        walked since the previous call."""
        self.since_prompt = 0
        """Check tokens of the messages walked since the current turn's first message (which a
        check before the user's new message does not see)."""
        self.reasoning_before = 0
        """Encrypted reasoning (estimated) of the turns before the current one, in the context."""
        self.reasoning_before_prev = 0
        """``reasoning_before`` as it was before the current turn started."""
        self.reasoning_turn = 0
        """Encrypted reasoning (estimated) of the current turn so far."""

    def copy(self) -> State:
        other = State.__new__(State)
        other.base = self.base
        other.base_pos = self.base_pos
        other.base_tokens = self.base_tokens
        other.e_sim = self.e_sim
        other.n_events = self.n_events
        other.pending = self.pending
        other.pending_events = self.pending_events
        other.prev_baseline_figure = self.prev_baseline_figure
        other.prev_call = self.prev_call
        other.prev_e_cov = self.prev_e_cov
        other.prev_e_rec_cov = self.prev_e_rec_cov
        other.prev_figure = self.prev_figure
        other.rebased = self.rebased
        other.rec_base_change = self.rec_base_change
        other.stuck = self.stuck
        other.since_call = self.since_call
        other.since_prompt = self.since_prompt
        other.reasoning_before = self.reasoning_before
        other.reasoning_before_prev = self.reasoning_before_prev
        other.reasoning_turn = self.reasoning_turn
        return other

    def recount_reasoning(self, items: tuple[Item, ...]) -> None:
        """The context was rebuilt as ``items``: the reasoning figures start over from them."""
        self.reasoning_before = self.reasoning_before_prev = self.reasoning_turn = 0
        for item in items:
            message = item.message
            if message.is_turn_start:
                self.reasoning_before_prev = self.reasoning_before
                self.reasoning_before += self.reasoning_turn
                self.reasoning_turn = 0
            self.reasoning_turn += message.reasoning_estimate_tokens


class Stuck:
    """A compaction attempt that changed nothing: where it was made and what came of it.

    Later attempts that provably end the same way are not made (see ``core.replay.stuck.futile``).
    Never modified once made (states share it).
    """

    __slots__ = ("at", "failed", "too_large", "why")

    def __init__(self, at: int, failed: bool, too_large: bool, why: str) -> None:
        self.at = at
        """The message the attempt was made before."""
        self.failed = failed
        """The summary could not be written (else: there was nothing to compact)."""
        self.too_large = too_large
        """The summary request overflowed the summariser at every head size tried, and more
        messages after the conversation cannot make its head shorter by themselves."""
        self.why = why
        """The error, or the reason there was nothing to compact."""


class Check(NamedTuple):
    """One threshold check before a call: the figures it measured and what came of it.

    A named tuple (a walk makes one before each of ~10^5 calls: :data:`new_check` builds one
    without a Python frame); a check that fires is replaced by its fired copy
    (:meth:`fired_as`) before the walk keeps it."""

    base: int | None
    proj: int | None
    checks_now: bool
    fired: bool
    trigger: str | None
    baseline_measure: int | None
    basis: str | None = None
    """How the figure was made: ``recorded`` (the last call's usage as it is), ``projected``
    (that usage plus estimates of what came since) or ``estimated`` (no usage to start from)."""
    limit: int | None = None
    """The threshold it was compared with."""

    def measured(self) -> int | None:
        """The figure a check reports: the one it fired on, else its projection, else the
        figure."""
        if self.fired:
            return self.base if self.trigger == "threshold" else self.proj
        return self.proj if self.proj is not None else self.base

    def fired_as(self, trigger: str) -> Check:
        """This check, fired on ``trigger``."""
        return new_check((*self[:3], True, trigger, *self[5:]))


new_check: Callable[[tuple[Any, ...]], Check] = partial(tuple.__new__, Check)
"""``Check(*values)`` (all eight) without the named tuple's own ``__new__``."""

_WIDER = {"I": "q", "q": None, "B": "I"}
"""The next typecode of an array column that a value does not fit (None: a list). A figure
column starts unsigned ('I': an int is read into it without parsing a format, three times
quicker than into 'i'); a negative figure widens it to 8 bytes."""

CHECKS_NOW, FIRED, NO_BASE, NO_PROJ, NO_MEASURE, NO_LIMIT = 1, 2, 4, 8, 16, 32
"""The bits of a check's flags byte (:class:`CheckColumns`): its two flags, and which of its four
figures is None (its column holds 0 there)."""


def flag_mask(keep: Callable[[int], Any]) -> bytes:
    """A table for ``bytes.translate`` that reads a column of flags bytes as 1 where ``keep``
    holds of the flags byte, else 0 (each byte so read in C)."""
    return bytes(1 if keep(flags) else 0 for flags in range(256))


def all_same(values: Sequence[Any]) -> bool:
    """Every value equals the first (true of none). Counted in C, each item compared by
    identity first: a column of one value (a window, a threshold, a delta over many calls)
    usually holds one object, found without a comparison, where looking for a value that
    differs compares each item."""
    return not values or values.count(values[0]) == len(values)


CHECKED = flag_mask(lambda f: f & CHECKS_NOW and (f & (NO_BASE | NO_PROJ)) != NO_BASE | NO_PROJ)
"""The check was made, on a figure (``CallPoint.checked``: :func:`core.replay.checks.checked`)."""
HAS_PROJ = flag_mask(lambda f: not f & NO_PROJ)
"""The check has a projection."""
NOW_BASE = flag_mask(lambda f: f & CHECKS_NOW and not f & NO_BASE)
"""The check was made, and has the figure itself (not only a projection)."""
_FIRED_MASK = flag_mask(lambda f: f & FIRED)

_FLAGS_OF = {
    key: (
        (CHECKS_NOW if key[0] else 0)
        | (FIRED if key[1] else 0)
        | (NO_BASE if key[2] else 0)
        | (NO_PROJ if key[3] else 0)
        | (NO_MEASURE if key[4] else 0)
        | (NO_LIMIT if key[5] else 0)
    )
    for key in product((False, True), repeat=6)
}
"""A check's flags byte by (checks_now, fired, and whether base, projection, baseline measure and
limit are None)."""


def _reports_base(flags: int, trigger: str | None) -> bool:
    """Whether a check of this flags byte and trigger reports its figure (``base``) rather
    than its projection, as :meth:`Check.measured` chooses."""
    proj = None if flags & NO_PROJ else -2
    return Check(-1, proj, True, bool(flags & FIRED), trigger, None).measured() == -1


_REPORTS_BASE = (
    flag_mask(lambda flags: _reports_base(flags, None)),
    flag_mask(lambda flags: _reports_base(flags, "threshold")),
)
"""Which figure a check reports (1: its figure, 0: its projection) by its flags byte: of a
check whose trigger is not the threshold, and of one whose trigger is (the figure column of
:meth:`CheckColumns.point_column` reads the rule of :meth:`Check.measured` from them)."""
_ZERO_FOR_NONE = {None: 0}.get
"""``_ZERO_FOR_NONE(figure, figure)``: 0 for None, else the figure (as a column holds it)."""
_FIGURE_COLUMNS = ("_base", "_proj", "_measure", "_limit")
_BATCH = 1024
"""How many checks :meth:`CheckColumns.append` holds as they are before writing them to the
columns (all at once, in C)."""


def _flag_bytes(
    n: int, flags: tuple[Sequence[Any], ...], figures: tuple[Sequence[Any], ...]
) -> bytes:
    """The flags bytes (:data:`_FLAGS_OF`'s) of ``n`` checks from their columns: the two
    flags (``checks_now``, ``fired``), then the four figures (None or not). Each bit is a
    column of 0 and 1 bytes read as one int and shifted to its place (no carry: a byte's
    bits are distinct), a column of one value made without reading it."""
    whole = 0
    ones = int.from_bytes(b"\x01" * n, "little")
    for bit, column in zip((CHECKS_NOW, FIRED), flags, strict=True):
        if all_same(column):
            whole |= ones * bit if column and column[0] else 0
        else:
            whole |= int.from_bytes(bytes(map(truth, column)), "little") * bit
    for bit, column in zip((NO_BASE, NO_PROJ, NO_MEASURE, NO_LIMIT), figures, strict=True):
        nones = column.count(None)
        if nones == n:
            whole |= ones * bit
        elif nones:
            whole |= int.from_bytes(bytes(map(is_, column, repeat(None))), "little") * bit
    return whole.to_bytes(n, "little")


def _as_column(column: Any, values: Sequence[Any]) -> Any:
    """``values`` as ``column`` holds them: an array of its type, unless it is a list."""
    if isinstance(column, array) and not (
        isinstance(values, array) and values.typecode == column.typecode
    ):
        return array(column.typecode, values)
    return values


def _widened(column: Any) -> Any:
    """``column`` (an array, or a list) copied to the next wider type (a list last)."""
    wider = _WIDER[column.typecode] if isinstance(column, array) else None
    return list(column) if wider is None else array(wider, column)


def _extended(column: Any, count: int, values: Sequence[Any]) -> Any:
    """``column`` (an array, or a list) cut back to ``count`` values, then ``values`` added:
    the column, or the wider one made when they do not fit (:data:`_WIDER`)."""
    del column[count:]
    while True:
        try:
            # (an array of the column's type first: extended so at once, not item by item;
            # an array of its type is copied as it is)
            column.extend(_as_column(column, values))
            return column
        except (OverflowError, TypeError):
            del column[count:]
            column = _widened(column)


class CheckColumns(Sequence[Check]):
    """The threshold checks of a run, one per call, held as columns rather than as ~10^5 named
    tuples (112 bytes each, and an int object or two of their own): a flags byte (the two flags,
    and which figure is None), the four figures in int arrays (4 bytes each; a column widens to 8
    bytes, then to a list, when a value does not fit) and the two strings as codes into a table of
    the strings seen. Each :class:`Check` is made again when read; readers of a few figures read
    the columns themselves (:meth:`flags_of`, :meth:`figures_of`, :meth:`point_column`). The run
    appends the checks it makes (:meth:`append`): they are written to the columns
    :data:`_BATCH` at a time (:meth:`flush`). Equal to any sequence of the same checks."""

    __slots__ = (
        "_base",
        "_basis",
        "_codes",
        "_flags",
        "_limit",
        "_measure",
        "_names",
        "_pending",
        "_proj",
        "_trigger",
    )

    def __init__(self) -> None:
        self._flags = bytearray()
        self._base: Any = array("I")
        self._proj: Any = array("I")
        self._measure: Any = array("I")
        self._limit: Any = array("I")
        self._basis: Any = array("B")
        self._trigger: Any = array("B")
        self._names: list[str | None] = [None]
        """The strings the checks hold (a code is an index here)."""
        self._codes: dict[str | None, int] = {None: 0}
        self._pending: list[Check] = []
        """The checks appended and not yet written to the columns (fewer than :data:`_BATCH`)."""

    def append(self, check: Check) -> None:
        """Add ``check`` (the next call's)."""
        pending = self._pending
        pending.append(check)
        if len(pending) >= _BATCH:
            self.flush()

    def adder(self) -> Callable[[Check], None]:
        """:meth:`append` as the pending list's own method (no frame a check): what it adds is
        written to the columns by the next :meth:`flush`, which every read makes first and its
        holder makes now and then (a walk: every few hundred messages), so that no more than
        those checks are held as tuples."""
        return self._pending.append

    def flush(self) -> None:
        """Write the checks appended since the last time to the columns, column by column (each
        read of the columns does it first; a run's result does it once it is made, before any
        other thread may read them)."""
        pending = self._pending
        if not pending:
            return
        base, proj, now, fired, trigger, measure, basis, limit = zip(*pending, strict=True)
        pending.clear()  # (the same list: :meth:`adder`'s)
        count = len(self._flags)
        self._put("_basis", count, self._codes_of(basis))
        self._put("_trigger", count, self._codes_of(trigger))
        for name, figures in zip(_FIGURE_COLUMNS, (base, proj, measure, limit), strict=True):
            if None in figures:
                figures = tuple(map(_ZERO_FOR_NONE, figures, figures))
            self._put(name, count, figures)
        self._flags += _flag_bytes(len(now), (now, fired), (base, proj, measure, limit))

    def _code(self, string: str | None) -> int:
        code = self._codes.get(string)
        if code is None:
            code = self._codes[string] = len(self._names)
            self._names.append(string)
        return code

    def _put(self, name: str, count: int, values: Sequence[Any]) -> None:
        """Column ``name`` cut back to ``count`` values, then ``values`` added (widened until they
        fit)."""
        setattr(self, name, _extended(getattr(self, name), count, values))

    def extend(self, checks: Iterable[Check]) -> None:
        """Add ``checks`` (the next calls')."""
        for check in checks:
            self.append(check)

    def extend_rows(self, rows: CheckRows) -> None:
        """Add the checks ``rows`` holds (the next calls'), column by column."""
        self.flush()
        count = len(self._flags)
        self._put("_basis", count, self._codes_of(rows.basis))
        self._put("_trigger", count, bytes(len(rows)))
        self._put("_base", count, rows.base)
        self._put("_proj", count, rows.proj)
        self._put("_measure", count, rows.measure)
        self._put("_limit", count, rows.limit)
        self._flags += rows.flags

    def _codes_of(self, strings: Sequence[str | None]) -> Sequence[int]:
        """The codes of ``strings`` (new ones added), as bytes while the basis column holds
        bytes. A stretch's strings are mostly one (its last): that one's code is repeated, the
        others found in C and set one by one."""
        n = len(strings)
        last = strings[-1] if n else None
        if all_same(strings):  # (one string: counted in C, by identity first)
            code = self._code(last)
            return bytes([code]) * n if self._byte_codes() else [code] * n
        others = list(compress(range(n), map(ne, strings, repeat(last))))
        if 4 * len(others) > n:  # (mixed: each looked up)
            for string in set(strings):
                self._code(string)
            codes: list[int] = list(map(self._codes.__getitem__, strings))
        else:
            for string in {last, *map(strings.__getitem__, others)}:
                self._code(string)
            codes = [self._codes[last]] * n
            for i in others:
                codes[i] = self._codes[strings[i]]
        # (as bytes, copied into the column at once)
        return bytes(codes) if self._byte_codes() else codes

    def _byte_codes(self) -> bool:
        """The code columns hold bytes, and every code fits one."""
        return len(self._names) <= 256 and self._basis.typecode == "B" == self._trigger.typecode

    def figures(self, start: int, stop: int) -> Iterator[tuple[int, int, int, int]]:
        """The flags byte, base, projection and baseline measure of checks ``start`` to
        ``stop`` (not included) as the columns hold them (a figure None is 0, its flag set),
        read in C: no check made."""
        self.flush()
        return zip(
            self._flags[start:stop],
            self._base[start:stop],
            self._proj[start:stop],
            self._measure[start:stop],
            strict=True,
        )

    def flags_of(self, start: int, stop: int) -> bytes:
        """The flags bytes of checks ``start`` to ``stop`` (not included)."""
        self.flush()
        return bytes(self._flags[start:stop])

    def figures_of(self, start: int, stop: int) -> tuple[Sequence[int], ...]:
        """The base, projection and baseline measure columns of checks ``start`` to ``stop``
        (not included), as held (a figure None is 0, its flag set)."""
        self.flush()
        return self._base[start:stop], self._proj[start:stop], self._measure[start:stop]

    def point_column(self, name: str, start: int, stop: int) -> list[Any]:
        """The point column ``name`` (``check_fired``, ``checked``, ``check_tokens`` or
        ``check_basis``: :class:`~core.replay.results.CallPoint`'s fields read from a check
        alone) of calls ``start`` to ``stop`` (not included), read from the columns: no check
        made."""
        flags = self.flags_of(start, stop)
        if name == "check_fired":
            return list(map(bool, flags.translate(_FIRED_MASK)))
        checked = flags.translate(CHECKED)
        if name == "checked":
            return list(map(bool, checked))
        if name == "check_basis":
            names = self._names
            return [
                names[code] if ok else None
                for ok, code in zip(checked, self._basis[start:stop], strict=True)
            ]
        if name != "check_tokens":
            raise KeyError(name)
        # (the figure Check.measured reports, chosen by the table of its trigger)
        threshold = self._codes.get("threshold", -1)
        by_flags, on_threshold_by_flags = _REPORTS_BASE
        return [
            None
            if not ok
            else (None if f & NO_BASE else base)
            if (on_threshold_by_flags[f] if trigger == threshold else by_flags[f])
            else (None if f & NO_PROJ else proj)
            for ok, f, base, proj, trigger in zip(
                checked,
                flags,
                self._base[start:stop],
                self._proj[start:stop],
                self._trigger[start:stop],
                strict=True,
            )
        ]

    def __len__(self) -> int:
        return len(self._flags) + len(self._pending)

    def check(self, c: int) -> Check:
        """The check of call ``c`` (``0 <= c < len(self)``)."""
        self.flush()
        flags = self._flags[c]
        names = self._names
        return new_check(
            (
                None if flags & NO_BASE else self._base[c],
                None if flags & NO_PROJ else self._proj[c],
                flags & CHECKS_NOW != 0,
                flags & FIRED != 0,
                names[self._trigger[c]],
                None if flags & NO_MEASURE else self._measure[c],
                names[self._basis[c]],
                None if flags & NO_LIMIT else self._limit[c],
            )
        )

    @overload
    def __getitem__(self, index: int) -> Check: ...

    @overload
    def __getitem__(self, index: slice) -> CheckColumns: ...

    def __getitem__(self, index: int | slice) -> Check | CheckColumns:
        self.flush()
        if isinstance(index, slice):
            part = CheckColumns.__new__(CheckColumns)
            for name in CheckColumns.__slots__:
                value = getattr(self, name)
                table = name in ("_names", "_codes", "_pending")  # (each its own: a few items)
                setattr(part, name, value.copy() if table else value[index])
            return part
        count = len(self._flags)
        c = index + count if index < 0 else index
        if not 0 <= c < count:
            raise IndexError(index)
        return self.check(c)

    def between(self, start: int, stop: int) -> Iterator[Check]:
        """The checks of calls ``start`` to ``stop`` (not included), each made as read."""
        self.flush()
        names = self._names
        columns: tuple[Any, ...] = (self._flags, self._base, self._proj, self._trigger)
        columns += (self._measure, self._basis, self._limit)
        parts = [column[start:stop] for column in columns]
        for flags, base, proj, trigger, measure, basis, limit in zip(*parts, strict=True):
            yield new_check(
                (
                    None if flags & NO_BASE else base,
                    None if flags & NO_PROJ else proj,
                    flags & CHECKS_NOW != 0,
                    flags & FIRED != 0,
                    names[trigger],
                    None if flags & NO_MEASURE else measure,
                    names[basis],
                    None if flags & NO_LIMIT else limit,
                )
            )

    def __iter__(self) -> Iterator[Check]:
        return self.between(0, len(self))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


class CallRow(NamedTuple):
    """The raw figures of one call, from which its :class:`CallPoint` is built (made when asked
    for, from the trace's columns: :class:`Rows`)."""

    call_index: int
    message_index: int
    figure: int
    """The simulated context (the recorded convention)."""
    provenance: Provenance
    overflow: bool
    """The simulated call overflows."""
    event_ids: tuple[int, ...]
    check: Check


WALKED_COLUMNS: tuple[str, ...] = ("simulated_tokens", "overflow_simulated", "simulated_provenance")
"""The point columns of the calls' own figures that the walk appends to as it steps through the
calls (:meth:`core.replay.simulate.Run.call_step`): with the checks (:attr:`Trace.made`) and the
events (:attr:`Trace.event_ids`) they are the calls' rows (:class:`Rows`); every result's summary
and the TUI's gauge read them as they are."""

_NO_EVENTS: tuple[int, ...] = ()
_Item = TypeVar("_Item")


class CheckRows:
    """The checks of calls being made, as :class:`CheckColumns` holds them (a flags byte, the
    figures in int arrays, None as 0, widened as there, and the basis): :meth:`CheckColumns.extend_rows`
    adds them at once, an array of the columns' type copied as it is (a stretch of calls
    following an earlier run, made without a :class:`Check` each, nor an int object per figure
    where it is made a column at a time: :mod:`core.replay.lanes`)."""

    __slots__ = ("base", "basis", "flags", "limit", "measure", "proj")

    def __init__(self) -> None:
        self.flags = bytearray()
        self.base: Any = array("I")
        self.proj: Any = array("I")
        self.measure: Any = array("I")
        self.limit: Any = array("I")
        self.basis: list[str | None] = []

    def add(self, name: str, values: Sequence[int]) -> None:
        """Add ``values`` to the figure column ``name`` (``base``, ``proj``, ``measure`` or
        ``limit``), widened until they fit."""
        column = getattr(self, name)
        setattr(self, name, _extended(column, len(column), values))

    def __len__(self) -> int:
        return len(self.flags)

    def __delitem__(self, index: slice) -> None:
        for name in CheckRows.__slots__:
            del getattr(self, name)[index]


def check_column(trace: Trace, name: str, count: int | None = None) -> list[Any]:
    """The trace's point column ``name`` of a figure of the calls' checks
    (:meth:`CheckColumns.point_column`), read from its checks as far as ``count`` (default:
    every call) where it is shorter: kept in the trace, a run resuming from this one starts from
    its prefix (:func:`core.replay.incremental.restore`)."""
    columns = trace.columns
    column = columns.get(name)
    if column is None:
        column = columns[name] = []
    stop = len(trace.made) if count is None else count
    if len(column) < stop:
        column.extend(trace.made.point_column(name, len(column), stop))
    return column


class _TraceView(Sequence[_Item]):
    """A sequence of one item per call a trace walked, made from the trace's columns when read;
    equal to any sequence of the same items."""

    __slots__ = ("_trace",)

    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    def __len__(self) -> int:
        return len(self._trace.made)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


class Rows(_TraceView[CallRow]):
    """A trace's rows, one per call walked, each made from the trace's columns when asked for
    (a walk keeps the columns: building a named tuple per call was a fifth of a walk)."""

    __slots__ = ()

    def row(self, c: int) -> CallRow:
        """The row of call ``c`` (``0 <= c < len(self)``)."""
        trace = self._trace
        columns = trace.columns
        return CallRow(
            c,
            trace.call_messages[c],
            columns["simulated_tokens"][c],
            columns["simulated_provenance"][c],
            columns["overflow_simulated"][c],
            trace.event_ids.get(c, _NO_EVENTS),
            trace.made[c],
        )

    @overload
    def __getitem__(self, index: int) -> CallRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[CallRow]: ...

    def __getitem__(self, index: int | slice) -> CallRow | list[CallRow]:
        count = len(self)
        if isinstance(index, slice):
            return [self.row(c) for c in range(*index.indices(count))]
        c = index + count if index < 0 else index
        if not 0 <= c < count:
            raise IndexError(index)
        return self.row(c)

    def __iter__(self) -> Iterator[CallRow]:
        return (self.row(c) for c in range(len(self)))


def has_figure(check: Check) -> bool:
    """The check had a figure to measure: the context before the call or its projection (one
    with neither, before any usage is known, reads as None in :attr:`Trace.checks`)."""
    return check.base is not None or check.proj is not None


def _checked(check: Check) -> Check | None:
    return check if has_figure(check) else None


class Checks(_TraceView["Check | None"]):
    """A trace's threshold checks, one per call walked: the check made (:attr:`Trace.made`), or
    None where it had nothing to measure yet."""

    __slots__ = ()

    @overload
    def __getitem__(self, index: int) -> Check | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[Check | None]: ...

    def __getitem__(self, index: int | slice) -> Check | list[Check | None] | None:
        made = self._trace.made
        if isinstance(index, slice):  # (has_figure, written out: a slice is read in bulk)
            start, stop, step = index.indices(len(made))
            read = made.between(start, stop) if step == 1 else made[index]
            return [
                check if check[0] is not None or check[1] is not None else None for check in read
            ]
        return _checked(made[index])

    @property
    def made(self) -> CheckColumns:
        """The checks as the trace holds them (columns: read a few figures from them, not a
        check per call)."""
        return self._trace.made

    def __iter__(self) -> Iterator[Check | None]:
        return map(_checked, self._trace.made)


_UNCHECKED = Check(None, None, False, False, None, None)
"""A check with nothing measured (None in :attr:`Trace.checks`)."""


def as_columns(checks: Sequence[Check | None]) -> CheckColumns:
    """``checks`` as columns: a trace's own (:attr:`Checks.made`), else made of them (None as a
    check that measured nothing)."""
    if isinstance(checks, Checks):
        return checks.made
    if isinstance(checks, CheckColumns):
        return checks
    columns = CheckColumns()
    columns.extend(_UNCHECKED if check is None else check for check in checks)
    return columns


class PruneInput(NamedTuple):
    """The context one pruning attempt was given: the base items of the state then and the
    walked items after them (shared with the run, not copied)."""

    call: int
    """Checkpoints taken before the attempt, less one (the call to resume at to redo it)."""
    base: tuple[Item, ...]
    base_pos: int
    at: int
    """The message the context ends before."""
    now_ms: int
    """The pruner's stamp."""
    items: Sequence[Item | None]
    """The run's walked items (``items[base_pos:at]`` follow ``base``)."""

    def messages(self) -> list[Message]:
        """The messages of the context the attempt pruned."""
        walked = [item for item in self.items[self.base_pos : self.at] if item is not None]
        return [item.message for item in (*self.base, *walked)]


class Trace:
    """What a run leaves behind for the next one: its policy, the state at every call, every
    check, the raw figures of every call, its events and notes, and its result."""

    __slots__ = (
        "call_messages",
        "checkpoints",
        "columns",
        "compaction_meta",
        "deltas",
        "event_ids",
        "events",
        "final",
        "finished",
        "first_compaction_call",
        "first_divergence",
        "first_overflow_call",
        "first_prune_call",
        "flat",
        "key",
        "made",
        "noops",
        "pending",
        "points",
        "policy",
        "prune_inputs",
        "run_notes",
        "thresholds",
        "windows",
    )

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.key: tuple[Any, ...] = ()
        self.flat: dict[str, Any] = {}
        """The policy's fields by dotted name (what a new policy is compared with)."""
        self.checkpoints: list[State | None] = []
        """The state before each call, kept before every k-th call (:func:`checkpoint_spacing`;
        None before the others): the resume points. Its length is the number of calls walked."""
        self.pending = bytearray()
        """The state's projection flag before each call (:attr:`State.pending`): 1, else 0 (a
        byte a call, not a list's 8-byte slot)."""
        self.made = CheckColumns()
        """The threshold check made before each call (walked or not): a column of the rows."""
        self.deltas: list[int] = []
        """Per call: the simulated context before the call's figures (with its reply, where
        the call is made after it) less the recorded one, in estimated tokens, before any
        overflow recovery: what the call's figures are made from (a run whose context differs
        from this one's by a constant follows it from these: :mod:`core.replay.shifted`), its
        overflow verdict too (the prompt, and whether the policy had removed nothing by then:
        :meth:`core.replay.simulate.Run.call_step`). A list, not machine integers: a count can
        pass 2**63 (the gauge draws such sessions)."""
        self.call_messages: Sequence[int] = ()
        """The message of each call (:attr:`core.replay.calls.Calls.calls`)."""
        self.event_ids: dict[int, tuple[int, ...]] = {}
        """The events attached to each call that has any."""
        self.run_notes: list[tuple[int, str, str]] = []
        """Notes made while walking: (checkpoints taken so far, grouping key, text); the text
        is empty for every note after the first of its key (:meth:`Run.note`)."""
        self.noops: list[int] = []
        """Compaction attempts that changed nothing (checkpoints taken so far, for each)."""
        self.points: list[CallPoint] = []
        """The points built so far (a result builds them when asked for)."""
        self.columns: dict[str, Any] = {name: [] for name in WALKED_COLUMNS}
        """Point columns of the calls' own figures, by name: the :data:`WALKED_COLUMNS` (as
        far as the walk went) and those read from the checks, as far as they were read
        (:class:`core.replay.timeline.ColumnPoints`)."""
        self.events: list[ReplayEvent] = []
        self.compaction_meta: dict[int, dict[int, str]] = {}
        """Event id -> the pruner's reason for each message of that compaction or pruning."""
        self.first_compaction_call: int | None = None
        """The first call a compaction was attempted at (changes to how it compacts resume here)."""
        self.first_overflow_call: int | None = None
        self.first_prune_call: int | None = None
        self.first_divergence: int | None = None
        """The first call (its checkpoint) from which the context of this run may differ from that
        of a run following the recording (:meth:`core.replay.engine.Replayer.recorded_checks`):
        where it compacted by itself, or did not take a recorded compaction that a run following
        the recording takes. None: it never differs."""
        self.prune_inputs: list[PruneInput] = []
        """What every pruning the run attempted (at a turn end, or as a compaction's first step)
        was given, in order: a pruning change resumes at the first one it decides otherwise."""
        self.final: State | None = None
        self.finished = False
        """The run is over and its result made (kept by the replayer, not here: the result reads
        its points from this trace)."""
        self.windows: list[int | None] = []
        """The window at each call."""
        self.thresholds: list[int | None] = []
        """The threshold at each call."""

    # (views made when asked for, not kept: a trace keeping a view of itself would be a
    # reference cycle, freed by the cyclic collector rather than by reference counting)

    @property
    def checks(self) -> Checks:
        """The threshold check before each call (None: nothing to measure yet)."""
        return Checks(self)

    @property
    def rows(self) -> Rows:
        """The raw figures of each call, made from the columns when read."""
        return Rows(self)
