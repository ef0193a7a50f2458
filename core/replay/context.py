"""The context a policy had at a message, and a compaction run on it.

A person inspecting one message asks "what did the model have here, and what would compacting it
give?". The answer is the replay's own context at that point — the policy's last summary, the
tail it kept, and every message since (truncated as the policy truncates them) — not the
session's messages from the last recorded boundary: after a compaction those are a few messages,
and compacting them gives an empty summary.

:func:`context_before` resumes a finished run from its last checkpoint at or before message
*N* and walks on to *N* (a few messages: the compactions on the way are cached), so the context
is exactly the one the run had: **before message N, and before anything the policy did at N**
(its threshold check and the compaction it made there, a recorded compaction at N). ``through``
adds message *N* itself as the walk would. :class:`core.replay.Replayer` exposes it as
``context_at`` and runs the policy's compaction on it with ``compaction_at``.

The figure of that context is the one the policy's threshold check works with: the last call's
context after its reply plus the estimated tokens of what came since (at a call, the very figure
its check measured, ``CallPoint.check_tokens``), so the compaction screen's "before" is the
replay's and the CLI's number, not a fresh estimate of the messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from core.algorithms.compact import CompactionResult
from core.model.session import Message
from core.replay.calls import Calls
from core.replay.checks import checked, measured
from core.replay.incremental import restore
from core.replay.recorded import RecordedCompactions
from core.replay.results import CheckBasis
from core.replay.setting import Setting
from core.replay.simulate import CompactFn, FutileFn, Run
from core.replay.state import State, Trace


@dataclass(frozen=True, slots=True)
class ContextAt:
    """The context a policy had at one message of a session (see the module docstring)."""

    message_index: int
    """The message it stood at: the context before it (with it, when ``through``)."""
    through: bool
    """Message ``message_index`` itself is part of it."""
    messages: list[Message]
    """What the model would be sent, in order (outputs truncated as the policy truncates them;
    summaries the replay wrote are messages of no session index)."""
    tokens: list[int]
    """Tokens of each message under the policy's estimator."""
    indices: list[int]
    """Session index of each message (-1: written by a compaction, not in the session)."""
    figure: int | None
    """The context in the provider's count, as the policy's check works with it (None: nothing
    to measure it from)."""
    basis: CheckBasis | None
    """How :attr:`figure` was made: ``recorded`` (a call's usage as it is), ``projected`` (that
    usage plus estimates of what came since) or ``estimated`` (no usage to start from)."""
    call_index: int | None
    """The model call whose check measured :attr:`figure` (the one at ``message_index``), or the
    last call before it, whose figure it starts from (None: no call before it)."""
    at_call: bool
    """``message_index`` is a model call the policy checked before, and :attr:`figure` is what
    that check measured (``CallPoint.check_tokens``)."""
    rebuilt_at: int
    """Where the context was last rebuilt (a compaction or a pruning took effect before this
    message; 0: never)."""
    window: int | None
    """The window at that point (None: unknown)."""
    ratio: float
    """Provider tokens per estimated token in this session (what the replay scales by)."""

    @property
    def estimated_tokens(self) -> int:
        """The messages' tokens added up (the estimator's count, no system prompt)."""
        return sum(self.tokens)

    def figure_after(self, estimated_after: int) -> int | None:
        """The figure after a compaction that leaves ``estimated_after`` tokens of messages:
        :attr:`figure` less the removed tokens in the provider's count (as the replay does)."""
        if self.figure is None:
            return None
        removed = self.estimated_tokens - estimated_after
        return max(0, self.figure - round(self.ratio * removed))


@dataclass(frozen=True, slots=True)
class CompactionAt:
    """A compaction run now on the context of one message (``Replayer.compaction_at``)."""

    context: ContextAt
    """What it compacted."""
    result: CompactionResult
    """What compaction made of it (its ``tokens_before`` / ``tokens_after`` are the estimator's
    count of the messages)."""
    window: int
    """The window it compacted for."""
    window_known: bool
    """False: the session's window is unknown and :attr:`window` was assumed."""

    @property
    def figure_before(self) -> int | None:
        """The context before, in the provider's count (the replay's figure)."""
        return self.context.figure

    @property
    def figure_after(self) -> int | None:
        """The context after, in the provider's count."""
        return self.context.figure_after(self.result.tokens_after)


def context_before(
    calls: Calls,
    recorded: RecordedCompactions,
    setting: Setting,
    trace: Trace,
    message_index: int,
    *,
    through: bool,
    compact: CompactFn,
    futile: FutileFn,
) -> ContextAt:
    """The context the run ``trace`` had at ``message_index`` (see the module docstring).

    ``trace`` is a finished run of ``setting``'s policy; it is not changed.
    """
    n = calls.n
    stop = max(0, min(message_index, n))
    resume = _last_call_at_or_before(calls, stop)
    scratch = Trace(setting.policy)
    scratch.windows, scratch.thresholds = trace.windows, trace.thresholds
    state, pos, _resumed = restore(scratch, trace, resume, calls)
    if resume == 0:
        state, pos = State(), 0
    run = Run(calls, recorded, setting, scratch, state, compact=compact, futile=futile)
    run.walk(pos, None, None, stop=stop)
    items = run.context_items(stop + 1 if through and stop < n else stop)
    c = calls.call_of[stop] if stop < n else -1
    figure, basis, call, at_call = _figure(state, setting, c, trace)
    return ContextAt(
        message_index=stop,
        through=through and stop < n,
        messages=[item.message for item in items],
        tokens=[item.tokens for item in items],
        indices=[item.index for item in items],
        figure=figure,
        basis=basis,
        call_index=call,
        at_call=at_call,
        rebuilt_at=state.base_pos,
        window=setting.windows[c] if c >= 0 else _window_after(setting, state.prev_call),
        ratio=setting.rec.ratio,
    )


def _last_call_at_or_before(calls: Calls, message_index: int) -> int:
    """The call whose checkpoint a walk to ``message_index`` resumes from (0: from the start)."""
    starts = calls.calls
    low, high = 0, len(starts)
    while low < high:
        mid = (low + high) // 2
        if starts[mid] <= message_index:
            low = mid + 1
        else:
            high = mid
    return max(0, low - 1)


def _figure(
    state: State, setting: Setting, c: int, trace: Trace
) -> tuple[int | None, CheckBasis | None, int | None, bool]:
    """The context's figure, how it was made, the call it belongs to, and whether it is that
    call's check: at a call the policy checked before, what the check measured; else the last
    call's figure after its reply plus what came since (the check's projection), or, before any
    call, the overhead plus the messages."""
    if 0 <= c < len(trace.made):  # (the rows' checks: the points may not be built)
        check = trace.made[c]
        tokens = measured(check)
        if checked(check) and tokens is not None:
            return tokens, cast("CheckBasis | None", check.basis), c, True
    if state.prev_call < 0:
        return setting.rec.overhead + state.e_sim, "estimated", None, False
    # as the check projects it (core.replay.checks.measure)
    added = state.e_sim - state.prev_e_cov if state.rebased else state.since_call
    if setting.policy.compaction.count_earlier_reasoning:
        added += state.reasoning_before
    basis: CheckBasis = "recorded" if added == 0 and not state.rebased else "projected"
    return state.prev_figure + added, basis, state.prev_call, False


def _window_after(setting: Setting, call: int) -> int | None:
    return setting.windows[call] if 0 <= call < len(setting.windows) else setting.window
