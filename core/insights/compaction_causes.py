"""Why each compaction ran: what filled the window since the previous one, the threshold, and the
check that crossed it.

:func:`compaction_causes` reads a replay (it never replays) and gives one :class:`CompactionCause`
per compaction: every compaction the recording holds (with the replay's check on the recording's
figures, from its fidelity rows), and every compaction the policy made on its own (a replay
compaction that took no recorded one). The growth is read as the overflow diagnosis reads it
(:func:`core.insights.diagnosis.what_filled`): the messages added since the previous compaction of the same
timeline, the biggest of them, and the tool outputs per tool.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, Literal

from pydantic import Field

from core.insights.diagnosis import Contributor, ToolShare, what_filled
from core.model.fastmodel import build
from core.model.session import Session
from core.replay.results import Documented, FidelityRow, ReplayEvent, ReplayResult

CompactionSource = Literal["recorded", "replayed"]


class CompactionCause(Documented):
    """Why one compaction ran."""

    source: CompactionSource
    """``recorded`` (the session holds it) or ``replayed`` (the policy made it on its own)."""
    recorded_index: int | None
    """Index into ``Session.compactions`` (recorded ones)."""
    event_id: int | None
    """Index into the replay's ``events`` of the compaction that made or took it (None: the
    replay did not)."""
    message_index: int
    """The message it happened before."""
    call_index: int | None
    """The call it came before (an overflow recovery: the refused call)."""
    trigger: str
    """Recorded: ``auto``, ``manual``, ``overflow``, ``hook`` or ``unknown``; replayed:
    ``threshold``, ``projection``, ``overflow`` or ``manual``."""
    trigger_evidence: str = ""
    """What the trigger rests on."""
    since_message_index: int
    """Where the growth starts: the previous compaction of the same timeline (0: none)."""
    growth_tokens: int
    """Tokens of the messages added since then (summaries left out), in the replay's estimator."""
    growth_recorded_tokens: int | None = None
    """Growth of the recorded context from the first call after the previous compaction to the
    call that crossed the threshold (recorded compactions)."""
    contributors: list[Contributor] = Field(default_factory=list)
    """The biggest messages of that growth, largest first."""
    by_tool: list[ToolShare] = Field(default_factory=list)
    """Tool outputs of that growth, per tool, largest first."""
    threshold: int | None = None
    """The threshold of the check before the compaction."""
    check_tokens: int | None = None
    """What that check measured."""
    crossed_at_call_index: int | None = None
    """The call whose context the check measured (the call before the compaction; for an
    overflow recovery, the refused call). None for the user's compactions."""
    window: int | None = None
    """The window at that call."""
    explanation: str = ""
    """A sentence or two."""


def compaction_causes(
    session: Session, result: ReplayResult, top: int = 5
) -> list[CompactionCause]:
    """One :class:`CompactionCause` per compaction of ``session`` and of its replay ``result``
    (see the module docstring), recorded ones first, each list in order."""
    if not result.fidelity and not any(map(_is_compaction, result.events)):
        return []  # (without reading the result's message columns: a replay makes them then)
    tokens_of = list(result.message_column("tokens"))
    taken = {e.recorded_index: k for k, e in enumerate(result.events) if _is_compaction(e)}
    causes: list[CompactionCause] = []
    since = 0
    for row in result.fidelity:
        event = session.compactions[row.recorded_index]
        if event.rewound:
            continue
        cause = _recorded(session, result, row, since, tokens_of, top)
        cause.event_id = taken.get(row.recorded_index)
        causes.append(cause)
        since = row.message_index
    since = 0
    for k, e in enumerate(result.events):
        if not _is_compaction(e):
            continue
        at = e.at_message_index if e.at_message_index is not None else e.message_index
        if e.recorded_index is None:
            causes.append(_replayed(session, result, k, e, since, at, tokens_of, top))
        since = at
    return causes


def _is_compaction(event: ReplayEvent) -> bool:
    return event.kind in ("compact", "recorded-compaction")


def _recorded(
    session: Session,
    result: ReplayResult,
    row: FidelityRow,
    since: int,
    tokens_of: list[int],
    top: int,
) -> CompactionCause:
    growth, contributors, by_tool = what_filled(session, tokens_of, since, row.message_index, top)
    call = row.recorded_call_index
    crossed: int | None = None
    if row.trigger == "overflow":
        crossed = call
    elif row.automatic and call is not None and call > 0:
        crossed = call - 1
    recorded_growth = None
    if crossed is not None:
        first = bisect_left(result.point_column("message_index"), since)
        if first <= crossed:
            baselines = result.point_column("baseline_tokens")
            recorded_growth = baselines[crossed] - baselines[first]
    cause = _cause(
        {
            "source": "recorded",
            "recorded_index": row.recorded_index,
            "event_id": None,
            "message_index": row.message_index,
            "call_index": call,
            "trigger": row.trigger,
            "trigger_evidence": row.trigger_evidence,
            "since_message_index": since,
            "growth_tokens": growth,
            "growth_recorded_tokens": recorded_growth,
            "contributors": contributors,
            "by_tool": by_tool,
            "threshold": row.threshold,
            "check_tokens": row.check_tokens,
            "crossed_at_call_index": crossed,
            "window": (
                result.point_column("window")[call]
                if call is not None and call < result.call_count
                else result.window
            ),
        }
    )
    cause.explanation = _explain(cause, row.tokens_before)
    return cause


def _replayed(
    session: Session,
    result: ReplayResult,
    event_id: int,
    event: ReplayEvent,
    since: int,
    at: int,
    tokens_of: list[int],
    top: int,
) -> CompactionCause:
    growth, contributors, by_tool = what_filled(session, tokens_of, since, at, top)
    call = event.call_index
    of_call = call if call is not None and call < result.call_count else None
    column = result.point_column  # (not the call's point: ``analyze`` builds none, its columns
    # are read anyway, and the first point defines the points' classes)
    crossed = event.trigger_call_index
    if event.trigger == "overflow":
        crossed = call
    cause = _cause(
        {
            "source": "replayed",
            "recorded_index": None,
            "event_id": event_id,
            "message_index": at,
            "call_index": call,
            "trigger": event.trigger or "threshold",
            "trigger_evidence": event.reason,
            "since_message_index": since,
            "growth_tokens": growth,
            "growth_recorded_tokens": None,
            "contributors": contributors,
            "by_tool": by_tool,
            "threshold": column("threshold")[of_call] if of_call is not None else result.threshold,
            "check_tokens": column("check_tokens")[of_call] if of_call is not None else None,
            "crossed_at_call_index": crossed if event.trigger != "manual" else None,
            "window": column("window")[of_call] if of_call is not None else result.window,
        }
    )
    cause.explanation = _explain(cause, event.tokens_before)
    return cause


def _cause(fields: dict[str, Any]) -> CompactionCause:
    """A cause from typed values (every field but its explanation, in the class's order),
    without validation: one for every compaction of a session."""
    fields["explanation"] = ""
    return build(CompactionCause, fields)


def _explain(cause: CompactionCause, tokens_before: int | None) -> str:
    where = f"message {cause.since_message_index}" if cause.since_message_index else "the start"
    sentences = [f"Since {where}, {cause.growth_tokens:,} tokens of messages were added."]
    if cause.by_tool:
        top = cause.by_tool[0]
        sentences.append(
            f"Outputs of {top.tool_name} were the largest share: {top.tokens:,} tokens in "
            f"{top.outputs} output(s), {top.share:.0%}."
        )
    sentences.append(_verdict(cause, tokens_before))
    return " ".join(sentences)


def _verdict(cause: CompactionCause, tokens_before: int | None) -> str:
    trigger = cause.trigger
    if trigger in ("manual", "hook"):
        before = f" at {tokens_before:,} tokens" if tokens_before else ""
        return f"It was not the threshold: a {trigger} compaction{before}."
    if trigger == "overflow":
        return f"The provider refused call {cause.crossed_at_call_index} as too long; it compacted to retry."
    if cause.check_tokens is not None and cause.threshold is not None:
        return (
            f"The check before call {cause.call_index} measured {cause.check_tokens:,} tokens "
            f"(the context of call {cause.crossed_at_call_index} and what came after it) "
            f"against a threshold of {cause.threshold:,}."
        )
    return "No threshold check explains it (window unknown, or the check did not run)."
