"""Re-simulation after a limit change: from which call a new policy can resume an earlier run.

A new policy is compared field by field with a traced one, and the run resumes from the last
checkpoint the change cannot affect:

* a threshold change (rule, ratio, limit; the window or a reserve that leaves the tail budget as
  it was): from the first check whose decision or trigger differs under the new numbers, or the
  first call whose overflow verdict differs (:meth:`ResumePlanner.first_decision_difference`);
* a truncation change: from the first tool output whose truncated content differs;
* a change to how compaction prunes, splits or summarises (or to the window, or to a reserve that
  changes the tail budget): from the first compaction attempted;
* a pruning change: nothing while pruning is off before and after; else from the first pruning
  attempt (at a turn end, or a compaction's) that decides otherwise
  (:meth:`ResumePlanner.first_prune_difference`; for other protected turns, the first attempt);
* turning overflow recovery on or off: from the first overflow;
* the estimator, the check schedule, turning turn-end pruning on or off, whether the policy is
  the recording agent's, anything else: from the start.

Call points, events and notes before the resume point are reused as they are (:func:`restore`);
the walk starts from the last checkpoint kept at or before it (a long session's walk keeps one
every few calls: :func:`~core.replay.state.checkpoint_spacing`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.model.session import Session
from core.model.tokens import TokenCounter, get_counter
from core.policy import Policy, PruningPolicy
from core.replay.calls import Calls
from core.replay.checks import CheckRules, overflows, trigger_of
from core.replay.policies import effective_window, is_recording_policy
from core.replay.recorded import RecordedSide
from core.replay.state import (
    FIRED,
    NO_BASE,
    NO_PROJ,
    Check,
    PruneInput,
    State,
    Trace,
    all_same,
    flag_mask,
    has_figure,
)
from core.replay.truncation import Truncations

if TYPE_CHECKING:
    from core.algorithms.prune import PrunePlan

THRESHOLD_ONLY = {
    "compaction.threshold_rule",
    "compaction.codex_ratio",
    "compaction.auto_compact_token_limit",
    "compaction.autocompact_buffer_tokens",
    "compaction.output_token_max",
    "compaction.auto",
}
"""Policy fields that only move the threshold: decisions are compared check by check."""
OUTCOME = {
    "compaction.strategy",
    "compaction.template",
    "compaction.head_tool_output_max_chars",
    "compaction.summary_max_tokens",
    "compaction.user_message_budget_tokens",
    "compaction.max_head_drops",
    "compaction.continuation",
    "compaction.continuation_text",
}
"""Policy fields that change what a compaction produces (with ``split.*`` and ``llm.*``)."""
STRUCTURAL = {"context_window", "compaction.reserve_tokens"}
"""Fields that move the threshold and may change every compaction (the tail budget, the
summariser's window)."""
NO_EFFECT = {"name", "description"}
FOLLOWS = NO_EFFECT | OUTCOME | THRESHOLD_ONLY | STRUCTURAL | {"compaction.overflow_recovery"}
"""Policy fields a run may differ in from the earlier run it follows where their contexts differ
by a constant (:mod:`core.replay.shifted`; with ``pruning.*``, ``split.*`` and ``llm.*``): they
change what a compaction does, or when the check fires, not how the walk adds messages or
measures them."""
_FOLLOWS_PREFIXES = ("pruning.", "split.", "llm.")
_MAX_DECISIONS = 8
"""Pruning decisions kept by the planner: each holds its attempt and a reason per message of the
context it pruned (a limit change compares one or two settings per attempt)."""


def can_follow(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """A run of the policy whose fields are ``after`` walks as one of ``before`` does, so that it
    may follow that run's trace (:meth:`core.policy.Policy.by_name` gives the fields; the
    estimator and the recording agent's status are the same, as for any resumed run)."""
    for key in before.keys() | after.keys():
        if before.get(key) == after.get(key):
            continue
        if key not in FOLLOWS and not key.startswith(_FOLLOWS_PREFIXES):
            return False
    return not any(
        fields.get("pruning.enabled") and fields.get("pruning.budget_rule")
        for fields in (before, after)
    )


def policy_key(policy: Policy) -> tuple[Any, ...]:
    """Policies with the same key replay the same (the traces' key: every field,
    :meth:`core.policy.Policy.key`)."""
    return policy.key()


def _take(keys: set[str], matches: Callable[[str], bool]) -> set[str]:
    """Remove from ``keys`` and return those that match."""
    taken = {k for k in keys if matches(k)}
    keys -= taken
    return taken


def _turn_end_pruning(policy: Policy) -> bool:
    return policy.pruning.enabled and policy.pruning.budget_rule


def _tail_budget(policy: Policy, window: int | None) -> int | None:
    if not window:
        return None
    return policy.split.tail_budget(max(window - policy.compaction.reserve_tokens, 0))


def _moves_compactions(
    old: Policy, new: Policy, window_old: int | None, window_new: int | None
) -> bool:
    """A window or reserve change changes what compactions produce, not only when they fire.

    The window also bounds the mock summariser's context; window and reserve set the tail budget
    of every compaction. A reserve change that leaves the budget as it was only moves the
    threshold.
    """
    if window_old != window_new:
        return True
    return old.compaction.strategy == "tail" and _tail_budget(old, window_old) != _tail_budget(
        new, window_new
    )


def _decided(plan: PrunePlan) -> tuple[Any, ...]:
    """Everything a pruning's outcome shows of its decisions (not its time stamp)."""
    return (
        plan.pruned_at,
        plan.why,
        plan.details,
        plan.placeholder,
        plan.summary,
        plan.tokens_freed,
        plan.boundary,
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


class ResumePlanner:
    """Finds, among the traces of earlier runs, the one to resume a policy from, and where."""

    def __init__(
        self,
        session: Session,
        calls: Calls,
        truncations: Truncations,
        sides: Mapping[str, RecordedSide],
    ) -> None:
        self.session = session
        self.calls = calls
        self.truncations = truncations
        self.sides = sides
        """The recorded side of each estimator a run was made with (the engine's)."""
        self._decisions: dict[tuple[int, tuple[Any, ...]], tuple[PruneInput, tuple[Any, ...]]] = {}
        """What a pruning attempt decides under a pruning setting, by the attempt's identity and
        the setting (traces resumed from one another share their attempts' objects: each is
        planned once per setting, not once per trace)."""

    def best_trace(
        self, traces: Iterable[Trace], policy: Policy, flat: dict[str, Any], new: Trace
    ) -> tuple[Trace | None, int]:
        """The trace to resume from and the call to resume at (``flat``: the policy's fields,
        as :meth:`core.policy.Policy.by_name` gives them; ``new``: the trace of the run to come, its windows and
        thresholds set); the most recent traces are tried first."""
        best: Trace | None = None
        best_call = 0
        for trace in reversed(list(traces)):
            call = self.resume_call(trace, policy, flat, best_call, new)
            if call > best_call:
                best, best_call = trace, call
        return best, best_call

    def resume_call(
        self, trace: Trace, policy: Policy, flat: dict[str, Any], beyond: int, new: Trace
    ) -> int:
        """The first call of ``trace`` that ``policy`` may change (0: replay from the start).

        Work stops as soon as the answer is known to be ``beyond`` or earlier (a resume point
        another trace already offers): the value returned then is no later than ``beyond``.
        """
        calls = len(self.calls)
        if not self._comparable(trace, policy):
            return 0
        old = trace.policy
        before = trace.flat or old.by_name()
        changed = {k for k in before.keys() | flat.keys() if before.get(k) != flat.get(k)}
        changed -= NO_EFFECT
        if not changed:
            return calls
        window_old = effective_window(self.session, old)
        window_new = effective_window(self.session, policy)
        if window_old == window_new:
            changed.discard("context_window")
        resume = calls
        first_compaction = _or(trace.first_compaction_call, calls)
        if _take(changed, lambda k: k.startswith("truncation.")):
            resume = min(resume, self.first_truncation_difference(old, policy))
        if _take(changed, lambda k: k.startswith("pruning.")):
            found = self.first_prune_difference(trace, policy, first_compaction)
            if found is None:
                return 0
            resume = min(resume, found)
        if _take(changed, lambda k: k in OUTCOME or k.startswith(("split.", "llm."))):
            resume = min(resume, first_compaction)
        decision = _take(changed, THRESHOLD_ONLY.__contains__)
        structural = _take(changed, STRUCTURAL.__contains__)
        if structural and _moves_compactions(old, policy, window_old, window_new):
            resume = min(resume, first_compaction)
        if _take(changed, {"compaction.overflow_recovery"}.__contains__):
            resume = min(resume, _or(trace.first_overflow_call, calls))
        if changed:
            return 0  # schedule flags and anything else: from the start
        if (decision or structural) and resume > beyond:
            resume = self.first_decision_difference(trace, policy, resume, new)
        return resume

    def _comparable(self, trace: Trace, policy: Policy) -> bool:
        """``trace`` is a complete run with the same estimator and the same recording-agent
        status as ``policy`` (else nothing of it can be reused)."""
        if trace.final is None or len(trace.checkpoints) != len(self.calls):
            return False
        old = trace.policy
        return old.estimator == policy.estimator and is_recording_policy(
            self.session, old
        ) == is_recording_policy(self.session, policy)

    def first_prune_difference(
        self, trace: Trace, policy: Policy, first_compaction: int
    ) -> int | None:
        """The first call whose pruning ``policy`` decides otherwise than ``trace``'s policy did
        (None: from the start; the number of calls when no pruning differs).

        Pruning settings do nothing while pruning is off on both sides. When both prune in the
        same way of pruning (the budget rule, and whether ``protect_turns`` is 0, which decides
        which failed compactions are not retried), the run is the same up to the first pruning
        attempt (:attr:`Trace.prune_inputs`) whose decisions differ: every message's reason,
        what was pruned, the placeholder and the note. Otherwise: from the first compaction
        attempted, or from the start when either prunes at turn ends. Other protected turns
        decide otherwise at every attempt: from the first one, without planning it.
        """
        a, b = trace.policy.pruning, policy.pruning
        if not a.enabled and not b.enabled:
            return len(self.calls)
        same_way = (
            a.enabled == b.enabled
            and a.budget_rule == b.budget_rule
            and (a.protect_turns == 0) == (b.protect_turns == 0)
        )
        if not same_way:
            if _turn_end_pruning(trace.policy) or _turn_end_pruning(policy):
                return None
            return first_compaction
        if a.protect_turns != b.protect_turns:
            # Every attempt decides otherwise, known without planning it twice: the skip
            # boundaries differ, or both are 0 and each plan says "fewer than N user turns"
            # with its own N (nothing is pruned then).
            return trace.prune_inputs[0].call if trace.prune_inputs else len(self.calls)
        counter = get_counter(policy.estimator)
        for attempt in trace.prune_inputs:
            if self.decided(attempt, a, counter) != self.decided(attempt, b, counter):
                return attempt.call
        return len(self.calls)

    def decided(self, attempt: PruneInput, pruning: PruningPolicy, counter: TokenCounter) -> Any:
        """:func:`_decided` of ``attempt`` planned under ``pruning`` (cached; the counter is the
        estimator's, the same for every trace compared)."""
        key = (id(attempt), pruning.key())
        cached = self._decisions.get(key)
        if cached is not None and cached[0] is attempt:
            return cached[1]
        from core.algorithms.prune import plan_prune  # (only a pruning change compares plans)

        plan = plan_prune(
            attempt.messages(), pruning, counter=counter, now_ms=attempt.now_ms, copies=False
        )
        decided = _decided(plan)
        if len(self._decisions) >= _MAX_DECISIONS:
            self._decisions.clear()
        self._decisions[key] = (attempt, decided)
        return decided

    def first_truncation_difference(self, old: Policy, new: Policy) -> int:
        """The checkpoint before the first message the two policies truncate otherwise."""
        first = self.truncations.of(old)
        second = self.truncations.of(new)
        # Only outputs one of the two truncates can differ (the others keep their own tokens).
        for i in sorted(first.notes.keys() | second.notes.keys()):
            if first.differs_from(second, i):
                return self.calls.checkpoint_before(i)
        return len(self.calls)

    def first_decision_difference(self, trace: Trace, policy: Policy, stop: int, new: Trace) -> int:
        """The first call before ``stop`` whose threshold check or overflow verdict ``policy``
        (with ``new``'s windows and thresholds) decides otherwise than ``trace`` did (``stop``
        when none does)."""
        same_windows = new.windows == trace.windows
        side = self.sides[trace.policy.estimator]
        pending_new = False
        checks, limits = trace.made, new.thresholds  # (Trace.checks, read as its column)
        rules = CheckRules(policy)
        end = min(stop, len(checks))
        quiet = _quiet_checks(trace, rules, limits, end)
        c = -1
        while c + 1 < end:
            c += 1
            if quiet[c] and not pending_new:
                # It decides alike, leaving no projection pending (_quiet_checks); with the
                # same windows, so do the calls up to the next check that may not.
                if same_windows:
                    c = _index(quiet, 0, c, end) - 1
                    continue
            elif has_figure(check := checks[c]):
                decided = self._decides_otherwise(
                    check, c, (policy, rules), limits[c], trace, pending_new
                )
                if decided is None:
                    return c
                pending_new = decided
            if same_windows:
                continue
            # (the call's prompt and whether the policy had removed nothing, from its delta as
            # the walk's step had them)
            delta = trace.deltas[c]
            prompt = side.figures_of_delta(c, delta).prompt
            removed_nothing = delta >= 0
            window_new, window_old = new.windows[c], trace.windows[c]
            if overflows(
                prompt, window_new, self.calls.recorded_overflows(window_new)[c], removed_nothing
            ) != overflows(
                prompt, window_old, self.calls.recorded_overflows(window_old)[c], removed_nothing
            ):
                return c
        return stop

    @staticmethod
    def _decides_otherwise(
        check: Check,
        c: int,
        rules: tuple[Policy, CheckRules],
        limit: int | None,
        trace: Trace,
        pending: bool,
    ) -> bool | None:
        """None when the check before call ``c`` fires otherwise under ``limit`` (it fires or
        not, fires on another figure, or leaves another projection flag for the next check);
        else the projection flag it leaves (one decision per check). ``rules``: the new policy
        and its check rules."""
        policy, check_rules = rules
        fired_new, pending_new = check_rules.decide(check, limit, pending)
        if fired_new != check.fired:
            return None
        if fired_new and trigger_of(check, limit, policy) != check.trigger:
            return None  # fires either way, but on another figure
        # A projection that crossed mid-turn under one threshold only: the checkpoints after
        # this check hold the other run's flag.
        if c + 1 < len(trace.pending):
            after: bool | None = trace.pending[c + 1] == 1
        else:
            after = trace.final.pending if trace.final is not None else None
        if after is not None and after != pending_new:
            return None
        return pending_new


def _quiet_checks(trace: Trace, rules: CheckRules, limits: Sequence[int | None], end: int) -> bytes:
    """For each of the first ``end`` checks of ``trace``, 1 if it neither fired nor left a
    projection pending, and ``rules`` under ``limits`` see its figures cross nothing (else 0).
    With no projection pending before it, such a check decides alike under both policies
    (:meth:`ResumePlanner._decides_otherwise` would say so, one call at a time)."""
    left = trace.pending[1 : end + 1]  # (the flag each check left: the state's before the next)
    if len(left) < end:
        left.append(trace.final is not None and trace.final.pending)
    if len(left) != end:
        return bytes(end)
    if not end:
        return b""
    limit = limits[0]
    if not all_same(limits[:end]):
        return _quiet_checks_by_call(trace, rules, limits, end, left)
    # One limit over every call (a policy's threshold usually is): the verdicts are worked
    # out column by column in C, each as the bits of an int, one per call.
    flags = trace.made.flags_of(0, end)
    quiet = _bits(left.translate(_ZERO)) & _bits(flags.translate(_NOT_FIRED))
    if limit is not None and rules.auto and limit > 0:
        below = limit.__ge__ if rules.strict else limit.__gt__
        held_base, held_proj, _measure = trace.made.figures_of(0, end)
        # (a figure held as None, its flag set, crosses nothing)
        quiet &= _bits(bytes(map(below, held_base))) | _bits(flags.translate(_NO_BASE))
        quiet &= _bits(bytes(map(below, held_proj))) | _bits(flags.translate(_NO_PROJ))
    return quiet.to_bytes(end, "little")


def _bits(column: bytes | bytearray) -> int:
    """A column of 0 and 1 bytes as an int, bit ``c`` its byte ``c``'s (bytes ANDed together
    at once)."""
    return int.from_bytes(column, "little")


_ZERO = flag_mask(lambda byte: byte == 0)
_NOT_FIRED = flag_mask(lambda flags: not flags & FIRED)
_NO_BASE = flag_mask(lambda flags: flags & NO_BASE)
_NO_PROJ = flag_mask(lambda flags: flags & NO_PROJ)


def _quiet_checks_by_call(
    trace: Trace, rules: CheckRules, limits: Sequence[int | None], end: int, left: bytearray
) -> bytes:
    """:func:`_quiet_checks` one call at a time (the limit changes between calls)."""
    auto, strict = rules.auto, rules.strict
    quiet = bytearray(end)
    for c, (flags, held_base, held_proj, _measure), limit, pending in zip(
        range(end), trace.made.figures(0, end), limits[:end], left, strict=True
    ):
        if pending or flags & FIRED:
            continue  # (it left a projection pending, or fired)
        if limit is None or not auto or limit <= 0:
            quiet[c] = True
            continue
        # (the check's figures as its columns hold them: None is 0 with its flag set)
        base = None if flags & NO_BASE else held_base
        proj = None if flags & NO_PROJ else held_proj
        if strict:
            quiet[c] = (base is None or base <= limit) and (proj is None or proj <= limit)
        else:
            quiet[c] = (base is None or base < limit) and (proj is None or proj < limit)
    return bytes(quiet)


def _index(values: bytes, value: int, start: int, stop: int) -> int:
    """The first index of ``value`` in ``values[start:stop]`` (``stop`` when there is none;
    searched in C)."""
    try:
        return values.index(value, start, stop)
    except ValueError:
        return stop


def restore(trace: Trace, old: Trace | None, resume: int, calls: Calls) -> tuple[State, int, int]:
    """Start ``trace`` from call ``resume`` of ``old``, or from the last call before it whose
    checkpoint ``old`` kept (:func:`core.replay.state.checkpoint_spacing`): what ``old`` did before
    that call is copied into ``trace`` (its points only when the window and the threshold are the
    same).

    Returns the state to walk on, the message to walk from and the call resumed from (0 and a
    fresh state when there is nothing to resume). ``trace.windows`` and ``trace.thresholds``
    must be set.
    """
    if old is None or old.final is None or not 0 < resume <= len(calls):
        return State(), 0, 0
    if resume == len(calls):
        state = old.final.copy()
        pos = calls.n
    else:
        resume, kept = _checkpoint_at_or_before(old, resume)
        if kept is None or resume == 0:
            return State(), 0, 0
        state = kept.copy()
        pos = calls.calls[resume]
    trace.call_messages = calls.calls
    if resume == len(old.checkpoints) == len(old.made):
        # Nothing to walk: the lists are shared, not copied (a walk only appends, and none
        # will: a run resuming from either trace copies what it keeps).
        trace.checkpoints, trace.pending, trace.made = old.checkpoints, old.pending, old.made
        trace.event_ids = old.event_ids
        trace.columns = old.columns
        trace.deltas = old.deltas
    else:
        trace.checkpoints = old.checkpoints[:resume]
        trace.pending = old.pending[:resume]
        trace.made = old.made[:resume]
        trace.deltas = old.deltas[:resume]
        trace.event_ids = {c: ids for c, ids in old.event_ids.items() if c < resume}
        trace.columns = {name: column[:resume] for name, column in old.columns.items()}
    trace.events = old.events[: state.n_events]
    trace.compaction_meta = {k: v for k, v in old.compaction_meta.items() if k < state.n_events}
    trace.run_notes = [note for note in old.run_notes if note[0] <= resume]
    trace.noops = [taken for taken in old.noops if taken <= resume]
    trace.first_compaction_call = _before(old.first_compaction_call, resume)
    trace.first_overflow_call = _before(old.first_overflow_call, resume)
    trace.first_prune_call = _before(old.first_prune_call, resume)
    trace.first_divergence = _before(old.first_divergence, resume)
    trace.prune_inputs = [attempt for attempt in old.prune_inputs if attempt.call < resume]
    # The earlier result's points are shared when it has built them (a result builds its
    # points only when asked: a limit change in the TUI reads columns and builds none).
    reuse_points = old.windows == trace.windows and old.thresholds == trace.thresholds
    trace.points = old.points[:resume] if reuse_points and len(old.points) >= resume else []
    return state, pos, resume


def _checkpoint_at_or_before(trace: Trace, call: int) -> tuple[int, State | None]:
    """The last call at or before ``call`` whose checkpoint ``trace`` kept, and that state (None:
    there is none)."""
    checkpoints = trace.checkpoints
    for k in range(min(call, len(checkpoints) - 1), -1, -1):
        state = checkpoints[k]
        if state is not None:
            return k, state
    return 0, None


def _before(call: int | None, resume: int) -> int | None:
    return call if call is not None and call < resume else None
