"""The typed read of a Claude Code line: the fields of a user or assistant line, decoded by
msgspec straight into structs (everything else on the line, such as the UI's copy of a tool
result in ``toolUseResult``, is skipped unread), then made into an
:class:`~core.formats.claude_records.Entry`.

Only a line whose every field read has the type a well-formed transcript gives it is read this
way: :func:`decode` returns None for any other line (a field of another type, a record type
without a typed read, bytes that are not UTF-8, JSON that does not parse, a number orjson would
read as a float), and the loader reads it as a plain object with the checks and diagnostics of
:mod:`core.formats.claude_records`. What an entry holds is the same either way.
"""

from __future__ import annotations

from collections.abc import Callable
from sys import intern
from typing import Annotated

import msgspec
import orjson

from core.formats.claude_assembly import usage_of_counts
from core.formats.claude_records import ASSISTANT, FLAGS, USER, Entry, set_texts, texts_of
from core.model.read_numbers import MAX_COUNT
from core.model.session import ToolCall, Utf8Text, held_output

Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
"""A token count a real session holds (any other figure is read the checked way)."""

_NULL = msgspec.Raw(b"null")


class Block(msgspec.Struct, gc=False):
    """A content block (and a block of a tool result's content)."""

    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    id: str | None = None
    name: str | None = None
    input: msgspec.Raw = _NULL
    """A tool call's arguments, parsed by orjson when the call is read (as the plain read does)."""
    tool_use_id: str | None = None
    content: str | list[Block] | None = None
    is_error: bool | None = None


class TypedUsage(msgspec.Struct, gc=False):
    """The counts of a usage object (or of one of its ``iterations``)."""

    type: str | None = None
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cache_read_input_tokens: Count | None = None
    cache_creation_input_tokens: Count | None = None
    iterations: list[TypedUsage] | None = None


class TypedMessage(msgspec.Struct, gc=False):
    """The API message of a user or assistant line."""

    id: str | None = None
    model: str | None = None
    stop_reason: str | None = None
    usage: TypedUsage | None = None
    content: str | list[Block] | None = None


_RENAMED = {
    "parent_uuid": "parentUuid",
    "logical_parent_uuid": "logicalParentUuid",
    "session_id": "sessionId",
    "is_sidechain": "isSidechain",
    "is_meta": "isMeta",
    "is_compact_summary": "isCompactSummary",
    "is_api_error_message": "isApiErrorMessage",
    "request_id": "requestId",
    "agent_id": "agentId",
}
"""The line's keys that are not the fields' names."""


class Envelope(msgspec.Struct, gc=False, rename=_RENAMED):
    """The fields of a user or assistant line the loader reads on every line."""

    type: str
    message: TypedMessage | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    logical_parent_uuid: str | None = None
    timestamp: str | None = None
    # (a null flag is read the plain way: it is false there too)
    is_sidechain: bool = False
    is_meta: bool = False
    is_compact_summary: bool = False
    is_api_error_message: bool = False
    error: str | None = None
    request_id: str | None = None
    version: str | None = None
    entrypoint: str | None = None
    agent_id: str | None = None


class Line(Envelope, gc=False, rename=_RENAMED):
    """The fields of a user or assistant line the loader reads, with the session's facts that
    are read until they are known (:data:`decode_envelope` reads a line without them: two
    strings fewer to decode on each line of the rest of the file)."""

    session_id: str | None = None
    cwd: str | None = None


SKIPPED_TYPES = frozenset(
    {
        # Bookkeeping for the UI, undo, the input queue and the session list: never sent to the
        # model. (``progress`` lines are hook and sub-agent progress, shown while it runs.)
        "progress",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "tag",
        "last-prompt",
        "mode",
        "permission-mode",
        "bridge-session",
        "atis-latch",
        "pr-link",
    }
)
"""The record types the loader passes over (only their ``uuid`` and parent are kept)."""

decode_line: Callable[[bytes], Envelope] = msgspec.json.Decoder(Line).decode
"""Decodes a line with the session's facts (a :class:`Line`)."""
decode_envelope: Callable[[bytes], Envelope] = msgspec.json.Decoder(Envelope).decode
"""Decodes a line without them (once they are known)."""
_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


class _Plain(Exception):
    """The line holds what only the plain read reads (a number orjson reads as infinity)."""


def read(
    raw: bytes,
    line_no: int,
    offset: int,
    decode: Callable[[bytes], Envelope] = decode_line,
    call_ids: dict[str, str] | None = None,
) -> tuple[Envelope, Entry | None, str | None] | None:
    """The typed line, its entry (None for a passed-over line) and its parent (a compact
    boundary's pre-compaction leaf when it has none), or None when the line is not a user,
    assistant or passed-over line read this way. The entry is what
    :mod:`core.formats.claude_records` reads from the same line as an object; its ``uuid`` is
    ``line-N`` when the line has none. ``decode``: :data:`decode_line`, or
    :data:`decode_envelope` once the session's facts are known. ``call_ids``: the id of each
    tool call read so far, the string its call holds, which a result of it then holds too (its
    own copy goes at once, not at the end of the load, where it left a free block among what
    the session keeps); updated with the calls of the line."""
    call_ids = {} if call_ids is None else call_ids
    try:
        line = decode(raw)
    except _ERRORS:
        return None
    parent = line.parent_uuid
    if parent is None:
        parent = line.logical_parent_uuid
    kind = line.type
    message = line.message
    entry_kind = ASSISTANT if kind == "assistant" else USER if kind == "user" else None
    if entry_kind is None:
        return (line, None, parent) if kind in SKIPPED_TYPES else None
    if message is None:
        return None
    uuid = line.uuid
    entry = Entry(  # (by position: kind, line, offset, uuid, parent, timestamp, flags)
        entry_kind,
        line_no,
        offset,
        uuid if uuid is not None else f"line-{line_no}",
        parent,
        line.timestamp,
        FLAGS[line.is_sidechain][line.is_meta][line.is_compact_summary],
    )
    if entry_kind == USER:
        content = message.content
        if isinstance(content, str):
            entry.one_text = content  # (a typed user's text: the usual prompt, no call)
        else:
            _read_user(entry, content, call_ids)
        return line, entry, parent
    # An assistant line (read here, not in a function of its own: one call fewer a line).
    msg_id = message.id
    entry.message_id = msg_id if msg_id is not None else entry.uuid
    entry.request_id = line.request_id
    # the same few names on every line: one string each, not one per line until the assembly
    model, stop = message.model, message.stop_reason
    entry.model = None if model is None else intern(model)
    entry.stop_reason = None if stop is None else intern(stop)
    usage = message.usage
    if usage is not None:
        if usage.iterations is not None:
            usage = _request_usage(usage)
        entry.call_usage = usage_of_counts(
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
        )
    content = message.content
    if isinstance(content, str):
        entry.one_text = content
    elif content is not None:
        try:
            _read_blocks(entry, content, call_ids)
        except _Plain:
            return None
    if line.is_api_error_message or line.error:
        error = line.error
        text = "\n".join(texts_of(entry))
        entry.error = (text or (error if error is not None else "")) or "API error"
    return line, entry, parent


def _request_usage(usage: TypedUsage) -> TypedUsage:
    """The usage of the request (see :func:`core.formats.claude_records.request_usage`) when
    the usage has ``iterations``."""
    for item in reversed(usage.iterations or ()):
        if item.type == "message":
            return item
    return usage


def _read_user(entry: Entry, content: list[Block] | None, call_ids: dict[str, str]) -> None:
    if content is None:
        return
    texts: list[str] = []
    results: list[tuple[str, str | Utf8Text, bool]] = []
    for block in content:
        if block.type == "tool_result":
            results.append(_result_of(block, block.is_error is True, call_ids))
            continue
        piece = _block_piece(block)
        if piece is not None:
            texts.append(piece)
    if texts:
        set_texts(entry, texts)
    if results:
        entry.results = results


def _block_piece(block: Block) -> str | None:
    kind = block.type
    if kind == "text":
        return block.text
    if kind == "image":
        return "[image]"
    if kind == "document":
        return "[document]"
    return None


def _result_of(
    block: Block, is_error: bool, call_ids: dict[str, str]
) -> tuple[str, str | Utf8Text, bool]:
    content = block.content
    if isinstance(content, str):
        text = content
    elif content is None:
        text = ""
    else:
        parts = [piece for piece in [_block_piece(inner) for inner in content] if piece is not None]
        text = "\n\n".join(parts)
    call_id = block.tool_use_id
    # (held as its result will hold it: a Read output's string, 2 bytes a character, goes now)
    if call_id is None:
        call_id = ""
    output = text if text.isascii() else held_output(text)  # (its usual case without a call)
    return (call_ids.get(call_id, call_id), output, is_error)


def _read_blocks(entry: Entry, content: list[Block], call_ids: dict[str, str]) -> None:
    """The blocks of an assistant line (a new entry): text, thinking, tool calls, server tool
    results. Its texts are set as :func:`~core.formats.claude_records.set_texts` sets them (its
    one text itself, several as a list) and its calls are a list (the one its message holds),
    each made as its block is read: no list or tuple that only feeds the next one."""
    texts: list[str] | None = None
    calls: list[ToolCall] | None = None
    for block in content:
        kind = block.type
        if kind == "text":
            text = block.text
            if text is not None:
                one = entry.one_text
                if texts is not None:
                    texts.append(text)
                elif one is None:
                    entry.one_text = text
                else:
                    entry.one_text = None
                    entry.more_texts = texts = [one, text]
        elif kind == "thinking":
            if block.thinking is not None:
                entry.reasoning = (*entry.reasoning, block.thinking)
        elif kind == "tool_use" or kind == "server_tool_use":
            call_id = block.id if block.id is not None else ""
            raw = block.input
            try:  # (the arguments as orjson reads them, as the plain read does)
                arguments = None if raw is _NULL else orjson.loads(bytes(raw))
            except orjson.JSONDecodeError:
                raise _Plain from None
            call = ToolCall(
                id=call_ids.setdefault(call_id, call_id),
                name=intern(block.name) if block.name is not None else "",
                arguments=arguments,
            )
            if calls is None:
                entry.calls = calls = [call]
            else:
                calls.append(call)
        elif kind is not None and kind.endswith("_tool_result"):
            entry.results = (*entry.results, _result_of(block, False, call_ids))
