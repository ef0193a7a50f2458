"""Compaction attempts that would end as the last one did, and so are not made again.

An attempt that changes nothing (nothing to compact, or no summary could be written) leaves the
context as it was, so the next check fires again. One that provably ends the same way is not made:
the same context, or a summary request that overflowed the summariser at every head size allowed,
when the messages added since can only lengthen the head. A rebuilt context (a compaction, a
pruning, a recorded compaction taken) is a new start.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.policy import Policy
from core.replay.state import Item, Stuck


def futile(stuck: Stuck, appended: Sequence[Item], policy: Policy, links: Sequence[int]) -> bool:
    """An attempt now would end as the ``stuck`` one did: the context is the one it was made
    on plus ``appended`` (it has not been rebuilt since), and nothing appended can change
    the outcome (``links``: :meth:`~core.replay.calls.Calls.linked_back`).

    With nothing appended the input is the same. Otherwise only a summary request that
    overflowed at every head size tried (``too_large``) stays futile, when the appended
    messages can only lengthen the head it sends:

    * none is a summary (the prompt quotes the conversation's last summary);
    * none shares a tool call id with a message before the attempt: a result answering an
      older call could move the split point earlier, and a call id held again could relabel
      an older result's entry;
    * when the policy prunes, none starts a turn (the skip boundary would move and older
      outputs could be pruned; with ``protect_turns = 0`` every message moves it).

    Then the head of ``summary-only`` and ``codex`` (the whole context) gains the appended
    messages, and the cut of ``tail`` only moves later (the tail reaches its budget, or its
    last turns, no earlier than before; the pinned leading context is unchanged, as the failed
    head held a message after it) — unless the head was everything only because the tail
    would have been (``head_may_shrink``, not ``too_large`` then): every request of the new
    attempt extends the one of the same size in the failed attempt, so the summariser
    overflows again.
    """
    if not appended:
        return True
    if not stuck.too_large:
        return False
    pruning = policy.pruning
    if pruning.enabled and pruning.protect_turns == 0:
        return False
    turns_matter = pruning.enabled
    since = stuck.at
    for item in appended:
        message = item.message
        if message.summary or (item.index >= 0 and links[item.index] < since):
            return False
        if turns_matter and message.is_turn_start:
            return False
    return True
