"""Where a Codex rollout line comes from, and what its bytes tell before it is parsed: the
position an item is read at (:class:`At`), the size of a ``response_item``'s payload as Codex
wrote it (:func:`payload_bytes`), and the events passed over unparsed (:func:`ignorable`)."""

from __future__ import annotations

import msgspec

# Events that only repeat response items or report to the UI. Codex writes the envelope with a
# fixed key order, so they can be recognised from the first bytes and passed over unparsed; a
# line written any other way is simply parsed and ignored.
EVENT_PREFIX = b'"type":"event_msg","payload":{"type":"'
"""What an event's line holds before its type, in Codex's compact envelope."""
IGNORED_EVENT_TYPES = (
    "agent_message",
    "agent_reasoning",
    "agent_reasoning_raw_content",
    "agent_reasoning_section_break",
    "exec_command_begin",
    "exec_command_end",
    "patch_apply_begin",
    "patch_apply_end",
    "web_search_begin",
    "web_search_end",
    "mcp_tool_call_begin",
    "mcp_tool_call_end",
    "turn_diff",
    "context_compacted",
)
"""The events :func:`ignorable` passes over."""
IGNORED_EVENTS = tuple(f'{name}"'.encode() for name in IGNORED_EVENT_TYPES)
"""What follows :data:`EVENT_PREFIX` on a line :func:`ignorable` passes over."""
_PREFIX_BYTES = len(EVENT_PREFIX)


def ignorable(line: bytes) -> bool:
    """The line is an event that only repeats response items or reports to the UI, written
    in Codex's compact envelope (recognised from its first bytes)."""
    at = line.find(EVENT_PREFIX, 0, 96)
    return at >= 0 and line.startswith(IGNORED_EVENTS, at + _PREFIX_BYTES)


COMPACT_EVENT_AT = 40
"""Where :data:`EVENT_PREFIX` starts on an event line of Codex's compact envelope with a
timestamp of 24 characters (``{"timestamp":"2026-05-11T08:27:17.490Z",`` before it)."""
COMPACT_NAME_AT = COMPACT_EVENT_AT + _PREFIX_BYTES
"""Where the event's type starts on such a line."""
NAME_END_AT = COMPACT_NAME_AT + max(map(len, IGNORED_EVENTS))
"""How far a line's head is read to tell an ignored event's type at :data:`COMPACT_NAME_AT`."""


def compact_ignorable(line: bytes) -> bool:
    """:func:`ignorable` told from fixed places, without the search: the line starts as Codex's
    compact envelope (:data:`LINE_START`), holds :data:`EVENT_PREFIX` at
    :data:`COMPACT_EVENT_AT` and an ignored event's type after it. No earlier match of the
    prefix can then start in the line's first 40 bytes (it would start at 3 or 10, where the
    prefix overlaps itself, or before 3; the line start holds no ``"type":`` at any of them),
    so ``ignorable`` finds this one: True here implies True there. (The walk of
    :mod:`core.formats.codex_typed_read` asks it first, on a line it decoded as an event to
    pass over, before it tries ``ignorable``.)"""
    return (
        line[COMPACT_EVENT_AT:COMPACT_NAME_AT] == EVENT_PREFIX
        and line[:_HEAD_BYTES] == LINE_START
        and bytes(line[:NAME_END_AT]).startswith(IGNORED_EVENTS, COMPACT_NAME_AT)
    )


class At(msgspec.Struct, gc=False):
    """Where an item comes from: its line, offset and time, the id its message gets (None: the
    line's), whether it is a copy re-sent after a compaction (``replay``, with the compaction's
    ``summary_text``), and the record as the file wrote it (``raw``: the bytes of a
    ``response_item`` line, to measure its payload).

    A struct (made in one C call: one per response item, 100,000 on 100 MB), untracked by the
    garbage collector (it holds only strings, bytes and numbers)."""

    line: int
    offset: int
    timestamp: str | None
    item_id: str | None = None
    replay: bool = False
    summary_text: str | None = None
    raw: bytes | None = None


LINE_START = b'{"timestamp":"'
"""How a line of Codex's compact envelope starts (its timestamp follows)."""
BEFORE_PAYLOAD = b'","type":"response_item","payload":'
"""What a ``response_item`` line of the compact envelope holds between its timestamp and its
payload."""


_HEAD_BYTES = len(LINE_START)
_BEFORE_BYTES = len(BEFORE_PAYLOAD)


def payload_bytes(raw: bytes, timestamp: str) -> int | None:
    """The size of a ``response_item`` line's payload as written, when the line is the compact
    envelope Codex writes (else None: the item is measured by serialising it again). ``raw``
    may be a ``memoryview`` of the line (its head is then compared as bytes: a view's slices
    compare at half the speed)."""
    middle = _HEAD_BYTES + len(timestamp)  # timestamps are ASCII
    end = middle + _BEFORE_BYTES
    head = raw if type(raw) is bytes else bytes(raw[:end])
    # (slices, not startswith / endswith: those parse a tuple of arguments, which costs more,
    # once per response item; the last byte read as an int, once the head holds: not empty)
    if head[:_HEAD_BYTES] == LINE_START and head[middle:end] == BEFORE_PAYLOAD and raw[-1] == 125:
        return len(raw) - end - 1  # (the payload, without the closing brace "}")
    return None
