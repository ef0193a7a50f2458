"""Why a Claude Code compaction ran, and the evidence for it.

``compact_boundary.compactMetadata.trigger`` says ``auto`` or ``manual``. The rest is read
around the boundary:

* a manual ``/compact`` leaves the command in the file: the line the user typed (``/compact``)
  just before the boundary, and ``<command-name>/compact</command-name>`` with its output just
  after the summary (:class:`CompactCommands` collects them in file order);
* an automatic compaction that follows a provider's context-overflow error (a ``system`` /
  ``api_error`` line or a synthetic assistant message saying the prompt is too long) with no
  successful call in between is an overflow recovery: Claude Code compacts reactively after
  such an error and records it as ``auto`` too (:func:`trigger_of`).

Where it sits: a partial compaction (2.1.2xx) keeps a segment of the conversation verbatim
(``preservedSegment``); :func:`place_preserved_segments` puts that segment before the compaction
when the file wrote it after.
"""

from __future__ import annotations

from typing import Any

from core.formats.claude_records import ASSISTANT, BOUNDARY, Entry
from core.model.session import CompactionTrigger

COMMAND_TAG = "<command-name>/compact</command-name>"
"""How the agent records a ``/compact`` command the user gave."""


def is_typed_compact(text: str) -> bool:
    """``text`` is the ``/compact`` command as the user typed it (``/compact``, with arguments)."""
    return text.startswith("/compact") and text[8:9] in ("", " ", "\n")


class CompactCommands:
    """The ``/compact`` commands of a file, attached to the boundary they belong to.

    A command seen after a boundary and before the next model call belongs to that boundary (the
    agent writes the command lines after the summary); one seen before a boundary, with no model
    call in between, too (the line the user typed).
    """

    def __init__(self) -> None:
        self.pending: list[int] = []
        self.open_boundary: int | None = None
        self.by_boundary: dict[int, list[int]] = {}
        """Boundary line -> the lines of its /compact commands, in file order."""
        self.open = False
        """A command is pending or a boundary open: the next model call closes them (asked
        before :meth:`call`, which nearly every model call of a file then need not make)."""

    def command(self, line: int) -> None:
        if self.open_boundary is not None:
            self.by_boundary[self.open_boundary].append(line)
        else:
            self.pending.append(line)
        self.open = True

    def boundary(self, line: int) -> None:
        self.by_boundary[line] = self.pending
        self.pending = []
        self.open_boundary = line
        self.open = True

    def call(self) -> None:
        """A model call: later commands belong to a later boundary."""
        self.pending = []
        self.open_boundary = None
        self.open = False


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def trigger_of(
    metadata: dict[str, Any],
    line: int,
    commands: list[int],
    overflow: tuple[int, str] | None,
) -> tuple[CompactionTrigger, str]:
    """The trigger of the boundary at ``line`` and the evidence for it, in one sentence.

    ``commands``: the lines of its /compact commands; ``overflow``: the line and text of a
    context-overflow error since the last successful model call, if any.
    """
    recorded = metadata.get("trigger")
    commands_said = ""
    if commands:
        where = ", ".join(str(c) for c in commands)
        commands_said = (
            f"; the /compact command is recorded (line{'s' if len(commands) > 1 else ''} {where})"
        )
    if recorded == "auto" and overflow is not None:
        error_line, error = overflow
        return "overflow", (
            f"compactMetadata.trigger is auto (line {line}), right after the provider refused "
            f"the request as too long (line {error_line}: {_short(error)})"
        )
    if recorded in ("auto", "manual"):
        return recorded, f"compactMetadata.trigger is {recorded} (line {line}){commands_said}"
    if commands:
        return "manual", f"compactMetadata has no trigger (line {line}){commands_said}"
    return "unknown", f"compactMetadata has no trigger (line {line})"


def preserved_segment(metadata: dict[str, Any], parents: dict[str, str | None]) -> list[str]:
    """The lines a partial compaction kept verbatim (``preservedSegment``), head first: the
    chain from ``tailUuid`` back to ``headUuid``. Only the head when the chain cannot be
    followed in the file; [] when the compaction kept nothing."""
    segment = metadata.get("preservedSegment")
    if not isinstance(segment, dict):
        return []
    head, tail = segment.get("headUuid"), segment.get("tailUuid")
    if not isinstance(head, str):
        return []
    path: list[str] = []
    node = tail if isinstance(tail, str) else None
    while node is not None and node in parents and len(path) < 100_000:
        path.append(node)
        if node == head:
            path.reverse()
            return path
        node = parents[node]
    return [head]


def place_preserved_segments(
    entries: list[Entry], parents: dict[str, str | None], before_boundary: dict[str, str]
) -> dict[str, list[str]]:
    """Put the messages a partial compaction kept before it, where they happened.

    From 2.1.2xx Claude Code can write the kept segment again *after* the boundary and its
    summary (with zeroed top-level usage), re-parented under the summary, although the model
    produced it before the compaction ran. Those entries (the segment's chain, and the other
    block lines of its API messages) move to just before their boundary; the first of them is
    re-attached to the line written before the boundary. ``entries`` is reordered in place.
    Returns each boundary's segment (its uuids, head first).
    """
    segments: dict[str, list[str]] = {}
    boundaries = [e for e in entries if e.kind == BOUNDARY]
    for boundary in boundaries:
        uuids = preserved_segment(boundary.usage or {}, parents)
        if not uuids:
            continue
        segments[boundary.uuid] = uuids
        members = set(uuids)
        at = entries.index(boundary)
        after = entries[at + 1 :]
        keys = {e.key for e in after if e.uuid in members and e.kind == ASSISTANT}
        moved = [e for e in after if e.uuid in members or (e.kind == ASSISTANT and e.key in keys)]
        if not moved:
            continue  # written in place, before the boundary
        moved_ids = {id(e) for e in moved}
        moved[0].parent = before_boundary.get(boundary.uuid)
        entries[at:] = [*moved, boundary, *(e for e in after if id(e) not in moved_ids)]
    return segments
