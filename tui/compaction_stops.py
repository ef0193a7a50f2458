"""The compactions ``[`` and ``]`` stop at: every one the message list draws.

The list draws a rule for each compaction the recording holds and marks each one the replay made.
Under a policy other than the recording agent's, the replay does not take the agent's own
compactions (it makes its own elsewhere), yet their rules stay in the list: they are stops too,
shown as recorded and not replayed, with the recording's own figures. The session screen and the
compaction screen read the stops from here, so both step through the same compactions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from core.model.session import Session
    from core.replay import ReplayEvent, ReplayResult

COMPACTION_KINDS = ("compact", "recorded-compaction")
"""Replay event kinds that are compactions."""


class CompactionStop(NamedTuple):
    """One compaction drawn in the list: a replay event, or a recorded compaction the replay did
    not apply."""

    event_id: int
    """Index into the result's ``events``; ``-1 - k`` for recorded compaction ``k`` (see
    :func:`recorded_id`) when the replay did not apply it."""
    event: ReplayEvent | None
    """The replay's event (None: recorded, not replayed)."""
    recorded_index: int | None
    """The recorded compaction (index into ``Session.compactions``) it is or took, if any."""
    message_index: int
    """Where the list draws it: the event's message, or the recorded compaction's first message
    after it."""

    @property
    def replayed(self) -> bool:
        """The replay made or took this compaction."""
        return self.event is not None


def recorded_id(recorded_index: int) -> int:
    """The stop id of recorded compaction ``recorded_index`` the replay did not apply."""
    return -1 - recorded_index


def compaction_stops(session: Session, result: ReplayResult | None) -> list[CompactionStop]:
    """Every compaction the list draws, in the list's order: the replay's compactions, and each
    recorded compaction no replay compaction applied or took (all recorded ones without a
    result)."""
    count = len(session.messages)
    stops: list[CompactionStop] = []
    applied: set[int] = set()
    if result is not None:
        for event_id, event in enumerate(result.events):
            if event.kind in COMPACTION_KINDS:
                stops.append(
                    CompactionStop(event_id, event, event.recorded_index, event.message_index)
                )
                if event.recorded_index is not None:
                    applied.add(event.recorded_index)
    for k, compaction in enumerate(session.compactions):
        if k not in applied and compaction.message_index < count:
            stops.append(CompactionStop(recorded_id(k), None, k, compaction.message_index))
    stops.sort(key=lambda stop: stop.message_index)
    return stops
