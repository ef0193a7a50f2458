"""What the compaction screen writes about a compaction, as text: where its cut is, a message in a
few words, the bars of its before and after, where it comes from and what its figures are. Pure
functions of the replay's events and messages (:mod:`tui.screens.compaction` draws them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.insights.forgotten_facts import Forgotten, forgotten_of
from core.llm.summary_request import windowed_message
from core.llm.summary_templates import unwrap_summary
from core.model.session import Message
from tui.figures import call_label

if TYPE_CHECKING:
    from core.replay import CompactionAt, ReplayEvent

BAR_CELLS = 40


def cut_of(event: ReplayEvent) -> int:
    """The first message after a compaction's cut: the first tail message after the head.

    Leading system/context messages stay verbatim ahead of the summary, so they can sit in the
    tail before the head; the cut is after the head, not at them.
    """
    if event.head_indices:
        last_head = max(event.head_indices)
        after = [i for i in event.tail_indices if i > last_head]
        return min(after) if after else last_head + 1
    return event.message_index


def one_line(text: str, limit: int = 90) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    folded = " ".join(text[: limit * 4].split())
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def preview(message: Message) -> str:
    """What a message is, in a few words."""
    if message.summary:
        return one_line(unwrap_summary(message.text))
    if message.tool_result is not None:
        name = message.tool_result.tool_name or "tool"
        return f"{name} ▸ {one_line(message.tool_result.output) or '(empty output)'}"
    if message.tool_calls:
        calls = ", ".join(call.name for call in message.tool_calls[:3])
        text = one_line(message.text, 50)
        return f"{text} → {calls}" if text else f"→ {calls}"
    return one_line(message.text) or one_line(message.reasoning) or "(empty)"


def forgotten_now(done: CompactionAt) -> Forgotten:
    """What the summary of a compaction run now kept of the head it replaced
    (:func:`core.insights.forgotten_facts.forgotten_of`; a thread's work: it reads every head message)."""
    head_ids = set(done.result.head_ids)
    # what the request carried of each message: a huge text is read as its window, not whole
    head = [windowed_message(m) for m in done.context.messages if m.id in head_ids]
    forgotten, _records = forgotten_of(head, done.result.summary, source="replayed")
    return forgotten


def taken(event: ReplayEvent) -> bool:
    """A compaction the replay took from the recording (where the agent compacted)."""
    return (
        event.kind == "compact" and event.recorded_index is not None and event.trigger != "manual"
    )


def origin(event: ReplayEvent) -> str:
    """`` (recorded)``, `` (the recording's)``, `` (at the user's compaction)`` or nothing."""
    if event.kind == "recorded-compaction":
        return " (recorded)"
    if taken(event):
        return " (the recording's)"
    if event.recorded_index is not None:
        return " (where the user compacted)"
    return ""


def bar(value: int, scale: int, cells: int = BAR_CELLS) -> str:
    """A bar of ``cells`` cells, ``value`` of ``scale`` filled (one cell at least for a value)."""
    filled = 0 if scale <= 0 else round(cells * min(value / scale, 1.0))
    if value > 0 and filled == 0:
        filled = 1
    return "█" * filled + "░" * (cells - filled)


def event_figures_note(e: ReplayEvent) -> str:
    """What a replay compaction's before and after are (the JSON's ``tokens_before`` /
    ``tokens_after``)."""
    if e.tokens_before is None:
        return "the replay has no figure for this compaction"
    if e.kind == "recorded-compaction":
        return (
            "before: the agent's count, after: tokens after, as the recording states them "
            "where it does, else the replay's figures"
        )
    if taken(e):
        return (
            "before: check, what the check measured when it fired; after: tokens after, "
            f"what {call_label(e.call_index)} sent (the recording's own figure)"
        )
    if e.trigger == "manual":
        return (
            "before: the replay's figure where the user compacted; after: tokens after, "
            "less what the compaction removed"
        )
    return (
        "before: check, what the check measured when it fired; after: tokens after, less "
        "what the compaction removed"
    )
