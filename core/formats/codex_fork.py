"""A Codex sub-agent's own part: the parent's history copied at the fork becomes one message.

A child spawned with ``spawn_agent`` (``source.subagent.thread_spawn``) starts its rollout with
the parent's history, replayed with the fork's timestamps and with the parent's ``token_count``
events (:mod:`core.formats.codex_meta` finds where it ends). That history is the context the
child starts from, but its calls, peak and compactions are the parent's: counted here, a child
with 2 calls of its own showed 45. :func:`keep_own_part` folds the copied records into one
``meta`` user message holding their text (so the child's context still starts that big) and
leaves out the parent's calls and compactions (what a compaction in that history replaced is
left out too: it was not in the child's context); ``metadata["forked_history"]`` says how many.
"""

from __future__ import annotations

from core.model.read_numbers import MAX_COUNT
from core.model.session import Message, Role, Session


def _text(message: Message) -> str:
    parts = [message.text, message.reasoning]
    parts += [f"{call.name} {call.arguments}" for call in message.tool_calls]
    if message.tool_result is not None:
        parts.append(message.tool_result.output)
    return "\n".join(part for part in parts if part)


def keep_own_part(session: Session, first_line: int, last_line: int) -> None:
    """Fold the messages read from lines ``first_line..last_line`` (the parent's copied
    history) into one message — from its last compaction's summary on, what the child's context
    starts with — and drop the compactions recorded there."""
    messages = session.messages
    inherited = [
        i
        for i, message in enumerate(messages)
        if message.source_line is not None and first_line <= message.source_line <= last_line
    ]
    if not inherited:
        return
    start, end = inherited[0], inherited[-1] + 1
    # A compaction in the parent's history replaced what came before it: the child's context
    # starts at its summary; the messages before it are the parent's alone.
    replaced = [
        event.message_index
        for event in session.compactions
        if event.source_line is not None
        and first_line <= event.source_line <= last_line
        and start < event.message_index < end
    ]
    cut = max(replaced, default=start)
    folded = messages[cut:end]
    estimates = [m.agent_estimate_tokens for m in folded]
    history = Message(
        index=start,
        id=f"forked-history-{first_line}",
        role=Role.USER,
        timestamp=folded[0].timestamp,
        text="\n\n".join(text for m in folded if (text := _text(m))),
        meta=True,
        source_line=folded[0].source_line,
        source_offset=folded[0].source_offset,
        agent_estimate_tokens=min(sum(e for e in estimates if e is not None), MAX_COUNT)
        if all(e is not None for e in estimates)
        else None,
        # the encrypted reasoning the parent's calls left in that history (Codex counts it)
        reasoning_estimate_tokens=min(sum(m.reasoning_estimate_tokens for m in folded), MAX_COUNT),
    )
    removed = end - start - 1
    session.messages = [*messages[:start], history, *messages[end:]]
    for index, message in enumerate(session.messages):
        message.index = index
    dropped = 0
    kept = []
    for event in session.compactions:
        if event.source_line is not None and first_line <= event.source_line <= last_line:
            dropped += 1
            continue
        if event.message_index >= end:
            event.message_index -= removed
        kept.append(event)
    session.compactions = kept
    for change in session.window_changes:
        if change.message_index >= end:
            change.message_index -= removed
        elif change.message_index > start:
            change.message_index = start
    forked = session.metadata.setdefault("forked_history", {})
    forked.update(
        {
            "folded_messages": len(folded),
            "left_out_messages": cut - start,
            "parent_calls": sum(1 for m in messages[start:end] if m.is_model_call),
            "parent_compactions": dropped,
            "first_own_message": start + 1,
        }
    )
