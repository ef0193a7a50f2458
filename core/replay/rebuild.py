"""The simulated context after the policy's own compaction or pruning: the new items, and which
session messages were summarised, kept, and pruned (with the pruner's reasons).

Items that come out unchanged are the very objects that went in (so a context rebuilt twice
shares them); messages the compaction wrote (its summary, a continuation) get index -1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from core.model.session import Message
from core.model.tokens import TokenCounter
from core.replay.state import Item

if TYPE_CHECKING:  # (the algorithms load when a run first compacts or prunes)
    from core.algorithms.compact import CompactionOutline
    from core.algorithms.prune import PruneResult


class Rebuilt(NamedTuple):
    """A context rebuilt by a compaction (or a pruning)."""

    items: list[Item]
    """The new context."""
    head: list[int]
    """Session messages summarised."""
    head_tokens: int
    """Their tokens."""
    tail: list[int]
    """Session messages kept (possibly pruned)."""
    pruned: list[int]
    """Session messages whose tool output was replaced."""
    meta: dict[int, str]
    """The pruner's reason for each session message (empty when the policy does not prune)."""
    summary_tokens: int
    """Tokens of the messages the compaction wrote."""
    continued: bool
    """A synthetic message asks the agent to carry on."""


def after_compaction(
    outcome: CompactionOutline, items: Sequence[Item], counter: TokenCounter
) -> Rebuilt:
    """The context ``outcome`` leaves of ``items``."""
    # Ids map to the last item of that id, as everywhere here.
    by_id: dict[str, Item] = {item.message.id: item for item in items}
    new_items: list[Item] = []
    tail: list[int] = []
    summary_tokens = 0
    continued = False
    for out in outcome.output_messages:
        source = by_id.get(out.id)
        if source is not None and (
            out is source.message or (source.index < 0 and out == source.message)
        ):
            # kept as it was (an earlier summary included; an outcome reused from another run
            # holds that run's copy of an earlier summary: equal, not the same object)
            new_items.append(source)
            if source.index >= 0:
                tail.append(source.index)
        elif source is not None and source.index >= 0:
            new_items.append(Item(out, source.index, counter.message_tokens(out)))
            tail.append(source.index)
        else:  # written by this compaction: its summary and continuation
            tokens = counter.message_tokens(out)
            new_items.append(Item(out, -1, tokens))
            summary_tokens += tokens
            continued = continued or out.synthetic
    head_items = [item for h in outcome.head_ids if (item := by_id.get(h)) is not None]
    pruned = [
        item.index
        for p in outcome.pruned_ids
        if (item := by_id.get(p)) is not None and item.index >= 0
    ]
    return Rebuilt(
        items=new_items,
        head=[item.index for item in head_items if item.index >= 0],
        head_tokens=sum(item.tokens for item in head_items),
        tail=tail,
        pruned=pruned,
        meta=_prune_reasons(items, by_id, outcome.prune_reasons),
        summary_tokens=summary_tokens,
        continued=continued,
    )


def _prune_reasons(
    items: Sequence[Item], by_id: dict[str, Item], reasons: list[str]
) -> dict[int, str]:
    """The pruner's reason (one per item, none when the policy does not prune) by session index."""
    if not reasons:
        return {}
    # With every id once, by_id gives each item back (the usual case: no lookups).
    owners = items if len(by_id) == len(items) else [by_id[i.message.id] for i in items]
    return {
        index: why
        for source, why in zip(owners, reasons, strict=True)
        if (index := source.index) >= 0
    }


def after_pruning(outcome: PruneResult, items: Sequence[Item], counter: TokenCounter) -> Rebuilt:
    """The context a turn-end pruning leaves of ``items`` (no head, no tail)."""
    pruned_set = set(outcome.pruned_ids)
    new_items: list[Item] = []
    pruned: list[int] = []
    meta: dict[int, str] = {}
    out: Message
    for item, out, decision in zip(items, outcome.messages, outcome.decisions, strict=True):
        if item.index >= 0:
            meta[item.index] = decision.reason.value
        if item.message.id in pruned_set:
            new_items.append(Item(out, item.index, counter.message_tokens(out)))
            if item.index >= 0:
                pruned.append(item.index)
        else:
            new_items.append(item)
    return Rebuilt(new_items, [], 0, [], pruned, meta, 0, False)
