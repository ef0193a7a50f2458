"""What fills the window: the recorded context of every model call, split into categories.

:func:`breakdown` walks the recording's own context (:mod:`core.insights.context_walk`: the recorded
compactions applied where they happened) and, at every call, adds up the estimated tokens of the
messages in it by what they are:

=====================  ==========================================================================
``system_and_tools``   the system prompt and the tool definitions: the part of the first recorded
                       prompt that no message accounts for (carried forward to every call), plus
                       any system message the transcript holds
``user``               what the user typed
``assistant_text``     the model's visible text
``reasoning``          its reasoning (in clear, or the agent's estimate of the encrypted part)
``tool_calls``         the arguments of the tools it called
``tool_outputs``       the tools' outputs, also per tool (``tool_outputs_by_tool``)
``summaries``          compaction summaries
``attachments``        what the agent injected: attached and re-read files, reminders, hook
                       output, environment context, continue-after-compaction messages
``residual``           the recorded total minus all of the above: tokenizer differences and what
                       the transcript does not show
=====================  ==========================================================================

The estimates are reconciled to the recorded total of the call, never adding up to more than
it: when they fall short the rest is the residual; when they exceed it (an estimator that
over-counts a kind of content) every category is scaled down by the same factor (``scale``) and
the residual is 0. A call without usable usage has its estimate as its total (``estimated``).
The total is the recorded figure the gauge shows (``CallPoint.recorded_tokens``): for the agents
that record the context after the reply (Codex, pi, opencode) the call's own reply is part of it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Literal

from core.algorithms.overflow import usable_usage
from core.insights.context_walk import CallStep, CompactionStep, RecordedWalk
from core.model.fastmodel import build
from core.model.session import Message, Role, Session
from core.model.tokens import DEFAULT_ESTIMATOR, TokenCounter, arguments_text, get_counter
from core.replay.results import Documented

CATEGORIES = (
    "system_and_tools",
    "user",
    "assistant_text",
    "reasoning",
    "tool_calls",
    "tool_outputs",
    "summaries",
    "attachments",
    "residual",
)
"""The categories, in the order they are stacked (bottom first)."""

CATEGORY_LABELS = {
    "system_and_tools": "system + tools",
    "user": "user",
    "assistant_text": "assistant",
    "reasoning": "reasoning",
    "tool_calls": "tool calls",
    "tool_outputs": "tool outputs",
    "summaries": "summaries",
    "attachments": "attachments",
    "residual": "residual",
}
"""What the UI and the CLI call each category."""

CATEGORY_SHORT = {
    "system_and_tools": "sys",
    "user": "user",
    "assistant_text": "asst",
    "reasoning": "think",
    "tool_calls": "calls",
    "tool_outputs": "outs",
    "summaries": "summ",
    "attachments": "attach",
    "residual": "resid",
}
"""Each category in at most six cells (table headers, the chart's legend when narrow)."""

_UNKNOWN_TOOL = "(unknown tool)"

Parts = list[tuple[str, int]]
"""A message's tokens by category key: a category, or ``tool:NAME`` for a tool's output."""


class CallBreakdown(Documented):
    """The recorded context of one model call, split by what fills it."""

    call_index: int
    """The call (0-based, as ``CallPoint.call_index``)."""
    message_index: int
    """Its assistant message."""
    total_tokens: int
    """The call's recorded context (``CallPoint.recorded_tokens``), or the estimate when it has
    no usable usage; the categories and the residual add up to it."""
    total_provenance: Literal["recorded", "estimated"]
    """``recorded`` (the provider's usage) or ``estimated`` (no usable usage: the sum of the
    estimates, residual 0)."""
    system_and_tools: int
    """System prompt and tool definitions (the first call's unexplained prompt, carried
    forward) plus system messages."""
    user: int
    """What the user typed."""
    assistant_text: int
    """The model's visible text."""
    reasoning: int
    """Reasoning kept in the context (in clear, or the agent's estimate of encrypted reasoning;
    for the call's own reply, at least the recorded reasoning tokens)."""
    tool_calls: int
    """Tool-call arguments the model wrote."""
    tool_outputs: int
    """Tool outputs, all tools together."""
    tool_outputs_by_tool: dict[str, int]
    """Tool outputs per tool name, largest first."""
    summaries: int
    """Compaction summaries."""
    attachments: int
    """Injected context: attachments, re-read files, reminders, hook output, environment
    context, continue-after-compaction messages."""
    residual: int
    """The recorded total minus the categories (never negative): tokenizer differences and
    what the transcript does not show."""
    scale: float = 1.0
    """1.0, or the factor the estimates were scaled down by because they exceeded the recorded
    total."""

    def tokens(self, category: str) -> int:
        """The tokens of ``category`` (one of :data:`CATEGORIES`)."""
        value: int = getattr(self, category)
        return value


class ContextBreakdown(Documented):
    """What fills the window at every model call (``ctxscope breakdown``; ``breakdown`` in
    ``analyze --json``)."""

    estimator: str
    """The estimator the categories are measured with."""
    overhead_tokens: int
    """System prompt + tool definitions: the first recorded prompt minus the estimated messages
    before it (0 without recorded usage)."""
    overhead_call_index: int | None
    """The call the overhead was measured at (None: no recorded usage)."""
    calls: list[CallBreakdown]
    """One per model call, in order."""
    notes: list[str]
    """What the figures rest on."""

    def at(self, call_index: int) -> CallBreakdown | None:
        """The breakdown of one call (None: no such call)."""
        if 0 <= call_index < len(self.calls):
            return self.calls[call_index]
        return None


def message_parts(message: Message, counter: TokenCounter) -> Parts:
    """``message``'s tokens in the context, by category (see the module docstring)."""
    if message.summary:
        return [("summaries", _count_all(message, counter))]
    if message.role is Role.SYSTEM:
        return [("system_and_tools", _count_all(message, counter))]
    if message.role is Role.USER:
        category = "attachments" if message.meta or message.synthetic else "user"
        return [(category, _count_all(message, counter))]
    if message.role is Role.TOOL:
        return [_tool_output(message, counter)]
    parts: Parts = [
        ("assistant_text", counter.count(message.text)),
        ("reasoning", max(counter.count(message.reasoning), message.reasoning_estimate_tokens)),
    ]
    for call in message.tool_calls:
        parts.append(("tool_calls", counter.count(call.name + arguments_text(call.arguments))))
    return parts


def _tool_output(message: Message, counter: TokenCounter) -> tuple[str, int]:
    result = message.tool_result
    name = (result.tool_name if result is not None else None) or _UNKNOWN_TOOL
    tokens = counter.count(result.output) if result is not None else counter.count(message.text)
    # The agent's own measure of an output its history keeps capped (Codex) is the smaller one.
    estimate = message.agent_estimate_tokens
    if estimate is not None:
        tokens = min(tokens, estimate)
    return f"tool:{name}", tokens


def _count_all(message: Message, counter: TokenCounter) -> int:
    tokens = counter.count(message.text)
    if message.tool_result is not None:
        tokens += counter.count(message.tool_result.output)
    return tokens


class _Running:
    """The categories of the context so far, kept up to date as the walk goes."""

    def __init__(self) -> None:
        self.sums: Counter[str] = Counter()

    def add(self, parts: Parts) -> None:
        for key, tokens in parts:
            self.sums[key] += tokens

    def reset(self, parts: Parts) -> None:
        self.sums = Counter()
        self.add(parts)

    @property
    def total(self) -> int:
        return sum(self.sums.values())


def breakdown(session: Session, *, estimator: str = DEFAULT_ESTIMATOR) -> ContextBreakdown:
    """The context breakdown of every call of ``session`` (see the module docstring)."""
    counter = get_counter(estimator)
    walk = RecordedWalk(session)
    messages = session.messages
    parts: dict[int, Parts] = {}

    def parts_of(i: int) -> Parts:
        cached = parts.get(i)
        if cached is None:
            cached = parts[i] = message_parts(messages[i], counter)
        return cached

    running = _Running()
    raw: list[tuple[CallStep, Counter[str]]] = []
    for step in walk.steps():
        if isinstance(step, CompactionStep):
            wrote: Parts = [p for j in step.context for p in parts_of(j)]
            summary = step.compaction.summary_message
            if summary is not None:
                wrote.append(("summaries", counter.count(summary.text)))
            running.reset(wrote)
        elif isinstance(step, CallStep):
            raw.append((step, Counter(running.sums)))
        else:
            running.add(parts_of(step.index))
    return _assemble(session, walk, raw, parts_of, estimator)


def _assemble(
    session: Session,
    walk: RecordedWalk,
    raw: list[tuple[CallStep, Counter[str]]],
    parts_of: Callable[[int], Parts],
    estimator: str,
) -> ContextBreakdown:
    calls = walk.calls
    overhead, overhead_call = _overhead(walk, raw)
    rows: list[CallBreakdown] = []
    for step, sums in raw:
        c, i = step.call_index, step.message_index
        if calls.kinds[c] == "after-reply" and calls.main[i]:
            sums = sums + Counter(dict(_reply_parts(session.messages[i], parts_of(i))))
        rows.append(_row(step, sums, overhead, calls.usage_context[c]))
    notes: list[str] = []
    if overhead_call is None:
        notes.append(
            "no recorded usage: every total is an estimate and the system prompt and tool "
            "definitions cannot be measured"
        )
    scaled = sum(1 for row in rows if row.scale < 1.0)
    if scaled:
        notes.append(
            f"at {scaled} call(s) the estimates exceeded the recorded total and were scaled "
            f"down to it ({estimator} over-counts some content)"
        )
    return ContextBreakdown(
        estimator=estimator,
        overhead_tokens=overhead,
        overhead_call_index=overhead_call,
        calls=rows,
        notes=notes,
    )


def _reply_parts(message: Message, parts: Parts) -> Parts:
    """The call's own reply, for a total measured after it: at least its recorded reasoning."""
    usage = message.usage
    recorded_reasoning = usage.reasoning if usage is not None else 0
    return [
        (key, max(tokens, recorded_reasoning) if key == "reasoning" else tokens)
        for key, tokens in parts
    ]


def _overhead(
    walk: RecordedWalk, raw: list[tuple[CallStep, Counter[str]]]
) -> tuple[int, int | None]:
    """The first recorded prompt minus the estimated messages before it, and that call."""
    messages = walk.session.messages
    for step, sums in raw:
        usage = usable_usage(messages[step.message_index])
        if usage is not None:
            return max(0, usage.prompt_tokens - sum(sums.values())), step.call_index
    return 0, None


def _row(step: CallStep, sums: Counter[str], overhead: int, recorded: int | None) -> CallBreakdown:
    keys = sorted(sums)
    values = [sums[k] for k in keys]
    keys.append("system_and_tools:overhead")
    values.append(overhead)
    estimated = sum(values)
    scale = 1.0
    if recorded is None:
        total, provenance, residual = estimated, "estimated", 0
    else:
        total, provenance = recorded, "recorded"
        if estimated > recorded:
            scale = recorded / estimated
            values = fit(values, recorded)
        residual = recorded - sum(values)
    # One pass over the keys ("category" or "category:detail"; tools are "tool:<name>").
    category: dict[str, int] = {}
    by_tool: dict[str, int] = {}
    for key, tokens in zip(keys, values, strict=True):
        head, _, detail = key.partition(":")
        category[head] = category.get(head, 0) + tokens
        if head == "tool" and tokens:
            by_tool[detail] = tokens
    tools = dict(sorted(by_tool.items(), key=lambda kv: (-kv[1], kv[0])))
    return build(  # (typed values, 50,000 calls on 100 MB: no validation)
        CallBreakdown,
        {
            "call_index": step.call_index,
            "message_index": step.message_index,
            "total_tokens": total,
            "total_provenance": "recorded" if provenance == "recorded" else "estimated",
            "system_and_tools": category.get("system_and_tools", 0),
            "user": category.get("user", 0),
            "assistant_text": category.get("assistant_text", 0),
            "reasoning": category.get("reasoning", 0),
            "tool_calls": category.get("tool_calls", 0),
            "tool_outputs": sum(tools.values()),
            "tool_outputs_by_tool": tools,
            "summaries": category.get("summaries", 0),
            "attachments": category.get("attachments", 0),
            "residual": residual,
            "scale": round(scale, 4),
        },
    )


def fit(values: list[int], total: int) -> list[int]:
    """``values`` scaled down to add up to exactly ``total`` (largest remainders first)."""
    whole = sum(values)
    if whole <= total or whole == 0:
        return list(values)
    exact = [v * total / whole for v in values]
    floors = [int(x) for x in exact]
    short = total - sum(floors)
    order = sorted(range(len(values)), key=lambda k: (floors[k] - exact[k], k))
    for k in order[:short]:
        floors[k] += 1
    return floors
