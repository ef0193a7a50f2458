"""The recording's own context, walked message by message: what was in the window at every call,
and what each recorded compaction replaced and kept.

The placement of the recorded compactions (which messages each one wrote, the first one it kept,
the call it came before) is the replay's (:class:`core.replay.recorded.RecordedCompactions`);
this module only walks it, for the readers that need the messages themselves rather than their
sum: the context breakdown (:mod:`core.insights.breakdown`) and what a compaction forgot
(:mod:`core.insights.forgotten_facts`).

``RecordedWalk(session).steps()`` yields, in session order:

* :class:`CompactionStep` — a recorded compaction took effect before message ``m_c``: its
  ``head`` (the messages in context it replaced, a previous summary included), what it ``kept``
  verbatim, and the ``context`` right after it (what it wrote, then what it kept);
* :class:`CallStep` — model call ``call_index`` is about to be sent (its own message not yet
  added: a reader measuring after the reply adds it);
* :class:`MessageStep` — message ``index`` joins the context.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import compress

from core.model.session import Session
from core.replay.recorded import RecordedCompaction, placed


@dataclass(frozen=True, slots=True)
class CompactionStep:
    """A recorded compaction took effect (see the module docstring)."""

    compaction: RecordedCompaction
    head: tuple[int, ...]
    """Messages in context before it that it replaced, in order."""
    kept: tuple[int, ...]
    """Messages in context before it that it kept verbatim."""
    context: tuple[int, ...]
    """The context right after it: the messages it wrote (its summary), then the kept ones."""


@dataclass(frozen=True, slots=True)
class CallStep:
    """A model call is about to be sent."""

    call_index: int
    message_index: int


@dataclass(frozen=True, slots=True)
class MessageStep:
    """A message joins the recorded context."""

    index: int


Step = CompactionStep | CallStep | MessageStep


class RecordedWalk:
    """A session's calls and recorded compactions, placed once, walked as often as needed."""

    def __init__(self, session: Session) -> None:
        self.session = session
        # placed once per session, shared with the replay (core.replay.recorded.placed)
        self.calls, self.recorded = placed(session)

    def steps(self) -> Iterator[Step]:
        """The walk (see the module docstring)."""
        calls, recorded = self.calls, self.recorded
        context: list[int] = []
        walk_start = 0
        for i in range(calls.n):
            for rc in recorded.at.get(i, ()):
                if rc.rewound:
                    continue  # the conversation went on without it
                step = _compaction(rc, context)
                context = list(step.context)
                walk_start = rc.owned_end
                yield step
            c = calls.call_of[i]
            if c >= 0:
                yield CallStep(c, i)
            if calls.main[i] and not recorded.owned[i] and i >= walk_start:
                context.append(i)
                yield MessageStep(i)

    def compaction_steps(self) -> Iterator[CompactionStep]:
        """The :class:`CompactionStep` of :meth:`steps` alone, the same ones, without a step
        per call or per message: the context between two compactions is added as one slice
        of the walked messages (a 100 MB session walks 150,000 steps for its few compactions)."""
        walked = self.recorded.walked
        context: list[int] = []
        walk_start = 0
        done = 0  # messages before this one are in ``context`` where walked
        for i in sorted(self.recorded.at):
            if i >= self.calls.n:
                break
            start = max(done, walk_start)
            if start < i:
                context.extend(compress(range(start, i), walked[start:i]))
            done = max(done, i)
            for rc in self.recorded.at[i]:
                if rc.rewound:
                    continue
                step = _compaction(rc, context)
                context = list(step.context)
                walk_start = rc.owned_end
                yield step


def _compaction(rc: RecordedCompaction, context: list[int]) -> CompactionStep:
    before = sorted(j for j in context if j < rc.m_c)
    first_kept = rc.first_kept
    kept = tuple(j for j in before if first_kept is not None and j >= first_kept)
    head = tuple(j for j in before if first_kept is None or j < first_kept)
    return CompactionStep(rc, head, kept, (*rc.owned, *kept))
