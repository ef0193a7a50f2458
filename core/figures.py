"""The facts ctxscope states about a session, each computed by one named function.

Every output (the TUI, the text commands, ``--json``, the HTML report, ``fleet``, the Parquet
export) reads a fact from here, so one fact has one number everywhere. Each fact has a name, a
one-line definition and a provenance label (:data:`FACTS`): where two figures measure different
things they carry different names.

(Started by issue 23; more facts move here as their outputs are brought together.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.models import CompactionEvent, Session


@dataclass(frozen=True, slots=True)
class FactDefinition:
    """What a fact is, in one line, and where its number comes from."""

    name: str
    definition: str
    provenance: str
    """``recorded`` (the file says it), ``estimated`` (ctxscope counted it), ``table`` …"""


RECORDED_COMPACTIONS = FactDefinition(
    "recorded compactions",
    "compactions the session went through: those its file records, less those the user "
    "rewound past (they never took effect)",
    "recorded",
)

FACTS: dict[str, FactDefinition] = {fact.name: fact for fact in (RECORDED_COMPACTIONS,)}
"""Every fact defined here, by name."""


def effective_compactions(session: Session) -> Sequence[CompactionEvent]:
    """The compactions of :data:`RECORDED_COMPACTIONS`, in the file's order."""
    return [event for event in session.compactions if not event.rewound]


def recorded_compactions(session: Session) -> int:
    """How many :data:`RECORDED_COMPACTIONS` the session has."""
    return len(effective_compactions(session))
