"""Following an earlier run: the stretches where a walk's context differs from an earlier run's
by a constant, taken from that run's trace instead of walked.

After a limit change, a run often differs from the one it resumed only in what one compaction
produced: the pruning before it (``pruning.protect_turns``) or the tail it kept. From there on
both walk the same messages and both contexts grow by the same tokens, so the new one is the old
one plus a constant ``D`` (the difference of the two rebuilt contexts) until either run does
something else: compacts, overflows, prunes at a turn end, meets a recorded compaction, makes an
event. Over such a stretch every call's figures follow from the earlier run's per call
(:attr:`Trace.deltas`, its checks) and ``D``, without walking its messages again:

* the call's delta is the old one plus ``D``; its prompt, figure and the figure after its reply
  are the recorded ones plus ``round(delta * ratio)``, floored at 0 (as :meth:`core.replay.simulate.Run.call_step`);
* the check's figure is the previous call's figure after its reply; its projection is that
  figure plus what the earlier check added to its own (the tokens walked since the previous call,
  which both runs walk alike); its baseline, its schedule, what it sees, are the earlier check's;
* the stretch ends before the first call where the new figures cross the policy's threshold
  (fired or left pending), would overflow, or the earlier run fired, and before any event or
  recorded compaction of the earlier run: from there on the walk goes on call by call.

A stretch starts and ends at calls whose checkpoints both runs keep (the state there is the
earlier one's, with the new run's context and the constant added), and is taken only between
policies that walk alike: the same estimator, truncation and check rules, no pruning at turn
ends (``tests/unit/test_replay_shifted.py`` compares every trace so made with a full walk).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from itertools import count as count_from
from operator import is_not
from typing import TYPE_CHECKING, Any

from core.model.session import Provenance
from core.replay.calls import Calls
from core.replay.checks import CheckRules
from core.replay.lanes import Lanes
from core.replay.recorded import RecordedCompactions
from core.replay.setting import Setting
from core.replay.state import (
    CHECKS_NOW,
    FIRED,
    NO_BASE,
    NO_LIMIT,
    NO_MEASURE,
    NO_PROJ,
    CheckRows,
    State,
    Trace,
    all_same,
    checkpoint_spacing,
)

if TYPE_CHECKING:
    from core.replay.results import ReplayEvent

_RECORDED = Provenance.RECORDED

_Prev = tuple[int, Provenance]
"""The figure after a call's reply, and its provenance."""
_Columns = tuple[Any, ...]
"""A stretch's checks (:class:`CheckRows`), deltas, figures and provenances, being made."""
_Made = tuple[int, Sequence[int], Sequence[int], Sequence[int], list[int]]
"""How many calls of a run of one delta are made at once, and their checks' base, projection
and measure, and their figures (:meth:`Follower._columns_at_once`)."""
_LANE_MAX = 1 << 31
"""The figures :meth:`Follower._columns_at_once` makes are below this (the top bit of an
unsigned 4-byte lane clear)."""

_SAME_WALK = (
    "base_pos",
    "pending",
    "prev_call",
    "prev_baseline_figure",
    "prev_e_rec_cov",
    "rebased",
    "rec_base_change",
    "since_call",
    "since_prompt",
    "reasoning_before",
    "reasoning_before_prev",
    "reasoning_turn",
)
"""The state fields two runs in step agree on (the others: the context, and the figures made
from it)."""


@dataclass(frozen=True, slots=True)
class Walk:
    """What a follower reads of the walk it takes stretches for (:class:`core.replay.simulate.Run`)."""

    setting: Setting
    calls: Calls
    recorded: RecordedCompactions
    trace: Trace
    """The run's trace, written to."""
    events: list[ReplayEvent]
    rules: CheckRules
    reasons: Sequence[str | None]
    """Why each recorded call overflowed against its window."""
    auto_calls: Collection[int | None]
    """The calls the recording compacted by itself before."""


class Follower:
    """Takes, during ``run``'s walk, the stretches where it follows ``earlier`` (a complete
    trace of a policy the run walks alike: :func:`core.replay.incremental.can_follow`)."""

    def __init__(self, walk: Walk, earlier: Trace) -> None:
        self.walk = walk
        self.earlier = earlier
        self.next_try = 0
        """The first call a stretch may start at (after one, the call it ended at is walked)."""
        calls = walk.calls
        self._recorded_at = sorted(walk.recorded.at)
        self._call_messages = calls.calls
        self._n = calls.n
        self._calls = len(calls)
        self._every = checkpoint_spacing(self._calls)
        self._auto_calls = sorted(c for c in walk.auto_calls if c is not None)
        self._activity = sorted(
            {
                *(note[0] for note in earlier.run_notes),
                *earlier.noops,
                *(attempt.call + 1 for attempt in earlier.prune_inputs),
            }
        )
        """What the earlier run did besides its events, each as the checkpoints it had taken
        then (one more than the call it did it at or after)."""

    def stretch(self, c0: int, state: State) -> int:
        """At call ``c0`` (a checkpoint both runs keep, ``state`` the run's before it): take
        the stretch from there that follows the earlier run, writing its calls into the run's
        trace and bringing ``state`` to the end of it. Returns the message the walk goes on
        from (-1: no stretch here)."""
        if c0 < self.next_try:
            return -1
        old = self.earlier.checkpoints[c0] if c0 < len(self.earlier.checkpoints) else None
        if old is None or not _in_step(state, old):
            return -1
        shift = state.e_sim - old.e_sim
        if state.prev_e_cov - old.prev_e_cov != shift:
            return -1
        stop = self._stop(c0)
        made = self._follow(c0, stop, state, shift, old.n_events)
        if made is None:
            self.next_try = c0 + 1
            return -1
        end, columns = made
        self._write(c0, end, state, shift, columns)
        self.next_try = end + 1
        return self._call_messages[end] if end < self._calls else self._n

    def _stop(self, c0: int) -> int:
        """The last call a stretch from ``c0`` may end before: the walk goes on from there before
        the next recorded compaction is met, and before the next thing the earlier run did at a
        call that makes no event (a compaction attempt that changed nothing, a pruning planned)."""
        stop = self._calls
        k = bisect_left(self._recorded_at, self._call_messages[c0])
        if k < len(self._recorded_at):
            # (the last call whose message is at or before it: the walk meets it from there)
            stop = bisect_right(self._call_messages, self._recorded_at[k]) - 1
        k = bisect_right(self._activity, c0)
        if k < len(self._activity):
            stop = min(stop, self._activity[k] - 1)
        return stop

    def _follow(
        self, c0: int, stop: int, state: State, shift: int, n_events: int
    ) -> tuple[int, tuple[Any, ...]] | None:
        """The calls from ``c0`` on, up to ``stop`` at most, as the run makes them following the
        earlier run: the call the stretch ends before (a checkpoint both keep, or the last
        call's end) and the new columns. None when the stretch would be empty."""
        if self.walk.trace.first_divergence is None:
            # (the walk notes where the run first departs from the recording)
            k = bisect_left(self._auto_calls, c0)
            if k < len(self._auto_calls):
                stop = min(stop, self._auto_calls[k])
        stop = self._quiet_until(c0, stop, n_events)
        columns: tuple[Any, ...] = (CheckRows(), [], [], [])
        prev = (state.prev_figure, self.walk.trace.columns["simulated_provenance"][state.prev_call])
        self._calls_from(c0, stop, shift, prev, columns)
        made = c0 + len(columns[0])
        end = made if made == stop else made - made % self._every
        if end <= c0:
            return None
        m = end - c0
        for column in columns:
            del column[m:]
        return end, columns

    def _quiet_until(self, c0: int, stop: int, n_events: int) -> int:
        """The last call up to ``stop`` that the stretch may end before: a checkpoint both runs
        keep (or the last call's end) with no event of the earlier run since ``c0``'s (which
        had made ``n_events``)."""
        every, calls = self._every, self._calls
        kept_before = self.earlier.checkpoints
        for k in range(c0 + every, stop + 1, every):
            kept = kept_before[k] if k < calls else self.earlier.final
            if kept is None or kept.n_events != n_events or kept.pending_events:
                return k - every
        if stop == calls:
            final = self.earlier.final
            if final is not None and final.n_events == n_events and not final.pending_events:
                return stop
        return stop - stop % every

    def _calls_from(
        self, first: int, stop: int, shift: int, prev: _Prev, columns: _Columns
    ) -> _Prev:
        """Make calls ``first`` to ``stop`` (not included) following the earlier run, up to the
        first that differs (see the module's docstring): append their checks, deltas, figures and
        provenances to ``columns``. ``prev``: the figure after the
        previous call's reply and its provenance; returns the last call's."""
        # A delta holds over long runs of calls (it changes where either run's context departs
        # from the recording's; over a whole stretch in every session seen): each run of one
        # delta is made at once (:meth:`_run`), and the stretch's deltas and provenances are
        # written after (one list each for a stretch of one delta).
        old_deltas = self.earlier.deltas
        made: CheckRows = columns[0]
        count = len(made)
        runs: list[tuple[int, int]] = []
        c = first
        while c < stop:
            old = old_deltas[c]
            part = old_deltas[c:stop]
            if all_same(part):  # (part[0] is old)
                run_end = stop
            else:
                run_end = c + next(compress(count_from(), map(old.__ne__, part)))
            prev = self._run(c, run_end, old + shift, prev, columns)
            runs.append((old + shift, first + len(made) - count - c))
            c = first + len(made) - count
            if c < run_end:
                break  # (the run stopped before its end: the stretch ends there)
        self._deltas_and_provenances(first, runs, columns)
        return prev

    def _run(self, first: int, stop: int, delta: int, prev: _Prev, columns: _Columns) -> _Prev:
        """:meth:`_calls_from` over calls ``first`` to ``stop`` of one ``delta``, made column by
        column (sums and comparisons over slices of the columns, in C) where the run is plain:
        one limit over it, no figure held as None, not the recording's context (a delta
        other than 0); otherwise call by call (:meth:`_walk`)."""
        walk = self.walk
        setting = walk.setting
        rec = setting.rec
        estimated = setting.counter.provenance
        old_flags = self.earlier.made.flags_of(first, stop)
        limits = setting.limits[first:stop]
        n = len(old_flags)
        limit = limits[0]
        if (
            delta == 0
            or estimated is _RECORDED
            or old_flags.translate(_NONE_HELD).count(0) != n
            or limits.count(limit) != n
        ):
            return self._walk(first, stop, delta, prev, columns)
        scaled = round(delta * rec.ratio)
        # The first call the run cannot make so: the earlier run fired there, or the call
        # overflows (see _walk); the run is made up to it, and _walk makes (or stops at) it.
        cut = old_flags.translate(_FIRED).find(1)
        n = n if cut < 0 else cut
        cut = self._overflow(first, first + n, scaled, delta >= 0)
        n = min(n, cut - first)
        prev_after, prev_prov = prev
        made = self._columns_at_once(first, n, scaled, prev_after, old_flags, limit)
        if made is None:
            made = self._columns_by_value(first, n, scaled, prev_after, old_flags, limit)
        n, base, proj, measure, figures = made
        if n:
            rows: CheckRows = columns[0]
            rows.flags += old_flags[:n].translate(_KEPT if limit is not None else _KEPT_NO_LIMIT)
            rows.add("base", base[:n])
            rows.add("proj", proj[:n])
            rows.add("measure", measure[:n])
            rows.add("limit", _repeated(limit or 0, n))
            if prev_prov is not _RECORDED:
                basis = "estimated"
            elif proj[0] != base[0]:
                basis = "projected"
            else:
                basis = "recorded"
            rows.basis += [basis, *["estimated"] * (n - 1)]
            columns[2].extend(figures)
            prev_after = max(0, rec.baseline_after[first + n - 1] + scaled)
            prev_prov = estimated
        if first + n < stop:  # (the call it stopped at: made call by call, or stopped at)
            return self._walk(first + n, first + n + 1, delta, (prev_after, prev_prov), columns)
        return prev_after, prev_prov

    def _columns_at_once(
        self, first: int, n: int, scaled: int, prev_after: int, old_flags: bytes, limit: int | None
    ) -> _Made | None:
        """:meth:`_columns_by_value` with each column made at once (:mod:`core.replay.lanes`):
        None where a figure does not fit a lane."""
        lane_columns = self.walk.setting.rec.lane_columns()
        old_base, old_proj, measure = self.earlier.made.figures_of(first, first + n)
        if lane_columns is None or not n:
            return None
        if not isinstance(old_base, array) or not isinstance(old_proj, array):
            return None
        baseline, baseline_after = lane_columns
        # (each call's check sees the figure after the previous call's reply)
        after = Lanes.of(baseline_after[first : first + n - 1])
        after = after.plus(scaled) if after is not None else None
        base = after.after(prev_after) if after is not None else None
        held_base, held_proj = Lanes.of(old_base), Lanes.of(old_proj)
        if base is None or held_base is None or held_proj is None:
            return None
        proj = held_proj.plus_difference(base, held_base)
        if proj is None:
            return None
        rules = self.walk.rules
        if rules.auto and limit is not None and limit > 0:
            threshold = limit + rules.strict
            n = proj.first_at_least(threshold)
            base_column = base.array()
            # (a figure at the threshold fires where its check checks now)
            for i in range(base.first_at_least(threshold), n):
                if base_column[i] >= threshold and old_flags[i] & CHECKS_NOW:
                    n = i
                    break
        else:
            base_column = base.array()
        figures = Lanes.of(baseline[first : first + n])
        figures = figures.plus(scaled) if figures is not None else None
        if figures is None:
            return None
        return n, base_column, proj.array(), measure, list(figures.array())

    def _columns_by_value(
        self, first: int, n: int, scaled: int, prev_after: int, old_flags: bytes, limit: int | None
    ) -> _Made:
        """The run's calls ``first`` to ``first + n`` (not included) up to the first whose check
        would fire or leave its projection pending: how many, and their checks' base, projection
        and measure, and their figures (floored at 0)."""
        rec = self.walk.setting.rec
        base = [prev_after, *_plus(rec.baseline_after[first : first + n - 1], scaled)] if n else []
        old_base, old_proj, measure = self.earlier.made.figures_of(first, first + n)
        proj = [p + b - before for p, b, before in zip(old_proj, base, old_base, strict=True)]
        rules = self.walk.rules
        if rules.auto and limit is not None and limit > 0:
            n = min(n, _crossing(limit + rules.strict, proj, base, old_flags, n))
        return n, base, proj, measure, _plus(rec.baseline[first : first + n], scaled)

    def _overflow(self, first: int, stop: int, scaled: int, removed_nothing: bool) -> int:
        """The first call from ``first`` (``stop`` if none) that overflows its window with its
        recorded prompt plus ``scaled``, or, where the run removed nothing, overflowed in the
        recording."""
        windows = self.walk.setting.windows[first:stop]
        prompts = self.walk.setting.rec.baseline_prompt[first:stop]
        if not windows:
            return stop
        reasons = self.walk.reasons[first:stop]
        above = _over_one_window(windows, prompts, scaled)
        if above is not None:
            if removed_nothing and reasons.count(None) != len(reasons):
                above = min(above, next(compress(count_from(), map(is_not, reasons, repeat(None)))))
            return first + above
        if not _fits(windows, max(prompts) + scaled):
            over = (
                i
                for i, (window, prompt, reason) in enumerate(
                    zip(windows, prompts, reasons, strict=True)
                )
                if window and (prompt + scaled > window or (removed_nothing and reason is not None))
            )
            return first + next(over, stop - first)
        if removed_nothing and reasons.count(None) != len(reasons):
            return first + next(compress(count_from(), map(is_not, reasons, repeat(None))))
        return stop

    def _walk(self, first: int, stop: int, delta: int, prev: _Prev, columns: _Columns) -> _Prev:
        """:meth:`_run`, call by call."""
        walk = self.walk
        setting = walk.setting
        rec = setting.rec
        estimated, reasons = setting.counter.provenance, walk.reasons
        auto, strict = walk.rules.auto, walk.rules.strict
        made: CheckRows = columns[0]
        figures = columns[2].append
        # (the checks' columns, written as CheckColumns holds them: no Check made, nor read;
        # the figures added to the rows' arrays at the end, widened there if they must be)
        base_column: list[int] = []
        proj_column: list[int] = []
        measure_column: list[int] = []
        limit_column: list[int] = []
        add_flags, add_base, add_proj = made.flags.append, base_column.append, proj_column.append
        add_measure, add_limit, add_basis = (
            measure_column.append,
            limit_column.append,
            made.basis.append,
        )
        prev_after, prev_prov = prev
        scaled = round(delta * rec.ratio)
        removed_nothing = delta >= 0
        changed = delta != 0
        for c, before, prompt, figure, after, provenance, window, limit in zip(
            range(first, stop),
            self.earlier.made.figures(first, stop),
            rec.baseline_prompt[first:stop],
            rec.baseline[first:stop],
            rec.baseline_after[first:stop],
            rec.baseline_prov[first:stop],
            setting.windows[first:stop],
            setting.limits[first:stop],
            strict=True,
        ):
            flags, base_before, proj, measure = before
            if flags & FIRED:
                break  # the earlier run fired here
            checks_now = flags & CHECKS_NOW
            # (None where the check held it: its flag set, 0 in the column)
            proj = None if flags & NO_PROJ else proj
            base_before = None if flags & NO_BASE else base_before
            prompt += scaled
            if prompt < 0:
                prompt = 0
            if window and (prompt > window or (removed_nothing and reasons[c] is not None)):
                break  # the call overflows
            base = prev_after
            if proj is not None:
                proj += base - base_before  # type: ignore[operator]  # (as the check held them)
            if auto and limit is not None and limit > 0:
                if strict:
                    if (proj is not None and proj > limit) or (checks_now and base > limit):
                        break
                elif (proj is not None and proj >= limit) or (checks_now and base >= limit):
                    break  # the check fires, or leaves its projection pending
            if prev_prov is not _RECORDED:
                basis = "estimated"
            elif proj is not None and proj != base:
                basis = "projected"
            else:
                basis = "recorded"
            # (Check(base, proj, checks_now, False, None, measure, basis, limit), as its columns)
            add_flags(
                (flags & (CHECKS_NOW | NO_MEASURE))
                | (NO_PROJ if proj is None else 0)
                | (NO_LIMIT if limit is None else 0)
            )
            add_base(base)
            add_proj(proj or 0)
            add_measure(measure)
            add_limit(limit or 0)
            add_basis(basis)
            figure += scaled
            figures(figure if figure > 0 else 0)
            prev_after = after + scaled
            if prev_after < 0:
                prev_after = 0
            prev_prov = estimated if changed else provenance
        made.add("base", base_column)
        made.add("proj", proj_column)
        made.add("measure", measure_column)
        made.add("limit", limit_column)
        return prev_after, prev_prov

    def _deltas_and_provenances(
        self, first: int, runs: Sequence[tuple[int, int]], columns: tuple[Any, ...]
    ) -> None:
        """Append the deltas and provenances of the calls from ``first`` a stretch made to
        ``columns``: ``runs``, each the delta of a run of calls and how many it made (each
        run's written at once: one delta, and the estimator's provenance where it is not 0)."""
        deltas, provenances = columns[1], columns[3]
        estimated = self.walk.setting.counter.provenance
        recorded = self.walk.setting.rec.baseline_prov
        c = first
        for delta, m in runs:
            deltas.extend([delta] * m)
            provenances.extend([estimated] * m if delta else recorded[c : c + m])
            c += m

    def _write(self, c0: int, end: int, state: State, shift: int, columns: tuple[Any, ...]) -> None:
        """Append the stretch's calls to the run's trace and bring ``state`` to its end."""
        checks: CheckRows
        checks, deltas, figures, provenances = columns
        walk = self.walk
        trace = walk.trace
        m = end - c0
        n_events = len(walk.events)
        every = self._every
        kept: list[State | None] = [None] * m
        first = state.copy()
        first.n_events = n_events
        kept[0] = first
        before = self.earlier.checkpoints
        # (c0 is kept: a multiple of every; the others as the earlier run's walk kept them)
        kept[every::every] = _shifted_states(
            before[c0 + every : end : every], state, shift, checks.base[every::every], n_events
        )
        trace.checkpoints.extend(kept)
        trace.pending += bytes(m)  # (a stretch leaves no projection pending; copied in C)
        trace.made.extend_rows(checks)
        trace.deltas.extend(deltas)
        trace.columns["simulated_tokens"].extend(figures)
        trace.columns["overflow_simulated"].extend([False] * m)
        trace.columns["simulated_provenance"].extend(provenances)
        after = self.earlier.final if end == self._calls else before[end]
        assert after is not None
        last = _shifted(after, state, shift, None, n_events)
        # (the figure after the stretch's last call: its successor's check figure, or the end's)
        last.prev_figure = walk.setting.rec.figures_of_delta(end - 1, deltas[-1]).after_reply
        for name in State.__slots__:
            setattr(state, name, getattr(last, name))


def _over_one_window(
    windows: Sequence[int | None], prompts: Sequence[int], scaled: int
) -> int | None:
    """Where one window holds over every call (the usual), the first call whose prompt plus
    ``scaled`` is over it (the number of calls if none), found a column at once
    (:meth:`core.replay.lanes.Lanes.first_at_least`); None otherwise."""
    window = windows[0]
    if not window or not all_same(windows) or not isinstance(prompts, array):
        return None
    column = Lanes.of(prompts)
    return column.first_at_least(window - scaled + 1) if column is not None else None


def _fits(windows: list[int | None], prompt: int) -> bool:
    """Every window is known and holds ``prompt``. (One window over every call, as a session
    with no window change has, is one pass in C (:func:`all_same`): the ``None`` search
    compared each int with None, the slowest comparison there is.)"""
    first = windows[0]
    if all_same(windows):
        return bool(first) and prompt <= first  # type: ignore[operator]
    return not (windows.count(None) or windows.count(0)) and prompt <= min(windows)  # type: ignore[type-var,operator]


def _repeated(value: int, n: int) -> Sequence[int]:
    """``value`` ``n`` times, as the rows' figure columns first hold them (an unsigned 4-byte
    array, repeated in C), or a list when it does not fit."""
    try:
        return array("I", [value]) * n
    except OverflowError:
        return [value] * n


def _plus(values: Sequence[int], scaled: int) -> list[int]:
    """``values`` each plus ``scaled``, floored at 0."""
    if scaled >= 0:
        return [value + scaled for value in values]
    least = -scaled
    return [value + scaled if value > least else 0 for value in values]


def _crossing(threshold: int, proj: list[int], base: list[int], flags: bytes, n: int) -> int:
    """The first of the ``n`` calls whose check fires or leaves its projection pending: its
    projection, or its figure where it checks now, at ``threshold`` or above (``n`` if none)."""
    cut = n
    if proj and max(proj) >= threshold:
        cut = next(compress(count_from(), map(threshold.__le__, proj)))
    if base and max(base) >= threshold:
        for i in compress(range(cut), map(threshold.__le__, base)):
            if flags[i] & CHECKS_NOW:
                return i
    return cut


def _table(bits: Callable[[int], int]) -> bytes:
    """A table for :meth:`bytes.translate`: each flags byte to ``bits(byte)``."""
    return bytes(bits(flags) for flags in range(256))


_FIRED = _table(lambda flags: 1 if flags & FIRED else 0)
_NONE_HELD = _table(lambda flags: flags & (NO_BASE | NO_PROJ))
"""A check's figures held as None (the base, the projection): 0 where neither."""
_KEPT = _table(lambda flags: flags & (CHECKS_NOW | NO_MEASURE))
"""The flags a followed check keeps of the earlier one's (its figures held)."""
_KEPT_NO_LIMIT = _table(lambda flags: flags & (CHECKS_NOW | NO_MEASURE) | NO_LIMIT)


def _in_step(state: State, old: State) -> bool:
    """``state`` and ``old`` walk alike from here: they differ only in their context (and the
    figures made from it), after a call, with no projection pending and no event waiting."""
    if state.pending_events or old.pending_events or state.prev_call < 0:
        return False
    return all(getattr(state, name) == getattr(old, name) for name in _SAME_WALK) and not (
        state.pending or state.rebased
    )


def _shifted(old: State, state: State, shift: int, prev_figure: int | None, n_events: int) -> State:
    """The earlier run's state ``old`` as the run has it: its context (``state``'s), the
    contexts' difference added, the previous call's figure after its reply."""
    return _shifted_states([old], state, shift, [prev_figure], n_events)[0]


def _shifted_states(
    olds: Sequence[State | None],
    state: State,
    shift: int,
    prev_figures: Sequence[int | None],
    n_events: int,
) -> list[State]:
    """:func:`_shifted` of each of ``olds`` with its previous figure (one loop: a stretch keeps
    a few thousand)."""
    base, base_tokens, stuck = state.base, state.base_tokens, state.stuck
    copy = State.copy
    shifted: list[State] = []
    add = shifted.append
    for old, prev_figure in zip(olds, prev_figures, strict=True):
        assert old is not None  # (kept by the earlier run's walk as by this one's)
        new = copy(old)
        new.base, new.base_tokens, new.stuck = base, base_tokens, stuck
        new.e_sim += shift
        new.prev_e_cov += shift
        if prev_figure is not None:
            new.prev_figure = prev_figure
        new.pending = False
        new.n_events = n_events
        add(new)
    return shifted
