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
``summaries``          what the compactions wrote (measured, see below)
``attachments``        what the agent injected: attached and re-read files, reminders, hook
                       output, environment context, continue-after-compaction messages
``residual``           the recorded total minus all of the above: what the calibrated categories
                       do not explain (content the transcript does not show)
=====================  ==========================================================================

Each message is first estimated with ``estimator`` (a redaction that keeps the original length,
``[REDACTED_TEXT len=N …]``, counts as N characters). The estimates are then **calibrated on the
recording itself** (:mod:`core.insights.breakdown_calibration`): within each stretch between recorded compactions,
every recorded call's growth since the stretch's first recorded call is set against the estimated
growth of each category, and one ratio per category (:data:`CALIBRATED`) is fitted to all of them
at once. A category's figure is its estimate times its ratio (``provenance`` ``calibrated``; with
fewer than :data:`MIN_CALIBRATION_CALLS` growths, or ``calibrate=False``, the estimates as they
are, ``estimated``). Three figures are measured rather than estimated:

* the system prompt + tools: the first recorded prompt less the calibrated messages before it;
  it is never scaled afterwards, so a residual is never hidden in it;
* what each compaction wrote (``summaries``): the first recorded call after it less the system
  prompt + tools and the calibrated messages it kept;
* the results of tools the provider runs itself (:data:`_HOSTED_TOOLS`, Codex's ``web_search``),
  which enter the context but not the recording: the recorded growth where they entered less the
  calibrated growth of the messages added with them (under ``tool_outputs``, per tool).

The categories are reconciled to the recorded total of the call: ``unexplained`` is the total
less the system prompt + tools and the calibrated categories. When positive it is the
``residual``; when negative the message categories are scaled down by the same factor
(``scale``) to fit the total, and the residual is 0. A call without usable usage has its estimate
as its total (``estimated``). The total is the recorded figure the gauge shows
(``CallPoint.recorded_tokens``): for the agents that record the context after the reply (Codex,
pi, opencode) the call's own reply is part of it.

Why calibrate: before it, the residual was 12–28% of the total at the median call of the long
Claude Code samples.
The replies cost 40–80% more than their visible text and tool calls (their recorded output:
thinking the transcript does not keep, the framing of each tool-use block), and Claude's
tokenizer counts tool outputs and code at 1.2–1.7× ``chars/4``. Those ratios differ by session
(model, language, kind of output), so each session's are fitted on its own usage.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import accumulate, compress, filterfalse, groupby, islice, repeat
from operator import add, and_, le, mul, sub
from typing import Any, Literal

from pydantic import Field

from core.algorithms.overflow import usable_usage
from core.formats.codex_sizes import placeholder_length
from core.gc_pause import gc_paused
from core.insights.breakdown_calibration import fit_ratio_columns, fit_ratios
from core.insights.breakdown_columns import (
    Columns,
    Parts,
    Stretch,
    Sums,
    SumsAt,
    add_column,
    rounded,
)
from core.insights.breakdown_rows import stretch_rows
from core.insights.context_walk import CompactionStep, RecordedWalk
from core.model.fastmodel import Documented, build
from core.model.session import Message, Role, Session, ToolResult
from core.model.tokens import (
    DEFAULT_ESTIMATOR,
    TokenCounter,
    arguments_text,
    get_counter,
    length_rule,
)

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

CALIBRATED = (
    "user",
    "assistant_text",
    "reasoning",
    "tool_calls",
    "tool_outputs",
    "attachments",
)
"""The categories calibrated on the recording: every message category but the system messages
(the system prompt and tools are measured, never scaled) and the summaries (measured at the
first recorded call after their compaction)."""

MIN_CALIBRATION_CALLS = 2
"""Recorded calls after the first a session needs for its ratios to be fitted."""

MAX_FIT_CALLS = 1_000
"""The ratios are fitted on at most this many calls, evenly spread over the session (a
50,000-call session is fitted on every 50th call: the same ratios, in a fiftieth of the time)."""

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
    provenance: Literal["calibrated", "estimated"] = "estimated"
    """How the message categories were measured: ``calibrated`` (the estimator times the
    session's ratio per category, :attr:`ContextBreakdown.calibration`) or ``estimated`` (the
    estimator as is: too few recorded calls to fit the ratios). The system prompt + tools are
    measured either way."""
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
    """Tool outputs per tool name, largest first: the :data:`MAX_TOOLS_PER_CALL` largest tools,
    then, when the call's context holds outputs of more tools, :data:`OTHER_TOOLS` with the rest
    of them together (so the values still add up to :attr:`tool_outputs`, and a session of
    thousands of distinct tools does not make a row per tool at every call)."""
    summaries: int
    """Compaction summaries."""
    attachments: int
    """Injected context: attachments, re-read files, reminders, hook output, environment
    context, continue-after-compaction messages."""
    residual: int
    """The recorded total minus the categories (never negative): what the calibrated categories
    do not explain at this call."""
    unexplained: int = 0
    """The recorded total minus the system prompt + tools and the calibrated categories before
    any scaling: the residual when positive; when negative, the tokens the categories
    over-explain the total by (they are then scaled down, :attr:`scale`). 0 without a recorded
    total."""
    scale: float = 1.0
    """1.0, or the factor the message categories were scaled down by because, with the system
    prompt + tools, they exceeded the recorded total."""

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
    """System prompt + tool definitions: the first recorded prompt minus the (calibrated)
    messages before it (0 without recorded usage)."""
    overhead_call_index: int | None
    """The call the overhead was measured at (None: no recorded usage)."""
    provenance: Literal["calibrated", "estimated"] = "estimated"
    """``calibrated``: the message categories are the estimator's figures times
    :attr:`calibration`; ``estimated``: the estimator's figures as they are (no or too few
    recorded calls)."""
    calibration: dict[str, float] = Field(default_factory=dict)
    """The ratio per calibrated category (recorded tokens per estimated token, fitted on this
    session's recorded growth; 1.0 when not calibrated)."""
    calibration_calls: int = 0
    """The recorded calls the ratios were fitted on (0: not calibrated)."""
    calls: list[CallBreakdown]
    """One per model call, in order."""
    notes: list[str]
    """What the figures rest on."""

    def at(self, call_index: int) -> CallBreakdown | None:
        """The breakdown of one call (None: no such call)."""
        if 0 <= call_index < len(self.calls):
            return self.calls[call_index]
        return None


_SYSTEM, _USER, _TOOL = Role.SYSTEM, Role.USER, Role.TOOL


def message_parts(message: Message, counter: TokenCounter) -> Parts:
    """``message``'s tokens in the context, by category (see the module docstring)."""
    return messages_parts((message,), counter)[0]


def messages_parts(
    messages: Iterable[Message], counter: TokenCounter, answered: _Answered | None = None
) -> list[Parts]:
    """:func:`message_parts` of each of ``messages`` (a list of its own each), in one loop: no
    call per message, and for a characters- or bytes-per-token rule a text measured by its
    length where it is ASCII (:func:`_measures`). With ``answered``, a message with tool calls
    also holds a marker per hosted tool call without a result (:func:`_hosted`)."""
    count, call_tokens, output_tokens = _measures(counter)
    # (a plain counter's ``output_tokens`` of an output held as a ``str`` is ``count`` of it)
    plain = type(counter) is TokenCounter
    keys: dict[str, str] = {}  # (each tool's key made once, not a string per message)
    # (a reply's calls are looked up by name: :func:`_hosted` only for one that calls a hosted tool)
    hosted = _HOSTED_TOOLS if answered is not None else frozenset()
    out: list[Parts] = []
    append = out.append
    for message in messages:
        role = message.role
        if message.summary:
            parts: Parts = [("summaries", _count_all(message, count, output_tokens))]
        elif role is _TOOL:
            result = message.tool_result
            if result is not None:
                name = result.tool_name or _UNKNOWN_TOOL
                held = result.output_held  # (a text held as it is: counted as a text, one call)
                tokens = count(held) if plain and type(held) is str else output_tokens(result)
            else:
                name, tokens = _UNKNOWN_TOOL, count(message.text)
            # (the agent's own measure of an output its history keeps capped, Codex's, is the
            # smaller one)
            estimate = message.agent_estimate_tokens
            if estimate is not None and estimate < tokens:
                tokens = estimate
            key = keys.get(name)
            if key is None:
                key = keys[name] = f"tool:{name}"
            parts = [(key, tokens)]
        elif role is _USER:  # (:func:`_count_all` written out: a call less a user message)
            category = "attachments" if message.meta or message.synthetic else "user"
            tokens = count(message.text)
            result = message.tool_result
            if result is not None:
                tokens += output_tokens(result)
            parts = [(category, tokens)]
        elif role is _SYSTEM:
            parts = [("system_and_tools", _count_all(message, count, output_tokens))]
        else:
            # (at least the agent's estimate of it; not by ``max``, which parses keywords in 3.11;
            # an empty reasoning, most replies', is 0 tokens for every counter: not counted)
            thought = message.reasoning
            reasoning = count(thought) if thought else 0
            least = message.reasoning_estimate_tokens
            parts = [
                ("assistant_text", count(message.text)),
                ("reasoning", least if least > reasoning else reasoning),
            ]
            marked = False  # (a hosted tool among the calls: their markers after them)
            for call in message.tool_calls:
                name = call.name
                parts.append(("tool_calls", call_tokens(name, call.arguments)))
                if name in hosted:
                    marked = True
            if marked and answered is not None:
                parts.extend(_hosted(message, answered))
            append(parts)
            continue
        if answered is not None and message.tool_calls:  # (calls beside no reply's text)
            parts.extend(_hosted(message, answered))
        append(parts)
    return out


def _measures(
    counter: TokenCounter,
) -> tuple[Callable[[str], int], Callable[[str, Any], int], Callable[[ToolResult], int]]:
    """``counter``'s ``count``, ``call_tokens`` and ``output_tokens``; for a plain counter of a
    characters- or bytes-per-token rule, ``count`` measures an ASCII text by its length (no call)
    and applies the rule once per length (:func:`core.model.tokens.length_rule`: the same
    figure); ``call_tokens`` is the counter's own function of a call's lengths
    (:meth:`TokenCounter.call_measure`, which measures an ASCII call by ``len`` too)."""
    rule = length_rule(counter.estimator) if type(counter) is TokenCounter else None
    if rule is None:
        return counter.count, counter.call_tokens, counter.output_tokens
    length, tokens_of = rule
    memo: dict[int, int] = {}
    get = memo.get

    def count(text: str) -> int:
        size = len(text) if text.isascii() else length(text)
        tokens = get(size)
        if tokens is None:
            tokens = memo[size] = tokens_of(size)
        return tokens

    return count, counter.call_measure(), counter.output_tokens


def _count_all(
    message: Message, count: Callable[[str], int], output_tokens: Callable[[ToolResult], int]
) -> int:
    tokens = count(message.text)
    if message.tool_result is not None:
        tokens += output_tokens(message.tool_result)
    return tokens


_KEPT_LENGTH = re.compile(r"\[REDACTED_[A-Z_]+ len=(\d+) sha=[0-9a-f]+\]")
"""A redaction that keeps the original length (``[REDACTED_TEXT len=N sha=…]``)."""


class _KeptLengths(TokenCounter):
    """A counter for a file whose redactions keep the original lengths: a placeholder counts as
    the text it replaced (its length at 4 characters a token), not as its own characters."""

    def count(self, text: str) -> int:
        if "[REDACTED_" not in text:
            return super().count(text)
        kept = sum(
            -(-(placeholder_length(m.group(0)) or 0) // 4) for m in _KEPT_LENGTH.finditer(text)
        )
        return super().count(_KEPT_LENGTH.sub("", text)) + kept

    def call_tokens(self, name: str, arguments: Any) -> int:
        return self.count(name + arguments_text(arguments))  # (a placeholder may span the two)

    def output_tokens(self, result: ToolResult) -> int:
        return self.count(result.output)  # (a placeholder is found in the text)


def breakdown(
    session: Session, *, estimator: str = DEFAULT_ESTIMATOR, calibrate: bool = True
) -> ContextBreakdown:
    """The context breakdown of every call of ``session`` (see the module docstring);
    ``calibrate=False`` keeps the estimator's own figures (every ratio 1.0).

    The collector is paused meanwhile (:func:`core.gc_pause.gc_paused`): the walk allocates
    a few acyclic dicts and lists per call (hundreds of thousands on 100 MB), and each
    collection they trigger walked all those built so far again (a third of the time)."""
    with gc_paused():
        found, rows = _breakdown(session, estimator, calibrate=calibrate)
        calls = list(map(build, repeat(CallBreakdown), rows))  # (typed values: not validated)
    return build(ContextBreakdown, {**found.__dict__, "calls": calls})


def breakdown_rows(
    session: Session, *, estimator: str = DEFAULT_ESTIMATOR
) -> tuple[ContextBreakdown, list[dict[str, Any]]]:
    """:func:`breakdown` with its ``calls`` left empty and given apart, each call as the fields
    of its :class:`CallBreakdown` (in the model's order): for a writer of every call's figures
    (``breakdown --json``), no model per call."""
    with gc_paused():
        return _breakdown(session, estimator, calibrate=True)


def _breakdown(
    session: Session, estimator: str, *, calibrate: bool
) -> tuple[ContextBreakdown, list[dict[str, Any]]]:
    counter = get_counter(estimator)
    if session.metadata.get("redacted_lengths_kept"):
        counter = _KeptLengths(estimator)
    walk = RecordedWalk(session)
    messages = session.messages
    # every message's parts in one loop (nearly every message is asked for), read by index
    parts = messages_parts(messages, counter, _Answered(messages))
    stretches, calls, segments = walk_stretches(walk, parts.__getitem__, counter)
    return _assemble(session, walk, calls, stretches, segments, estimator, calibrate)


def walk_stretches(
    walk: RecordedWalk, parts_of: Callable[[int], Parts], counter: TokenCounter
) -> tuple[list[Stretch], list[tuple[int, int]], list[int]]:
    """The recorded walk (:meth:`core.insights.context_walk.RecordedWalk.steps`) as stretches:
    each recorded compaction starts one from the context it left (what it wrote and kept),
    and between two compactions the calls (each with its own reply where its total is measured
    after it) and the messages joining the context are taken as one span (no Python step per
    message: the calls' positions are a running count); the running sums are added up per
    stretch afterwards (:meth:`Stretch.columns`). Also every call with its message, and the
    stretch of each call."""
    compacted: dict[int, list[CompactionStep]] = {}
    for step in walk.compaction_steps():
        compacted.setdefault(step.compaction.m_c, []).append(step)
    n, messages = walk.calls.n, walk.session.messages
    call_of, walked = walk.calls.call_of, walk.recorded.walked
    after_reply, main = walk.calls.after_reply, walk.calls.main
    stretch = Stretch(0, [])
    stretches = [stretch]
    calls: list[tuple[int, int]] = []  # (call, its message)
    segments: list[int] = []
    walk_start = 0
    edges = sorted({0, *(i for i in compacted if i < n)})
    for start, end in zip(edges, [*edges[1:], n], strict=True):
        for step in compacted.get(start, ()):
            wrote: Parts = [p for j in step.context for p in parts_of(j)]
            summary = step.compaction.summary_message
            if summary is not None:
                wrote.append(("summaries", counter.count(summary.text)))
            stretch = Stretch(len(calls), wrote)
            stretches.append(stretch)
            walk_start = step.compaction.owned_end
        is_call = bytearray(map(le, repeat(0), call_of[start:end]))
        at = list(compress(range(start, end), is_call))  # the span's calls' messages
        numbers = list(map(call_of.__getitem__, at))
        calls += zip(numbers, at, strict=True)
        segments += repeat(len(stretches) - 1, len(at))
        replies = [
            (position, _reply(messages[i], parts_of(i)))
            for position, i in compress(
                enumerate(at),
                map(and_, map(after_reply.__getitem__, numbers), map(main.__getitem__, at)),
            )
        ]
        # (a message joins after the calls up to its own: the running count of the span's calls)
        first = min(max(start, walk_start), end)
        joined = walked[first:end]
        positions = compress(islice(accumulate(is_call), first - start, None), joined)
        joining = map(parts_of, compress(range(first, end), joined))
        stretch.take(len(at), replies, zip(positions, joining, strict=True))
    return stretches, calls, segments


def _assemble(
    session: Session,
    walk: RecordedWalk,
    calls: list[tuple[int, int]],
    stretches: list[Stretch],
    segments: list[int],
    estimator: str,
    calibrate: bool,
) -> tuple[ContextBreakdown, list[dict[str, Any]]]:
    columns = [stretch.columns() for stretch in stretches]
    sums_at = SumsAt(stretches, columns, segments)
    any_hidden = any(key.startswith(_HIDDEN) for found in columns for key in found)
    usage_context = walk.calls.usage_context
    recorded = [usage_context[call] for call, _i in calls]
    starts = _segment_starts(recorded, segments)
    first = min(starts.values(), default=None)
    ratios, fitted_on = dict.fromkeys(CALIBRATED, 1.0), 0
    hidden: dict[int, int] = {}
    if calibrate:
        ratios, fitted_on = _calibrate(
            sums_at, recorded, segments, starts, hidden, markers=any_hidden
        )
        if any_hidden:
            # measure the hosted tools' results with these ratios, then fit again without them
            hidden = _measure_hidden(sums_at.every(), recorded, segments, ratios)
            ratios, fitted_on = _calibrate(
                sums_at, recorded, segments, starts, hidden, markers=any_hidden
            )
    calibrated = [_scaled(found, ratios, hidden) for found in columns]
    overhead = 0
    if first is not None:
        stretch = stretches[segments[first]]
        position = first - stretch.first
        before = stretch.before_reply(columns[segments[first]], position)
        at_first = sum(column[position] for column in calibrated[segments[first]].values())
        overhead = _overhead(session, calls[first][1], recorded[first], at_first, before, ratios)
        if calibrate:
            _measure_summaries(calibrated, stretches, recorded, starts, first, overhead)
    provenance: Literal["calibrated", "estimated"] = "calibrated" if fitted_on else "estimated"
    rows: list[dict[str, Any]] = []
    over: list[float] = []  # by how much each scaled-down call's categories over-explained it
    for stretch, found in zip(stretches, calibrated, strict=True):
        rows += stretch_rows(
            stretch.first, stretch.calls, found, calls, recorded, overhead, provenance, over
        )
    result = build(  # (typed values; the calls are the caller's to add)
        ContextBreakdown,
        {
            "estimator": estimator,
            "overhead_tokens": overhead,
            "overhead_call_index": calls[first][0] if first is not None else None,
            "provenance": provenance,
            "calibration": ratios,
            "calibration_calls": fitted_on,
            "calls": [],
            "notes": _notes(over, estimator, first is not None, fitted_on, hidden),
        },
    )
    return result, rows


def _overhead(
    session: Session,
    message_index: int,
    recorded: int | None,
    calibrated: int,
    before: Sums,
    ratios: dict[str, float],
) -> int:
    """System prompt + tools: the first recorded prompt less the (calibrated) messages before
    it (``calibrated``: their sum at the call; ``before``: the call's sums without its reply);
    for a total recorded after the reply, the prompt the call's usage names."""
    usage = usable_usage(session.messages[message_index])
    if usage is not None:
        return max(0, usage.prompt_tokens - sum(_calibrated(_resolve(before, {}), ratios).values()))
    return max(0, _known(recorded) - calibrated)


def _known(total: int | None) -> int:
    assert total is not None
    return total


def _segment_starts(recorded: list[int | None], segments: list[int]) -> dict[int, int]:
    """Per stretch between recorded compactions, its first call with a recorded total
    (``segments``: each call's stretch, in order, so never decreasing: once a stretch's first
    recorded call is found, the search goes on at the next stretch's first call, found by
    bisection, not call by call)."""
    if len(recorded) != len(segments):
        raise ValueError("a stretch for every call")
    starts: dict[int, int] = {}
    n, size = 0, len(segments)
    while n < size:
        total = recorded[n]
        if total is not None and total > 0:
            segment = segments[n]
            starts[segment] = n
            n = bisect_right(segments, segment, n)
        else:
            n += 1
    return starts


def _fitted_calls(recorded: list[int | None], starts: dict[int, int]) -> list[int]:
    """The calls the ratios may be fitted on: each call with a recorded total (above 0) but the
    first of its stretch (``starts``). The calls with a total are picked in C (``compress``
    by the totals themselves); a session with a total below 0 is read call by call."""
    first = set(starts.values())
    if min(filter(None, recorded), default=1) > 0:
        return list(filterfalse(first.__contains__, compress(range(len(recorded)), recorded)))
    return [
        n for n, total in enumerate(recorded) if total is not None and total > 0 and n not in first
    ]


def _measure_summaries(
    calibrated: list[Columns],
    stretches: list[Stretch],
    recorded: list[int | None],
    starts: dict[int, int],
    first: int,
    overhead: int,
) -> None:
    """What each compaction wrote, measured at the first recorded call after it: that call's
    total less the system prompt + tools and the calibrated messages it kept. Replaces the
    estimated summary in every call of the stretch."""
    for segment, n in starts.items():
        if n == first:
            continue
        columns, stretch = calibrated[segment], stretches[segment]
        position = n - stretch.first
        estimated = sum(c[position] for k, c in columns.items() if _category(k) == "summaries")
        kept = sum(c[position] for c in columns.values()) - estimated
        delta = max(0, _known(recorded[n]) - overhead - kept) - estimated
        if delta:
            columns["summaries:measured"] = [delta] * stretch.calls


def _notes(
    over: list[float],
    estimator: str,
    measured: bool,
    fitted_on: int,
    hidden: dict[int, int],
) -> list[str]:
    notes: list[str] = []
    if not measured:
        notes.append(
            "no recorded usage: every total is an estimate and the system prompt and tool "
            "definitions cannot be measured"
        )
    elif not fitted_on:
        notes.append(f"not calibrated: the categories are {estimator}'s own estimates")
    else:
        notes.append(
            f"categories calibrated: {estimator} times this session's own ratio per category, "
            f"fitted on the recorded growth of {fitted_on} call(s) (see calibration)"
        )
    if hidden:
        notes.append(
            "the results of tools the provider runs itself are not in the recording: "
            f"measured from the recorded growth where they entered ({sum(hidden.values()):,} "
            "tokens, under tool outputs)"
        )
    over = sorted(over)
    if over:
        notes.append(
            f"at {len(over)} call(s) the categories over-explained the recorded total (by "
            f"{over[len(over) // 2]:.1%} at the median one) and were scaled down to it, the "
            "system prompt + tools as measured"
        )
    return notes


def _category(key: str) -> str:
    head = key.partition(":")[0]
    return "tool_outputs" if head == "tool" else head


def _calibrate(
    sums_at: SumsAt,
    recorded: list[int | None],
    segments: list[int],
    starts: dict[int, int],
    hidden: dict[int, int],
    *,
    markers: bool,
) -> tuple[dict[str, float], int]:
    """The ratio per category and the number of calls it was fitted on (0: not calibrated):
    each call's growth since the first recorded call of its stretch (less what is measured:
    system messages, the ``hidden`` results of hosted tools; ``markers``: the session holds
    hosted tools' markers, else each call's categories are read from its stretch's columns
    added up by category)."""

    def by_category(n: int) -> Sums:
        if markers:
            return _by_category(_resolve(sums_at[n], hidden))
        return sums_at.grouped_at(n, _category)

    growth: list[dict[str, int]] = []
    recorded_growth: list[int] = []
    totals: list[int] = []
    usable = _fitted_calls(recorded, starts)
    stride = max(1, -(-len(usable) // MAX_FIT_CALLS))
    if not markers:  # (each category's growth read as a column from its stretch's)
        picked = usable[::stride]
        if len(picked) < MIN_CALIBRATION_CALLS:
            return dict.fromkeys(CALIBRATED, 1.0), 0
        columns = _growth_columns(sums_at, recorded, segments, starts, picked)
        return fit_ratio_columns(*columns, CALIBRATED), len(picked)
    bases: dict[int, Sums] = {}  # each stretch's first recorded call, by category
    for n in usable[::stride]:
        total, start = _known(recorded[n]), starts[segments[n]]
        now = by_category(n)
        base = bases.get(start)
        if base is None:
            base = bases[start] = by_category(start)
        growth.append({k: now.get(k, 0) - base.get(k, 0) for k in CALIBRATED})
        fixed = sum(now.get(k, 0) - base.get(k, 0) for k in ("system_and_tools", _MEASURED))
        recorded_growth.append(total - _known(recorded[start]) - fixed)
        totals.append(total)
    if len(growth) < MIN_CALIBRATION_CALLS:
        return dict.fromkeys(CALIBRATED, 1.0), 0
    return fit_ratios(growth, recorded_growth, totals, CALIBRATED), len(growth)


def _growth_columns(
    sums_at: SumsAt,
    recorded: list[int | None],
    segments: list[int],
    starts: dict[int, int],
    picked: list[int],
) -> tuple[list[list[int]], list[int], list[int]]:
    """What :func:`_calibrate` fits the ratios on, for the calls ``picked`` of a session without
    hosted tools' markers, as columns: each calibrated category's growth since the first
    recorded call of the call's stretch (a column per category of :data:`CALIBRATED`), the
    recorded growth less what is measured (system messages), and the recorded totals. Read
    from each stretch's columns added up by category (:meth:`SumsAt.grouped`), a stretch's
    picked calls at once (no dict per call)."""
    growth: list[list[int]] = [[] for _ in CALIBRATED]
    recorded_growth: list[int] = []
    totals = [_known(recorded[n]) for n in picked]
    for segment, run in groupby(picked, segments.__getitem__):
        calls = list(run)
        start = starts[segment]
        first, grouped = sums_at.grouped(segment, _category)
        positions = [n - first for n in calls]
        base = start - first
        for out, key in zip(growth, CALIBRATED, strict=True):
            found = _moved(grouped.get(key), positions, base)
            out += repeat(0, len(calls)) if found is None else found
        fixed: list[int] = [0] * len(calls)
        for key in ("system_and_tools", _MEASURED):
            found = _moved(grouped.get(key), positions, base)
            if found is not None:
                fixed = list(map(add, fixed, found))
        since = map(sub, map(recorded.__getitem__, calls), repeat(_known(recorded[start])))
        recorded_growth += map(sub, since, fixed)
    return growth, recorded_growth, totals


def _moved(column: list[int] | None, positions: list[int], base: int) -> list[int] | None:
    """``column`` at each of ``positions`` less its value at ``base`` (None: no column)."""
    if column is None:
        return None
    return list(map(sub, map(column.__getitem__, positions), repeat(column[base])))


_HOSTED_TOOLS = frozenset({"web_search"})
"""Tools the provider runs itself (Codex's ``web_search_call``): their results enter the context
but not the recording."""
_HIDDEN = "hidden:"
"""The key of a hosted tool's unrecorded result: ``hidden:<message>:<tool>``."""
_MEASURED = "measured"
"""The head of a key measured from the recorded usage, never calibrated:
``measured:tool:<tool>``."""


class _Answered:
    """The ids of the tool calls the session holds a result for, gathered when first asked
    (only a session with a hosted tool call asks)."""

    def __init__(self, messages: list[Message]) -> None:
        self._messages = messages
        self._ids: set[str] | None = None

    def __contains__(self, call_id: object) -> bool:
        if self._ids is None:
            self._ids = {m.tool_result.call_id for m in self._messages if m.tool_result is not None}
        return call_id in self._ids


def _hosted(message: Message, answered: _Answered) -> Parts:
    """A marker per hosted tool call the recording holds no result for (its size is measured
    by :func:`_measure_hidden`; until then 1 token, so the walk carries it)."""
    markers: Parts = []  # (a loop, not a comprehension: no function made per message)
    for call in message.tool_calls:
        if call.name in _HOSTED_TOOLS and call.id not in answered:
            markers.append((f"{_HIDDEN}{message.index}:{call.name}", 1))
    return markers


def _resolve(sums: Sums, hidden: dict[int, int]) -> Sums:
    """``sums`` with each hosted tool's marker replaced by its measured result."""
    if not any(key.startswith(_HIDDEN) for key in sums):
        return sums
    out: Counter[str] = Counter()
    for key, tokens in sums.items():
        if key.startswith(_HIDDEN):
            index, _, name = key.removeprefix(_HIDDEN).partition(":")
            out[f"{_MEASURED}:tool:{name}"] += hidden.get(int(index), 0)
        else:
            out[key] += tokens
    return out


def _measure_hidden(
    sums_at: list[Sums],
    recorded: list[int | None],
    segments: list[int],
    ratios: dict[str, float],
) -> dict[int, int]:
    """The unrecorded result of each hosted tool call, measured where it entered: the recorded
    growth from the previous recorded call of its stretch less the calibrated growth of the
    messages added (shared evenly by the hosted calls that entered together; never negative)."""
    entered: dict[int, list[int]] = {}
    seen: set[int] = set()
    for n, sums in enumerate(sums_at):
        for key in sums:
            if key.startswith(_HIDDEN):
                index = int(key.removeprefix(_HIDDEN).partition(":")[0])
                if index not in seen:
                    seen.add(index)
                    entered.setdefault(n, []).append(index)
    measured: dict[int, int] = {}
    for n, indices in entered.items():
        previous = next(
            (
                p
                for p in range(n - 1, -1, -1)
                if recorded[p] is not None and segments[p] == segments[n]
            ),
            None,
        )
        total = recorded[n]
        if previous is None or total is None:
            continue
        explained = sum(_calibrated(_resolve(sums_at[n], measured), ratios).values()) - sum(
            _calibrated(_resolve(sums_at[previous], measured), ratios).values()
        )
        unexplained = total - _known(recorded[previous]) - explained
        for index in indices:
            measured[index] = max(0, unexplained // len(indices))
    return measured


def _by_category(sums: Sums) -> Counter[str]:
    out: Counter[str] = Counter()
    for key, tokens in sums.items():
        out[_category(key)] += tokens
    return out


def _calibrated(sums: Sums, ratios: dict[str, float]) -> Sums:
    """``sums`` with every message category times its ratio (system messages as measured)."""
    return {key: round(tokens * ratios.get(_category(key), 1.0)) for key, tokens in sums.items()}


def _scaled(columns: Columns, ratios: dict[str, float], hidden: dict[int, int]) -> Columns:
    """:func:`_calibrated` of every call of a stretch, key by key (each hosted tool's marker
    replaced by its measured result first, as :func:`_resolve` does)."""
    out: Columns = {}
    for key, column in columns.items():
        if key.startswith(_HIDDEN):
            index, _, name = key.removeprefix(_HIDDEN).partition(":")
            value = hidden.get(int(index), 0)
            add_column(out, f"{_MEASURED}:tool:{name}", [value if t else 0 for t in column])
            continue
        ratio = ratios.get(_category(key), 1.0)
        scaled = column if ratio == 1.0 else rounded(map(mul, column, repeat(float(ratio))))
        add_column(out, key, scaled)
    return out


def _reply(message: Message, parts: Parts) -> Sums:
    """The call's own reply, for a total measured after it: its parts summed by key (a reply
    with several tool calls adds them all), the reasoning at least the recorded reasoning
    tokens."""
    reply: Sums = {}
    get = reply.get
    for key, tokens in parts:
        reply[key] = get(key, 0) + tokens
    if "reasoning" in reply:
        usage = message.usage
        reply["reasoning"] = max(reply["reasoning"], usage.reasoning if usage is not None else 0)
    return reply
