"""Why a recorded session overflowed (or came close), read from a replay of it.

:func:`diagnose` takes a replay result (its policy decides the threshold, the check schedule and
the estimator) and explains the first call that overflowed or came within a margin of the window:
what filled the window since the last compaction, the biggest contributors, and whether the
policy's last threshold check came too late. It never replays: callers replay first (the
recording agent's preset, :func:`core.replay.native_policy`, is the usual choice).

The figures are the recording's: the recorded context where the file has usage, else our estimate
of it (``CallPoint.baseline_tokens``).
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import Field

from core.models import Message, Session
from core.overflow import crosses
from core.replay.results import CallPoint, Documented, ReplayResult

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
    """The policy's compaction threshold for this window."""
    last_check_call_index: int | None
    """The call right before which the policy last checked its threshold (on the figure of the
    call before it, plus the projection when the policy projects); may be the diagnosed call."""
    last_check_tokens: int | None = None
    """What that check measured."""
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


def diagnose(
    session: Session, result: ReplayResult, *, margin: float = 0.05, top: int = 10
) -> OverflowDiagnosis:
    """Explain the first call of ``session`` that overflowed or came within ``margin`` of the
    window, from ``result``, a replay of the session (see the module docstring)."""
    hit, reason = _call_to_explain(result.points, result.window, margin)
    if hit is None:
        return _nothing_to_explain(result, margin)
    point = result.points[hit]
    overflowed = reason != "near-window"
    growth = _growth(session, result, point, top)
    check = _last_check(result, point, growth.since)
    return OverflowDiagnosis(
        overflowed=overflowed,
        call_index=hit,
        message_index=point.message_index,
        tokens=point.baseline_tokens,
        tokens_provenance=point.baseline_provenance.value,
        window=result.window,
        margin=margin,
        overflow_reason=reason,
        since_message_index=growth.since,
        growth_tokens=growth.tokens,
        growth_recorded_tokens=growth.recorded_tokens,
        contributors=growth.contributors,
        by_tool=growth.by_tool,
        threshold=result.threshold,
        last_check_call_index=check.call,
        last_check_tokens=check.tokens,
        fired_too_late=overflowed and (check.call is None or check.passed),
        gap_tokens=check.gap,
        explanation=" ".join(
            [
                _headline(point, reason, result.window, margin),
                *_growth_sentences(growth),
                *_check_sentences(result, check, overflowed),
            ]
        ),
    )


def _call_to_explain(
    points: list[CallPoint], window: int | None, margin: float
) -> tuple[int | None, str | None]:
    """The first call that overflowed, else the first within ``margin`` of the window, and why."""
    for point in points:
        if point.overflow_recorded:
            return point.call_index, point.overflow_recorded_reason or "over-window"
    if window:
        near = window * (1.0 - margin)
        for point in points:
            if point.baseline_tokens >= near:
                return point.call_index, "near-window"
    return None, None


def _nothing_to_explain(result: ReplayResult, margin: float) -> OverflowDiagnosis:
    points = result.points
    window = result.window
    if not points:
        text = "The session has no model calls, so nothing could overflow."
    elif window is None:
        text = (
            "The context window is unknown, so no call can be said to overflow; "
            "pass --window N to check against one."
        )
    else:
        peak = max(points, key=lambda p: p.baseline_tokens)
        text = (
            f"No call overflowed or came within {margin:.0%} of the {window:,}-token window; "
            f"the peak was {peak.baseline_tokens:,} tokens at call {peak.call_index}."
        )
    return OverflowDiagnosis(
        overflowed=False,
        call_index=None,
        message_index=None,
        tokens=None,
        window=window,
        margin=margin,
        since_message_index=0,
        growth_tokens=0,
        contributors=[],
        threshold=result.threshold,
        last_check_call_index=None,
        fired_too_late=False,
        gap_tokens=None,
        explanation=text,
    )


def _tool_name_of(message: Message) -> str | None:
    if message.tool_result is not None:
        return message.tool_result.tool_name
    if message.tool_calls:
        return message.tool_calls[0].name
    return None


def _growth(session: Session, result: ReplayResult, point: CallPoint, top: int) -> _Growth:
    """The messages added since the last recorded compaction before ``point``: how much, the
    biggest, and per tool."""
    message_index = point.message_index
    since = max(
        (e.message_index for e in session.compactions if e.message_index <= message_index),
        default=0,
    )
    since = max(since, 0)
    tokens_of = [state.tokens for state in result.messages]
    growth, contributors, by_tool = what_filled(session, tokens_of, since, message_index, top)
    first_after = next((p for p in result.points if p.message_index >= since), None)
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
    (:mod:`core.compaction_causes`) both read the window's growth this way."""
    messages = session.messages
    candidates = [
        i for i in range(since, until) if not messages[i].sidechain and not messages[i].summary
    ]
    growth = sum(tokens_of[i] for i in candidates)
    return (
        growth,
        _contributors(messages, candidates, tokens_of, growth, top),
        _by_tool(messages, candidates, tokens_of, growth),
    )


def _contributors(
    messages: list[Message], candidates: list[int], tokens_of: list[int], growth: int, top: int
) -> list[Contributor]:
    """The ``top`` biggest messages among ``candidates``, largest first (earlier first on ties)."""
    ranked = sorted(candidates, key=lambda i: (-tokens_of[i], i))[: max(top, 0)]
    return [
        Contributor(
            message_index=i,
            role=messages[i].role.value,
            tool_name=_tool_name_of(messages[i]),
            tokens=tokens_of[i],
            share=(tokens_of[i] / growth) if growth else 0.0,
        )
        for i in ranked
    ]


def _by_tool(
    messages: list[Message], candidates: list[int], tokens_of: list[int], growth: int
) -> list[ToolShare]:
    """The tool outputs among ``candidates``, summed per tool, largest first."""
    per_tool: dict[str, list[int]] = {}
    for i in candidates:
        tool_result = messages[i].tool_result
        if tool_result is not None:
            name = tool_result.tool_name or "(unknown tool)"
            per_tool.setdefault(name, []).append(tokens_of[i])
    return sorted(
        (
            ToolShare(
                tool_name=name,
                outputs=len(values),
                tokens=sum(values),
                share=(sum(values) / growth) if growth else 0.0,
            )
            for name, values in per_tool.items()
        ),
        key=lambda share: -share.tokens,
    )


def _last_check(result: ReplayResult, point: CallPoint, since: int) -> _LastCheck:
    """The policy's last threshold check up to ``point`` (after ``since``), on the recording's
    figures, and the blind spot after it: what arrived after the figure it started from (the
    previous call's context after its reply)."""
    points = result.points
    call: int | None = None
    tokens: int | None = None
    for earlier in reversed(points[: point.call_index + 1]):
        if earlier.message_index < since:
            break
        if earlier.checked and earlier.baseline_check_tokens is not None:
            call = earlier.call_index
            tokens = earlier.baseline_check_tokens
            break
    gap = (
        point.baseline_tokens - points[call - 1].baseline_after_tokens
        if call is not None and call >= 1
        else None
    )
    limit = result.threshold
    passed = tokens is not None and limit is not None and not crosses(tokens, limit, result.policy)
    return _LastCheck(call, tokens, gap, passed)


def _headline(point: CallPoint, reason: str | None, window: int | None, margin: float) -> str:
    call, message = point.call_index, point.message_index
    size = f"{point.baseline_tokens:,} of {f'{window:,}' if window else 'unknown'} tokens"
    if reason == "near-window":
        return (
            f"No call overflowed, but call {call} (message {message}) came within "
            f"{margin:.0%} of the window ({size})."
        )
    why = _WHY_OVERFLOWED.get(reason or "", "it overflowed")
    return f"Call {call} (message {message}) overflowed: {why} ({size})."


def _growth_sentences(growth: _Growth) -> list[str]:
    where = (
        f"message {growth.since}, the last compaction"
        if growth.since
        else "the start of the session"
    )
    sentences = [f"Since {where}, {growth.tokens:,} tokens of messages were added."]
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


def _check_sentences(result: ReplayResult, check: _LastCheck, overflowed: bool) -> list[str]:
    limit = result.threshold
    name = result.policy.name
    if limit is None:
        return []
    if check.call is None:
        return [
            f"The {name} policy did not check its threshold ({limit:,}) between the "
            "last compaction and this call."
        ]
    if check.tokens is None:
        return []
    verdict = "below" if check.passed else "above"
    arrived = (
        f"; {check.gap:,} tokens arrived after the figure that check started from "
        f"(call {check.call - 1})"
        if check.gap is not None
        else ""
    )
    sentences = [
        f"The {name} policy last checked right before call {check.call}: it "
        f"measured {check.tokens:,} tokens, {verdict} its threshold of {limit:,}{arrived}."
    ]
    if overflowed and check.passed:
        sentences.append(
            "The threshold fired too late: what arrived after the last check was more "
            "than the room between the threshold and the window."
        )
    elif overflowed:
        sentences.append(
            f"That check would have fired in time under the {name} policy; the "
            "recording did not compact before this call."
        )
    return sentences
