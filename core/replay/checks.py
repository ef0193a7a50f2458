"""The compaction check before a model call, and the overflow verdict of a call.

Before call *k* the policy looks at the context of the previous call *after its reply* (what
opencode, Codex, pi and Claude Code all compare against their threshold), plus — when
``project_after_tool_results`` — the estimated tokens of everything added since (:func:`measure`).
``check_before_each_call`` checks before every call; otherwise only before the first call of a
turn, with a projection that crossed mid-turn remembered until then (:func:`decide`). A usage
figure older than a compaction is not used (pi's rule): after a compaction only the projection can
fire until the next call has happened.

This module is the one place the simulation asks *whether* to compact; the threshold itself and
its comparison are the policy's rule (:func:`core.algorithms.overflow.threshold`, :func:`core.algorithms.overflow.crosses`).
Rules that depend on the agent and its version (when a check happens, on which figure) go here,
beside :func:`decide`, or in a ``rules/`` package next to this module when there are several.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress, count
from operator import and_, ge, gt
from typing import cast

from core.algorithms.overflow import crosses
from core.model.session import Message, Role
from core.model.tokens import arguments_text
from core.policy import Policy
from core.replay.recorded import RecordedSide
from core.replay.results import CheckBasis, Trigger
from core.replay.state import (
    CHECKED,
    Check,
    CheckColumns,
    State,
    has_figure,
    new_check,
)

Measure = Callable[[int, int, bool, bool, "int | None", "bool | None"], Check]
"""``(c, reply_tokens, checks_now, turn_start, limit, recorded)``: :meth:`CheckRules.measure`
bound to a state and a recorded side (:meth:`CheckRules.measurer`)."""


class CheckRules:
    """A policy's check rules, read once (a walk checks before each of ~10^5 calls):
    :meth:`measure` and :meth:`decide` are the check itself."""

    __slots__ = ("auto", "earlier_reasoning", "project", "sees_prompt", "strict")

    def __init__(self, policy: Policy) -> None:
        rules = policy.compaction
        self.auto = rules.auto
        self.project = rules.project_after_tool_results
        self.sees_prompt = rules.turn_start_check_sees_prompt
        self.earlier_reasoning = rules.count_earlier_reasoning
        self.strict = rules.threshold_rule == "pi"
        """The rule compares with ``>`` (:func:`core.algorithms.overflow.crosses`)."""

    def measure(
        self,
        state: State,
        rec: RecordedSide,
        c: int,
        reply_tokens: int,
        checks_now: bool,
        turn_start: bool,
        limit: int | None = None,
        recorded: bool | None = None,
    ) -> Check:
        """What the check before call ``c`` measures (see :func:`measure`), compared with
        ``limit``; ``recorded``: the previous call's figure is the recorded one (sets the
        check's :attr:`~core.replay.state.Check.basis`; None leaves it unset)."""
        return self.measurer(state, rec)(c, reply_tokens, checks_now, turn_start, limit, recorded)

    def measurer(self, state: State, rec: RecordedSide) -> Measure:
        """:meth:`measure` on ``state`` and ``rec`` as a function of the rest of its arguments,
        what it reads bound once (a walk measures before each of ~10^5 calls)."""
        project, sees_prompt, earlier_reasoning = (
            self.project,
            self.sees_prompt,
            self.earlier_reasoning,
        )
        e_rec_after, overhead = rec.e_rec_after, rec.overhead

        def measured(
            c: int,
            reply_tokens: int,
            checks_now: bool,
            turn_start: bool,
            limit: int | None,
            recorded: bool | None,
        ) -> Check:
            base: int | None = None
            proj: int | None = None
            baseline: int | None = None
            if state.prev_call >= 0:
                before_prompt = turn_start and not sees_prompt
                prev_figure = state.prev_figure
                rebased = state.rebased
                if not rebased:
                    base = prev_figure
                if project:
                    # What came into the context since the previous call, as the check counts it:
                    # the difference of the estimated contexts when rebuilt since (the check
                    # tokens of a rebuilt context are not tracked).
                    if rebased:
                        proj = prev_figure + state.e_sim - state.prev_e_cov
                    elif before_prompt:
                        proj = prev_figure + state.since_call - state.since_prompt
                    else:
                        proj = prev_figure + state.since_call
                    if earlier_reasoning:
                        proj += (
                            state.reasoning_before_prev if before_prompt else state.reasoning_before
                        )
                    rec_added = e_rec_after[c] - reply_tokens - state.prev_e_rec_cov
                    baseline = state.prev_baseline_figure + rec_added
                else:
                    baseline = state.prev_baseline_figure
            elif project:
                proj = overhead + state.e_sim
                baseline = overhead + e_rec_after[c] - reply_tokens
            # (_basis, written out)
            basis: CheckBasis | None = None
            if recorded is not None:
                if not recorded:
                    basis = "estimated"
                elif proj is not None and proj != base:
                    basis = "projected"
                else:
                    basis = "recorded"
            return new_check((base, proj, checks_now, False, None, baseline, basis, limit))

        return measured

    def decide(self, check: Check, limit: int | None, pending: bool) -> tuple[bool, bool]:
        """Whether a check fires under ``limit`` and the projection flag it leaves behind (see
        :func:`decide`)."""
        if limit is None or not self.auto:
            return False, pending
        base, proj = check.base, check.proj
        # core.algorithms.overflow.crosses, written out: a limit of 0 never fires, pi compares
        # with ">", the others with ">=".
        if limit <= 0:
            base_hit = proj_hit = False
        elif self.strict:
            base_hit = base is not None and base > limit
            proj_hit = proj is not None and proj > limit
        else:
            base_hit = base is not None and base >= limit
            proj_hit = proj is not None and proj >= limit
        if proj_hit:
            pending = True
        if check.checks_now and (base_hit or pending):
            return True, False
        return False, pending

    def first_firing(
        self, made: CheckColumns, start: int, stop: int, limits: Sequence[int | None]
    ) -> int | None:
        """The first of calls ``start`` to ``stop`` (not included) whose check in ``made`` fires
        under ``limits`` (one per call, from call 0), no projection pending before ``start``
        (:meth:`decide` from check to check, a check that measured nothing passed over); None
        when none does. Read from the columns, in C, where every limit is a positive number."""
        if not self.auto or start >= stop:
            return None
        part = limits[start:stop]
        if part.count(None) or min(part) <= 0:  # type: ignore[type-var,operator]
            return self._first_firing(made, start, stop, part)
        positive = cast("Sequence[int]", part)
        # A figure held as 0 (None) crosses no positive limit. The first projection that
        # crosses leaves one pending: the first check from there on fires, as does an earlier
        # check whose figure itself crosses.
        hit: Callable[[int, int], bool] = gt if self.strict else ge
        base, proj, _measure = made.figures_of(start, stop)
        made_now = made.flags_of(start, stop).translate(CHECKED)
        fires = next(compress(count(), map(and_, made_now, map(hit, base, positive))), None)
        pending = next(compress(count(), map(hit, proj, positive)), None)
        if pending is not None and (fires is None or pending < fires):
            after = made_now.find(1, pending)
            if after >= 0 and (fires is None or after < fires):
                fires = after
        return None if fires is None else start + fires

    def _first_firing(
        self, made: CheckColumns, start: int, stop: int, limits: Sequence[int | None]
    ) -> int | None:
        """:meth:`first_firing`, check by check (``limits``: calls ``start`` to ``stop``'s)."""
        pending = False
        for c, check, limit in zip(
            range(start, stop), made.between(start, stop), limits, strict=True
        ):
            if not has_figure(check):
                continue
            fired, pending = self.decide(check, limit, pending)
            if fired:
                return c
        return None


def _basis(recorded: bool | None, base: int | None, proj: int | None) -> CheckBasis | None:
    """How a check's figure was made: from the previous call's recorded usage as it is
    (``recorded``), or projected from it, or estimated (None: not said)."""
    if recorded is None:
        return None
    if not recorded:
        return "estimated"
    if proj is not None and proj != base:
        return "projected"
    return "recorded"


def measure(
    state: State,
    rec: RecordedSide,
    c: int,
    reply_tokens: int,
    checks_now: bool,
    policy: Policy,
    turn_start: bool,
) -> Check:
    """What the check before call ``c`` measures: the previous call's figure after its reply
    (unless the context was rebuilt since), its projection with the messages added since, and
    the same check on the recording's own figures (``reply_tokens``: call ``c``'s own reply, in
    the recorded context after it).

    The projection adds each message's check tokens (the agent's own estimates where the policy
    uses them); at a turn's first call, a policy whose agent checks before recording the user's
    new message leaves that message (and what followed it) out; with ``count_earlier_reasoning``
    it adds the estimated encrypted reasoning of the turns before the last user message.
    """
    return CheckRules(policy).measure(state, rec, c, reply_tokens, checks_now, turn_start)


def reply_recount(message: Message, policy: Policy, count: Callable[[str], int]) -> int:
    """What a check counts again of reply ``message`` (``compaction.recount_reply_blocks``): the
    blocks after its first, taken in the order a response writes them (thinking, text, tool
    calls). Claude Code estimates from the first transcript line of the last response on, though
    the response's usage already holds them all; before 2.1.74 it counts text only."""
    mode = policy.compaction.recount_reply_blocks
    if mode == "none" or message.role is not Role.ASSISTANT:
        return 0
    blocks: list[tuple[str, str]] = []
    if message.reasoning:
        blocks.append(("thinking", message.reasoning))
    if message.text:
        blocks.append(("text", message.text))
    blocks.extend(
        ("tool", call.name + arguments_text(call.arguments)) for call in message.tool_calls
    )
    later = blocks[1:]
    if mode == "text":
        later = [block for block in later if block[0] == "text"]
    return sum(count(text) for _kind, text in later)


def decide(check: Check, limit: int | None, policy: Policy, pending: bool) -> tuple[bool, bool]:
    """Whether a check fires under ``limit`` and the projection flag it leaves behind."""
    return CheckRules(policy).decide(check, limit, pending)


def trigger_of(check: Check, limit: int | None, policy: Policy) -> Trigger:
    """What made a firing check fire: the last figure itself, or only its projection."""
    if check.base is not None and limit is not None and crosses(check.base, limit, policy):
        return "threshold"
    return "projection"


def fired_on(check: Check, trigger: Trigger) -> int:
    """The figure a firing check fired on."""
    if trigger == "threshold" and check.base is not None:
        return check.base
    return check.proj or 0


def checked(check: Check) -> bool:
    """The policy checked before this call, on a figure (``CallPoint.checked``)."""
    return check.checks_now and has_figure(check)


def measured(check: Check) -> int | None:
    """The figure a check reports: the one it fired on, else its projection, else the figure."""
    return check.measured()


def overflows(
    prompt: int, window: int | None, recorded_reason: str | None, removed_nothing: bool
) -> bool:
    """The simulated call overflows: its prompt exceeds the window, or the recording overflowed
    there (``recorded_reason``) and the policy had removed nothing by then."""
    if not window:
        return False
    return prompt > window or (removed_nothing and recorded_reason is not None)
