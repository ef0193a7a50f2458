"""How the replay matched each recorded compaction: fired at the same call, earlier, later, not at
all, or — for a manual one — applied where it happened.

Each recorded automatic compaction is matched with the nearest compaction of the policy's own
(not a manual one) that lies between its recorded neighbours; a replay compaction answers at most
one recorded compaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.model.session import CompactionEvent
from core.replay.recorded import RecordedCompaction, RecordedCompactions
from core.replay.results import FidelityRow, Outcome, ReplayEvent, ThresholdSpan, fidelity_row
from core.replay.state import Check


def fidelity(
    recorded: RecordedCompactions,
    events: list[ReplayEvent],
    checks: Sequence[Check | None] = (),
    spans: Sequence[ThresholdSpan] = (),
    limits: Sequence[int | None] = (),
) -> list[FidelityRow]:
    """One row per recorded compaction, in order (``checks``: the run's check before each call;
    ``spans``: where its thresholds come from)."""
    own = [
        (event_id, event)
        for event_id, event in enumerate(events)
        if event.kind == "compact" and event.trigger != "manual" and event.call_index is not None
    ]
    used: set[int] = set()
    rows: list[FidelityRow] = []
    for position, rc in enumerate(recorded.all):
        event = recorded.session.compactions[rc.index]
        context = _context(rc, checks, spans, limits)
        if rc.before_recording:
            rows.append(_untestable(rc, event).model_copy(update=context))
            continue
        if rc.inferred_manual:
            rows.append(_manual(rc, event).model_copy(update=context))
            continue
        target = rc.recorded_call
        lower, upper = _between(recorded.all, position)
        best = _taken(own, used, rc.index)
        if best is None and target is not None:
            best = _nearest(own, used, target, lower, upper)
        if best is not None:
            used.add(best)
        row = _matched(rc, event, target, events[best] if best is not None else None)
        if row.outcome != "same" and not rc.consistent_with(context.get("check_tokens")):
            row = _inconsistent(rc, event, context.get("check_tokens"))
        rows.append(row.model_copy(update=context))
    return rows


def _context(
    rc: RecordedCompaction,
    checks: Sequence[Check | None],
    spans: Sequence[ThresholdSpan],
    limits: Sequence[int | None],
) -> dict[str, Any]:
    """What a row says beyond the match: the trigger and its evidence, and what the policy's
    check measured before the recorded call against which threshold."""
    context: dict[str, Any] = {
        "trigger": rc.kind,
        "trigger_evidence": rc.evidence,
        "automatic": rc.automatic or (rc.kind == "unknown" and not rc.rewound),
    }
    c = rc.recorded_call
    check = checks[c] if c is not None and 0 <= c < len(checks) else None
    if check is not None and rc.automatic:  # a manual one is applied before that check
        context["check_tokens"] = check.measured()
    if c is not None and 0 <= c < len(limits):
        context["threshold"] = limits[c]
    span = next((s for s in spans if c is not None and s.first_call <= c <= s.last_call), None)
    if span is not None:
        context["threshold_source"] = span.source
    return context


def _taken(own: list[tuple[int, ReplayEvent]], used: set[int], recorded_index: int) -> int | None:
    """The replay compaction that took this very recorded compaction (the recording agent's
    policy fired where the recording compacted)."""
    for event_id, event in own:
        if event.recorded_index == recorded_index and event_id not in used:
            return event_id
    return None


def _matched(
    rc: RecordedCompaction, event: CompactionEvent, target: int | None, match: ReplayEvent | None
) -> FidelityRow:
    """The row of an automatic recorded compaction and the replay compaction matched with it
    (None: missed)."""
    if match is None or match.call_index is None or target is None:
        return fidelity_row(
            recorded_index=rc.index,
            message_index=rc.m_c,
            trigger=event.trigger,
            tokens_before=event.tokens_before,
            outcome="missed",
            replay_call_index=None,
            call_delta=None,
            recorded_call_index=target,
            note="the policy did not compact anywhere near here",
        )
    delta = match.call_index - target
    outcome: Outcome = "same" if delta == 0 else ("earlier" if delta < 0 else "later")
    return fidelity_row(
        recorded_index=rc.index,
        message_index=rc.m_c,
        trigger=event.trigger,
        tokens_before=event.tokens_before,
        outcome=outcome,
        replay_call_index=match.call_index,
        call_delta=delta,
        recorded_call_index=target,
        note=match.trigger or "",
    )


def _manual(rc: RecordedCompaction, event: CompactionEvent) -> FidelityRow:
    if rc.rewound:
        return fidelity_row(
            recorded_index=rc.index,
            message_index=rc.m_c,
            trigger=event.trigger,
            tokens_before=event.tokens_before,
            outcome="manual" if rc.kind == "manual" else "untestable",
            replay_call_index=None,
            call_delta=None,
            recorded_call_index=rc.recorded_call,
            note="the user rewound past it: it never took effect, so the replay leaves it out",
        )
    note = (
        "recorded as manual"
        if event.trigger == "manual"
        else "below the recording agent's threshold, so a manual compaction"
    )
    return fidelity_row(
        recorded_index=rc.index,
        message_index=rc.m_c,
        trigger="manual",
        tokens_before=event.tokens_before,
        outcome="manual",
        replay_call_index=rc.recorded_call,
        call_delta=0 if rc.recorded_call is not None else None,
        recorded_call_index=rc.recorded_call,
        note=note + "; applied where it happened",
    )


def _untestable(rc: RecordedCompaction, event: CompactionEvent) -> FidelityRow:
    return fidelity_row(
        recorded_index=rc.index,
        message_index=rc.m_c,
        trigger=event.trigger,
        tokens_before=event.tokens_before,
        outcome="untestable",
        replay_call_index=None,
        call_delta=None,
        recorded_call_index=rc.recorded_call,
        note="the file starts at this compaction: nothing before it to replay, so the replay "
        "starts from its result",
    )


def _inconsistent(
    rc: RecordedCompaction, event: CompactionEvent, figure: int | None
) -> FidelityRow:
    return fidelity_row(
        recorded_index=rc.index,
        message_index=rc.m_c,
        trigger=event.trigger,
        tokens_before=event.tokens_before,
        outcome="untestable",
        replay_call_index=None,
        call_delta=None,
        recorded_call_index=rc.recorded_call,
        note=f"the agent measured {event.tokens_before or 0:,} tokens before it, but the calls in "
        f"the file reach {figure or 0:,}: the file does not hold the context the agent had",
    )


def _between(compactions: list[RecordedCompaction], position: int) -> tuple[int, int]:
    """The calls of the automatic recorded compactions around the one at ``position``: the replay
    compactions that may answer it lie strictly between them."""
    lower = -1
    upper = 1 << 60
    for other in compactions[:position]:
        if not other.inferred_manual and other.recorded_call is not None:
            lower = max(lower, other.recorded_call)
    for other in compactions[position + 1 :]:
        if not other.inferred_manual and other.recorded_call is not None:
            upper = min(upper, other.recorded_call)
            break
    return lower, upper


def _nearest(
    own: list[tuple[int, ReplayEvent]], used: set[int], target: int, lower: int, upper: int
) -> int | None:
    """The unused replay compaction nearest to call ``target`` within the bounds (the earlier
    one on a tie); its event id."""
    best: tuple[int, int] | None = None
    for event_id, replay_event in own:
        call = replay_event.call_index
        assert call is not None
        if event_id in used or not (lower < call < upper):
            continue
        distance = abs(call - target)
        if best is None or distance < best[0] or (distance == best[0] and call <= target):
            best = (distance, event_id)
    return best[1] if best is not None else None
