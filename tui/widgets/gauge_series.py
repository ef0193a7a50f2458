"""What the token gauge draws, flattened from a session or a replay result and bucketed to a width.

No drawing here (:mod:`tui.widgets.gauge` draws). The per-call series are flattened once per
result (:func:`build_series`); :func:`bucket_series` fits them into a chart width, by the maximum
of each bucket when calls outnumber columns (slices and C-level ``max``, so 100,000 calls bucket
in milliseconds).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass, field
from functools import reduce
from itertools import compress
from operator import attrgetter, ne, or_
from struct import error as StructError
from struct import pack
from typing import TYPE_CHECKING

from core.algorithms.overflow import usable_context
from core.formats.subagents import subagent_spans
from core.model.session import Message, Provenance, Session
from tui.columns import marked

if TYPE_CHECKING:
    from core.insights.named_figures import ThresholdFigure
    from core.replay import ReplayResult

GUTTER = 6
"""Cells left of a chart of the calls for the axis labels (5) and the axis (1): the gauge's and
the breakdown chart's, so that their columns line up."""

# Call flags (bit mask per call / per bucket).
OVERFLOW_SIMULATED = 1
OVERFLOW_RECORDED = 2
COMPACT = 4
RECORDED_COMPACT = 8
THRESHOLD_INFERRED = 16
"""The call's threshold is inferred from the recording (``CallPoint.threshold_source``)."""
SUBAGENT = 32
"""A sub-agent the session started ran around this call (:func:`core.formats.subagents.subagent_spans`)."""


@dataclass(frozen=True, slots=True)
class Series:
    """Everything the gauge draws, flattened from a session and (optionally) a replay result.

    ``recorded[i]`` is -1 when call *i* has no usable usage; ``simulated`` is empty before the
    first replay result arrives. :func:`build_series` stores the integer series as
    :class:`array.array`: the garbage collector walks a list of 50,000 ints item by item at every
    full collection, while an array's items are machine integers it never visits.
    """

    message_index: Sequence[int]
    recorded: Sequence[int]
    simulated: Sequence[int]
    simulated_provenance: Sequence[Provenance]
    flags: Sequence[int]
    window: int | None
    threshold: int | None
    peak: int
    thresholds: Sequence[int] = ()
    """The threshold at each call (-1: none); empty: :attr:`threshold` at every call."""
    windows: Sequence[int] = ()
    """The window at each call (0: unknown); empty: :attr:`window` at every call."""
    threshold_source: str = "rule"
    """Where the run's threshold comes from (:func:`core.insights.named_figures.replay_threshold`:
    ``rule``, ``inferred``, ``learned`` or the policy's name); a call flagged
    :data:`THRESHOLD_INFERRED` has the recording's instead."""
    replayed_session: Session | None = None
    """The session of the replay result the series was flattened from (None: no result): the
    next result of the same session has the same calls and recorded figures."""
    recorded_peak: int = 0
    """The largest recorded figure (of :attr:`recorded`)."""
    flags_set: int | None = None
    """Every bit set in :attr:`flags` (None: not known; :meth:`every_flag` works it out)."""
    recorded_from: Sequence[int | None] | None = field(default=None, compare=False)
    """The column of recorded contexts a series before a replay was read from (the placing of
    the calls the replay reuses, :func:`build_series`'s ``contexts``; None: read otherwise):
    a result whose ``recorded_tokens`` column is that very list has these calls and figures."""

    def every_flag(self) -> int:
        """The flags of every call or-ed together (the legend names what some call has): known
        from how the series was built, else worked out from the calls (2 ms at 10^5 calls)."""
        if self.flags_set is not None:
            return self.flags_set
        return reduce(or_, set(self.flags), 0)

    def threshold_figure(self, call: int) -> ThresholdFigure | None:
        """The threshold of ``call``, labelled and flagged where it is at or above the window
        (:func:`core.insights.named_figures.threshold_figure`; None: no threshold)."""
        threshold = self.threshold_at(call)
        if threshold is None:
            return None
        from core.insights.named_figures import threshold_figure  # (brings core.replay)

        inferred = bool(self.flags[call] & THRESHOLD_INFERRED) if call < len(self.flags) else False
        return threshold_figure(
            threshold, "inferred" if inferred else self.threshold_source, self.window_at(call)
        )

    def threshold_at(self, call: int) -> int | None:
        """The threshold of ``call``."""
        if not self.thresholds:
            return self.threshold
        value = self.thresholds[call]
        return value if value >= 0 else None

    def window_at(self, call: int) -> int | None:
        """The window of ``call``."""
        if not self.windows:
            return self.window
        return self.windows[call] or None

    @property
    def calls(self) -> int:
        return len(self.message_index)

    @property
    def has_simulated(self) -> bool:
        return bool(self.simulated)


EMPTY_SERIES = Series([], [], [], [], [], None, None, 0)


def build_series(
    session: Session | None,
    result: ReplayResult | None,
    previous: Series | None = None,
    calls: Sequence[int] | None = None,
    contexts: Sequence[int | None] | None = None,
) -> Series:
    """Flatten a session (recorded series only) or a replay result (both series) for drawing.

    ``previous``: the series shown until now. When it was flattened from a result of the same
    session with as many calls (a limit change), its calls and recorded figures are the new
    result's too (they are the recording's): they are taken as they are, not packed again.
    ``calls``: the indices of the session's model calls when the caller knows them already (the
    screen's state reads them with the messages' flags): the session is then not walked again.
    ``contexts``: the recorded context of each of ``calls`` (:func:`usable_context` of their
    usages) when the caller read it already (the replay's placing of the calls reads it: the
    usages are then not read again). A series read with them keeps them
    (:attr:`Series.recorded_from`): the first result replayed from that placing, whose
    ``recorded_tokens`` column is the same list, takes the series' packed calls and recorded
    figures as a limit change does (~4 ms at 10^5 calls, on the interface thread)."""
    if result is not None:
        same_calls = (
            previous is not None
            and previous.calls == result.call_count
            and (
                previous.replayed_session is session
                or (
                    previous.recorded_from is not None
                    and previous.recorded_from is result.point_column("recorded_tokens")
                )
            )
        )
        columns = _replayed_columns(result, previous if same_calls else None)
    elif session is not None:
        columns = _recorded_columns(session, calls, contexts)
    else:
        return EMPTY_SERIES
    if session is not None:
        _mark_recorded_compactions(columns, session)
        _mark_subagents(columns, session)
    recorded = _packed(columns.recorded)
    recorded_peak = columns.recorded_peak
    if recorded_peak is None:
        recorded_peak = max(recorded, default=0)
    simulated_peak = columns.simulated_peak
    if simulated_peak is None:
        simulated_peak = max(columns.simulated, default=0)
    peak = max(recorded_peak, simulated_peak, 0)
    return Series(
        _packed(columns.message_index),
        recorded,
        _held_if_fits(columns.simulated, columns.simulated_peak),
        columns.provenance,
        _packed(columns.flags),
        columns.window or None,
        columns.threshold,
        min(peak, MAX_DRAWN),
        _packed(columns.thresholds),
        _packed(columns.windows),
        columns.threshold_source,
        session if result is not None else None,
        recorded_peak,
        columns.flags_set,
        contexts if result is None and columns.message_index is calls else None,
    )


MAX_DRAWN = 2**63 - 1
"""Largest figure the gauge keeps (a machine integer): a damaged count of 10^20 tokens is drawn
as this much — far past any window, which is all the bar can say — instead of failing."""


def _packed(values: Sequence[int]) -> array[int]:
    """``values`` as machine integers, each clamped into what one can hold."""
    if isinstance(values, array) and values.typecode == "q":
        return values  # (made for this series: not copied)
    try:
        # (the machine integers packed in C: an array made from a list parses each int through
        # PyArg_Parse, ~250 instructions an item against ~110)
        return array("q", pack(f"{len(values)}q", *values))
    except (OverflowError, StructError):
        return array("q", [max(-MAX_DRAWN, min(MAX_DRAWN, value)) for value in values])


def _held_if_fits(values: Sequence[int], peak: int | None) -> Sequence[int]:
    """``values`` as they are when their largest, ``peak`` (when known), fits a machine integer:
    a result's simulated column, read and never written, is not copied into an array again at
    each limit change (100,000 int objects read, 3-18 ms at 10^5 calls; the array would hold
    the same items, and the list is the result's anyway). A simulated figure is a context's
    tokens, never below 0 (the walk floors each at 0), so its largest is the one that may not
    fit. Else :func:`_packed` (values clamped into what one holds)."""
    if isinstance(values, list) and values and peak is not None and 0 <= peak <= MAX_DRAWN:
        return values
    return _packed(values)


@dataclass(slots=True)
class _Columns:
    """The per-call lists :func:`build_series` fills before packing them into arrays."""

    message_index: Sequence[int]
    recorded: Sequence[int]
    simulated: Sequence[int]
    provenance: list[Provenance]
    flags: MutableSequence[int]
    window: int | None
    threshold: int | None
    thresholds: Sequence[int]
    windows: Sequence[int]
    threshold_source: str = "rule"
    recorded_peak: int | None = None
    """The largest of :attr:`recorded` (None: not known yet)."""
    simulated_peak: int | None = None
    """The largest of :attr:`simulated` (None: not known yet)."""
    flags_set: int | None = None
    """Every bit set in :attr:`flags` (None: not known)."""

    def flagged(self, call: int, bit: int) -> None:
        """Set ``bit`` in the flags of ``call`` (and among those set)."""
        self.flags[call] |= bit
        if self.flags_set is not None:
            self.flags_set |= bit


def _replayed_columns(result: ReplayResult, same_calls: Series | None = None) -> _Columns:
    """Both series of a replay result, its overflows and the policy's compactions;
    ``same_calls``: a series of the same session's calls, whose calls and recorded figures
    are taken (packed already)."""
    # Columns, not points: the points of a big session are not built for the gauge.
    column = result.point_column
    count = result.call_count
    flags = array("q", bytes(8 * count))  # (machine integers from the start: packed in C)
    flags_set = 0  # (every bit set below: the legend reads them, not the calls again)
    # Only the calls a column marks are visited (``compress`` walks the columns in C).
    calls = range(count)
    for name, bit in (
        ("overflow_simulated", OVERFLOW_SIMULATED),
        ("overflow_recorded", OVERFLOW_RECORDED),
    ):
        for i in marked(calls, column(name)):
            flags[i] |= bit
            flags_set |= bit
    sources = column("threshold_source")
    if "inferred" in sources:  # (searched in C: most sessions have no inferred stretch)
        for i, source in enumerate(sources):
            if source == "inferred":
                flags[i] |= THRESHOLD_INFERRED
                flags_set |= THRESHOLD_INFERRED
    for event in result.events:
        call = event.call_index
        if call is None or not 0 <= call < len(flags):
            continue
        if event.kind == "compact":
            flags[call] |= COMPACT
            flags_set |= COMPACT
        elif event.kind == "recorded-compaction":
            flags[call] |= RECORDED_COMPACT
            flags_set |= RECORDED_COMPACT
    if same_calls is not None:
        message_index, recorded = same_calls.message_index, same_calls.recorded
        recorded_peak: int | None = same_calls.recorded_peak
    else:
        message_index = column("message_index")  # (the result's own: read, never changed)
        recorded, recorded_peak = _none_as(column("recorded_tokens"), -1), None
    return _Columns(
        message_index=message_index,
        recorded=recorded,
        simulated=column("simulated_tokens"),
        provenance=list(column("simulated_provenance")),
        flags=flags,
        window=result.window,
        threshold=result.threshold,
        thresholds=_packed_setting(column("threshold"), -1),
        windows=_packed_setting(column("window"), 0),
        threshold_source=_threshold_source(result),
        recorded_peak=recorded_peak,
        simulated_peak=result.summary.peak_simulated,  # (the largest of the same column)
        flags_set=flags_set,
    )


def _packed_setting(values: Sequence[int | None], missing: int) -> array[int]:
    """:func:`_packed` of ``values`` with None read as ``missing``, for a column that usually
    holds one value at every call (a window, a threshold): that value repeated in C rather
    than every item read (the count compares each item with the first by identity)."""
    n = len(values)
    if n > 1 and values.count(values[0]) == n:
        first = values[0]
        return _packed([missing if first is None else first]) * n
    return _packed(_none_as(values, missing))


def _none_as(values: Sequence[int | None], missing: int) -> Sequence[int]:
    """``values`` with each None read as ``missing`` (itself when it holds none: the search is
    in C, the copy of 50,000 items in Python is not)."""
    if None not in values:
        return values  # type: ignore[return-value]  # (no None in it)
    return [missing if value is None else value for value in values]


def _threshold_source(result: ReplayResult) -> str:
    """The run's threshold source: ``rule`` for the agent's preset (whose inferred stretches are
    flagged per call), ``inferred`` or ``learned``, or the policy's name."""
    from core.insights.named_figures import replay_threshold  # (the replay is loaded)

    return replay_threshold(result).source.split(",")[0]


def _recorded_columns(
    session: Session,
    known: Sequence[int] | None = None,
    contexts: Sequence[int | None] | None = None,
) -> _Columns:
    """The recorded series of a session not replayed yet, and the calls over its window
    (``known``: the message indices of its model calls, in order, when already read;
    ``contexts``: their recorded contexts, when read too)."""
    if known is not None and contexts is not None and len(contexts) == len(known):
        message_index: Sequence[int] = known
        recorded = _none_as(contexts, -1)
    else:
        message_index, recorded = _read_recorded(session, known)
    window = session.context_window
    if window:
        flags = [OVERFLOW_RECORDED if tokens > window else 0 for tokens in recorded]
    else:
        flags = [0] * len(recorded)
    return _Columns(message_index, recorded, [], [], flags, window, None, [], [])


def _read_recorded(
    session: Session, known: Sequence[int] | None
) -> tuple[Sequence[int], Sequence[int]]:
    """The message index and the recorded context (-1: none) of each model call of
    ``session`` (``known``: the calls' message indices, when already read)."""
    calls = _calls_at(session.messages, known) if known is not None else None
    if calls is None:
        calls = session.model_calls()
    message_index: Sequence[int] = known if known is not None and calls else []
    if not message_index:
        message_index = [m.index for m in calls]
    recorded = [
        -1 if tokens is None else tokens for tokens in usable_context(list(map(_USAGE, calls)))
    ]
    return message_index, recorded


_USAGE = attrgetter("usage")
_INDEX = attrgetter("index")


def _calls_at(messages: Sequence[Message], indices: Sequence[int]) -> list[Message] | None:
    """The messages at ``indices`` (the model calls' indices, read with the messages' flags),
    when each message's index is its position (None otherwise: the session is walked)."""
    try:
        calls = list(map(messages.__getitem__, indices))
    except IndexError:
        return None
    if any(map(ne, map(_INDEX, calls), indices)):  # (compared in C)
        return None
    return calls


def _mark_recorded_compactions(columns: _Columns, session: Session) -> None:
    """The recording's own compactions sit before the first call after their boundary."""
    message_index, flags = columns.message_index, columns.flags
    if not message_index:
        return
    for compaction in session.compactions:
        call = bisect_left(message_index, compaction.message_index)
        if call < len(flags):
            columns.flagged(call, RECORDED_COMPACT)


def _mark_subagents(columns: _Columns, session: Session) -> None:
    """The calls during which each sub-agent ran (the call that started it to the one that
    read its answer)."""
    calls = len(columns.flags)
    for first, last in subagent_spans(session):
        for call in range(max(first, 0), min(last, calls - 1) + 1):
            columns.flagged(call, SUBAGENT)


@dataclass(frozen=True, slots=True)
class Layout:
    """The series bucketed for one chart width (computed once per width)."""

    grid: BucketGrid
    """Which calls each bucket holds and which cells it takes."""
    recorded: Sequence[int]
    simulated: Sequence[int]
    flags: Sequence[int]
    representative: Sequence[int]
    """The call a bucket stands for (its simulated peak, else its recorded peak)."""
    thresholds: Sequence[int | None] = ()
    """The threshold each bucket draws (its representative call's)."""
    windows: Sequence[int | None] = ()
    """The window each bucket draws (its representative call's)."""

    @property
    def buckets(self) -> int:
        return self.grid.buckets

    @property
    def cells_per_series(self) -> int:
        return self.grid.cells_per_series


@dataclass(frozen=True, slots=True)
class BucketGrid:
    """The x-scale of the charts of the calls: which calls each bucket holds and which cells it
    takes, from the first cell right of the gutter to the last cell of the chart.

    Buckets are of unequal width, so that they take the whole width to the cell: ``cells`` cells
    over ``buckets`` buckets give each ``cells // buckets`` or one more; calls that outnumber
    the buckets are shared out the same way (each bucket holds ``calls // buckets`` calls or one
    more). Every cell of the chart belongs to one bucket and so to the calls it draws.
    """

    calls: int
    cells: int
    """Width of the chart (right of the gutter)."""
    buckets: int
    cells_per_series: int
    """Cells of each of a bucket's two bars (the gauge's recorded and simulated), the same in
    every bucket; the rest of a bucket is its gap."""

    def first_call(self, bucket: int) -> int:
        """The first call of ``bucket`` (``calls`` for ``buckets``)."""
        return bucket * self.calls // self.buckets

    def calls_of(self, bucket: int) -> range:
        """The calls ``bucket`` holds."""
        return range(self.first_call(bucket), self.first_call(bucket + 1))

    def bucket_of(self, call: int) -> int:
        """The bucket that holds ``call``."""
        # the largest b with b * calls // buckets <= call
        return min(self.buckets - 1, max(0, ((call + 1) * self.buckets - 1) // self.calls))

    def x_of(self, bucket: int) -> int:
        """The first cell of ``bucket`` (counted from the chart's first cell)."""
        return bucket * self.cells // self.buckets

    def width_of(self, bucket: int) -> int:
        """Cells of ``bucket``: its two bars and its gap."""
        return self.x_of(bucket + 1) - self.x_of(bucket)

    def bucket_at(self, x: int) -> int | None:
        """The bucket drawn at cell ``x`` of the chart (None: outside it)."""
        if not self.buckets or not 0 <= x < self.cells:
            return None
        return min(self.buckets - 1, ((x + 1) * self.buckets - 1) // self.cells)

    @property
    def one_call_each(self) -> bool:
        """Every bucket holds one call."""
        return self.buckets == self.calls


def bucket_grid(calls: int, chart_width: int) -> BucketGrid:
    """The x-scale of ``calls`` calls over ``chart_width`` cells: a bucket per call, or buckets
    of several calls when a bucket per call would leave less than two cells (a cell per bar) to
    each; the buckets take the whole width (:class:`BucketGrid`). The gauge and the breakdown
    chart under it both read it, so their columns line up."""
    chart_width = max(chart_width, 2)
    if calls <= 0:
        return BucketGrid(0, chart_width, 0, 1)
    buckets = min(calls, chart_width // 2)
    narrowest = chart_width // buckets
    # wider bars, the same in every bucket, and a gap, where the buckets have room
    cells = max(1, (narrowest - 1) // 2) if narrowest >= 3 else 1
    return BucketGrid(calls, chart_width, buckets, cells)


def bucket_series(
    series: Series, chart_width: int, previous: tuple[Series, Layout] | None = None
) -> Layout:
    """Fit ``series`` into ``chart_width`` cells (:func:`bucket_grid`), bucketing by max when
    calls outnumber the buckets.

    ``previous``: a series drawn before and its layout at the same width (the result shown
    before a limit change). A bucket whose calls hold the same figures and flags there keeps
    what it was worked out to be (compared in C, slice by slice): only the buckets from the
    first call the change moved are worked out again."""
    n = series.calls
    grid = bucket_grid(n, chart_width)
    if n == 0:
        return Layout(grid, [], [], [], [])
    if grid.one_call_each:
        every = range(n)
        return Layout(
            grid,
            series.recorded,
            series.simulated,
            series.flags,
            every,
            [series.threshold_at(c) for c in every],
            [series.window_at(c) for c in every],
        )
    before = previous if previous is not None and previous[1].grid == grid else None
    old_series, old_layout = before if before is not None else (None, None)
    rec_max = _bucket_max(
        series.recorded,
        grid,
        None if old_series is None else (old_series.recorded, old_layout.recorded),  # type: ignore[union-attr]
    )
    sim = series.simulated
    sim_max: list[int] = []
    if sim:
        sim_max, rep = _bucket_peaks(
            sim,
            grid,
            None
            if old_series is None or old_layout is None or not old_layout.simulated
            else (old_series.simulated, old_layout.simulated, old_layout.representative),
        )
    else:
        rec = series.recorded
        rep = [
            rec.index(rec_max[b], grid.first_call(b), grid.first_call(b + 1))
            for b in range(grid.buckets)
        ]
    flags = _bucket_flags(
        series.flags,
        grid,
        None if old_series is None else (old_series.flags, old_layout.flags),  # type: ignore[union-attr]
    )
    thresholds = [series.threshold_at(c) for c in rep]
    windows = [series.window_at(c) for c in rep]
    return Layout(grid, rec_max, sim_max, flags, rep, thresholds, windows)


def _bucket_peaks(
    values: Sequence[int],
    grid: BucketGrid,
    before: tuple[Sequence[int], Sequence[int], Sequence[int]] | None,
) -> tuple[list[int], list[int]]:
    """The largest of ``values`` in each bucket of ``grid`` and the first call holding it;
    ``before``: values bucketed before on the same grid, their maxima and those calls (kept
    where a bucket's values are the same)."""
    peaks: list[int] = []
    calls: list[int] = []
    for b in range(grid.buckets):
        start, end = grid.first_call(b), grid.first_call(b + 1)
        if before is not None and _same(values, before[0], start, end):
            peaks.append(before[1][b])
            calls.append(before[2][b])
        else:
            peak = max(values[start:end])
            peaks.append(peak)
            calls.append(values.index(peak, start, end))
    return peaks, calls


def _same(values: Sequence[int], other: Sequence[int], start: int, end: int) -> bool:
    """``values`` and ``other`` hold the same items from ``start`` to ``end``."""
    return len(other) >= end and values[start:end] == other[start:end]


def _bucket_max(
    values: Sequence[int],
    grid: BucketGrid,
    before: tuple[Sequence[int], Sequence[int]] | None,
) -> list[int]:
    """The largest of ``values`` in each bucket of ``grid``; ``before``: values bucketed
    before on the same grid and their maxima (kept where a bucket's values are the same)."""
    if before is not None and before[0] is values:
        return list(before[1])
    out: list[int] = []
    for b in range(grid.buckets):
        start, end = grid.first_call(b), grid.first_call(b + 1)
        if before is not None and _same(values, before[0], start, end):
            out.append(before[1][b])
        else:
            out.append(max(values[start:end]))
    return out


def _bucket_flags(
    flags: Sequence[int],
    grid: BucketGrid,
    before: tuple[Sequence[int], Sequence[int]] | None,
) -> list[int]:
    """The flags of each bucket's calls, or-ed; ``before``: as for :func:`_bucket_max`."""
    out = [0] * grid.buckets
    if before is None:
        for i in compress(range(grid.calls), flags):
            out[grid.bucket_of(i)] |= flags[i]
        return out
    for b in range(grid.buckets):
        start, end = grid.first_call(b), grid.first_call(b + 1)
        if _same(flags, before[0], start, end):
            out[b] = before[1][b]
        else:
            out[b] = reduce(or_, set(flags[start:end]), 0)
    return out
