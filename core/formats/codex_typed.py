"""The typed read of a Codex rollout line: the envelope and the payload of the records nearly
every line holds (the response items ``message``, ``reasoning``, ``function_call``,
``custom_tool_call`` and their outputs; the events ``token_count``, ``user_message``, the turn
starts and ends), decoded by msgspec straight into structs of the fields the loader reads
(everything else, such as a ``token_count``'s rate limits, is skipped unread; its cumulative
total, only compared, is kept as the raw text the line holds). The events the loader passes over
(:data:`~core.formats.codex_lines.IGNORED_EVENT_TYPES`) decode too, into structs of no field
(:data:`PASSED_OVER`): the line is then passed over when
:func:`~core.formats.codex_lines.ignorable` says so, as it is when it does not decode.

Only a line whose every field read has the type a well-formed rollout gives it is decoded: for
any other line (another record type, a field of another type, a count no real session holds,
bytes that are not UTF-8, JSON that does not parse) :func:`decode` returns None, and the loader
reads the line as a plain object with its checks and diagnostics. The loader's typed handlers
(``core.formats.codex``) also hand a decoded line back to the plain read when what it holds
needs the object (an image in a message, a redacted blob, an output cut to the history's cap):
what the session holds is the same either way. Two differences are left, on lines Codex does
not write: a value orjson rejects (a number beyond a double's range, ``1e400``) in a field the
typed read skips unread or keeps as raw text (orjson rejects the line, the typed read reads it); a line with its ``type`` or ``payload`` key
twice, the first naming an event the loader passes over unparsed (the typed read reads the
last, as orjson would, rather than passing the line over). (A line of another envelope type
fails to decode, and is then passed over when ``ignorable`` finds an ignored event's opening in
its first bytes: only a line with an event nested in its envelope's first fields could.)
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import reduce
from typing import TYPE_CHECKING, Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from core.formats.codex_lines import IGNORED_EVENT_TYPES
from core.model.read_numbers import MAX_COUNT

Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
"""A token count a real session holds (any other figure is read the checked way)."""
Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
"""An integer orjson reads as one (a longer one it reads as a float: read the plain way)."""


class Part(msgspec.Struct, gc=False):
    """A piece of a message's ``content`` or of a reasoning item's ``summary`` / ``content``:
    only a piece with a text is read this way."""

    text: str
    type: str | None = None


class MessageItem(msgspec.Struct, tag_field="type", tag="message", gc=False):
    """A ``message`` response item."""

    role: str | None = None
    content: list[Part] | None = None
    id: str | None = None


class ReasoningItem(msgspec.Struct, tag_field="type", tag="reasoning", gc=False):
    """A ``reasoning`` response item."""

    summary: list[Part] | None = None
    content: list[Part] | None = None
    encrypted_content: str | None = None
    id: str | None = None


class FunctionCall(msgspec.Struct, tag_field="type", tag="function_call", gc=False):
    """A ``function_call`` response item (its arguments a JSON string)."""

    name: str | None = None
    namespace: str | None = None
    arguments: str | None = None
    call_id: str | None = None
    id: str | None = None
    execution: str | None = None


class CustomToolCall(msgspec.Struct, tag_field="type", tag="custom_tool_call", gc=False):
    """A ``custom_tool_call`` response item (its input a free-form string)."""

    name: str | None = None
    input: str | None = None
    call_id: str | None = None
    id: str | None = None
    execution: str | None = None


class FunctionOutput(msgspec.Struct, tag_field="type", tag="function_call_output", gc=False):
    """A ``function_call_output`` response item whose output is a string."""

    output: str
    call_id: str | None = None


class CustomOutput(msgspec.Struct, tag_field="type", tag="custom_tool_call_output", gc=False):
    """A ``custom_tool_call_output`` response item whose output is a string."""

    output: str
    call_id: str | None = None


class TokenUsage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A ``last_token_usage``: Codex's five counts and nothing else, so that two of them are
    equal exactly when the objects the file holds are (a key left out is
    :data:`~msgspec.UNSET`, a ``null`` None)."""

    input_tokens: Count | UnsetType | None = UNSET
    cached_input_tokens: Count | UnsetType | None = UNSET
    output_tokens: Count | UnsetType | None = UNSET
    reasoning_output_tokens: Count | UnsetType | None = UNSET
    total_tokens: Count | UnsetType | None = UNSET

    def as_dict(self) -> dict[str, int | None]:
        """The object the file holds (to compare with one read the plain way)."""
        return {
            field: value
            for field in self.__struct_fields__
            if (value := getattr(self, field)) is not UNSET
        }


NULL = msgspec.Raw(b"null")
"""The raw text of a ``null``."""


class TokenInfo(msgspec.Struct, gc=False):
    """A ``token_count``'s ``info``."""

    last_token_usage: TokenUsage | UnsetType | None = UNSET
    total_token_usage: msgspec.Raw = NULL
    """The cumulative counts as the line writes them: only compared with the previous line's
    (``_Loader.repeated``), never read, so not decoded (left out: ``null``, as the plain read
    sees it: None)."""
    model_context_window: Int | None = None


class TokenCount(msgspec.Struct, tag_field="type", tag="token_count", gc=False):
    """A ``token_count`` event (``info`` null: a rate-limit-only event)."""

    info: TokenInfo | None = None


class TaskStarted(msgspec.Struct, tag_field="type", tag="task_started", gc=False):
    """A ``task_started`` event: the turn's id and the window it says (any other type of
    either: read the plain way)."""

    turn_id: str | None = None
    model_context_window: Int | None = None


class TurnStarted(TaskStarted, tag="turn_started", gc=False):
    """A ``turn_started`` event (newer Codex's name for ``task_started``)."""


class UserEvent(msgspec.Struct, tag_field="type", tag="user_message", gc=False):
    """A ``user_message`` event (what it says is in the response items)."""


class TurnEnd(msgspec.Struct, tag_field="type", tag="task_complete", gc=False):
    """A ``task_complete`` event."""


class TurnComplete(msgspec.Struct, tag_field="type", tag="turn_complete", gc=False):
    """A ``turn_complete`` event."""


class TurnAborted(msgspec.Struct, tag_field="type", tag="turn_aborted", gc=False):
    """A ``turn_aborted`` event."""


class _PassedOver(msgspec.Struct, gc=False):
    """An event :func:`~core.formats.codex_lines.ignorable` passes over, decoded with none of
    its fields (so that the line costs a decode, not a decode error: 40,000 lines on 100 MB)."""


PASSED_OVER: frozenset[type] = frozenset(
    msgspec.defstruct(f"PassedOver_{name}", [], bases=(_PassedOver,), tag_field="type", tag=name)
    for name in IGNORED_EVENT_TYPES
)
"""A struct per event :func:`~core.formats.codex_lines.ignorable` names: a line holding one is
passed over exactly when ``ignorable`` says so, as a line the typed read does not decode is."""

if TYPE_CHECKING:
    PassedOver = _PassedOver
else:
    PassedOver = reduce(operator.or_, sorted(PASSED_OVER, key=lambda cls: cls.__name__))

Item = MessageItem | ReasoningItem | FunctionCall | CustomToolCall | FunctionOutput | CustomOutput
"""The response items read this way."""
Event = TokenCount | TaskStarted | TurnStarted | UserEvent | TurnEnd | TurnComplete | TurnAborted
"""The events read this way."""


class Envelope(msgspec.Struct, gc=False):
    """A rollout line ``{timestamp, type, payload}`` whose type is one a typed payload is read
    in (a line of another type is not decoded: read the plain way). The type is then the
    literal's own string, not a copy made for each line."""

    type: Literal["response_item", "event_msg"]
    payload: Item | Event | PassedOver
    timestamp: str | None = None


decode_line: Callable[[bytes], Envelope] = msgspec.json.Decoder(Envelope).decode
"""The line as typed structs; raises one of :data:`DECODE_ERRORS` when it is not a line read
this way."""
DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


def decode(raw: bytes) -> Envelope | None:
    """The line as typed structs, or None when it is not a line read this way."""
    try:
        return decode_line(raw)
    except DECODE_ERRORS:
        return None
