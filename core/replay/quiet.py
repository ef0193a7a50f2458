"""Quiet stretches of a walk: calls between which nothing happens, walked in one pass.

Most calls of a long session make no event: no check fires, no call overflows, no recorded
compaction or truncated output comes between them, the context is the last rebuilt one plus the
messages walked since. Over such a stretch the walk's figures are running sums: the context the
walk adds (:attr:`State.e_sim`), the check tokens since the last call and since the turn's
prompt. :func:`quiet_stretch` gives a function that walks the calls of a stretch from these sums
(taken with :func:`itertools.accumulate` over the messages, in C) with the run's state in local
variables, writing into the trace what :meth:`core.replay.simulate.Run.walk` would (the
checkpoints, projection flags, checks, overflow prompts and rows), and stops before the first call
that is not quiet: the walk makes that one step by step.

What a stretch reads and writes is the walk's own, field for field; a walk with stretches and one
without give the same trace (``tests/unit/test_replay_quiet.py``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from functools import partial
from itertools import accumulate, compress, repeat
from operator import add, and_, ge, is_, is_not, mul, not_, sub
from typing import TYPE_CHECKING

from core.model.session import Provenance
from core.replay.state import CallRow, State, checkpoint_spacing, new_check

if TYPE_CHECKING:
    from core.replay.simulate import Run

StretchFn = Callable[[int, int, int], int]
"""``(c, i, limit)``: walk the quiet calls from call ``c`` (at message ``i``, its checkpoint not
taken yet) with messages before ``limit``; returns the message the walk goes on from (``i``: the
first call is not quiet)."""

FIRST_CHUNK = 32
"""Calls a stretch looks at first after a call that was not quiet (then twice as many each time
a whole chunk was quiet, up to :data:`MAX_CHUNK`): a session where something happens at every
call costs a few sums more per call, not a pass over the rest of the session."""
MAX_CHUNK = 4096

_RECORDED = Provenance.RECORDED
_new_row: Callable[[tuple[object, ...]], CallRow] = partial(tuple.__new__, CallRow)


def stops(run: Run) -> list[int]:
    """The messages a stretch cannot walk over (ascending): the recorded compactions before them
    and the outputs that join the context truncated (each makes an event)."""
    walked = run.recorded.walked
    truncated = list(compress(range(len(walked)), map(and_, run._truncated, walked)))
    return sorted({*run.recorded.at, *truncated})


def eligible(run: Run) -> bool:
    """Stretches apply to this run: it neither follows the recording, nor prunes at turn ends,
    nor walks encrypted reasoning (the state's reasoning moves only at turn starts), nor counts
    earlier turns' reasoning in its check."""
    return (
        not run._follow
        and not run.turn_end_prune
        and run.calls.reasoning is None
        and not run._rules.earlier_reasoning
    )


def quiet_stretch(run: Run) -> StretchFn:  # noqa: C901 (one pass written out, as Run.call_step)
    """The stretch function of ``run`` (see :data:`StretchFn`), what it reads bound once."""
    state = run.state
    trace = run.trace
    calls = run.calls
    call_messages = calls.calls
    n_calls = len(call_messages)
    walked = run.recorded.walked
    sent, check_tokens, turn_start = run._sent, run._check_tokens, run._turn_start
    recount = run.setting.reply_recount
    tokens, main, after_reply = run._tokens, run._main, run._after_reply
    first_of_turn = run._first_of_turn
    limits, windows, reasons = run._limits, run._windows, run._reasons
    e_rec_cov, e_rec_after = run._e_rec_cov, run._e_rec_after
    baseline, baseline_prompt = run._baseline, run._baseline_prompt
    baseline_after, baseline_prov = run._baseline_after, run._baseline_prov
    ratio, estimated = run._ratio, run._estimated
    rules = run._rules
    auto, strict = rules.auto, rules.strict
    project, sees_prompt = rules.project, rules.sees_prompt
    check_each = run._check_each
    auto_calls = sorted(run._auto_calls)
    stop_at: list[int] = []
    every = checkpoint_spacing(n_calls)
    rows = trace.rows
    events = run.events
    chunk = [FIRST_CHUNK]
    cursor = [
        0,
        0,
        0,
    ]  # next stop, next automatic call (indexes into stop_at, auto_calls); stops made

    def stretch(c0: int, i0: int, limit: int) -> int:
        if state.prev_call < 0 or state.base_pos > i0:
            return i0
        if not cursor[2]:  # (made on the first stretch: a run resumed at its end walks none)
            stop_at.extend(stops(run))
            cursor[2] = 1
        # The stretch ends before the next stop, the next automatic call, and the chunk.
        k = cursor[0]
        while k < len(stop_at) and stop_at[k] < i0:
            k += 1
        cursor[0] = k
        if k < len(stop_at):
            limit = min(limit, stop_at[k])
        a = cursor[1]
        while a < len(auto_calls) and auto_calls[a] < c0:
            a += 1
        cursor[1] = a
        c_end = min(n_calls, c0 + chunk[0])
        if a < len(auto_calls):
            c_end = min(c_end, auto_calls[a])
        end = min(limit, call_messages[c_end] if c_end < n_calls else limit)
        if end <= i0:
            return i0
        if state.rebased or state.rec_base_change or state.pending_events:
            return i0  # (after an event: that call step by step)
        c_hi = bisect_left(call_messages, end, c0, c_end)
        m = c_hi - c0
        if m <= 0:
            return i0
        span = slice(i0, end)
        walked_here = walked[span]
        e_sums = list(accumulate(map(mul, sent[span], walked_here), initial=state.e_sim))
        ct_sums = list(accumulate(map(mul, check_tokens[span], walked_here), initial=0))
        starts = [
            i0 + k for k in compress(range(end - i0), map(and_, turn_start[span], walked_here))
        ]
        cs = slice(c0, c_hi)
        ic = call_messages[cs]
        rel = list(map(sub, ic, repeat(i0)))
        e_at = list(map(e_sums.__getitem__, rel))
        reply = list(map(mul, map(tokens.__getitem__, ic), map(main.__getitem__, ic)))
        delta = list(map(sub, map(add, e_at, map(mul, reply, after_reply[cs])), e_rec_cov[cs]))
        scaled = list(map(round, map(mul, delta, repeat(ratio))))
        prompt = list(map(max, repeat(0), map(add, baseline_prompt[cs], scaled)))
        after = list(map(max, repeat(0), map(add, baseline_after[cs], scaled)))
        # The first call that overflows ends the stretch before it.
        k_stop = _first_overflow(prompt, delta, windows[cs], reasons[cs], m)
        # The checks: each on the previous call's figure after its reply.
        base = [state.prev_figure, *after[:-1]]
        ct_at = list(map(ct_sums.__getitem__, rel))
        since_call = [state.since_call]
        since_call += map(sub, ct_at[1:], map(ct_sums.__getitem__, map(add, rel, repeat(1))))
        if recount:
            since_call[1:] = map(
                add,
                since_call[1:],
                map(mul, map(recount.__getitem__, ic), map(walked.__getitem__, ic)),
            )
        checks_now = [True] * m if check_each else first_of_turn[cs]
        prev_baseline = [state.prev_baseline_figure, *baseline_after[c0 : c_hi - 1]]
        if project:
            proj: list[int | None] = list(map(add, base, since_call))
            if not sees_prompt:
                for k in compress(range(m), first_of_turn[cs]):  # before the turn's prompt
                    proj[k] -= _since_prompt(state.since_prompt, starts, ct_sums, i0, ic[k])
            prev_e_rec = [state.prev_e_rec_cov, *e_rec_after[c0 : c_hi - 1]]
            measure = list(
                map(sub, map(sub, map(add, prev_baseline, e_rec_after[cs]), reply), prev_e_rec)
            )
        else:
            proj = [None] * m
            measure = prev_baseline
        limit_at = limits[cs]
        first_proj = m
        if auto:
            fire, first_proj = _first_fire(
                base, proj, checks_now, limit_at, state.pending, strict, m
            )
            k_stop = min(k_stop, fire)
        full = m
        if k_stop == 0:
            chunk[0] = FIRST_CHUNK
            return i0
        if k_stop < m:
            m = k_stop
            del ic[m:], rel[m:], e_at[m:], delta[m:], prompt[m:], after[m:], scaled[m:], base[m:]
        provenance = [estimated] * m
        for k in compress(range(m), map(not_, delta)):
            provenance[k] = baseline_prov[c0 + k]
        prev_recorded = [rows[state.prev_call][3] is _RECORDED]
        prev_recorded += map(is_, provenance[:-1], repeat(_RECORDED))
        basis = ["estimated"] * m
        for k in compress(range(m), prev_recorded):
            p = proj[k]
            basis[k] = "projected" if p is not None and p != base[k] else "recorded"
        pending = [True] * m if state.pending else [first_proj < k for k in range(m)]
        made = list(
            map(
                new_check,
                zip(base, proj, checks_now, repeat(False), repeat(None), measure, basis, limit_at),
            )
        )
        figure = list(map(max, repeat(0), map(add, baseline[c0 : c0 + m], scaled)))
        # The trace, as the walk writes it.
        kept: list[State | None] = [None] * m
        n_events = len(events)
        for k in range(-c0 % every, m, every):
            i = ic[k]
            one = state.copy()
            one.e_sim = e_at[k]
            one.n_events = n_events
            one.pending = pending[k]
            one.since_call = since_call[k]
            one.since_prompt = _since_prompt(state.since_prompt, starts, ct_sums, i0, i)
            _reasoning(one, state, bisect_left(starts, i))
            if k:
                _after_call(
                    one, c0 + k - 1, base[k], prev_baseline[k], e_rec_after, e_sums[rel[k - 1] + 1]
                )
            kept[k] = one
        if any(kept):
            state.n_events = n_events
        trace.checkpoints.extend(kept)
        trace.pending.extend(pending)
        trace.checks.extend(made)
        trace.overflow_prompt.extend(zip(prompt[:m], map(ge, delta, repeat(0))))
        trace.rows.extend(
            map(
                _new_row,
                zip(
                    range(c0, c0 + m),
                    ic,
                    figure,
                    provenance,
                    reasons[c0 : c0 + m],
                    repeat(False),
                    repeat(()),
                    made,
                ),
            )
        )
        # The state before the message the walk goes on from.
        last = m - 1
        stop = call_messages[c0 + m] if m < full else end
        i_last = ic[last]
        state.e_sim = e_sums[stop - i0]
        gained = ct_sums[stop - i0] - ct_sums[i_last + 1 - i0]
        state.since_call = (recount[i_last] if recount and walked[i_last] else 0) + gained
        state.since_prompt = _since_prompt(state.since_prompt, starts, ct_sums, i0, stop)
        _reasoning(state, state, bisect_left(starts, stop))
        state.pending = state.pending or first_proj < m
        _after_call(
            state,
            c0 + last,
            after[last],
            baseline_after[c0 + last],
            e_rec_after,
            e_sums[i_last + 1 - i0],
        )
        chunk[0] = min(MAX_CHUNK, chunk[0] * 2) if c0 + m == c_end else FIRST_CHUNK
        return stop

    return stretch


def _after_call(
    state: State, c: int, figure: int, baseline_figure: int, e_rec_after: list[int], e_cov: int
) -> None:
    """What a call leaves for the next check (:meth:`Run.call_step`'s last lines)."""
    state.prev_call = c
    state.prev_figure = figure
    state.prev_baseline_figure = baseline_figure
    state.prev_e_rec_cov = e_rec_after[c]
    state.prev_e_cov = e_cov


def _since_prompt(before: int, starts: list[int], ct_sums: list[int], i0: int, i: int) -> int:
    """The check tokens since the turn's first message, before message ``i`` (``before``: the
    count before message ``i0``, where the sums start)."""
    k = bisect_left(starts, i)
    if not k:
        return before + ct_sums[i - i0]
    return ct_sums[i - i0] - ct_sums[starts[k - 1] - i0]


def _reasoning(state: State, start: State, turns: int) -> None:
    """The reasoning figures after ``turns`` turn starts from ``start``'s (no message of the run
    carries reasoning of its own: a turn start moves the turn's to the earlier turns')."""
    before, turn = start.reasoning_before, start.reasoning_turn
    if turns == 1:
        state.reasoning_before_prev, state.reasoning_before = before, before + turn
        state.reasoning_turn = 0
    elif turns > 1:
        state.reasoning_before_prev = state.reasoning_before = before + turn
        state.reasoning_turn = 0
    else:
        state.reasoning_before_prev = start.reasoning_before_prev
        state.reasoning_before, state.reasoning_turn = before, turn


def _first_overflow(
    prompt: list[int],
    delta: list[int],
    windows: list[int | None],
    reasons: list[str | None],
    m: int,
) -> int:
    """The first of ``m`` calls that overflows (``m``: none does), as :meth:`Run.call_step`
    decides it."""
    first = m
    if windows.count(windows[0]) == m:
        window = windows[0]
        if not window:
            return m
        first = next(compress(range(m), map(window.__lt__, prompt)), m)
    else:
        for k in range(m):
            window = windows[k]
            if window and prompt[k] > window:
                first = k
                break
    for k in compress(range(first), map(is_not, reasons[:first], repeat(None))):
        if windows[k] and delta[k] >= 0:
            return k
    return first


def _first_fire(
    base: list[int],
    proj: list[int | None],
    checks_now: list[bool],
    limits: list[int | None],
    pending: bool,
    strict: bool,
    m: int,
) -> tuple[int, int]:
    """The first of ``m`` checks that fires, and the first whose projection crosses its
    threshold (each ``m``: none), as :meth:`CheckRules.decide` decides them one after the other
    from the projection flag ``pending`` (the policy compacts by itself)."""
    first_base = first_proj = m
    if limits.count(limits[0]) != m:
        for k in range(m):
            limit = limits[k]
            if limit is None:
                continue  # (no threshold: no decision, the flag stays)
            b, p = base[k], proj[k]
            base_hit = proj_hit = False
            if limit > 0:
                base_hit = b > limit if strict else b >= limit
                proj_hit = p is not None and (p > limit if strict else p >= limit)
            if proj_hit and first_proj == m:
                first_proj = k
                pending = True
            if checks_now[k] and (base_hit or pending):
                return k, first_proj
        return m, first_proj
    limit = limits[0]
    if limit is None:
        return m, m
    if limit > 0:
        crosses = limit.__lt__ if strict else limit.__le__
        first_base = next(compress(range(m), map(and_, checks_now, map(crosses, base))), m)
        if proj[0] is not None:
            first_proj = next(compress(range(m), map(crosses, proj)), m)  # type: ignore[arg-type]
    flag_from = 0 if pending else first_proj
    first_flagged = next(compress(range(flag_from, m), checks_now[flag_from:]), m)
    return min(first_base, first_flagged), first_proj
