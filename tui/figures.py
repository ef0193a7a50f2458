"""The figures several places show, each from one function and worded the same everywhere.

The header, the status line, the gauge, the list, the detail pane, the compaction screen, the
overflow view and the command line all read the same result models; when two of them show the
same figure (a peak, a compaction's before and after, a recorded compaction's trigger, a call's
check), they take it from here, so they cannot disagree. Recorded figures lead where they exist.
The figures of a session's row (:class:`core.fleet.session_rows.FleetRow`) are worded here once for
``ctxscope fleet`` and the picker, under the same column labels.

Calls are numbered from 0, as messages are and as ``call_index`` is in the JSON: "call 0" is the
first model call everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Literal, NamedTuple

from core.model.write_numbers import compact_tokens, format_tokens

if TYPE_CHECKING:
    from core.fleet.session_rows import FleetRow
    from core.model.session import CompactionEvent, Session
    from core.policy import Policy
    from core.replay import CallPoint, FidelityRow, ReplayEvent, ReplayResult, ReplaySummary
    from tui.compaction_stops import CompactionStop

MAX_RUNS = 4
"""Runs of consecutive message numbers shown before the rest is counted."""


def call_label(call_index: int | None) -> str:
    """``call 1150`` (0-based, as ``call_index``; an index, so no thousands separator, as the
    message numbers), or ``no call``."""
    return "no call" if call_index is None else f"call {call_index}"


def index_runs(indices: Iterable[int], limit: int = MAX_RUNS) -> str:
    """Message numbers as runs of consecutive ones: ``#3, #60–#66`` (``none`` when empty; past
    ``limit`` runs, how many more). A range never spans a message that is not in the set."""
    ordered = sorted(set(indices))
    if not ordered:
        return "none"
    runs: list[tuple[int, int]] = []
    start = previous = ordered[0]
    for index in ordered[1:]:
        if index != previous + 1:
            runs.append((start, previous))
            start = index
        previous = index
    runs.append((start, previous))
    shown = [f"#{a}" if a == b else f"#{a}–#{b}" for a, b in runs[:limit]]
    if len(runs) > limit:
        rest = sum(b - a + 1 for a, b in runs[limit:])
        shown.append(f"… {rest:,} more")
    return ", ".join(shown)


class Figure(NamedTuple):
    """A token figure and what it is (``recorded``, ``simulated``, ``estimated`` …)."""

    tokens: int
    label: str


def peaks(summary: ReplaySummary) -> tuple[Figure | None, Figure]:
    """The peak context: the recorded one (None without usage) and the simulated one. Where the
    recording has figures, it leads (the overflow view and ``analyze`` speak of it too)."""
    recorded = (
        Figure(summary.peak_recorded, "recorded") if summary.peak_recorded is not None else None
    )
    return recorded, Figure(summary.peak_simulated, "simulated")


def fidelity_row(result: ReplayResult | None, recorded_index: int) -> FidelityRow | None:
    """The fidelity row of recorded compaction ``recorded_index`` (its trigger as judged)."""
    if result is None:
        return None
    return next((r for r in result.fidelity if r.recorded_index == recorded_index), None)


def recorded_trigger(
    session: Session, result: ReplayResult | None, recorded_index: int
) -> tuple[str, str]:
    """A recorded compaction's trigger and the evidence for it: the replay's judgement (the
    fidelity row: ``auto``, ``manual``, ``overflow``, ``hook``) where there is one, else what the
    file says."""
    row = fidelity_row(result, recorded_index)
    if row is not None:
        return row.trigger, row.trigger_evidence
    compaction = session.compactions[recorded_index]
    return str(compaction.trigger), ""


def event_before_name(event: ReplayEvent) -> str:
    """What a replay compaction's ``tokens_before`` is, named as every output names it: the
    ``check`` figure the policy's check fired on (threshold, projection, overflow), the agent's
    count where the replay takes a recorded compaction's own figures, else ``before``."""
    from core.insights.named_figures import CHECK_FIGURE  # (a replay event: the replay is loaded)

    if event.kind == "recorded-compaction":
        return "recorded"
    if event.trigger in ("threshold", "projection", "overflow"):
        return CHECK_FIGURE.name
    return "before"


def event_trigger(event: ReplayEvent) -> str:
    """What made a replay compaction: ``threshold``, ``projection``, ``overflow``, ``manual`` …"""
    return event.trigger or "—"


def check_line(point: CallPoint, policy: Policy | None = None) -> str:
    """The check log of one call, as ``analyze --json`` has it (``checks[]``): "checked before
    this call: 166,210 (projected) against 167,000 (rule) — did not fire"."""
    if not point.checked or point.check_tokens is None:
        if point.threshold is None:
            return "not checked before this call: the window is unknown"
        if policy is not None and not policy.compaction.check_before_each_call:
            return "not checked before this call: the policy checks only before a turn's first call"
        return "not checked before this call: nothing to measure yet"
    basis = f" ({point.check_basis})" if point.check_basis else ""
    source: str = point.threshold_source or ""
    if policy is not None and policy.name in ("inferred", "learned") and source != "inferred":
        source = policy.name  # (the policy's own threshold is its rule: labelled as the gauge does)
    if point.threshold is None:
        against = "no threshold (window unknown)"
    elif point.window is not None and point.threshold >= point.window:
        from core.insights.named_figures import threshold_figure  # (the replay is loaded)

        # at or above the window: flagged, as every output flags it
        against = threshold_figure(point.threshold, source or "rule", point.window).label
    else:
        against = f"{format_tokens(point.threshold)}{f' ({source})' if source else ''}"
    verdict = "fired" if point.check_fired else "did not fire"
    return (
        f"checked before this call: {format_tokens(point.check_tokens)}{basis} "
        f"against {against} — {verdict}"
    )


def window_label(window: int | None, source: str) -> str:
    """``window 1,000,000 (inferred)``, or ``window unknown``."""
    if not window:
        return "window unknown"
    return f"window {format_tokens(window)} ({source})"


def window_changes(result: ReplayResult) -> list[tuple[int, int | None]]:
    """``(call, window)`` where the window changes during the session (the first call's
    included when there is any change; [] when it stays the same)."""
    windows = result.point_column("window")
    if not windows or windows.count(windows[0]) == len(windows):
        return []  # (the usual case, found in C: each compared with the first, by identity first)
    changes: list[tuple[int, int | None]] = []
    last: int | None = None
    for call, window in enumerate(windows):
        if not changes or window != last:
            changes.append((call, window))
            last = window
    return changes if len(changes) > 1 else []


# -- a session's row: ``ctxscope fleet`` and the picker -------------------------------------------

PEAK_COLUMN = "peak"
"""The fullest call's context."""
SHARE_COLUMN = "%"
"""Its share of the window."""
COMPACTIONS_COLUMN = "compactions"
"""The recorded compactions by trigger."""
OVERFLOW_COLUMN = "overflow"
"""Recorded calls that overflowed."""
COST_COLUMN = "cost"
"""What the session cost at list prices."""
LAST_MESSAGE_COLUMN = "last message"
"""The session's own time: its last message's."""
NEAR_SHARE = 0.9
"""A peak at or above this share of the window is drawn as a warning (above 1, an error)."""

ShareLevel = Literal["over", "near", ""]


def local_minute(moment: datetime) -> str:
    """``2026-03-14 09:40``: a time in the local zone, to the minute (a session's last message)."""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def row_peak(row: FleetRow) -> str:
    """``190k``; ``-`` when the session has no call."""
    return compact_tokens(row.peak_tokens) if row.peak_tokens is not None else "-"


def row_share(share: float | None) -> str:
    """``95%``; ``?`` when the window is unknown."""
    return "?" if share is None else f"{share:.0%}"


def share_level(share: float | None) -> ShareLevel:
    """``over`` the window, ``near`` it (from :data:`NEAR_SHARE`), or neither."""
    if share is None:
        return ""
    return "over" if share > 1 else "near" if share >= NEAR_SHARE else ""


def row_compactions(row: FleetRow) -> str:
    """``2 auto, 1 manual`` (only the triggers that occur; empty without a compaction)."""
    counts = (
        ("auto", row.compactions_auto),
        ("manual", row.compactions_manual),
        ("overflow", row.compactions_overflow),
        ("hook", row.compactions_hook),
        ("unknown", row.compactions_unknown),
    )
    return ", ".join(f"{count} {trigger}" for trigger, count in counts if count)


def row_overflow(row: FleetRow) -> str:
    """``2×``: recorded calls that overflowed (empty when none did)."""
    return f"{row.overflows_recorded}×" if row.overflowed else ""


def row_cost(row: FleetRow) -> str:
    """``$3.17``, ``≥$3.17`` (some calls' models have no price), ``?`` (none has): the
    wording of :func:`core.insights.cost.cost_label`."""
    from core.insights.cost import usd_label  # (the price table: loaded once a row exists to show)

    return usd_label(row.cost_usd, row.cost_unpriced_calls)


# -- a recorded compaction, its figures named ------------------------------------------------------


def recorded_figures(compaction: CompactionEvent) -> str:
    """A recorded compaction's own figures, each named as every output names it:
    ``agent's count 167,888 → tokens after 21,518`` (``agent's count 167,888`` without an after,
    ``no recorded figures`` without either)."""
    from core.insights.named_figures import AGENT_COUNT, TOKENS_AFTER  # (brings core.replay)

    before = compaction.tokens_before
    after = compaction.tokens_after
    parts: list[str] = []
    if before is not None:
        parts.append(f"{AGENT_COUNT.name} {before:,}")
    if after is not None:
        parts.append(f"{TOKENS_AFTER.name} {after:,}")
    return " → ".join(parts) if parts else "no recorded figures"


def recorded_compaction_figures(
    session: Session, result: ReplayResult | None, recorded_index: int
) -> str:
    """Recorded compaction ``recorded_index``'s figures as every output states them
    (:func:`core.insights.named_figures.compaction_figures`), each named: ``agent's count
    167,888 · check on the recording 167,792 → tokens after 30,124 (next prompt)``; the file's
    own figures (:func:`recorded_figures`) before a replay result."""
    compaction = session.compactions[recorded_index]
    if result is None:
        return recorded_figures(compaction)
    from core.insights.named_figures import (  # (brings core.replay)
        AGENT_COUNT,
        RECORDING_CHECK,
        TOKENS_AFTER,
        compaction_figures,
        recording_check,
    )

    figures = compaction_figures(session, result)[recorded_index]
    before: list[str] = []
    if figures.agent_count is not None:
        before.append(f"{AGENT_COUNT.name} {figures.agent_count:,}")
    checked = recording_check(session, recorded_index)
    if checked is not None:
        before.append(f"{RECORDING_CHECK.name} {checked:,}")
    parts = [" · ".join(before)] if before else []
    if figures.tokens_after is not None:
        source = f" ({figures.tokens_after_source})" if figures.tokens_after_source else ""
        parts.append(f"{TOKENS_AFTER.name} {figures.tokens_after:,}{source}")
    return " → ".join(parts) if parts else "no recorded figures"


def not_replayed_reason(compaction: CompactionEvent, policy: Policy) -> str:
    """Why a recorded compaction drawn in the list is not one of the replay's: rewound past, or
    the policy compacts where its own check fires."""
    if compaction.rewound:
        return "the user rewound past it: it never took effect"
    return (
        f"not replayed under “{policy.name}” (the replay compacts where this policy's check fires)"
    )


def recorded_stop_notice(
    session: Session, result: ReplayResult | None, policy: Policy, stop: CompactionStop
) -> tuple[str, str]:
    """The title and text ``[`` / ``]`` tell at a recorded compaction the replay did not apply."""
    from core.insights.named_figures import compaction_at  # (brings core.replay)

    k = stop.recorded_index
    assert k is not None
    compaction = session.compactions[k]
    trigger, _evidence = recorded_trigger(session, result, k)
    at = compaction_at(session, None, k)
    title = f"recorded compaction #{k} at message {at}"
    figures = recorded_compaction_figures(session, result, k)
    text = f"{trigger} · {figures} · {not_replayed_reason(compaction, policy)}"
    return title, text
