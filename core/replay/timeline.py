"""The result of a run, assembled from its trace: a point per call, a state per message, the
summary row, the fidelity rows and the notes.

Points of the prefix an incremental run reused are the earlier result's own objects (when the
window and the threshold are the same); message states are shared between results when nothing
about the message changed (:class:`MessageStates`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import compress, repeat
from operator import eq
from typing import TYPE_CHECKING, Any

from core.model.fastmodel import build
from core.model.lazy_types import define_lazy_field_types, lazy_field_types
from core.model.session import Provenance
from core.replay.calls import Calls
from core.replay.checks import checked, measured
from core.replay.fidelity import fidelity
from core.replay.recorded import RecordedCompactions
from core.replay.results import (
    SCHEMA_VERSION,
    ReplayEvent,
    ReplayResult,
    ReplaySummary,
    replay_summary,
)
from core.replay.setting import Setting
from core.replay.state import WALKED_COLUMNS, Trace, all_same, check_column
from core.replay.truncation import Truncation

if TYPE_CHECKING:
    from core.replay.points import CallPoint, MessageState

# (defined here as the first point or state is built: ``analyze`` reads the columns only)
lazy_field_types(__name__, CallPoint="core.replay.points", MessageState="core.replay.points")

_STATES_SLACK = 1024
"""Message states kept beyond four per message (then only the last run's are kept)."""
PROTECTED_REASONS = frozenset({"protected tool", "inside skip boundary", "inside protect budget"})
"""The pruner's reasons that protect an output (``MessageState.protected``)."""


class MessageStates:
    """The message states of a session's results, by everything they hold (bounded)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._cache: dict[tuple[Any, ...], MessageState] = {}

    def __len__(self) -> int:
        return len(self._cache)

    def lazy(
        self, columns: Callable[[], tuple[Any, ...]], ready: dict[str, Sequence[Any]]
    ) -> ColumnStates:
        """The states of the columns ``columns()`` makes (when first read), built when asked
        for (:class:`ColumnStates`); ``ready``: those of them the run holds already, by name."""
        return ColumnStates(self, columns, self.n, ready)

    def state(self, key: tuple[Any, ...]) -> MessageState:
        """The state of one message, from its key (its values in the columns' order)."""
        define_lazy_field_types(__name__)
        state = self._cache.get(key)
        if state is None:
            state = self._cache[key] = _message_state(key)
        return state

    def states(self, columns: tuple[Any, ...]) -> list[MessageState]:
        """One state per message, from the per-message ``columns`` (in :class:`MessageState`'s
        field order, ``protected`` left out); one key per message, made by zip (in C)."""
        define_lazy_field_types(__name__)
        cache = self._cache
        lookup = cache.get
        states: list[MessageState] = []
        append = states.append
        for key in zip(*columns, strict=True):
            state = lookup(key)
            if state is None:
                state = cache[key] = _message_state(key)
            append(state)
        if len(cache) > 4 * self.n + _STATES_SLACK:
            # Bounded: keep this run's states only (the next run most likely shares most).
            self._cache = dict(zip(zip(*columns, strict=True), states, strict=True))
        return states


_COLUMNS = (
    "message_index",
    "tokens",
    "tokens_after_truncation",
    "provenance",
    "truncated",
    "truncation_note",
    "pruned",
    "prune_reason",
    "summarised_by",
    "kept_by",
    "in_context_at_end",
)
"""The message state's fields the columns hold, in their order (``protected`` is derived)."""


class ColumnStates:
    """A result's message states as columns: the whole list, one state or one column, each
    built only when asked for (:meth:`ReplayResult.message_state` and friends); the columns
    themselves are made when first read (``analyze`` of most sessions reads none: a column per
    message and the compactions' maps of a 100 MB session, megabytes at its peak)."""

    def __init__(
        self,
        states: MessageStates,
        make: Callable[[], tuple[Any, ...]],
        count: int,
        ready: dict[str, Sequence[Any]],
    ) -> None:
        self._states = states
        self._make: Callable[[], tuple[Any, ...]] | None = make
        self._made: tuple[Any, ...] = ()
        self._ready = ready
        """The columns ``make`` returns that exist before it runs (the run's own token
        columns): read without making the others (the compactions' maps, megabytes at 10^5
        messages, for a report that asks for the tokens alone)."""
        self.count = count

    @property
    def _columns(self) -> tuple[Any, ...]:
        make = self._make
        if make is not None:
            self._made = make()
            self._make = None  # (what it read is no longer held)
        return self._made

    def all(self) -> list[MessageState]:
        return self._states.states(self._columns)

    def one(self, index: int) -> MessageState:
        return self._states.state(tuple(column[index] for column in self._columns))

    def column(self, name: str) -> Sequence[Any]:
        if name == "protected":
            return [
                why in PROTECTED_REASONS for why in self._columns[_COLUMNS.index("prune_reason")]
            ]
        ready = self._ready.get(name)
        if ready is not None:
            return ready
        column: Sequence[Any] = self._columns[_COLUMNS.index(name)]
        return column


def _message_state(key: tuple[Any, ...]) -> MessageState:
    j, tokens, after, prov, truncated, note, pruned, why, by, kept, inside = key
    return build(
        MessageState,
        {
            "message_index": j,
            "tokens": tokens,
            "tokens_after_truncation": after,
            "provenance": prov,
            "truncated": truncated,
            "truncation_note": note,
            "pruned": pruned,
            "prune_reason": why,
            "protected": why in PROTECTED_REASONS,
            "summarised_by": by,
            "kept_by": kept,
            "in_context_at_end": inside,
        },
    )


def assemble(
    calls: Calls,
    recorded: RecordedCompactions,
    setting: Setting,
    trace: Trace,
    resume: int,
    states: MessageStates,
) -> ReplayResult:
    """The :class:`ReplayResult` of a finished run (``resume``: the call it resumed from)."""
    session = calls.session
    policy = setting.policy
    events = trace.events
    trace.made.flush()  # (written once here, before the result reaches another thread)
    points = ColumnPoints(trace, calls, setting)
    messages = states.lazy(
        partial(_message_columns, calls, recorded, setting, trace),
        {"tokens": setting.tokens, "tokens_after_truncation": setting.truncation.tokens},
    )
    result = build(
        ReplayResult,
        {
            "schema_version": SCHEMA_VERSION,
            "session_id": session.id,
            "policy": policy,
            "window": setting.window,
            "threshold": setting.limit,
            "events": list(events),
            "fidelity": fidelity(recorded, events, trace.checks, setting.spans, setting.limits),
            "summary": summary(trace, calls, setting, points),
            "notes": notes(calls, recorded, setting) + grouped(trace.run_notes),
            "recording_policy": setting.native,
            "overhead_tokens": setting.rec.overhead,
            "estimator": policy.estimator,
            "window_source": "policy" if policy.context_window else session.window_source,
            "window_evidence": None if policy.context_window else session.window_evidence,
            "thresholds": list(setting.spans),
        },
    )
    object.__setattr__(
        result,
        "__pydantic_private__",
        {
            "_resumed_from_call": resume if resume else None,
            "_lazy_messages": messages,
            "_lazy_points": points,
        },
    )
    return result


def _extend_points(trace: Trace, calls: Calls, setting: Setting) -> None:
    """Build the points of the calls after the ones built already (the reused prefix)."""
    define_lazy_field_types(__name__)
    points = trace.points
    count = len(trace.made)
    sources = _threshold_sources(setting, count)
    for c in range(len(points), count):
        points.append(_point(c, trace, calls, setting, sources))
    # Trailing events (after the last call) are attached to nothing.


def _point(
    c: int, trace: Trace, calls: Calls, setting: Setting, sources: list[str | None]
) -> CallPoint:
    """The point of call ``c``, from its row (read from the trace's columns)."""
    check = trace.made[c]
    columns = trace.columns
    message_index = trace.call_messages[c]
    rec = setting.rec
    window = setting.windows[c]
    reason = calls.recorded_overflows(window)[c]
    was_checked = checked(check)
    return build(
        CallPoint,
        {
            "call_index": c,
            "message_index": message_index,
            "turn_index": calls.turn_of[message_index],
            "recorded_tokens": calls.usage_context[c],
            "recorded_kind": calls.kinds[c],
            "simulated_tokens": columns["simulated_tokens"][c],
            "simulated_provenance": columns["simulated_provenance"][c],
            "window": window,
            "threshold": setting.limits[c],
            "overflow_recorded": reason is not None,
            "overflow_simulated": columns["overflow_simulated"][c],
            "event_ids": list(trace.event_ids.get(c, ())),
            "baseline_tokens": rec.baseline[c],
            "baseline_provenance": rec.baseline_prov[c],
            "baseline_after_tokens": rec.baseline_after[c],
            "overflow_recorded_reason": reason,
            "checked": was_checked,
            "check_tokens": measured(check) if was_checked else None,
            "baseline_check_tokens": check.baseline_measure if was_checked else None,
            "check_fired": check.fired,
            "check_basis": check.basis if was_checked else None,
            "threshold_source": sources[c],
        },
    )


class ColumnPoints:
    """A result's points, built when asked for: all of them (kept in the trace, so that a run
    resuming from this one reuses the very objects), one, or one column from the rows."""

    def __init__(self, trace: Trace, calls: Calls, setting: Setting) -> None:
        self._trace = trace
        self._calls = calls
        self._setting = setting
        self.count = len(trace.made)
        self._sources: list[str | None] | None = None
        self._columns: dict[str, Sequence[Any]] = {}
        self._window: tuple[bool, int | None] | None = None

    def _build(self) -> None:
        if len(self._trace.points) < self.count:
            _extend_points(self._trace, self._calls, self._setting)

    def all(self) -> list[CallPoint]:
        self._build()
        return list(self._trace.points)

    def one(self, call_index: int) -> CallPoint:
        points = self._trace.points
        if call_index < len(points):
            return points[call_index]
        if not 0 <= call_index < self.count:
            raise IndexError(call_index)
        if self._sources is None:
            self._sources = _threshold_sources(self._setting, self.count)
        define_lazy_field_types(__name__)
        return _point(call_index, self._trace, self._calls, self._setting, self._sources)

    def column(self, name: str) -> Sequence[Any]:
        """One field of every point (each column made once per result; those read from the
        rows alone extend the column of the run this one resumed from)."""
        cached = self._columns.get(name)
        if cached is None:
            if name in WALKED_COLUMNS:
                cached = self._trace.columns[name]
            else:
                cached = self._check_column(name) if name in _CHECK_COLUMNS else self._column(name)
            self._columns[name] = cached
        return cached

    def _check_column(self, name: str) -> list[Any]:
        """A column of the calls' checks, kept in the trace: a run resuming from this one
        starts from its prefix (:func:`core.replay.incremental.restore`)."""
        return check_column(self._trace, name, self.count)

    def one_window(self) -> tuple[bool, int | None]:
        """Whether every call has the same window, and the first call's (None: no call)."""
        if self._window is None:
            windows = _prefix(self._setting.windows, self.count)
            window = windows[0] if windows else None
            self._window = (all_same(windows), window)
        return self._window

    def recorded_overflows(self) -> int:
        """How many calls overflowed in the recording (against each call's window)."""
        one, window = self.one_window()
        if one and self.count == len(self._calls):  # (counted once per window)
            return self._calls.recorded_overflow_count(window)
        return sum(self.column("overflow_recorded"))

    def _column(self, name: str) -> Sequence[Any]:
        if name == "message_index":  # (each row's own: the walk makes call c at message calls[c])
            return _prefix(self._calls.calls, self.count)
        if name == "recorded_tokens":
            return _prefix(self._calls.usage_context, self.count)
        if name == "baseline_tokens":
            return _prefix(self._setting.rec.baseline, self.count)
        if name == "baseline_provenance":
            return _prefix(self._setting.rec.baseline_prov, self.count)
        if name == "recorded_kind":
            return _prefix(self._calls.kinds, self.count)
        if name == "overflow_recorded":
            windows = _prefix(self._setting.windows, self.count)
            overflows = self._calls.recorded_overflows
            one, window = self.one_window()
            if one:  # one window for the whole session: one list
                return _prefix(self._calls.recorded_overflow_flags(window), self.count)
            return [overflows(windows[c])[c] is not None for c in range(self.count)]
        if name == "call_index":
            return range(self.count)
        if name == "threshold":
            return _prefix(self._setting.limits, self.count)
        if name == "window":
            return _prefix(self._setting.windows, self.count)
        if name == "threshold_source":
            if self._sources is None:
                self._sources = _threshold_sources(self._setting, self.count)
            return self._sources
        return [getattr(point, name) for point in self.all()]


def _prefix(values: Sequence[Any], count: int) -> Sequence[Any]:
    """The first ``count`` of ``values``: ``values`` itself when it has no more (the usual case:
    the run walked every call; columns are read, never written, so no copy of 10^5 items is
    kept per result)."""
    return values if len(values) == count else values[:count]


_CHECK_COLUMNS = frozenset({"check_fired", "checked", "check_tokens", "check_basis"})
"""The point columns read from each call's check alone (the same for a prefix a run reuses;
the others of the rows are :data:`~core.replay.state.WALKED_COLUMNS`): read from the checks'
columns (:meth:`core.replay.state.CheckColumns.point_column`)."""


def _threshold_sources(setting: Setting, calls: int) -> list[str | None]:
    """Where each call's threshold comes from, from the setting's spans."""
    sources: list[str | None] = [None] * calls
    for span in setting.spans:
        if span.threshold is None:
            continue
        first, stop = max(span.first_call, 0), min(span.last_call + 1, calls)
        if first < stop:
            sources[first:stop] = [span.source] * (stop - first)
    return sources


def _message_columns(
    calls: Calls, recorded: RecordedCompactions, setting: Setting, trace: Trace
) -> tuple[Any, ...]:
    """Per message, what its :class:`MessageState` holds, column by column (derived from the
    events and the final state). The columns that are mostly one value are kept as that value
    and the exceptions (:class:`Repeated`, :class:`Sparse`, :class:`Marked`), not as a list of
    one item per message."""
    n = calls.n
    summarised_by, kept_by, pruned, prune_reason = _event_columns(trace, n)
    truncation = setting.truncation
    return (
        range(n),
        setting.tokens,
        truncation.tokens,
        Repeated(setting.counter.provenance, n),
        Flags(truncation.truncated),
        Sparse(n, truncation.notes),
        pruned,
        prune_reason,
        summarised_by,
        kept_by,
        _in_context_at_end(calls, recorded, trace),
    )


def _event_columns(trace: Trace, n: int) -> tuple[Sparse, Sparse, Marked, Sparse]:
    """Per message: the compaction that summarised it, the last that kept it, whether pruning
    replaced it, and the pruner's last reason about it."""
    summarised_by: dict[int, Any] = {}
    kept_by: dict[int, Any] = {}
    pruned: set[int] = set()
    prune_reason: dict[int, Any] = {}
    for event_id, event in enumerate(trace.events):
        if event.kind in ("compact", "recorded-compaction"):
            summarised_by.update(dict.fromkeys(event.head_indices, event_id))
            kept_by.update(dict.fromkeys(event.tail_indices, event_id))
        if event.kind in ("compact", "prune"):
            pruned.update(event.pruned_indices)
            prune_reason.update(trace.compaction_meta.get(event_id, {}))
    return Sparse(n, summarised_by), Sparse(n, kept_by), Marked(n, pruned), Sparse(n, prune_reason)


class _Column(Sequence[Any]):
    """A read-only column of ``n`` values made from a compact form: iterated in C (a result's
    message states are built by zipping the columns), read one item at a time by index."""

    __slots__ = ("_n",)

    def __init__(self, n: int) -> None:
        self._n = n

    def __len__(self) -> int:
        return self._n

    def _at(self, index: int) -> Any:
        raise NotImplementedError

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(self._n))]
        i = index + self._n if index < 0 else index
        if not 0 <= i < self._n:
            raise IndexError(index)
        return self._at(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(other) == self._n and all(map(eq, self, other))

    __hash__ = None  # type: ignore[assignment]


class Repeated(_Column):
    """One value at every message."""

    __slots__ = ("_value",)

    def __init__(self, value: Any, n: int) -> None:
        super().__init__(n)
        self._value = value

    def _at(self, index: int) -> Any:
        return self._value

    def __iter__(self) -> Iterator[Any]:
        return repeat(self._value, self._n)


class Sparse(_Column):
    """None at every message but those ``values`` names (index -> value)."""

    __slots__ = ("_values",)

    def __init__(self, n: int, values: dict[int, Any]) -> None:
        super().__init__(n)
        self._values = values

    def _at(self, index: int) -> Any:
        return self._values.get(index)

    def __iter__(self) -> Iterator[Any]:
        return map(self._values.get, range(self._n))


class Marked(_Column):
    """False at every message but those in ``marked`` (True)."""

    __slots__ = ("_marked",)

    def __init__(self, n: int, marked: set[int]) -> None:
        super().__init__(n)
        self._marked = marked

    def _at(self, index: int) -> bool:
        return index in self._marked

    def __iter__(self) -> Iterator[bool]:
        return map(self._marked.__contains__, range(self._n))


class Flags(_Column):
    """A column of flags kept as bytes (1, else 0), read as True and False."""

    __slots__ = ("_flags",)

    def __init__(self, flags: bytes | bytearray) -> None:
        super().__init__(len(flags))
        self._flags = flags

    def _at(self, index: int) -> bool:
        return bool(self._flags[index])

    def __iter__(self) -> Iterator[bool]:
        return map(bool, self._flags)


def _in_context_at_end(calls: Calls, recorded: RecordedCompactions, trace: Trace) -> Flags:
    """Per message: still in the simulated context after the last message (kept as bytes: the
    TUI reads a new result's columns at each limit change, and a list of a bool per message
    took milliseconds at 10^5 messages to make)."""
    n = calls.n
    in_context = bytearray(n)
    final = trace.final
    assert final is not None
    for item in final.base:
        if item.index >= 0:
            in_context[item.index] = 1
    # Messages the recording compacted away stay out only when the policy applied that.
    start = min(max(final.base_pos, 0), n)
    # (in the main conversation, not owned: its flags as they are, copied in C)
    in_context[start:n] = recorded.walked[start:n]
    return Flags(in_context)


def summary(
    trace: Trace,
    calls: Calls,
    setting: Setting,
    points: ColumnPoints | None = None,
) -> ReplaySummary:
    """The figures of a run, from its rows (one per call, as its points hold them; read as the
    result's columns when ``points`` is given)."""
    if points is None:
        points = ColumnPoints(trace, calls, setting)
    figures: Sequence[int] = points.column("simulated_tokens")
    peak_sim = max(figures, default=0)
    over_simulated: Sequence[bool] = points.column("overflow_simulated")
    recorded_overflows = points.recorded_overflows()
    simulated_overflows = sum(over_simulated)  # (a bool added as an int: no comparison)
    both = (
        sum(compress(over_simulated, points.column("overflow_recorded")))
        if recorded_overflows and simulated_overflows
        else 0
    )
    totals = _event_totals(trace.events, setting.truncation)
    tok = setting.tokens
    sent = setting.truncation.tokens
    return replay_summary(
        calls=len(trace.made),
        peak_recorded=calls.peak_usage(),
        peak_simulated=peak_sim,
        peak_call_index=figures.index(peak_sim) if figures else None,  # the first at the peak
        compactions=totals["compactions"],
        overflows_recorded=recorded_overflows,
        overflows_simulated=simulated_overflows,
        tokens_truncated=sum(tok[j] - sent[j] for j in setting.truncation.notes),
        tokens_pruned=totals["tokens_pruned"],
        tokens_summarised=totals["tokens_summarised"],
        summary_tokens=totals["summary_tokens"],
        tail_tokens=totals["tail_tokens"],
        overflows_avoided=recorded_overflows - both,
        overflows_caused=simulated_overflows - both,
        manual_compactions=totals["manual"],
        final_tokens=figures[-1] if figures else None,
        noop_compactions=len(trace.noops),
    )


def _event_totals(events: list[ReplayEvent], truncation: Truncation) -> dict[str, int]:
    """Compactions and the tokens they summarised, kept, wrote and pruned (as sent)."""
    totals = dict.fromkeys(
        ("compactions", "manual", "tokens_summarised", "summary_tokens", "tail_tokens"), 0
    )
    totals["tokens_pruned"] = 0
    tokens = truncation.tokens.__getitem__
    for event in events:
        if event.kind in ("compact", "recorded-compaction"):
            totals["compactions"] += 1
            if event.trigger == "manual":
                totals["manual"] += 1
            totals["tokens_summarised"] += sum(map(tokens, event.head_indices))
            totals["summary_tokens"] += event.summary_tokens or 0
            totals["tail_tokens"] += sum(map(tokens, event.tail_indices))
        if event.kind in ("compact", "prune") and event.pruned_indices:
            totals["tokens_pruned"] += sum(map(tokens, event.pruned_indices))
    return totals


def notes(calls: Calls, recorded: RecordedCompactions, setting: Setting) -> list[str]:
    """What the figures of a run rest on (estimates, calibration, gaps), before its own notes."""
    out = _usage_notes(calls, setting)
    backwards = recorded.backwards_without_compaction()
    if backwards:
        out.append(
            f"recorded context fell at {backwards} call(s) with no compaction in between "
            "(kept as recorded)"
        )
    if setting.counter.note:
        out.append(setting.counter.note)
    out.extend(_window_notes(calls, setting))
    if setting.native:
        out.append(
            f"{setting.policy.name} is the policy of the agent that recorded this session: "
            "recorded compactions it would also make are taken as recorded"
        )
    if calls.session.compactions and not recorded.carry_summaries:
        out.append("the recorded compactions carry no summary text")
    return out


def _usage_notes(calls: Calls, setting: Setting) -> list[str]:
    out: list[str] = []
    estimator = setting.policy.estimator
    how = (
        "counted with " + estimator
        if setting.counter.provenance is Provenance.COUNTED
        else ("estimated with " + estimator)
    )
    if not calls.calls:
        out.append("the session has no model calls: there is no context to replay")
    elif not calls.has_usage:
        overhead = setting.rec.overhead if setting.rec.overhead_known else 0
        out.append(
            f"no recorded usage: every figure is estimated ({how}), with the "
            f"{overhead:,} tokens the file measured for what its messages do not show"
            if overhead
            else f"no recorded usage: every figure is estimated ({how}), and the system prompt "
            "and tool schemas are not included"
        )
    else:
        missing = calls.missing_usage()
        if missing:
            out.append(
                f"{missing} of {len(calls)} calls have no usable usage; their context "
                "is projected from the last recorded figure"
            )
        out.append(
            f"recorded overhead (system prompt + tool schemas): {setting.rec.overhead:,} tokens, "
            "calibrated from the first recorded call"
        )
    out.extend(calls.usage_notes)
    return out


def _window_notes(calls: Calls, setting: Setting) -> list[str]:
    window = setting.window
    rec = setting.rec
    if window is None:
        return [
            f"unknown context window for model {calls.session.model or '(unknown)'}: no "
            "threshold or overflow can be evaluated; pass --window N"
        ]
    if calls.calls and rec.overhead_known and rec.overhead >= window:
        return [
            f"the window ({window:,}) is smaller than the recorded overhead of "
            f"{rec.overhead:,} tokens (system prompt + tool schemas): every call overflows "
            "and no compaction can make it fit"
        ]
    return []


def grouped(run_notes: list[tuple[int, str, str]]) -> list[str]:
    """The first note of each kind, with how many more of that kind there were."""
    first: dict[str, str] = {}
    counts: dict[str, int] = {}
    for _when, key, text in run_notes:
        first.setdefault(key, text)
        counts[key] = counts.get(key, 0) + 1
    return [
        text if counts[key] == 1 else f"{text} (and {counts[key] - 1} more like it)"
        for key, text in first.items()
    ]
