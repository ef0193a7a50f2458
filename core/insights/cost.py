"""What a session cost: every recorded call priced with its cache reads and writes, each
compaction's own call and the cache it threw away, and the session's total.

:func:`session_cost` prices each call's recorded usage with the rates of :mod:`core.insights.prices` (the
model and provider that served it, on the day of the call). The usage conventions differ in what
their numbers hold, and are billed accordingly (``Usage`` is already normalised so that ``input``
never includes cached tokens):

* Anthropic (Claude Code): ``input`` at the input rate, ``cache_write`` at the cache-write rate,
  ``cache_read`` at the cache-read rate, ``output`` (thinking included) at the output rate;
* OpenAI (Codex): uncached ``input`` at the input rate, ``cache_read`` (``cached_input_tokens``)
  at the cached rate, ``output`` at the output rate — reasoning tokens are already part of it;
* pi: as recorded (``input``, ``cacheRead``, ``cacheWrite``, ``output``);
* opencode: its ``output`` leaves the reasoning tokens out, so ``output + reasoning`` is billed
  at the output rate.

A call whose model the table does not know is priced as unknown (``total_usd`` None, with the
reason), never as 0; the session's total is then a lower bound and says how many calls it misses.

A compaction costs twice: its own summary call (when the recording holds it: opencode writes the
summary step's usage) and the prompt cache it invalidates — the next call can no longer read the
cached prefix (``cache_invalidated_tokens``: the cache read of the last call before it minus that
of the first call after) and pays to send and cache its new prompt again (``cache_rebuild_usd``).
"""

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from itertools import accumulate, chain, compress, islice, pairwise, repeat
from operator import add, gt, is_, is_not, lt, mul, ne, or_, truediv
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from pydantic import Field

from core.insights.context_walk import RecordedWalk
from core.insights.cost_arithmetic import (
    EXACT,
    chunks,
    products_of,
    scaled_rates,
    whole_products,
    wholes,
    window,
)
from core.insights.prices import (
    SUBSCRIPTIONS,
    Rates,
    UnknownPrice,
    day_of,
    days_of,
    rate_runs,
    rates_on,
    stretch_rates,
)
from core.model.fastmodel import Documented, build
from core.model.lazy_types import lazy_field_types
from core.model.session import Message, Role, Session, Usage, UsageConvention, prompt_column

if TYPE_CHECKING:
    from core.insights.call_cost import CallCost as CallCost

# (``analyze`` prices its calls without a model each: the class is created when one is built)
__getattr__ = lazy_field_types(__name__, CallCost="core.insights.call_cost")


class CompactionCost(Documented):
    """What one recorded compaction cost."""

    recorded_index: int
    """Index into ``Session.compactions``."""
    summary_call_usd: float | None = None
    """The compaction's own summary call, when the recording holds its usage (None: it does
    not, or its model is not in the price table)."""
    cache_read_before: int | None = None
    """Cache reads of the last call before the compaction."""
    cache_read_after: int | None = None
    """Cache reads of the first call after it."""
    cache_invalidated_tokens: int | None = None
    """The cached prefix the compaction threw away: ``cache_read_before - cache_read_after``
    (at least 0)."""
    cache_rebuild_usd: float | None = None
    """What the first call after it paid to send its prompt uncached and write it to the cache."""
    next_call_index: int | None = None
    """That first call after it."""


class SessionCost(Documented):
    """The cost of a whole session (``cost`` in ``analyze --json``)."""

    total_usd: float | None
    """Every priced call added up (None: no call could be priced); a lower bound when
    ``unpriced_calls`` > 0."""
    calls: int
    """Calls with recorded usage (conversation, compaction summaries, sub-agents)."""
    priced_calls: int
    """Of those, the ones the price table could price."""
    unpriced_calls: int
    """The ones it could not (their models are in ``unknown_models``)."""
    unknown_models: list[str] = Field(default_factory=list)
    """Models the table does not know."""
    input_usd: float = 0.0
    """Uncached prompt tokens, all calls."""
    cache_read_usd: float = 0.0
    """Cache reads, all calls."""
    cache_write_usd: float = 0.0
    """Cache writes, all calls."""
    output_usd: float = 0.0
    """Output, all calls."""
    cache_saved_usd: float = 0.0
    """What the cache reads saved against sending the same tokens uncached."""
    compactions_usd: float = 0.0
    """Compaction summary calls plus the cache rebuilt after each compaction."""
    priced_as: list[str] = Field(default_factory=list)
    """How the models were priced (``model @ provider``, and notes such as a subscription billed
    at list price)."""
    per_call: "list[CallCost]" = Field(default_factory=list)
    """One per conversation call, in order (``call_index``)."""
    other_calls: "list[CallCost]" = Field(default_factory=list)
    """Priced calls outside the conversation's numbering: compaction summaries, sub-agents."""
    compactions: list[CompactionCost] = Field(default_factory=list)
    """One per recorded compaction that took effect."""


def billed(usage: Usage) -> tuple[int, int, int, int]:
    """The tokens a usage bills: uncached input, cache read, cache write, output (see the
    module docstring for the conventions)."""
    output = usage.output
    if usage.convention is UsageConvention.OPENCODE:
        output += usage.reasoning
    return usage.input, usage.cache_read, usage.cache_write, output


class Priced(NamedTuple):
    """One call priced, without a model object (:class:`CallCost` has the same fields): a
    session's totals read these, and only a caller that shows each call builds its
    :class:`CallCost`."""

    call_index: int | None
    message_index: int
    model: str | None
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    input_usd: float | None
    cache_read_usd: float | None
    cache_write_usd: float | None
    output_usd: float | None
    total_usd: float | None
    unknown_reason: str | None

    def call_cost(self) -> "CallCost":
        """The :class:`CallCost` of this call (built from typed values, not validated)."""
        from core.insights.call_cost import CallCost

        return build(CallCost, self._asdict())


def price_message(
    message: Message, call_index: int | None, session: Session
) -> "tuple[CallCost, Rates | None]":
    """The cost of one assistant message's recorded call, and the rates it was priced at."""
    priced, found = price(message, call_index, session)
    return priced.call_cost(), found


def price(
    message: Message, call_index: int | None, session: Session
) -> tuple[Priced, Rates | None]:
    """:func:`price_message` without the model object (a 100 MB session prices 50,000 calls)."""
    model = message.model or session.model
    usage = message.usage
    if usage is None:
        return _unpriced(call_index, message.index, model, (0, 0, 0, 0), "no usage recorded"), None
    tokens = billed(usage)
    try:
        found = rates_on(model, session.provider, _day(message), usage.prompt_tokens)
    except UnknownPrice as exc:
        return _unpriced(call_index, message.index, model, tokens, str(exc)), None
    input_usd, read_usd, write_usd, output_usd = parts = [
        Decimal(count) * rate
        for count, rate in zip(
            tokens, (found.input, found.cache_read, found.cache_write, found.output), strict=True
        )
    ]
    priced = Priced(
        call_index,
        message.index,
        model,
        *tokens,
        float(input_usd),
        float(read_usd),
        float(write_usd),
        float(output_usd),
        float(sum(parts, Decimal(0))),
        None,
    )
    return priced, found


def _unpriced(
    call_index: int | None,
    message_index: int,
    model: str | None,
    tokens: tuple[int, int, int, int],
    reason: str,
) -> Priced:
    return Priced(call_index, message_index, model, *tokens, None, None, None, None, None, reason)


def _day(message: Message) -> str | None:
    """The day of the call (``YYYY-MM-DD``, in the timestamp's own offset), None without one."""
    return day_of(message.timestamp)


def session_cost(session: Session, *, each_call: bool = True) -> SessionCost:
    """The cost of ``session`` (see the module docstring); without ``each_call``, its
    ``per_call`` and ``other_calls`` are left empty (the totals and the compactions' costs are
    the same: ``analyze``, ``fleet`` and ``compactions`` show no call's own).

    The calls are priced as columns (:class:`_PricedCalls`): one rate lookup per stretch of
    calls of one model and day, the dollars in integer arithmetic, each figure the very float
    :func:`price` gives the call."""
    total, calls = _priced(session, totals_only=not each_call)
    if each_call:
        total.per_call = calls.call_costs(calls.main)
        total.other_calls = calls.call_costs(calls.other)
    return total


def session_cost_rows(
    session: Session,
) -> tuple[SessionCost, list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`session_cost` with its ``per_call`` and ``other_calls`` left empty and given
    apart, each call as the fields of its :class:`CallCost` (in the model's order): for a
    writer of every call's figures (``breakdown --json``), no model per call."""
    total, calls = _priced(session, totals_only=False)
    return total, calls.call_fields(calls.main), calls.call_fields(calls.other)


def _priced(session: Session, *, totals_only: bool) -> tuple[SessionCost, "_PricedCalls"]:
    walk = RecordedWalk(session)
    calls = _PricedCalls(session, walk.calls.call_of, totals_only=totals_only)
    compactions = _compactions(walk, calls)
    return _total(calls, compactions, session), calls


_NO_USAGE = "no usage recorded"


class _PricedCalls:
    """Every assistant call of a session that is in the conversation's numbering or records
    usage, priced, as columns.

    An entry ``k`` (session order) is a picked message; the calls that record usage are also
    numbered apart (``j``, :attr:`slot` maps one to the other) and their tokens, dollars and
    rates are columns over ``j``: a run of calls of one rate is a slice of them, its products
    and quotients made by ``map`` over the slice (no Python step per call), each figure the
    very float :func:`price` gives the call."""

    def __init__(
        self, session: Session, call_of: Sequence[int], *, totals_only: bool = False
    ) -> None:
        messages = session.messages
        assistant = Role.ASSISTANT
        picked = [m for m in messages if m.role is assistant]
        # (the usual case: every assistant message is a call, the k-th one call k)
        every_call = len(picked) == _call_count(call_of)
        if not every_call:
            picked = [m for m in picked if call_of[m.index] >= 0 or m.usage is not None]
        self.picked = picked
        self.message_index = [m.index for m in picked]
        """Each entry's message index (the messages' own integers: no new one per entry)."""
        entries = range(len(picked))
        self._call_of: Sequence[int]
        self.main: Sequence[int]
        """The entries in the conversation's numbering (``per_call``), in order."""
        self.other: array[int]
        """The others (``other_calls``): compaction summaries, sub-agents."""
        if every_call:  # (entry k is call k: ranges, no column)
            self._call_of = self.main = entries
            self.other = array("q")
        else:
            calls = array("q", map(call_of.__getitem__, self.message_index))
            self._call_of = calls
            self.main = array("q", compress(entries, map(lt, repeat(-1), calls)))
            self.other = array("q", compress(entries, map(gt, repeat(0), calls)))
        default_model = session.model
        usages = [m.usage for m in picked]
        every = not any(map(is_, usages, repeat(None)))  # (the usual case: one pass less)
        flags = None if every else list(map(is_not, usages, repeat(None)))
        recorded = picked if flags is None else list(compress(picked, flags))
        self.models_u: list[str | None] = _models(recorded, default_model)
        """The model of each call with usage."""
        self.slot: array[int] | range
        """The entry's number among the calls with usage (-1: none recorded)."""
        self.model: list[str | None]
        """The model of each entry."""
        if flags is None:
            self.slot, self.model = range(len(picked)), self.models_u
        else:
            self.slot = _slots(flags)
            self.model = _models(picked, default_model)
        self.counts = _token_columns(
            cast("list[Usage]", usages if flags is None else list(compress(usages, flags)))
        )
        """Uncached input, cache read, cache write and billed output of each call with usage
        (:func:`billed`)."""
        count = len(recorded)
        self.sums: list[float] | None = [0, 0, 0, 0, 0] if totals_only and not self.other else None
        """Without a call outside the conversation's numbering and with ``totals_only`` (a
        caller that shows no call's own dollars): the five dollar columns added up run by run,
        in call order (the very additions :func:`_total` makes over the columns, which are then
        not kept: :attr:`usd` is empty)."""
        self.usd: tuple[array[float] | list[float], ...] = tuple(
            array("d", bytes(8 * count if self.sums is None else 0))
            if totals_only
            else [0.0] * count
            for _ in range(5)
        )
        """Input, cache read, cache write, output and total dollars of each call with usage:
        arrays (8 bytes a figure) for a caller of the totals, lists for one that shows each call's
        dollars (it makes a float of each of them anyway: made once, not converted to and from
        8 bytes)."""
        self.priced = bytearray(count)
        """1 for a call with usage :attr:`usd` holds the dollars of."""
        self.unknown: dict[int, str] = {}
        """Why a call with usage could not be priced (the price table's reason)."""
        self.rates: list[Rates | None] = [None] * count
        self.runs: list[tuple[Rates, int]] = []
        """Every run of consecutive calls priced at one rate, with the cache reads of its calls."""
        self._price(session, recorded)

    def call_index(self, k: int) -> int | None:
        """The entry's call in the conversation's numbering (None: not in it)."""
        call = self._call_of[k]
        return call if call >= 0 else None

    def tokens(self, k: int) -> tuple[int, int, int, int]:
        """The tokens the entry bills (:func:`billed`; zeros without usage)."""
        j = self.slot[k]
        if j < 0:
            return (0, 0, 0, 0)
        a, r, w, o = self.counts
        return a[j], r[j], w[j], o[j]

    def _price(self, session: Session, recorded: list[Message]) -> None:
        """Rates per stretch of calls of one model and day, dollars per run of one rate."""
        models = self.models_u
        days = days_of([m.timestamp for m in recorded])
        count = len(recorded)
        starts = _changes((models, days), count)  # where the (model, day) key changes
        for start, end in pairwise(starts):
            if start < end:
                self._price_stretch(session, start, end, models[start], days[start])

    def _price_stretch(
        self, session: Session, start: int, end: int, model: str | None, day: str | None
    ) -> None:
        columns = [window(column, start, end) for column in self.counts]
        highs = list(map(max, columns))
        try:  # (prompts below the first tier start, the usual case: one run, no prompt made)
            one = stretch_rates(model, session.provider, day, highs[0] + highs[1] + highs[2])
            runs = (
                [(0, end - start, one)]
                if one is not None
                else _tier_runs(model, session.provider, day, columns)
            )
        except UnknownPrice as exc:
            self.unknown.update(zip(range(start, end), repeat(str(exc))))
            return
        for first, last, rates in runs:  # runs of one rate (a tier crossed starts another)
            lo, hi = start + first, start + last
            whole = last - first == end - start  # (the stretch's own largest counts are the run's)
            self.runs.append((rates, self._dollars(lo, hi, rates, highs if whole else None)))
            self.rates[lo:hi] = [rates] * (hi - lo)
            self.priced[lo:hi] = b"\x01" * (hi - lo)

    def _dollars(self, lo: int, hi: int, rates: Rates, highs: list[int] | None = None) -> int:
        """Price calls ``lo`` to ``hi`` (one rate) into :attr:`usd`: input, cache read, cache
        write, output and total, each exactly the float of the decimal product :func:`price`
        computes; the cache reads of the run (``highs``: each count's largest in the run, when
        known).

        Integer products over one power of ten while every call of the run is exact (below 28
        digits, no negative count: the usual case), else the whole run the decimal context's
        way (:func:`_decimal_usd`), as :func:`price` prices it."""
        rate_a, rate_r, rate_w, rate_o, scale = scaled_rates(rates)
        columns = [window(column, lo, hi) for column in self.counts]
        read: int = sum(columns[1])
        if min(map(min, columns)) < 0:
            return self._decimal_dollars(lo, hi, rates, read)
        if highs is None:
            highs = list(map(max, columns))
        # A figure whose every product is 0 (no such tokens in the run, as Codex's cache writes,
        # or a rate of 0) is None: each of its calls costs 0.0, and it adds nothing to the whole.
        per_token = (rate_a, rate_r, rate_w, rate_o)
        factors: list[tuple[int, Sequence[int]] | None] = [
            (rate, column) if rate and high > 0 else None
            for rate, column, high in zip(per_token, columns, highs, strict=True)
        ]
        made = [factor for factor in factors if factor is not None]
        # Every product is >= 0: the whole of a call is at most the sum of each product's
        # largest (0 for a figure left out), and only a run whose bound reaches EXACT needs its
        # largest whole made.
        bound = sum(map(mul, per_token, highs))
        if bound >= EXACT and max(whole_products(made)) >= EXACT:
            return self._decimal_dollars(lo, hi, rates, read)
        # (operator's functions over repeat(): a method-wrapper such as scale.__rtruediv__ parses
        # its argument tuple at every call, a third of the step)
        divisors = repeat(scale)
        for part in chunks(hi - lo):  # each product made once, for its figure and the whole
            self._chunk_dollars(lo, part, factors, divisors)
        return read

    def _chunk_dollars(
        self,
        lo: int,
        part: slice,
        factors: list[tuple[int, Sequence[int]] | None],
        divisors: "repeat[int]",
    ) -> None:
        """:meth:`_dollars` of the calls ``part`` of a run from ``lo``: each factor's products
        made (as integers) and read for its figure and for each call's whole, then let go."""
        products = products_of(factors, part)
        any_made = any(column is not None for column in products)
        figures = (*products, wholes(products) if any_made else None)
        sums = self.sums
        if sums is not None:  # (the same floats, added up as the columns would be)
            for figure, cost in enumerate(figures):
                start = sums[figure]
                sums[figure] = (
                    start + 0.0 if cost is None else sum(map(truediv, cost, divisors), start)
                )
            return
        size = part.stop - part.start
        at, to = lo + part.start, lo + part.stop
        for usd, cost in zip(self.usd, figures, strict=True):
            values = repeat(0.0, size) if cost is None else map(truediv, cost, divisors)
            _fill(usd, at, to, values)

    def _decimal_dollars(self, lo: int, hi: int, rates: Rates, read: int) -> int:
        """:meth:`_dollars` of a run one of whose calls integer arithmetic does not price
        exactly: every call of it priced in the decimal context."""
        a, r, w, o = self.counts
        dollars = [_decimal_usd((a[j], r[j], w[j], o[j]), rates) for j in range(lo, hi)]
        sums = self.sums
        for figure, column in enumerate(zip(*dollars, strict=True)):
            if sums is not None:
                sums[figure] = sum(column, sums[figure])
            else:
                _fill(self.usd[figure], lo, hi, column)
        return read

    def rates_of(self, k: int) -> Rates | None:
        """The rates the entry was priced at (None: not priced)."""
        j = self.slot[k]
        return None if j < 0 else self.rates[j]

    def call_costs(self, entries: Iterable[int]) -> "list[CallCost]":
        """The :class:`CallCost` of each of ``entries`` (typed values, not validated)."""
        from core.insights.call_cost import CallCost

        return list(map(build, repeat(CallCost), self.call_fields(entries)))

    def call_fields(self, entries: Iterable[int]) -> list[dict[str, Any]]:
        """The fields of the :class:`CallCost` of each of ``entries``, straight from the
        columns: each field read for every entry at once, through the entries' slots — every
        column carries one more value at its end, what an entry without usage (slot -1)
        reads."""
        keys = list(entries)
        count = len(self.priced)
        if isinstance(self.slot, range) and keys == list(range(count)):
            rows = self._every_row()  # (every entry, in order, each its own slot)
        else:
            rows = self._rows(keys)
        return [
            {
                "call_index": call,
                "message_index": index,
                "model": model,
                "input_tokens": a,
                "cache_read_tokens": r,
                "cache_write_tokens": w,
                "output_tokens": o,
                "input_usd": a_usd,
                "cache_read_usd": r_usd,
                "cache_write_usd": w_usd,
                "output_usd": o_usd,
                "total_usd": total,
                "unknown_reason": why,
            }
            for call, index, model, a, r, w, o, a_usd, r_usd, w_usd, o_usd, total, why in rows
        ]

    def _usd_columns(self, end: list[None]) -> Sequence[Sequence[float | None]]:
        """The five dollar columns, None for a call the table could not price, each followed
        by ``end``."""
        if not self.unknown and not end:
            return list(self.usd)
        usd: list[list[float | None]] = [[*figure, *end] for figure in self.usd]
        for figure in usd:
            for j in self.unknown:
                figure[j] = None
        return usd

    def _reasons(self, end: list[str]) -> list[str | None]:
        """Why each call with usage could not be priced (None: it was), followed by ``end``."""
        reasons: list[str | None] = [None] * len(self.priced)
        reasons += end
        for j, why in self.unknown.items():
            reasons[j] = why
        return reasons

    def _rows(self, keys: list[int]) -> Iterator[tuple[Any, ...]]:
        """The fields of each of ``keys``, read through its slot: every column carries one more
        value at its end, what an entry without usage (slot -1) reads."""
        if not keys:  # (no call outside the numbering, the usual case: no column copied)
            return iter(())
        slots = list(map(self.slot.__getitem__, keys))
        columns: list[Sequence[Any]] = [
            *([*column, 0] for column in self.counts),
            *self._usd_columns([None]),
            self._reasons([_NO_USAGE]),
        ]
        return zip(
            [call if call >= 0 else None for call in map(self._call_of.__getitem__, keys)],
            map(self.message_index.__getitem__, keys),
            map(self.model.__getitem__, keys),
            *(map(column.__getitem__, slots) for column in columns),
            strict=True,
        )

    def _every_row(self) -> Iterator[tuple[Any, ...]]:
        """:meth:`_rows` of every entry where each is its own slot (every call recorded
        usage): the columns read as they are, no lookup per entry and field."""
        calls = self._call_of
        return zip(
            calls if -1 not in calls else [call if call >= 0 else None for call in calls],
            self.message_index,
            self.model,
            *self.counts,
            *self._usd_columns([]),
            self._reasons([]),
            strict=True,
        )

    def sent(self) -> "array[int]":
        """The entries in the conversation's numbering whose calls sent tokens (uncached
        input, cache read or cache write), in order."""
        a, r, w, _ = self.counts
        prompts = list(prompt_column(a, r, w))
        slots = map(self.slot.__getitem__, self.main)
        return array("q", compress(self.main, [j >= 0 and prompts[j] != 0 for j in slots]))

    def total_usd(self, k: int) -> float | None:
        """The call's dollars (None: not priced)."""
        j = self.slot[k]
        return self.usd[4][j] if j >= 0 and self.priced[j] else None


def _fill(column: "array[float] | list[float]", lo: int, hi: int, values: Iterable[float]) -> None:
    """``column[lo:hi]`` set to ``values``."""
    if isinstance(column, array):
        column[lo:hi] = array("d", values)
    else:
        column[lo:hi] = values


def _changes(columns: Sequence[list[Any]], count: int) -> list[int]:
    """0, every position where a value of one of ``columns`` (``count`` values each) differs
    from the one before, and ``count``: the starts of the stretches of one key, and the end. A
    column of one value (the model of most sessions) changes nowhere: it is counted, not
    compared value by value."""
    changing = [
        map(ne, islice(column, 1, None), column)
        for column in columns
        if column and column.count(column[0]) != count
    ]
    starts = [0]
    if changing:
        flags = changing[0]
        for more in changing[1:]:
            flags = map(or_, flags, more)
        starts += compress(range(1, count), flags)
    starts.append(count)
    return starts


def _tier_runs(
    model: str | None, provider: str | None, day: str | None, columns: list[Sequence[int]]
) -> list[tuple[int, int, Rates]]:
    """:func:`rate_runs` of a stretch whose prompts may cross a tier (its token ``columns``):
    its prompts made from its columns (:func:`~core.model.session.prompt_column`)."""
    a, r, w, _ = columns
    return rate_runs(model, provider, day, _int_column(lambda: prompt_column(a, r, w)))


def _call_count(call_of: Sequence[int]) -> int:
    """The calls ``call_of`` numbers (each message's call, -1 for none: the calls numbered from 0
    in the messages' order, as :attr:`~core.replay.calls.Calls.call_of` is): one more than the
    last call's number, read from the end (the messages after the last call, not every one)."""
    for call in reversed(call_of):
        if call >= 0:
            return call + 1
    return 0


def _slots(flags: list[bool]) -> "array[int]":
    """Each message's number among those with usage (``flags``: it has one), -1 for none:
    ``n * flag - 1`` of the running count ``n``, in C."""
    return array("q", map(add, repeat(-1), map(mul, accumulate(flags), flags)))


def _int_column(values: Callable[[], Iterable[int]]) -> Sequence[int]:
    """``values()`` as 64-bit integers (8 bytes each, no object per entry), or as a list where
    one does not fit."""
    try:
        return array("q", values())
    except OverflowError:
        return list(values())


def _models(messages: list[Message], default: str | None) -> list[str | None]:
    """The model of each message (the session's ``default`` where it records none)."""
    models: list[str | None] = [m.model for m in messages]
    if all(models):  # (the usual case: every message names its model)
        return models
    return [model or default for model in models]


def _token_columns(
    usages: list[Usage],
) -> tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]]:
    """:func:`billed` of every usage, as four columns: lists of the usages' own integers (a
    pointer a call, as an array's 8 bytes, with no integer made at each read nor a conversion
    at each write); an output billed with the reasoning (opencode's), as an :func:`_int_column`
    of the sums."""
    # (billed's output rule call by call where a usage needs it)
    if UsageConvention.OPENCODE in [u.convention for u in usages]:
        output = _int_column(lambda: (billed(u)[3] for u in usages))
    else:
        output = [u.output for u in usages]
    return (
        [u.input for u in usages],
        [u.cache_read for u in usages],
        [u.cache_write for u in usages],
        output,
    )


def _decimal_usd(
    tokens: tuple[int, int, int, int], rates: Rates
) -> tuple[float, float, float, float, float]:
    """A call's dollars in the decimal context, as :func:`price` computes them."""
    parts = [
        Decimal(count) * rate
        for count, rate in zip(
            tokens, (rates.input, rates.cache_read, rates.cache_write, rates.output), strict=True
        )
    ]
    return (
        float(parts[0]),
        float(parts[1]),
        float(parts[2]),
        float(parts[3]),
        float(sum(parts, Decimal(0))),
    )


_NO_COMPACTION_COST: dict[str, Any] = {
    name: None for name in CompactionCost.model_fields if name != "recorded_index"
}
"""The fields of a :class:`CompactionCost` but its ``recorded_index``, each at its default (None):
a compaction's cost is built from them (typed values, not validated) and filled in."""


def _compactions(walk: RecordedWalk, calls: _PricedCalls) -> list[CompactionCost]:
    taken = [rc for rc in walk.recorded.all if not rc.rewound]
    if not taken:  # (most sessions: no call's neighbours to look up)
        return []
    message_index = calls.message_index
    summary_calls = {message_index[k]: k for k in calls.other}
    # The calls that sent tokens, and their message indexes (ascending: the main calls follow
    # the session's messages), built once: each compaction finds its neighbours by bisection.
    tokens = calls.tokens
    sent = calls.sent()
    at = array("q", map(message_index.__getitem__, sent))
    ordered = all(map(lt, at[:-1], at[1:]))
    out: list[CompactionCost] = []
    for rc in taken:
        cost = build(CompactionCost, {"recorded_index": rc.index, **_NO_COMPACTION_COST})
        own = [summary_calls[j] for j in range(rc.m_c, rc.owned_end) if j in summary_calls]
        own += [summary_calls[j] for j in rc.owned if j in summary_calls and j >= rc.owned_end]
        priced = [usd for usd in map(calls.total_usd, own) if usd is not None]
        cost.summary_call_usd = sum(priced) if priced else None
        before, after = _neighbours(sent, at, ordered, rc.m_c, rc.owned_end, message_index)
        if before is not None and after is not None:
            read_before, read_after = tokens(before)[1], tokens(after)[1]
            cost.cache_read_before = read_before
            cost.cache_read_after = read_after
            cost.cache_invalidated_tokens = max(0, read_before - read_after)
            cost.next_call_index = calls.call_index(after)
            found = calls.rates_of(after)
            if found is not None:
                counts = tokens(after)
                rebuild = Decimal(counts[0]) * found.input + Decimal(counts[2]) * found.cache_write
                cost.cache_rebuild_usd = float(rebuild)
        out.append(cost)
    return out


def _neighbours(
    sent: Sequence[int],
    at: Sequence[int],
    ordered: bool,
    start: int,
    end: int,
    message_index: Sequence[int],
) -> tuple[int | None, int | None]:
    """The last call of ``sent`` before message ``start`` and the first at or after ``end``."""
    if not ordered:  # (never from a session's own order; kept exact for any other caller)
        before = next((k for k in reversed(sent) if message_index[k] < start), None)
        after = next((k for k in sent if message_index[k] >= end), None)
        return before, after
    i = bisect_left(at, start)
    j = bisect_left(at, end)
    return (sent[i - 1] if i > 0 else None), (sent[j] if j < len(sent) else None)


def _total(calls: _PricedCalls, compactions: list[CompactionCost], session: Session) -> SessionCost:
    recorded = len(calls.priced)  # (every call with usage is a main or an other one)
    unknown = sorted({calls.models_u[j] or "(no model)" for j in calls.unknown})
    # (every call with usage is priced or has a reason, and is a main or an other one once)
    priced_count = recorded - len(calls.unknown)
    priced: Sequence[int] | None = None  # (every call, in order: the columns as they are)
    if calls.sums is not None:
        pass  # (added up as they were made: no column kept, no order to follow)
    elif not calls.other:  # the main calls' slots ascend: the priced ones, in column order
        if calls.unknown:
            priced = list(compress(range(recorded), calls.priced))
    else:  # the priced calls, the main ones then the others, as call by call
        slot, flags = calls.slot, calls.priced
        priced = [
            j for j in map(slot.__getitem__, chain(calls.main, calls.other)) if j >= 0 and flags[j]
        ]

    def column(figure: int) -> float:  # one figure of every priced call, added up in order
        if calls.sums is not None:
            return calls.sums[figure]
        usd = calls.usd[figure]
        added: float = sum(usd) if priced is None else sum(map(usd.__getitem__, priced))
        return added

    # What the cache reads saved, per run of one rate: the same decimal sum as call by call.
    saved = Decimal(0)
    used: dict[int, Rates] = {}
    for found, read in calls.runs:
        used[id(found)] = found
        saved += Decimal(read) * (found.input - found.cache_read)
    how = sorted(
        {
            f"{r.model_id} @ {r.provider_id}" + (f" ({r.note})" if r.note else "")
            for r in used.values()
        }
    )
    if session.provider in SUBSCRIPTIONS and not how:
        how = [f"{session.provider} bills by subscription"]
    # (typed values, built without validation: a validated SessionCost builds the model's
    # schema, which only pydantic's writer needs; each dollar figure a float, as validation
    # would make a sum of no call's)
    return build(
        SessionCost,
        {
            "total_usd": float(column(4)) if priced_count else None,
            "calls": recorded,
            "priced_calls": priced_count,
            "unpriced_calls": recorded - priced_count,
            "unknown_models": unknown,
            "input_usd": float(column(0)),
            "cache_read_usd": float(column(1)),
            "cache_write_usd": float(column(2)),
            "output_usd": float(column(3)),
            "cache_saved_usd": float(saved),
            "compactions_usd": float(
                sum((c.summary_call_usd or 0.0) + (c.cache_rebuild_usd or 0.0) for c in compactions)
            ),
            "priced_as": how,
            "per_call": [],
            "other_calls": [],
            "compactions": compactions,
        },
    )


# -- dollar figures for the status bar, the compaction screen and the picker ---------------------


def format_usd(value: float | None) -> str:
    """A dollar figure in a few characters: ``$0.0042``, ``$3.17``, ``$1,204``; ``?`` unknown."""
    if value is None:
        return "?"
    if value == 0:
        return "$0"
    if value < 0.01:
        return f"${value:.4f}"
    if value < 100:
        return f"${value:.2f}"
    return f"${value:,.0f}"


def cost_label(cost: SessionCost) -> str:
    """The session's cost for a status bar or a picker column: ``$3.17``, ``≥$3.17`` when some
    calls could not be priced, ``?`` when none could, ``-`` without recorded usage."""
    if cost.calls == 0:
        return "-"
    return usd_label(cost.total_usd, cost.unpriced_calls)


def usd_label(total_usd: float | None, unpriced_calls: int = 0) -> str:
    """A total that may leave calls out: ``$3.17``, ``≥$3.17`` when ``unpriced_calls`` could not
    be priced (a lower bound), ``?`` when nothing could. :func:`cost_label` of a session; a
    row of ``ctxscope fleet`` and of the picker, which keep only the total and that count."""
    if total_usd is None:
        return "?"
    prefix = "≥" if unpriced_calls else ""
    return prefix + format_usd(total_usd)


def compaction_cost_label(cost: CompactionCost) -> str:
    """One line for the compaction screen: its own call and the cache it threw away."""
    parts: list[str] = []
    if cost.summary_call_usd is not None:
        parts.append(f"summary call {format_usd(cost.summary_call_usd)}")
    if cost.cache_invalidated_tokens is not None:
        rebuilt = (
            f", rebuilt for {format_usd(cost.cache_rebuild_usd)}"
            if cost.cache_rebuild_usd is not None
            else ""
        )
        parts.append(f"cache lost {cost.cache_invalidated_tokens:,} tokens{rebuilt}")
    return "; ".join(parts) if parts else "no cost recorded"
