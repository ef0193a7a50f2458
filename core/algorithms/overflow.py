"""T7: how full the context was, and when a policy compacts: the rules a replay applies.

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
  ``gemini-cli`` ``tokens >= floor(ratio x window)`` (0.5 of Gemini CLI's token limit)
  ``qwen-code`` ``tokens >= min(floor(ratio x window), window - reserve - buffer)`` (the
                proportional figure alone when that ceiling is not positive)

* **Projection** — :func:`project`: the last known context plus the estimated tokens of every
  message added since (tool results the model has not seen yet). Checking it before every model
  call closes the mid-turn gap of the under-compaction analysis.
* **Recognition** — :func:`overflow_reason` says whether a recorded call overflowed (stop reason
  ``length``, a provider context-overflow error, or recorded context > window).

These rules are what the replay (:mod:`core.replay`) applies; the diagnosis of a replayed session
(why it overflowed, what filled the window) is :mod:`core.insights.diagnosis`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from core.agents.overflow_errors import is_context_overflow_message as _recognise_overflow
from core.model.session import (
    BEFORE_REPLY_CONVENTIONS,
    Message,
    Role,
    Usage,
    UsageColumns,
    UsageConvention,
    context_column,
    usage_columns,
)

if TYPE_CHECKING:
    from core.policy import Policy

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
    return recorded_side(usage.convention)


def recorded_side(convention: UsageConvention) -> RecordedKind:
    """:func:`recorded_kind` of a usage recorded in ``convention`` (the side depends on it
    alone: a reader of many calls asks once per convention)."""
    if convention in BEFORE_REPLY_CONVENTIONS:
        return "before-reply"
    return "after-reply"


def usable_usage(message: Message) -> Usage | None:
    """The message's usage when it holds a real figure: None for no usage or an all-zero one.

    Aborted calls often record zeros (pi writes ``totalTokens: 0`` for an aborted reply); such
    a figure says nothing about the context and is treated as missing.
    """
    usage = message.usage
    if usage is None or not _usable(usage.context_tokens):
        return None
    return usage


def _usable(context: int) -> bool:
    """A usage whose context figure is ``context`` says something of the context (not zero)."""
    return context > 0


def usable_columns(usages: Sequence[Usage | None]) -> UsageColumns:
    """:func:`~core.model.session.usage_columns` of ``usages``, with None in every column where
    the usage is not usable (what :func:`usable_usage` says of a message holding it): every
    call's figures read in one pass, as the calls of a replay read them."""
    columns = usage_columns(usages)
    _drop_unusable(columns.context, columns)
    return columns


def usable_context(usages: Sequence[Usage | None]) -> list[int | None]:
    """The context column of :func:`usable_columns` alone (what the gauge draws)."""
    context = context_column(usages)
    _drop_unusable(context, (context,))
    return context


def _drop_unusable(context: list[int | None], columns: Iterable[list[Any]]) -> None:
    """None in each of ``columns`` where ``context`` (one of them) holds a figure that is not
    usable."""
    figures = [figure for figure in context if figure is not None]
    if not figures or _usable(min(figures)):  # (the least is usable: all are, nearly always)
        return
    dropped = [c for c, figure in enumerate(context) if figure is not None and not _usable(figure)]
    for column in columns:
        for c in dropped:
            column[c] = None


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
    if rules.auto_compact_token_limit is not None:
        return rules.auto_compact_token_limit
    if rules.threshold_rule == "pi":
        return max(0, window - rules.reserve_tokens)
    if rules.threshold_rule == "codex":
        return int((model_window or window) * rules.codex_ratio)
    if rules.threshold_rule == "gemini-cli":
        return int(window * rules.codex_ratio)
    if rules.threshold_rule == "qwen-code":
        # A proportional trigger under an absolute ceiling that leaves room for the summary;
        # a window too small for the ceiling falls back to the proportional figure.
        proportional = int(window * rules.codex_ratio)
        ceiling = window - rules.reserve_tokens - rules.autocompact_buffer_tokens
        return min(proportional, ceiling) if ceiling > 0 else proportional
    if rules.threshold_rule == "claude-code":
        # The reserve for the summary's output is capped at the model's own output limit.
        reserve = min(max_output_tokens or rules.reserve_tokens, rules.reserve_tokens)
        return max(0, window - reserve - rules.autocompact_buffer_tokens)
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
    (:func:`core.agents.overflow_errors.is_context_overflow_message`; rate limits never are)."""
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
