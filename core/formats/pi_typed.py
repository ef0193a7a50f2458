"""The typed read of a pi line: the fields of a ``message`` entry of a user, assistant or tool
result, decoded by msgspec straight into structs (everything else on the line, such as the
cost of a call or a tool's ``details`` other than its truncation, is skipped unread).

Only a line whose every field read has the type a well-formed session gives it is read this
way: :func:`read` returns None for any other line (another entry type or role, a field of
another type, an entry without an id, bytes that are not UTF-8, JSON that does not parse, a
count no real session holds), and the loader reads it as a plain object with the checks and
diagnostics of :mod:`core.formats.pi`. What a message holds is the same either way
(:func:`content_text`, :func:`usage_of` and :func:`assistant_parts` are the plain read's rules
over structs).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import orjson

from core.model.read_numbers import MAX_COUNT
from core.model.session import Message, Role, ToolCall, ToolResult, Usage, UsageConvention

Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
"""A token count a real session holds (any other figure is read the checked way)."""

_NULL = msgspec.Raw(b"null")

ROLES = frozenset({"user", "assistant", "toolResult"})
"""The roles of the messages read this way (the others are rare: read as objects)."""


class Block(msgspec.Struct, gc=False, rename={"mime_type": "mimeType"}):
    """A content block: text, thinking, image or tool call."""

    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    id: str | None = None
    name: str | None = None
    arguments: msgspec.Raw = _NULL
    """A tool call's arguments, parsed by orjson when the call is read (as the plain read does)."""
    mime_type: str | None = None


class TypedUsage(msgspec.Struct, gc=False):
    """The counts of an assistant's ``usage``."""

    input: Count | None = None
    output: Count | None = None
    cacheRead: Count | None = None
    cacheWrite: Count | None = None
    totalTokens: Count | None = None


class Truncation(msgspec.Struct, gc=False):
    """A tool result's ``details.truncation``."""

    truncated: bool | None = None


class Details(msgspec.Struct, gc=False):
    """A tool result's ``details`` (only its truncation is read)."""

    truncation: Truncation | None = None


class TypedMessage(msgspec.Struct, gc=False):
    """The ``message`` of a message entry."""

    role: str
    content: str | list[Block] | None = None
    model: str | None = None
    provider: str | None = None
    usage: TypedUsage | None = None
    stopReason: str | None = None
    errorMessage: str | None = None
    toolCallId: str | None = None
    toolName: str | None = None
    isError: bool | None = None
    details: Details | None = None


class Line(msgspec.Struct, gc=False):
    """The fields of a message entry the loader reads."""

    type: str
    id: str | None = None
    parentId: str | msgspec.UnsetType | None = msgspec.UNSET
    timestamp: str | None = None
    message: TypedMessage | None = None


_decode_line = msgspec.json.Decoder(Line).decode
_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


Parts = tuple[str, str, list[ToolCall]]
"""A message's text, its thinking and its tool calls."""


class _Plain(Exception):
    """The line holds what only the plain read reads (arguments orjson does not parse)."""


def read(raw: bytes) -> tuple[Line, TypedMessage, Parts] | None:
    """A user, assistant or tool result message entry with an id: the typed line, its message
    and what the message shows the model (:class:`Parts`); None when the line is not one read
    this way."""
    try:
        line = _decode_line(raw)
    except _ERRORS:
        return None
    message = line.message
    if line.type != "message" or not line.id or message is None:
        return None
    role = message.role
    if role == "assistant":
        try:
            parts = assistant_parts(message.content)
        except _Plain:
            return None
    elif role == "user" or role == "toolResult":
        parts = (content_text(message.content), "", [])
    else:
        return None
    message.content = None  # (the blocks are read: not kept)
    return line, message, parts


class Read(msgspec.Struct, gc=False):
    """What a message entry read typed leaves for the walk along the path: its message (whose
    model the walk sets when the entry names none), and what the walk reads besides."""

    message: Message
    provider: str | None = None
    """An assistant's provider, when it names one."""
    stop_reason: str | None = None
    """An assistant's ``stopReason`` as recorded (an empty one included)."""
    no_call_id: bool = False
    """A tool result without a ``toolCallId`` (the walk says so, if it is on the path)."""


def message_of(
    read: tuple[Line, TypedMessage, Parts],
    entry_id: str,
    parent: str | None,
    line: int,
    offset: int,
) -> Read:
    """The message of an entry read typed: what the plain read makes of the same entry (the
    model of an assistant that names none is left for the walk to set)."""
    record, message, (text, reasoning, calls) = read
    role = message.role
    if role == "assistant":
        stop = message.stopReason
        return Read(
            Message(
                index=0,
                role=Role.ASSISTANT,
                id=entry_id,
                parent_id=parent,
                timestamp=record.timestamp,
                text=text,
                reasoning=reasoning,
                tool_calls=calls or (),
                usage=usage_of(message.usage),
                model=message.model or None,
                stop_reason=stop or None,
                error=message.errorMessage or None,
                source_line=line,
                source_offset=offset,
            ),
            provider=message.provider or None,
            stop_reason=stop,
        )
    if role == "toolResult":
        details = message.details
        truncation = details.truncation if details is not None else None
        call_id = message.toolCallId
        result = ToolResult(
            call_id=call_id if call_id is not None else "",
            tool_name=message.toolName or None,
            output=text,
            is_error=message.isError is True,
            truncated_by_tool=truncation is not None and truncation.truncated is True,
        )
        return Read(
            Message(
                index=0,
                role=Role.TOOL,
                id=entry_id,
                parent_id=parent,
                timestamp=record.timestamp,
                tool_result=result,
                source_line=line,
                source_offset=offset,
            ),
            no_call_id=call_id is None,
        )
    return Read(
        Message(
            index=0,
            role=Role.USER,
            id=entry_id,
            parent_id=parent,
            timestamp=record.timestamp,
            text=text,
            source_line=line,
            source_offset=offset,
        )
    )


def content_text(content: str | list[Block] | None) -> str:
    """Text of a pi content value (the plain read's ``_content_text`` over structs)."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if len(content) == 1:  # the usual one text block: no join
        block = content[0]
        if block.type == "text" and block.text is not None:
            return block.text
    pieces: list[str] = []
    for block in content:
        kind = block.type
        if kind == "text" and block.text is not None:
            pieces.append(block.text)
        elif kind == "image":
            pieces.append(f"[image {block.mime_type or ''}]".replace(" ]", "]"))
    return "\n".join(pieces)


def usage_of(usage: TypedUsage | None) -> Usage | None:
    """The plain read's ``usage_from_pi`` over a typed usage."""
    if usage is None:
        return None
    total = usage.totalTokens
    prompt, output, cache_read = usage.input or 0, usage.output or 0, usage.cacheRead or 0
    cache_write = usage.cacheWrite or 0
    if not (total or cache_write or prompt or output or cache_read):
        return None
    return Usage(
        input=prompt,
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        total=total,
        convention=UsageConvention.PI,
    )


def assistant_parts(content: str | list[Block] | None) -> Parts:
    """An assistant's text, thinking and tool calls (the plain read's rules over structs)."""
    if isinstance(content, str):
        return content, "", []
    if not content:
        return "", "", []
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        kind = block.type
        if kind == "text":
            if block.text is not None:
                texts.append(block.text)
        elif kind == "thinking":
            if block.thinking is not None:
                thinking.append(block.thinking)
        elif kind == "toolCall":
            calls.append(
                ToolCall(
                    id=block.id or "",
                    name=block.name or "tool",
                    arguments=_arguments(block.arguments),
                )
            )
    return "\n\n".join(texts), "\n\n".join(thinking), calls


def _arguments(raw: msgspec.Raw) -> Any:
    """A tool call's arguments as orjson reads them (as the plain read does)."""
    if raw is _NULL:
        return None
    try:
        return orjson.loads(bytes(raw))
    except orjson.JSONDecodeError:
        raise _Plain from None
