"""T7: how full the context was, when a policy compacts, and why a recorded session overflowed.

Four small pieces, all pure:

* **Context size of a recorded call** — :func:`context_tokens` is the figure the recording agent
  compared against its threshold (:attr:`Usage.context_tokens` encodes the provider convention);
  :func:`context_before_reply` and :func:`context_after_reply` expose both sides explicitly and
  :func:`recorded_kind` says which one :func:`context_tokens` is.
* **Threshold rules** — :func:`threshold` turns a :class:`~core.policy.Policy` and a window into
  one number and :func:`should_compact` applies the rule's comparison:

  ``pi``        ``tokens > window - reserve``                        (200k, 16,384 → 183,616)
  ``opencode``  ``tokens >= usable``; ``usable = limit.input - reserved`` when the model has an
                input limit, else ``window - max_output`` with
                ``max_output = min(model output limit, output_token_max)`` and
                ``reserved = min(20,000, max_output)`` unless the policy sets another reserve
  ``codex``     ``tokens >= auto_compact_token_limit`` or ``floor(ratio x window)``

* **Projection** — :func:`project`: the last known context plus the estimated tokens of every
  message added since (tool results the model has not seen yet). Checking it before every model
  call closes the mid-turn gap of the under-compaction analysis.
* **Recognition and diagnosis** — :func:`overflow_reason` says whether a recorded call overflowed
  (stop reason ``length``, a provider context-overflow error, or recorded context > window);
  :func:`diagnose` explains the first call that overflowed or came within a margin of the window:
  what filled the window since the last compaction, the biggest contributors, and whether the
  policy's last threshold check came too late.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.models import Message, Role, Session, Usage, UsageConvention
from core.overflow_errors import is_context_overflow_message as _recognise_overflow

if TYPE_CHECKING:
    from core.policy import Policy
    from core.replay import ReplayResult

RecordedKind = Literal["before-reply", "after-reply"]

COMPACTION_BUFFER = 20_000
"""opencode's default ``reserved`` (``COMPACTION_BUFFER``); see :func:`threshold`."""


# --- context size of a recorded call ---------------------------------------------------------


def context_tokens(usage: Usage) -> int:
    """The context size the recording agent compared against its threshold.

    Claude Code (Anthropic convention) looks at the prompt before the reply; Codex, pi and
    opencode at the total after it. :func:`recorded_kind` names which one this is.
    """
    return usage.context_tokens


def context_before_reply(usage: Usage) -> int:
    """Prompt tokens the model was sent (uncached + cache read + cache write)."""
    return usage.prompt_tokens


def context_after_reply(usage: Usage) -> int:
    """The prompt plus what the model generated (the provider's total when it gave one)."""
    return usage.context_after_reply


def recorded_kind(usage: Usage) -> RecordedKind:
    """Whether :func:`context_tokens` is measured before or after the reply."""
    if usage.convention is UsageConvention.ANTHROPIC:
        return "before-reply"
    return "after-reply"


def usable_usage(message: Message) -> Usage | None:
    """The message's usage when it holds a real figure: None for no usage or an all-zero one.

    Aborted calls often record zeros (pi writes ``totalTokens: 0`` for an aborted reply); such
    a figure says nothing about the context and is treated as missing.
    """
    usage = message.usage
    if usage is None or usage.context_tokens <= 0:
        return None
    return usage


# --- threshold rules -------------------------------------------------------------------------


def max_output_for(policy: Policy, max_output_tokens: int | None) -> int:
    """opencode's ``maxOutputTokens``: the model's output limit capped at ``output_token_max``."""
    cap = policy.compaction.output_token_max
    if max_output_tokens is None or max_output_tokens <= 0:
        return cap
    return min(max_output_tokens, cap)


def threshold(
    policy: Policy,
    window: int,
    max_output_tokens: int | None = None,
    *,
    input_limit: int | None = None,
    model_window: int | None = None,
) -> int:
    """The context size at which ``policy`` compacts, for a model with ``window`` tokens.

    ``max_output_tokens`` is the model's output limit and ``input_limit`` its input limit
    (opencode's ``limit.input``), when known. ``model_window`` is the model's full window when
    ``window`` is a reduced, effective one (Codex records 95% of it but compacts at 90% of the
    full window). The comparison itself (``>`` or ``>=``) belongs to the rule: use
    :func:`should_compact`.
    """
    rules = policy.compaction
    if rules.threshold_rule == "pi":
        return max(0, window - rules.reserve_tokens)
    if rules.threshold_rule == "codex":
        if rules.auto_compact_token_limit is not None:
            return rules.auto_compact_token_limit
        return int((model_window or window) * rules.codex_ratio)
    # opencode
    max_output = max_output_for(policy, max_output_tokens)
    if input_limit:
        # A reserve other than opencode's buffer is a configured one and is used as it is.
        reserved = rules.reserve_tokens
        if reserved == COMPACTION_BUFFER:
            reserved = min(COMPACTION_BUFFER, max_output)
        return max(0, input_limit - reserved)
    return max(0, window - max_output)


def crosses(tokens: int, limit: int, policy: Policy) -> bool:
    """The rule's comparison: ``tokens > limit`` for pi, ``tokens >= limit`` otherwise.

    A limit of 0 never fires (opencode: a usable window of 0 disables the check).
    """
    if limit <= 0:
        return False
    if policy.compaction.threshold_rule == "pi":
        return tokens > limit
    return tokens >= limit


def should_compact(
    tokens: int,
    policy: Policy,
    window: int | None,
    max_output_tokens: int | None = None,
    *,
    input_limit: int | None = None,
    model_window: int | None = None,
) -> bool:
    """Whether ``policy`` compacts automatically at a context of ``tokens``.

    False when auto-compaction is off or the window is unknown.
    """
    if not policy.compaction.auto or not window:
        return False
    limit = threshold(
        policy, window, max_output_tokens, input_limit=input_limit, model_window=model_window
    )
    return crosses(tokens, limit, policy)


def project(last_usage_tokens: int, added_message_tokens: int | Iterable[int]) -> int:
    """Projected context before the next call: the last known context plus what was added since.

    ``added_message_tokens`` is the estimated size of every message appended after the last
    model call (tool results, a user message), as one number or one per message.
    """
    if isinstance(added_message_tokens, int):
        return last_usage_tokens + added_message_tokens
    return last_usage_tokens + sum(added_message_tokens)


# --- recognising an overflow in a recording ---------------------------------------------------


def is_context_overflow_message(text: str | None) -> bool:
    """Whether a provider error text says the request did not fit the context window
    (:func:`core.overflow_errors.is_context_overflow_message`; rate limits never are)."""
    return bool(text) and _recognise_overflow(text or "")


OverflowReason = Literal["stop-length", "error", "over-window"]


def overflow_reason(message: Message, window: int | None) -> OverflowReason | None:
    """Why a recorded model call counts as an overflow, or None when it did not overflow.

    ``stop-length``: the provider stopped for length; ``error``: its error text is a
    context-overflow error; ``over-window``: the recorded context exceeds the window (the silent
    overflow some providers answer without an error).
    """
    if message.role is not Role.ASSISTANT:
        return None
    if message.stop_reason == "length":
        return "stop-length"
    if is_context_overflow_message(message.error):
        return "error"
    usage = usable_usage(message)
    if window and usage is not None and usage.prompt_tokens > window:
        return "over-window"
    return None


def call_overflowed(message: Message, window: int | None) -> bool:
    """Whether a recorded model call overflowed (see :func:`overflow_reason`)."""
    return overflow_reason(message, window) is not None


# --- diagnosis --------------------------------------------------------------------------------


class _Documented(BaseModel):
    """Result models: each field's docstring is its description in the JSON schema."""

    model_config = ConfigDict(use_attribute_docstrings=True)


class Contributor(_Documented):
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


class ToolShare(_Documented):
    """The outputs of one tool since the last compaction, added up."""

    tool_name: str
    """The tool."""
    outputs: int
    """How many of its outputs."""
    tokens: int
    """Their tokens together."""
    share: float
    """Share of the growth since the last compaction (0..1)."""


class OverflowDiagnosis(_Documented):
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


def _tool_name_of(message: Message) -> str | None:
    if message.tool_result is not None:
        return message.tool_result.tool_name
    if message.tool_calls:
        return message.tool_calls[0].name
    return None


def diagnose(
    session: Session,
    result: ReplayResult | None = None,
    *,
    margin: float = 0.05,
    top: int = 10,
) -> OverflowDiagnosis:
    """Explain the first call of ``session`` that overflowed or came within ``margin`` of the window.

    ``result`` is a replay of the session (its policy decides the threshold, its check schedule
    and the estimator); without one, the session is replayed under its own agent's preset. The
    figures are the recording's: the recorded context where the file has usage, else our
    estimate of it (see ``CallPoint.baseline_tokens``).
    """
    from core.replay import native_policy, replay

    if result is None:
        result = replay(session, native_policy(session))
    points = result.points
    window = result.window
    policy = result.policy
    limit = result.threshold

    # 1. The call to explain.
    hit: int | None = None
    reason: str | None = None
    for point in points:
        if point.overflow_recorded:
            hit, reason = point.call_index, point.overflow_recorded_reason or "over-window"
            break
    overflowed = hit is not None
    if hit is None and window:
        near = window * (1.0 - margin)
        for point in points:
            if point.baseline_tokens >= near:
                hit, reason = point.call_index, "near-window"
                break

    if hit is None:
        peak = max(points, key=lambda p: p.baseline_tokens, default=None)
        if not points:
            text = "The session has no model calls, so nothing could overflow."
        elif window is None:
            text = (
                "The context window is unknown, so no call can be said to overflow; "
                "pass --window N to check against one."
            )
        else:
            assert peak is not None
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
            threshold=limit,
            last_check_call_index=None,
            fired_too_late=False,
            gap_tokens=None,
            explanation=text,
        )

    point = points[hit]
    message_index = point.message_index

    # 2. Growth since the last recorded compaction before the call.
    since = 0
    for event in session.compactions:
        if event.message_index <= message_index:
            since = max(since, event.message_index)
    states = result.messages
    tokens_of = [state.tokens for state in states]
    candidates = [
        i
        for i in range(since, message_index)
        if not session.messages[i].sidechain and not session.messages[i].summary
    ]
    growth = sum(tokens_of[i] for i in candidates)
    first_after = next((p for p in points if p.message_index >= since), None)
    growth_recorded = (
        point.baseline_tokens - first_after.baseline_tokens
        if first_after is not None and first_after.call_index < hit
        else None
    )

    ranked = sorted(candidates, key=lambda i: (-tokens_of[i], i))[: max(top, 0)]
    contributors = [
        Contributor(
            message_index=i,
            role=session.messages[i].role.value,
            tool_name=_tool_name_of(session.messages[i]),
            tokens=tokens_of[i],
            share=(tokens_of[i] / growth) if growth else 0.0,
        )
        for i in ranked
    ]
    per_tool: dict[str, list[int]] = {}
    for i in candidates:
        tool_result = session.messages[i].tool_result
        if tool_result is not None:
            name = tool_result.tool_name or "(unknown tool)"
            per_tool.setdefault(name, []).append(tokens_of[i])
    by_tool = sorted(
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

    # 3. The policy's last threshold check up to the call, on the recording's figures.
    last_check: int | None = None
    last_check_tokens: int | None = None
    for earlier in reversed(points[: hit + 1]):
        if earlier.message_index < since:
            break
        if earlier.checked and earlier.baseline_check_tokens is not None:
            last_check = earlier.call_index
            last_check_tokens = earlier.baseline_check_tokens
            break
    # The blind spot: what arrived after the figure the last check started from (the previous
    # call's context after its reply), measured on the recording's own figures.
    gap = (
        point.baseline_tokens - points[last_check - 1].baseline_after_tokens
        if last_check is not None and last_check >= 1
        else None
    )
    check_passed = (
        last_check_tokens is not None
        and limit is not None
        and not crosses(last_check_tokens, limit, policy)
    )
    fired_too_late = overflowed and (last_check is None or check_passed)

    # 4. The explanation.
    window_text = f"{window:,}" if window else "unknown"
    sentences = []
    if overflowed:
        why = {
            "stop-length": "the provider stopped it for length",
            "error": "the provider refused it as too long for the context window",
            "over-window": "its recorded context exceeds the window",
        }.get(reason or "", "it overflowed")
        sentences.append(
            f"Call {hit} (message {message_index}) overflowed: {why} "
            f"({point.baseline_tokens:,} of {window_text} tokens)."
        )
    else:
        sentences.append(
            f"No call overflowed, but call {hit} (message {message_index}) came within "
            f"{margin:.0%} of the window ({point.baseline_tokens:,} of {window_text} tokens)."
        )
    where = f"message {since}, the last compaction" if since else "the start of the session"
    sentences.append(f"Since {where}, {growth:,} tokens of messages were added.")
    if by_tool:
        biggest = by_tool[0]
        sentences.append(
            f"Tool outputs of {biggest.tool_name} were the largest share: "
            f"{biggest.tokens:,} tokens in {biggest.outputs} output(s), {biggest.share:.0%}."
        )
    if contributors:
        first = contributors[0]
        label = f"{first.role} message {first.message_index}"
        if first.tool_name:
            label += f" ({first.tool_name})"
        sentences.append(
            f"The single biggest was {label}: {first.tokens:,} tokens, {first.share:.0%}."
        )
    if limit is not None:
        if last_check is None:
            sentences.append(
                f"The {policy.name} policy did not check its threshold ({limit:,}) between the "
                "last compaction and this call."
            )
        elif last_check_tokens is not None:
            verdict = "below" if check_passed else "above"
            arrived = (
                f"; {gap:,} tokens arrived after the figure that check started from "
                f"(call {last_check - 1})"
                if gap is not None
                else ""
            )
            sentences.append(
                f"The {policy.name} policy last checked right before call {last_check}: it "
                f"measured {last_check_tokens:,} tokens, {verdict} its threshold of "
                f"{limit:,}{arrived}."
            )
            if overflowed and check_passed:
                sentences.append(
                    "The threshold fired too late: what arrived after the last check was more "
                    "than the room between the threshold and the window."
                )
            elif overflowed:
                sentences.append(
                    f"That check would have fired in time under the {policy.name} policy; the "
                    "recording did not compact before this call."
                )

    return OverflowDiagnosis(
        overflowed=overflowed,
        call_index=hit,
        message_index=message_index,
        tokens=point.baseline_tokens,
        tokens_provenance=point.baseline_provenance.value,
        window=window,
        margin=margin,
        overflow_reason=reason,
        since_message_index=since,
        growth_tokens=growth,
        growth_recorded_tokens=growth_recorded,
        contributors=contributors,
        by_tool=by_tool,
        threshold=limit,
        last_check_call_index=last_check,
        last_check_tokens=last_check_tokens,
        fired_too_late=fired_too_late,
        gap_tokens=gap,
        explanation=" ".join(sentences),
    )
