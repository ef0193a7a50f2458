"""Compaction attempts that would end as the last one did, and so are not made again.

An attempt that changes nothing (nothing to compact, or no summary could be written) leaves the
context as it was, so the next check fires again. One that provably ends the same way is not made:
the same context, or a summary request that overflowed the summariser at every head size allowed,
when the messages added since can only lengthen the head. A rebuilt context (a compaction, a
pruning, a recorded compaction taken) is a new start.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from operator import attrgetter
from typing import overload

from core.model.session import Message
from core.policy import Policy
from core.replay.state import Item, Stuck

FIRED_NOTE: dict[str, str] = {
    "threshold": "the context crossed the threshold before {where}",
    "projection": "the projected context crossed the threshold before {where}",
    "overflow": "{where} would not fit the window",
    "manual": "the user compacted before message {at} in the recording",
    "recorded": "the recording compacted before {where}",
}
"""Why an attempt that changed nothing was made, by its trigger (``where``: the call or the
message; ``at``: the message)."""


class Appended(Sequence[Item]):
    """The items a walk added from message ``start`` up to ``stop`` (``items[start:stop]`` that
    are not None), made only when read as a sequence: :func:`futile` reads the messages the
    walk took (``walked``, a byte a message) from the session's ``messages`` instead. An item's
    message is the session's but for a truncated output, whose copy differs in its output
    alone; an attempt that stays stuck looks again at every message since the last one, and
    made an item of each."""

    __slots__ = ("_made", "items", "messages", "start", "stop", "walked")

    def __init__(
        self,
        items: Sequence[Item | None],
        messages: Sequence[Message],
        walked: bytearray,
        start: int,
        stop: int,
    ) -> None:
        self.items = items
        self.messages = messages
        self.walked = walked
        self.start = start
        self.stop = stop
        self._made: list[Item] | None = None

    def _list(self) -> list[Item]:
        made = self._made
        if made is None:
            span = self.items[self.start : self.stop]
            made = self._made = [item for item in span if item is not None]
        return made

    def __len__(self) -> int:
        return len(self._list())

    def __bool__(self) -> bool:
        """The walk took a message of the stretch (read from its column: no item made)."""
        return any(self.walked[self.start : self.stop])

    @overload
    def __getitem__(self, at: int) -> Item: ...

    @overload
    def __getitem__(self, at: slice) -> list[Item]: ...

    def __getitem__(self, at: int | slice) -> Item | list[Item]:
        return self._list()[at]


_SUMMARY = attrgetter("summary")
_TURN_START = attrgetter("is_turn_start")


def _only_lengthens(
    appended: Appended, walked: bytearray, since: int, turns_matter: bool, links: Sequence[int]
) -> bool:
    """The last test of :func:`futile` (no summary, no id shared with a message before
    ``since``, no turn start when ``turns_matter``) on the messages ``appended`` stands for
    (``walked``: its slice of the walk's column, a message taken in it), read from the session:
    the same answer as on its items (``tests/unit/test_replay_noop.py``), with no item made,
    no list of the messages, and each test made over the whole stretch in C."""
    start, stop = appended.start, appended.stop
    if min(compress(links[start:stop], walked)) < since:
        return False
    messages = appended.messages[start:stop]
    if any(map(_SUMMARY, compress(messages, walked))):
        return False
    return not (turns_matter and any(map(_TURN_START, compress(messages, walked))))


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
    if isinstance(appended, Appended):  # (its emptiness read once from the walk's column)
        walked = appended.walked[appended.start : appended.stop]
        if not any(walked):
            return True
    elif not appended:
        return True
    if not stuck.too_large:
        return False
    pruning = policy.pruning
    if pruning.enabled and pruning.protect_turns == 0:
        return False
    turns_matter = pruning.enabled
    since = stuck.at
    if isinstance(appended, Appended):
        return _only_lengthens(appended, walked, since, turns_matter, links)
    for item in appended:
        message = item.message
        if message.summary or (item.index >= 0 and links[item.index] < since):
            return False
        if turns_matter and message.is_turn_start:
            return False
    return True
