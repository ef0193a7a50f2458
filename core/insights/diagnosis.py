"""Why a recorded session overflowed (or came close), read from a replay of it.

:func:`diagnose` takes a replay result (its policy decides the threshold, the check schedule and
the estimator) and explains the first call that overflowed or came within a margin of the window:
what filled the window since the last compaction, the biggest contributors, and whether the
policy's last threshold check came too late. It never replays: callers replay first (the
recording agent's preset, :func:`core.replay.native_policy`, is the usual choice).

The figures are the recording's: the recorded context where the file has usage, else our estimate
of it (``CallPoint.baseline_tokens``).
"""

# (No ``from __future__ import annotations`` here: the models' field annotations are evaluated
# once by the class body, not compiled and evaluated from strings by pydantic for each field as
# each class is created; tests/unit/test_model_annotations.py holds it.)

from bisect import bisect_left
from typing import TYPE_CHECKING, NamedTuple

from pydantic import Field

from core.algorithms.overflow import crosses
from core.model.fastmodel import build, build_filled
from core.model.session import Message, Session
from core.policy import Policy
from core.replay.results import Documented, ReplayResult

if TYPE_CHECKING:
    from core.replay.points import CallPoint

MARGIN = 0.05
"""A call within this share of the window counts as close to overflowing (the default of
:func:`diagnose`, ``analyze --margin`` and the picker's near-overflow view)."""

_WHY_OVERFLOWED = {
    "stop-length": "the provider stopped it for length",
    "error": "the provider refused it as too long for the context window",
    "over-window": "its recorded context exceeds the window",
}


class Contributor(Documented):
    """One message that filled the window since the last compaction."""

    message_index: int
    """Position in the session."""
    role: str
    """``user``, ``assistant``, ``tool`` or ``system``."""
    tool_name: str | None
    """The tool whose output this is (tool messages), or the first tool called (assistant)."""
    tokens: int
    """Tokens of the message as the policy's estimator counts it."""
    share: float
    """Share of the growth since the last compaction (0..1)."""


class ToolShare(Documented):
    """The outputs of one tool since the last compaction, added up."""

    tool_name: str
    """The tool."""
    outputs: int
    """How many of its outputs."""
    tokens: int
    """Their tokens together."""
    share: float
    """Share of the growth since the last compaction (0..1)."""


class OverflowDiagnosis(Documented):
    """Why a recorded session overflowed (or came close): see :func:`diagnose`."""

    schema_version: int = 1
    """Version of this JSON layout (1)."""
    overflowed: bool
    """A recorded call overflowed (not merely came within the margin)."""
    call_index: int | None
    """First call that overflowed, else the first that came within the margin; None if neither."""
    message_index: int | None
    """The assistant message of that call."""
    tokens: int | None
    """The context at that call (recorded when the file has usage, else estimated)."""
    tokens_provenance: str | None = None
    """``recorded``, ``estimated`` or ``counted``."""
    window: int | None
    """Window used."""
    margin: float
    """Share of the window counted as close to overflowing."""
    overflow_reason: str | None = None
    """``stop-length``, ``error``, ``over-window`` or ``near-window``."""
    since_message_index: int
    """Where the context started growing: the last compaction boundary before the call (0 if none)."""
    growth_tokens: int
    """Tokens of the messages added since that boundary, up to the call."""
    growth_recorded_tokens: int | None = None
    """Growth of the recorded context between the first call after the boundary and this call."""
    contributors: list[Contributor]
    """The biggest messages since the boundary, largest first."""
    by_tool: list[ToolShare] = Field(default_factory=list)
    """Tool outputs since the boundary, summed per tool, largest first."""
    threshold: int | None = None
    """The threshold the policy's last check compared with (the diagnosed call's when it was
    never checked), for that call's window."""
    threshold_source: str | None = None
    """``rule`` (the policy's rule) or ``inferred`` (the recording contradicts the rule there;
    ``ReplayResult.thresholds``)."""
    rule_threshold: int | None = None
    """What the policy's documented rule gives there, when the threshold used is inferred."""
    schedule: str = ""
    """When the policy checks its threshold, in words ("before every model call, on …")."""
    crossed_call_index: int | None = None
    """When the last check did not fire: the first call after it whose recorded context had
    passed the threshold (what a check there would have seen), up to the diagnosed call."""
    crossed_tokens: int | None = None
    """The recorded context at that call."""
    verdict: str = ""
    """What the agent should have done, in plain words."""
    last_check_call_index: int | None
    """The call right before which the policy last checked its threshold (on the figure of the
    call before it, plus the projection when the policy projects); may be the diagnosed call."""
    last_check_tokens: int | None = None
    """What that check measured."""
    last_check_crossed: bool | None = None
    """That figure crossed the threshold: the check fired (or, in the recording, should have)."""
    fired_too_late: bool
    """The threshold could not prevent the overflow: the last check passed (or fired and was not
    acted on), and the context grew past the window before the next check."""
    gap_tokens: int | None
    """Recorded tokens added between the figure the last check started from (the call before
    it, after its reply) and the diagnosed call: the blind spot."""
    explanation: str
    """A few human sentences."""


class _Growth(NamedTuple):
    """What filled the window since the last compaction before the diagnosed call."""

    since: int
    tokens: int
    recorded_tokens: int | None
    contributors: list[Contributor]
    by_tool: list[ToolShare]


class _LastCheck(NamedTuple):
    """The policy's last threshold check up to the diagnosed call, on the recording's figures."""

    call: int | None
    tokens: int | None
    gap: int | None
    passed: bool
    limit: int | None
    """The threshold it compared with (the diagnosed call's, when there was no check)."""
    source: str | None
    rule: int | None
    """The documented rule's threshold there, when ``limit`` is inferred."""
    crossed: int | None
    """The first call after the check (up to the diagnosed one) whose recorded context had
    passed ``limit``, when the check did not fire."""


def diagnose(
    session: Session, result: ReplayResult, *, margin: float = MARGIN, top: int = 10
) -> OverflowDiagnosis:
    """Explain the first call of ``session`` that overflowed or came within ``margin`` of the
    window, from ``result``, a replay of the session (see the module docstring)."""
    hit, reason = _call_to_explain(result, result.window, margin)
    if hit is None:
        return _nothing_to_explain(result, margin)
    point = result.point(hit)
    overflowed = reason != "near-window"
    growth = _growth(session, result, point, top)
    check = _last_check(result, point, growth.since)
    verdict = _verdict(result, point, check, overflowed)
    return build_filled(
        OverflowDiagnosis,
        dict(
            overflowed=overflowed,
            call_index=hit,
            message_index=point.message_index,
            tokens=point.baseline_tokens,
            tokens_provenance=point.baseline_provenance.value,
            window=result.window,
            margin=float(margin),
            overflow_reason=reason,
            since_message_index=growth.since,
            growth_tokens=growth.tokens,
            growth_recorded_tokens=growth.recorded_tokens,
            contributors=growth.contributors,
            by_tool=growth.by_tool,
            threshold=check.limit,
            threshold_source=check.source,
            rule_threshold=check.rule,
            schedule=schedule(result.policy),
            crossed_call_index=check.crossed,
            crossed_tokens=result.point(check.crossed).baseline_tokens
            if check.crossed is not None
            else None,
            verdict=verdict,
            last_check_call_index=check.call,
            last_check_tokens=check.tokens,
            last_check_crossed=None
            if check.tokens is None or check.limit is None
            else not check.passed,
            fired_too_late=overflowed and (check.call is None or check.passed),
            gap_tokens=check.gap,
            explanation=" ".join(
                [
                    _headline(point, reason, result.window, margin),
                    *_growth_sentences(growth, result),
                    *_check_sentences(result, check),
                    verdict,
                ]
            ).strip(),
        ),
    )


def _call_to_explain(
    result: ReplayResult, window: int | None, margin: float
) -> tuple[int | None, str | None]:
    """The first call that overflowed, else the first within ``margin`` of the window, and why.
    (Read from the result's columns: its points are not built for this.)"""
    for call, overflowed in enumerate(result.point_column("overflow_recorded")):
        if overflowed:
            return call, result.point(call).overflow_recorded_reason or "over-window"
    if window:
        near = window * (1.0 - margin)
        for call, tokens in enumerate(result.point_column("baseline_tokens")):
            if tokens >= near:
                return call, "near-window"
    return None, None


def _nothing_to_explain(result: ReplayResult, margin: float) -> OverflowDiagnosis:
    baseline = result.point_column("baseline_tokens")
    window = result.window
    if not baseline:
        text = "The session has no model calls, so nothing could overflow."
    elif window is None:
        text = (
            "The context window is unknown, so no call can be said to overflow; "
            "pass --window N to check against one."
        )
    else:
        peak = max(range(len(baseline)), key=baseline.__getitem__)  # the first of equal peaks
        text = (
            f"No call overflowed or came within {margin:.0%} of the {window:,}-token window; "
            f"the peak was {baseline[peak]:,} tokens at call {peak}."
        )
    return build_filled(
        OverflowDiagnosis,
        dict(
            overflowed=False,
            call_index=None,
            message_index=None,
            tokens=None,
            window=window,
            margin=float(margin),
            since_message_index=0,
            growth_tokens=0,
            contributors=[],
            threshold=result.threshold,
            last_check_call_index=None,
            fired_too_late=False,
            gap_tokens=None,
            explanation=text,
        ),
    )


def _tool_name_of(message: Message) -> str | None:
    if message.tool_result is not None:
        return message.tool_result.tool_name
    if message.tool_calls:
        return message.tool_calls[0].name
    return None


def _growth(session: Session, result: ReplayResult, point: "CallPoint", top: int) -> _Growth:
    """The messages added since the last recorded compaction before ``point``: how much, the
    biggest, and per tool."""
    message_index = point.message_index
    since = max(
        (e.message_index for e in session.compactions if e.message_index <= message_index),
        default=0,
    )
    since = max(since, 0)
    tokens_of: list[int] = list(result.message_column("tokens"))  # no state built for this
    growth, contributors, by_tool = what_filled(session, tokens_of, since, message_index, top)
    call_messages = result.point_column("message_index")
    first = bisect_left(call_messages, since)
    first_after = result.point(first) if first < len(call_messages) else None
    recorded = (
        point.baseline_tokens - first_after.baseline_tokens
        if first_after is not None and first_after.call_index < point.call_index
        else None
    )
    return _Growth(since, growth, recorded, contributors, by_tool)


def what_filled(
    session: Session, tokens_of: list[int], since: int, until: int, top: int = 10
) -> tuple[int, list[Contributor], list[ToolShare]]:
    """What the messages ``since`` .. ``until - 1`` of the main conversation added (summaries
    left out): their tokens (``tokens_of``, one per session message), the ``top`` biggest, and
    the tool outputs per tool. The overflow diagnosis and the causes of a compaction
    (:mod:`core.insights.compaction_causes`) both read the window's growth this way."""
    messages = session.messages
    candidates: list[int] = []
    outputs: dict[str, list[int]] = {}  # (read in the same pass: each message looked at once)
    for i in range(since, until):
        message = messages[i]
        if message.sidechain or message.summary:
            continue
        candidates.append(i)
        tool_result = message.tool_result
        if tool_result is not None:
            name = tool_result.tool_name or "(unknown tool)"
            outputs.setdefault(name, []).append(tokens_of[i])
    growth = sum(map(tokens_of.__getitem__, candidates))
    return (
        growth,
        _contributors(messages, candidates, tokens_of, growth, top),
        _tool_shares(outputs, growth),
    )


def _contributors(
    messages: list[Message], candidates: list[int], tokens_of: list[int], growth: int, top: int
) -> list[Contributor]:
    """The ``top`` biggest messages among ``candidates``, largest first (earlier first on ties);
    each a model built from typed values (the causes of a session's compactions make thousands:
    no validation)."""
    # (a stable sort, reversed, keeps the earlier of equals first: ``heapq.nlargest``'s order,
    # ranked in C rather than by its loop in Python)
    ranked = sorted(candidates, key=tokens_of.__getitem__, reverse=True)[: max(top, 0)]
    return [
        build(
            Contributor,
            {
                "message_index": i,
                "role": messages[i].role.value,
                "tool_name": _tool_name_of(messages[i]),
                "tokens": tokens_of[i],
                "share": (tokens_of[i] / growth) if growth else 0.0,
            },
        )
        for i in ranked
    ]


def _tool_shares(per_tool: dict[str, list[int]], growth: int) -> list[ToolShare]:
    """The tool outputs (their tokens per tool, in order of first output), summed per tool,
    largest first."""
    return sorted(
        (
            build(
                ToolShare,
                {
                    "tool_name": name,
                    "outputs": len(values),
                    "tokens": sum(values),
                    "share": (sum(values) / growth) if growth else 0.0,
                },
            )
            for name, values in per_tool.items()
        ),
        key=lambda share: -share.tokens,
    )


def _last_check(result: ReplayResult, point: "CallPoint", since: int) -> _LastCheck:
    """The policy's last threshold check up to ``point`` (after ``since``), on the recording's
    figures, and the blind spot after it: what arrived after the figure it started from (the
    previous call's context after its reply)."""
    call: int | None = None
    tokens: int | None = None
    for c in range(point.call_index, -1, -1):
        earlier = result.point(c)
        if earlier.message_index < since:
            break
        if earlier.checked and earlier.baseline_check_tokens is not None:
            call = earlier.call_index
            tokens = earlier.baseline_check_tokens
            break
    gap = (
        point.baseline_tokens - result.point(call - 1).baseline_after_tokens
        if call is not None and call >= 1
        else None
    )
    at = result.point(call) if call is not None else point
    limit = at.threshold
    passed = tokens is not None and limit is not None and not crosses(tokens, limit, result.policy)
    crossed = None
    if limit is not None and (call is None or passed):
        first = (call + 1) if call is not None else 0
        messages = result.point_column("message_index")
        baselines = result.point_column("baseline_tokens")
        crossed = next(
            (
                c
                for c in range(first, point.call_index + 1)
                if messages[c] >= since and crosses(baselines[c], limit, result.policy)
            ),
            None,
        )
    return _LastCheck(
        call, tokens, gap, passed, limit, at.threshold_source, _rule(result, at), crossed
    )


def _rule(result: ReplayResult, point: "CallPoint") -> int | None:
    """The documented rule's threshold at ``point`` when its threshold is inferred."""
    if point.threshold_source != "inferred":
        return None
    span = next(
        (s for s in result.thresholds if s.first_call <= point.call_index <= s.last_call), None
    )
    return span.rule_threshold if span is not None else None


def schedule(policy: Policy) -> str:
    """When ``policy`` checks its threshold, and on which figure, in words."""
    rules = policy.compaction
    if not rules.auto:
        return f"The {policy.name} policy never compacts by itself (compaction.auto is off)."
    when = (
        "before every model call"
        if rules.check_before_each_call
        else "only between prompts (before a turn's first call), not between the calls of a turn"
    )
    figure = (
        "the last call's usage plus an estimate of what came since"
        if rules.project_after_tool_results
        else "the last call's usage as it was recorded (not what came since)"
    )
    return f"The {policy.name} policy checks its threshold {when}, on {figure}."


def _headline(point: "CallPoint", reason: str | None, window: int | None, margin: float) -> str:
    call, message = point.call_index, point.message_index
    size = f"{point.baseline_tokens:,} of {f'{window:,}' if window else 'unknown'} tokens"
    if reason == "near-window":
        return (
            f"No call overflowed, but call {call} (message {message}) came within "
            f"{margin:.0%} of the window ({size})."
        )
    why = _WHY_OVERFLOWED.get(reason or "", "it overflowed")
    return f"Call {call} (message {message}) overflowed: {why} ({size})."


def _growth_sentences(growth: _Growth, result: ReplayResult) -> list[str]:
    where = (
        f"message {growth.since}, the last compaction"
        if growth.since
        else "the start of the session"
    )
    estimator = result.estimator or result.policy.estimator
    sentence = f"Since {where}, {growth.tokens:,} tokens of messages were added ({estimator})"
    recorded = growth.recorded_tokens
    if recorded:
        sentence += f"; the recorded context grew by {recorded:,} over the same calls"
        if abs(recorded - growth.tokens) > growth.tokens // 10:
            sentence += (
                f" (the estimate counts {growth.tokens / recorded:.0%} of it: the shares are of "
                "the estimate)"
            )
    sentences = [sentence + "."]
    if growth.by_tool:
        biggest = growth.by_tool[0]
        sentences.append(
            f"Tool outputs of {biggest.tool_name} were the largest share: "
            f"{biggest.tokens:,} tokens in {biggest.outputs} output(s), {biggest.share:.0%}."
        )
    if growth.contributors:
        first = growth.contributors[0]
        label = f"{first.role} message {first.message_index}"
        if first.tool_name:
            label += f" ({first.tool_name})"
        sentences.append(
            f"The single biggest was {label}: {first.tokens:,} tokens, {first.share:.0%}."
        )
    return sentences


def _threshold_words(check: _LastCheck) -> str:
    """``210,084 (inferred from the recording; the documented rule gives 167,000)``."""
    if check.limit is None:
        return "no threshold"
    if check.source == "inferred":
        rule = f"; its documented rule gives {check.rule:,}" if check.rule is not None else ""
        return f"{check.limit:,} (inferred from the recording{rule})"
    return f"{check.limit:,}"


def _check_sentences(result: ReplayResult, check: _LastCheck) -> list[str]:
    """When the policy checks, and what its last check saw."""
    if check.limit is None:
        return []
    sentences = [schedule(result.policy)]
    if check.call is None:
        sentences.append(
            f"It did not check between the last compaction and this call (threshold "
            f"{_threshold_words(check)})."
        )
    elif check.tokens is not None:
        fired = "did not fire" if check.passed else "fired"
        sentences.append(
            f"Its last check, right before call {check.call}, saw {check.tokens:,} tokens "
            f"against a threshold of {_threshold_words(check)}: it {fired}."
        )
    return sentences


def _verdict(result: ReplayResult, point: "CallPoint", check: _LastCheck, overflowed: bool) -> str:
    """What the agent should have done, in plain words."""
    if not overflowed or check.limit is None:
        return ""
    window = point.window or result.window
    name = result.policy.name
    if point.overflow_recorded_reason == "error" and window and point.baseline_tokens < window:
        return (
            f"The provider refused {point.baseline_tokens:,} tokens, less than the "
            f"{window:,}-token window this session is taken to have: the real limit is lower, "
            f"and a threshold below it would have compacted in time."
        )
    if check.call is not None and not check.passed:
        return (
            f"That check should have compacted before call {check.call}; the recording did "
            "not, and overflowed."
        )
    if window and check.limit >= window:
        rule = check.rule
        if rule is not None and rule < window:
            return (
                f"{name} did not compact although the context passed its documented threshold "
                f"({rule:,}): auto-compaction was off in this session, or set above the "
                f"{window:,}-token window (the recording shows a threshold of at least "
                f"{check.limit:,}), so no check could have prevented this overflow. Under the "
                "documented rule it would have compacted once the context passed that."
            )
        return (
            f"A threshold of {check.limit:,} is not below the {window:,}-token window: no "
            "check could have prevented this overflow."
        )
    if check.crossed is not None and check.crossed != point.call_index:
        unseen = point.call_index - check.crossed
        return (
            f"The context passed the threshold at call {check.crossed} and went on for "
            f"{unseen} more call(s) without a check: {name} should have compacted there "
            "(a check before every call would have)."
        )
    gap = f" ({check.gap:,} tokens)" if check.gap else ""
    return (
        f"What arrived after the figure that check started from{gap} was more than the room "
        f"between the threshold and the window: the check came too late to see it; "
        f"{name} should have counted it before sending the call."
    )
