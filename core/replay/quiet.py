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

from collections.abc import Callable
from functools import partial
from itertools import accumulate, compress
from operator import and_, mul
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
    nor walks encrypted reasoning (the state's reasoning moves only at turn starts)."""
    return not run._follow and not run.turn_end_prune and run.calls.reasoning is None


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
    project, sees_prompt, earlier_reasoning = rules.project, rules.sees_prompt, rules.earlier_reasoning
    check_each = run._check_each
    auto_calls = sorted(run._auto_calls)
    stop_at: list[int] = []
    every = checkpoint_spacing(n_calls)
    rows = trace.rows
    add_check, add_row = trace.checks.append, trace.rows.append
    add_overflow_prompt = trace.overflow_prompt.append
    checkpoint, pending_at = trace.checkpoints.append, trace.pending.append
    events = run.events
    chunk = [FIRST_CHUNK]
    cursor = [0, 0, 0]  # next stop, next automatic call (indexes into stop_at, auto_calls); stops made

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
        span = slice(i0, end)
        walked_here = walked[span]
        e_sums = list(accumulate(map(mul, sent[span], walked_here), initial=state.e_sim))
        ct_sums = list(accumulate(map(mul, check_tokens[span], walked_here), initial=0))
        starts = [i0 + k for k in compress(range(end - i0), map(and_, turn_start[span], walked_here))]
        n_starts = len(starts)
        s = 0  # the next turn start not walked yet
        # The state, in locals (written back at the end).
        since_call, since_prompt = state.since_call, state.since_prompt
        r_before, r_before_prev, r_turn = (
            state.reasoning_before,
            state.reasoning_before_prev,
            state.reasoning_turn,
        )
        pending = state.pending
        prev_call, prev_figure = state.prev_call, state.prev_figure
        prev_baseline, prev_e_rec = state.prev_baseline_figure, state.prev_e_rec_cov
        prev_e_cov = state.prev_e_cov
        rebased, rec_base_change = state.rebased, state.rec_base_change
        pending_events = state.pending_events
        prev_recorded = rows[prev_call][3] is _RECORDED
        base_items, base_pos, base_tokens = state.base, state.base_pos, state.base_tokens
        stuck, n_events = state.stuck, len(events)
        kept_any = False
        pos = i0  # messages before pos have joined
        c = c0
        while c < c_end:
            i = call_messages[c]
            if i >= end:
                break
            # Messages pos..i-1 join (none the first time).
            if pos < i:
                ct_gain = ct_sums[i - i0] - ct_sums[pos - i0]
                since_call += ct_gain
                if s < n_starts and starts[s] < i:
                    while s < n_starts and starts[s] < i:
                        r_before_prev = r_before
                        r_before += r_turn
                        r_turn = 0
                        s += 1
                    since_prompt = ct_sums[i - i0] - ct_sums[starts[s - 1] - i0]
                else:
                    since_prompt += ct_gain
                pos = i
            e_sim = e_sums[i - i0]
            # The check before call c (Run.check_step, written out once more).
            starts_turn = first_of_turn[c]
            reply = tokens[i] if main[i] else 0
            limit_c = limits[c]
            checks_now = check_each or starts_turn
            base: int | None = None
            proj: int | None = None
            before_prompt = starts_turn and not sees_prompt
            if not rebased:
                base = prev_figure
            if project:
                if rebased:
                    proj = prev_figure + e_sim - prev_e_cov
                elif before_prompt:
                    proj = prev_figure + since_call - since_prompt
                else:
                    proj = prev_figure + since_call
                if earlier_reasoning:
                    proj += r_before_prev if before_prompt else r_before
                baseline_measure = prev_baseline + e_rec_after[c] - reply - prev_e_rec
            else:
                baseline_measure = prev_baseline
            if not prev_recorded:
                basis = "estimated"
            elif proj is not None and proj != base:
                basis = "projected"
            else:
                basis = "recorded"
            pending_after = pending
            if limit_c is not None and auto:
                if limit_c <= 0:
                    base_hit = proj_hit = False
                elif strict:
                    base_hit = base is not None and base > limit_c
                    proj_hit = proj is not None and proj > limit_c
                else:
                    base_hit = base is not None and base >= limit_c
                    proj_hit = proj is not None and proj >= limit_c
                if proj_hit:
                    pending_after = True
                if checks_now and (base_hit or pending_after):
                    break  # it fires: the walk compacts, step by step
            # The call's figures (Run.call_step).
            if not after_reply[c]:
                reply = 0
            delta = e_sim + reply - e_rec_cov[c]
            scaled = round(delta * ratio)
            prompt = baseline_prompt[c] + scaled
            if prompt < 0:
                prompt = 0
            reason = reasons[c]
            removed_nothing = delta >= 0
            window = windows[c]
            if window and (prompt > window or (removed_nothing and reason is not None)):
                break  # it overflows: step by step
            # Quiet: the call is the walk's as it would make it.
            if not c % every:
                kept = State.__new__(State)
                kept.base, kept.base_pos, kept.base_tokens = base_items, base_pos, base_tokens
                kept.e_sim, kept.n_events, kept.pending = e_sim, n_events, pending
                kept.pending_events = pending_events
                kept.prev_baseline_figure, kept.prev_call = prev_baseline, prev_call
                kept.prev_e_cov, kept.prev_e_rec_cov = prev_e_cov, prev_e_rec
                kept.prev_figure, kept.rebased = prev_figure, rebased
                kept.rec_base_change, kept.stuck = rec_base_change, stuck
                kept.since_call, kept.since_prompt = since_call, since_prompt
                kept.reasoning_before, kept.reasoning_before_prev = r_before, r_before_prev
                kept.reasoning_turn = r_turn
                checkpoint(kept)
                kept_any = True
            else:
                checkpoint(None)
            pending_at(pending)
            made = new_check(
                (base, proj, checks_now, False, None, baseline_measure, basis, limit_c)
            )
            add_check(made if (base is not None or proj is not None) else None)
            add_overflow_prompt((prompt, removed_nothing))
            figure = baseline[c] + scaled
            if figure < 0:
                figure = 0
            after = baseline_after[c] + scaled
            if after < 0:
                after = 0
            provenance = baseline_prov[c] if delta == 0 else estimated
            add_row(_new_row((c, i, figure, provenance, reason, False, pending_events, made)))
            pending = pending_after
            pending_events = ()
            prev_call, prev_figure = c, after
            prev_baseline, prev_e_rec = baseline_after[c], e_rec_after[c]
            prev_recorded = provenance is _RECORDED
            rebased = rec_base_change = False
            # Message i joins (a call's message starts no turn: it is the model's).
            if s < n_starts and starts[s] == i:
                r_before_prev = r_before
                r_before += r_turn
                r_turn = 0
                s += 1
                since_prompt = 0
            gain = ct_sums[i + 1 - i0] - ct_sums[i - i0]
            since_prompt += gain
            since_call = recount[i] if recount and walked[i] else 0
            prev_e_cov = e_sums[i + 1 - i0]
            pos = i + 1
            c += 1
        if c == c0:
            chunk[0] = FIRST_CHUNK
            return i0
        # The messages up to the next call (or the end of the span) join too.
        stop = call_messages[c] if c < n_calls and call_messages[c] < end else end
        if pos < stop:
            ct_gain = ct_sums[stop - i0] - ct_sums[pos - i0]
            since_call += ct_gain
            if s < n_starts and starts[s] < stop:
                while s < n_starts and starts[s] < stop:
                    r_before_prev = r_before
                    r_before += r_turn
                    r_turn = 0
                    s += 1
                since_prompt = ct_sums[stop - i0] - ct_sums[starts[s - 1] - i0]
            else:
                since_prompt += ct_gain
        chunk[0] = min(MAX_CHUNK, chunk[0] * 2) if c == c_end else FIRST_CHUNK
        state.e_sim = e_sums[stop - i0]
        state.since_call, state.since_prompt = since_call, since_prompt
        state.reasoning_before, state.reasoning_before_prev = r_before, r_before_prev
        state.reasoning_turn = r_turn
        state.pending = pending
        state.prev_call, state.prev_figure = prev_call, prev_figure
        state.prev_baseline_figure, state.prev_e_rec_cov = prev_baseline, prev_e_rec
        state.prev_e_cov = prev_e_cov
        state.rebased = state.rec_base_change = False
        state.pending_events = ()
        if kept_any:
            state.n_events = n_events
        return stop

    return stretch
