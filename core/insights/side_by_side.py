"""Two summaries of one head, fact by fact: the recording's and a replay's (``compactions
--compare``).

A module of its own, beside :mod:`core.insights.forgotten_facts`: only the comparison makes
:class:`SideBySide` rows, and a command that does not compare (``analyze``, ``compactions
--json``) does not define their model.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.insights.forgotten_facts import FactRecord, Forgotten, forgotten_of
from core.model.session import Message
from core.replay.results import Documented


class SideBySide(Documented):
    """One fact of a head, as a recorded summary and a replayed one keep it."""

    fact: FactRecord
    """The fact (``kept``: by the recorded summary)."""
    kept_by_recorded: bool
    """The recorded summary keeps it."""
    kept_by_replayed: bool
    """The replayed summary keeps it."""


def compare_summaries(
    head: Sequence[Message], recorded: str, replayed: str
) -> tuple[Forgotten, Forgotten, list[SideBySide]]:
    """The same head checked against the recorded summary and a replayed one."""
    mine, records = forgotten_of(head, recorded)
    theirs, replayed_records = forgotten_of(head, replayed, source="replayed")
    rows = [
        SideBySide(fact=r, kept_by_recorded=r.kept, kept_by_replayed=s.kept)
        for r, s in zip(records, replayed_records, strict=True)
    ]
    return mine, theirs, rows
