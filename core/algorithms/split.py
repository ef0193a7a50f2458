"""T8 — head/tail split: where the kept tail starts; everything before it is summarised.

Entry point: :func:`split`. ``tail_budget = policy.tail_budget(usable_tokens)``, i.e.
``min(tail_max_tokens, max(tail_min_tokens, floor(usable * tail_ratio)))`` unless a fixed
``tail_budget_tokens`` is set. Two modes:

**messages** (the seed's walk)
    From the newest message backwards, add each message's tokens to the tail; stop as soon as
    the tail holds at least ``tail_budget`` tokens *and* at least ``min_tail_messages`` messages.
    The head is everything before. When the walk reaches the first message without stopping, the
    whole conversation is tail and there is nothing to compact.

**turns** (opencode 2026)
    Take the last ``tail_turns`` turns (a turn runs from a real user message to the next one).
    Walking them newest to oldest, keep each whole turn while the running total stays within the
    budget. At the first turn that does not fit, keep the longest suffix of it (starting after its
    user message) that fits the rest of the budget — a *split turn* — and stop. When nothing fits,
    or the tail would be the whole conversation, opencode summarises everything: the head is the
    whole conversation and no tail is kept.

**Safe boundaries** (both modes; the seed misses this, pi and every chat API require it): the
tail never starts with a tool result whose call is in the head, and a tool call is never
separated from its results. When the cut would do either, it moves *earlier*, to the assistant
message holding the call (repeatedly, if that uncovers another pair).

Leading context — earlier summaries, system prompts and injected meta messages at the very start
(:func:`leading_context`) — is never "something to compact" by itself: a head made only of it is
reported as nothing to compact (messages mode) or as no tail (turns mode).

**history-share** (Gemini CLI)
    Keep the newest ``tail_ratio`` of the history's tokens: the cut is the first user message
    (a tool result never is one) at which the older part holds at least ``1 - tail_ratio`` of
    the whole. When no user message comes after that point, everything is compressed if the
    history ends with a reply that calls no tool, else the cut is the last user message.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from core.model.session import Message, Role
from core.model.tokens import TokenCounter
from core.policy import SplitMode, SplitPolicy


class SplitResult(BaseModel):
    """Where the tail starts and why."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    mode: SplitMode
    """The mode that decided (``messages`` or ``turns``)."""
    usable_tokens: int
    """The usable window the budget was derived from (window - reserve)."""
    budget_tokens: int
    """The tail budget: ``policy.tail_budget(usable_tokens)``."""
    cut_index: int
    """Index of the first tail message; ``len(messages)`` when no tail is kept, 0 when all is tail."""
    head_indices: list[int]
    """Indices of the head messages (``0 .. cut_index - 1``)."""
    head_ids: list[str]
    """Ids of the head messages, in order."""
    tail_ids: list[str]
    """Ids of the tail messages, in order."""
    head_tokens: int
    """Tokens of the head."""
    tail_tokens: int
    """Tokens of the tail."""
    split_turn: bool = False
    """Turns mode: the oldest kept turn is only a suffix of its turn."""
    moved_for_tool_pair: int = 0
    """Messages the cut moved earlier so that no tool call is separated from its result."""
    whole_tail: bool = False
    """Turns mode: the tail would have been the whole conversation, so none is kept and
    everything is summarised (more messages later can bring the tail back, and the head
    becomes shorter)."""
    compactable: bool
    """The head holds something to summarise (not empty, not only an earlier summary)."""
    reason: str
    """One or two sentences explaining the cut, for the UI."""


def _call_positions(messages: Sequence[Message]) -> list[int]:
    """For each message, the index of the assistant message holding its tool call (tool results
    only; ``len(messages)`` for every other message and for results whose call is missing)."""
    total = len(messages)
    holder: dict[str, int] = {}
    positions = [total] * total
    tool = Role.TOOL  # an enum member is slow to look up, and this runs over every message
    for i, message in enumerate(messages):
        calls = message.tool_calls
        if calls:
            for call in calls:
                holder[call.id] = i
        result = message.tool_result
        if result is not None and message.role is tool:
            at = holder.get(result.call_id)
            if at is not None and at < i:
                positions[i] = at
    return positions


def _suffix_min(values: list[int]) -> list[int]:
    """``out[i] = min(values[i:])``; ``out[len] = len(values)``."""
    total = len(values)
    out = [total] * (total + 1)
    low = total
    for i in range(total - 1, -1, -1):
        value = values[i]
        if value < low:
            low = value
        out[i] = low
    return out


def _make_safe(cut: int, earliest_call: list[int]) -> int:
    """Move ``cut`` earlier until no tail result's call lies in the head."""
    while cut < len(earliest_call) and earliest_call[cut] < cut:
        cut = earliest_call[cut]
    return cut


def leading_context(messages: Sequence[Message]) -> int:
    """Length of the leading run of context messages: earlier summaries, system prompts and
    injected meta messages (instructions, environment). They hold nothing new to summarise."""
    count = 0
    for message in messages:
        if not (message.summary or message.meta or message.role is Role.SYSTEM):
            break
        count += 1
    return count


def split(
    messages: Sequence[Message],
    policy: SplitPolicy,
    *,
    usable_tokens: int,
    counter: TokenCounter,
    token_counts: Sequence[int] | None = None,
) -> SplitResult:
    """Split ``messages`` into the head to summarise and the tail to keep (see the module docstring).

    ``usable_tokens`` is the window minus the reserve; ``token_counts`` are the per-message tokens
    when the caller already has them (replay does), else they are counted with ``counter``.
    """
    total = len(messages)
    if token_counts is None:
        tokens = counter.messages_tokens(messages)
    else:
        if len(token_counts) != total:
            raise ValueError(f"token_counts has {len(token_counts)} entries for {total} messages")
        tokens = list(token_counts)
    budget = policy.tail_budget(usable_tokens)
    earliest_call = _suffix_min(_call_positions(messages))
    context = leading_context(messages)

    if policy.mode == "turns":
        cut, split_turn, note = _turns_cut(
            messages, tokens, budget, policy.tail_turns, earliest_call
        )
    elif policy.mode == "history-share":
        budget = math.floor(sum(tokens) * policy.tail_ratio)
        cut, note = _share_cut(messages, tokens, policy.tail_ratio)
        split_turn = False
    else:
        cut, note = _messages_cut(tokens, budget, policy.min_tail_messages)
        split_turn = False

    moved = 0
    if 0 < cut < total:
        safe = _make_safe(cut, earliest_call)
        moved = cut - safe
        cut = safe
        if moved:
            note += (
                f" The cut moved {moved} message{'s' if moved != 1 else ''} earlier so that a "
                "tool call stays with its result."
            )

    whole_tail = False
    if policy.mode == "turns" and cut <= context:
        if cut < total:
            note += " The tail would be the whole conversation, so everything is summarised."
            whole_tail = True
        cut = total
        split_turn = False
    head_tokens = sum(tokens[:cut])
    tail_tokens = sum(tokens[cut:])
    compactable = cut > context
    if cut == 0:
        note += " The whole conversation fits in the tail: nothing to compact."
    elif not compactable:
        note += " The head holds only an earlier summary or system context: nothing new to compact."
    return SplitResult(
        mode=policy.mode,
        usable_tokens=usable_tokens,
        budget_tokens=budget,
        cut_index=cut,
        head_indices=list(range(cut)),
        head_ids=[m.id for m in messages[:cut]],
        tail_ids=[m.id for m in messages[cut:]],
        head_tokens=head_tokens,
        tail_tokens=tail_tokens,
        split_turn=split_turn,
        moved_for_tool_pair=moved,
        whole_tail=whole_tail,
        compactable=compactable,
        reason=note.strip(),
    )


def _messages_cut(tokens: list[int], budget: int, min_messages: int) -> tuple[int, str]:
    """The seed's backward walk: the first index at which the tail is full."""
    total = len(tokens)
    running = 0
    for i in range(total - 1, -1, -1):
        running += tokens[i]
        kept = total - i
        if running >= budget and kept >= min_messages:
            return i, (
                f"Tail of the last {kept} message{'s' if kept != 1 else ''} "
                f"({running:,} tokens) reaches the {budget:,}-token budget."
            )
    return 0, (
        f"All {total} messages hold {running:,} tokens, under the {budget:,}-token tail budget "
        f"or the {min_messages}-message minimum."
    )


def _share_cut(
    messages: Sequence[Message], tokens: list[int], keep_ratio: float
) -> tuple[int, str]:
    """Gemini CLI's split: the first user message (not a tool result) at which the older part
    holds at least ``1 - keep_ratio`` of the history; when none comes after that point, the
    whole history is compressed if it ends with a reply that asks for no tool, else it is cut at
    the last user message."""
    total = len(messages)
    target = sum(tokens) * (1 - keep_ratio)
    last_start = 0
    running = 0
    for i, message in enumerate(messages):
        if message.role is Role.USER:
            if running >= target:
                return i, (
                    f"The older {running:,} tokens reach {1 - keep_ratio:.0%} of the history's "
                    f"{sum(tokens):,}: the newest part is kept from the user message #{i}."
                )
            last_start = i
        running += tokens[i]
    last = messages[-1] if messages else None
    if last is not None and last.role is Role.ASSISTANT and not last.tool_calls:
        return total, "No user message after the older share: the whole history is compressed."
    return last_start, (
        f"No user message after the older share: cut at the last user message #{last_start}."
    )


def _turns_cut(
    messages: Sequence[Message],
    tokens: list[int],
    budget: int,
    tail_turns: int,
    earliest_call: list[int],
) -> tuple[int, bool, str]:
    """opencode's turn-preserving selection: ``(cut, split_turn, note)``; ``cut == len`` keeps no tail."""
    total = len(messages)
    if tail_turns <= 0:
        return total, False, "tail_turns is 0: no tail is kept, everything is summarised."
    starts = [i for i, m in enumerate(messages) if m.is_turn_start]
    if not starts:
        return total, False, "No user turn to keep: everything is summarised."
    bounds = [*starts, total]
    turns = [(bounds[k], bounds[k + 1]) for k in range(len(starts))][-tail_turns:]
    remaining = budget
    cut = total
    kept_turns = 0
    for start, end in reversed(turns):
        size = sum(tokens[start:end])
        if size <= remaining:
            remaining -= size
            cut = start
            kept_turns += 1
            continue
        # The first turn that does not fit: keep its longest fitting, safe suffix.
        suffix = size
        for j in range(start, end):
            if j > start and suffix <= remaining and earliest_call[j] >= j:
                return (
                    j,
                    True,
                    (
                        f"Kept {kept_turns} whole turn{'s' if kept_turns != 1 else ''} and the last "
                        f"{end - j} message{'s' if end - j != 1 else ''} of the turn at #{start} "
                        f"({budget - remaining + suffix:,} of {budget:,} tokens); that turn is split."
                    ),
                )
            suffix -= tokens[j]
        break
    if kept_turns == 0:
        return (
            total,
            False,
            (
                f"Not even part of the last turn fits the {budget:,}-token budget: everything is "
                "summarised."
            ),
        )
    return (
        cut,
        False,
        (
            f"Kept the last {kept_turns} whole turn{'s' if kept_turns != 1 else ''} "
            f"({budget - remaining:,} of {budget:,} tokens)."
        ),
    )
