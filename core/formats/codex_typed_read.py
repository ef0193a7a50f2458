"""The typed read of a Codex rollout line: the records nearly every line holds (response items,
token counts, turn starts and ends, user events), decoded into the structs of
:mod:`core.formats.codex_typed` and fed to the loader of :mod:`core.formats.codex` through the same steps as its plain read. A line the
typed read does not take (another record, a field of another type, what only the whole object
tells) is left untouched for the plain read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from core.formats.codex_items import custom_output_error, function_call
from core.formats.codex_lines import At, compact_ignorable, ignorable, payload_bytes
from core.formats.codex_sizes import approx_tokens, encrypted_tokens
from core.formats.codex_typed import DECODE_ERRORS as TYPED_ERRORS
from core.formats.codex_typed import (
    NULL,
    PASSED_OVER,
    CustomOutput,
    CustomToolCall,
    Envelope,
    FunctionCall,
    FunctionOutput,
    MessageItem,
    ReasoningItem,
    TaskStarted,
    TokenCount,
    TokenUsage,
    TurnAborted,
    TurnComplete,
    TurnEnd,
    TurnStarted,
    UserEvent,
)
from core.formats.codex_typed import decode_line as typed_decode
from core.formats.jsonl import Lines, Record

if TYPE_CHECKING:
    from core.formats.codex import _Loader


def walk_lines(loader: _Loader, lines: Lines, batch: list[bytes]) -> Iterator[Record]:
    """Walk a batch of complete lines (``read_jsonl_raw``'s ``walk``): each read from its
    typed structs when it can be, else parsed the plain way and yielded for ``_Loader.line``,
    in the file's order. A line is read typed (:mod:`core.formats.codex_typed`) when it holds
    a record nearly every line holds; it is left, unchanged, to the plain read when it holds
    another record, a field of another type, or what only the object tells (an image, a
    redaction, an output history cuts). A line :func:`~core.formats.codex_lines.ignorable`
    names is passed over unread (and counted as read).

    A line may be a ``memoryview`` of the chunk read (``read_jsonl_raw``'s ``views``, in a
    batch of ASCII lines): it is decoded and measured as it is, and made bytes for
    ``ignorable`` and the plain read."""
    line_no, offset = lines.line_no, lines.offset
    left = 0  # the lines neither read typed nor passed over
    check = not lines.ascii  # (a batch known to be ASCII needs no check of each line)
    for raw in batch:  # (every step inline: the loop runs once per line of the file)
        line_no += 1
        start = offset
        offset += len(raw) + 1
        try:
            if check and not raw.isascii():  # msgspec checks the UTF-8 of the strings it reads only
                raw.decode("utf-8")  # (not UTF-8: a non-utf8 diagnostic, by the plain read)
            line = typed_decode(raw)
        except TYPED_ERRORS:
            # An event that only repeats response items is passed over unparsed (here, where
            # only a line the typed read does not read is tried: an event it reads is not one).
            may_pass_over = True
        else:
            payload = line.payload
            typed = TYPED[type(payload)]
            if typed is None:
                # An event ignorable names is passed over as a line that does not decode is;
                # written any other way (or in another envelope), it is read the plain way.
                # (compact_ignorable first: it implies ignorable, and costs a third)
                if compact_ignorable(raw):
                    continue
                may_pass_over = True
            elif typed[0] == line.type and typed[1](loader, payload, line, line_no, start, raw):
                loader.line_no = line_no
                continue
            else:
                may_pass_over = False
        if type(raw) is not bytes:  # (a view: ignorable and the plain read take bytes)
            raw = bytes(raw)
        if may_pass_over and ignorable(raw):
            continue
        left += 1
        if raw and not raw.isspace():
            yield from lines.plain(raw, line_no, start)
    lines.line_no, lines.offset = line_no, offset
    read_typed = len(batch) - left
    lines.objects_read += read_typed
    lines.non_blank += read_typed


class _OneLine(Lines):
    """The walk of a single line, which keeps a line left to the plain read unread."""

    def __init__(self, loader: _Loader, line_no: int, offset: int) -> None:
        super().__init__(loader.builder, None, offset)
        self.line_no = line_no - 1

    def plain(self, line: bytes, line_no: int, start: int) -> list[Record]:
        return []


def read_typed_line(loader: _Loader, raw: bytes, line_no: int, offset: int) -> bool:
    """The step :func:`walk_lines` takes for one line: True when it read the line typed (or
    passed it over unread), False, having changed nothing, when the line is to be read the
    plain way (``_Loader.line``). For ``read_jsonl_raw``'s ``typed``."""
    one = _OneLine(loader, line_no, offset)
    for _ in walk_lines(loader, one, [raw]):
        pass  # (nothing: the line left to the plain read is not read)
    return one.objects_read == 1


def _user_event(
    loader: _Loader, event: UserEvent, line: Envelope, line_no: int, offset: int, raw: bytes
) -> bool:
    loader.user_event({}, line_no)
    return True


def _turn_start(
    loader: _Loader,
    event: TaskStarted,
    line: Envelope,
    line_no: int,
    offset: int,
    raw: bytes,
) -> bool:
    loader.started(event.turn_id, event.model_context_window, line_no)
    return True


def _turn_end(
    loader: _Loader,
    event: TurnEnd | TurnComplete | TurnAborted,
    line: Envelope,
    line_no: int,
    offset: int,
    raw: bytes,
) -> bool:
    loader.turns.task_ended(line_no, event.__struct_config__.tag)  # type: ignore[arg-type]
    return True


def _estimate(loader: _Loader, text: str, raw: bytes, timestamp: str | None) -> int | None:
    """Codex's estimate of an input item whose payload is sized as written (``raw``, the line)
    and holds no image nor redaction (None: read it the plain way, ``_Loader._estimate``)."""
    if loader.placeholders or timestamp is None or text.startswith("[REDACTED_"):
        return None
    size = payload_bytes(raw, timestamp)
    return None if size is None else approx_tokens(size)


def _message(
    loader: _Loader, item: MessageItem, line: Envelope, line_no: int, offset: int, raw: bytes
) -> bool:
    parts = item.content
    if parts is None:
        text = ""
    elif len(parts) == 1 and parts[0].type in _MESSAGE_TEXTS:
        text = parts[0].text
    elif all(part.type in _JOINED_TEXTS for part in parts):
        text = "\n\n".join(map(_TEXT, parts))
    else:
        return False  # an image, a file, a refusal
    role = item.role
    timestamp = line.timestamp
    if role == "assistant":
        call = loader.open_call("message", item.id, line_no, offset, timestamp)
        call.texts.append(text)
        return True
    estimate = _estimate(loader, text, raw, timestamp)
    if estimate is None:
        return False
    loader.close()
    loader.turns.last_item = ("message", line_no)  # as _Loader._estimate notes it
    loader.input_message(role, text, estimate, At(line_no, offset, timestamp))
    return True


def _reasoning(
    loader: _Loader, item: ReasoningItem, line: Envelope, line_no: int, offset: int, raw: bytes
) -> bool:
    value = item.encrypted_content
    if value is None or value == "REDACTED" or value.startswith("[REDACTED_"):
        return False  # redacted, or left out: read the plain way (encrypted_length)
    call = loader.open_call("reasoning", item.id, line_no, offset, line.timestamp)
    # (the texts read in C: a list comprehension is a call of its own, once per item)
    if item.summary:
        call.reasoning.extend(map(_TEXT, item.summary))
    if item.content:
        call.reasoning.extend(map(_TEXT, item.content))
    call.reasoning_tokens += encrypted_tokens(len(value))
    return True


def _function_call(
    loader: _Loader, item: FunctionCall, line: Envelope, line_no: int, offset: int, raw: bytes
) -> bool:
    call = loader.open_call("function_call", item.id, line_no, offset, line.timestamp)
    name, arguments = function_call(item.name, item.namespace, item.arguments)
    server = item.execution == "server"
    loader.tool_call(
        call, "function_call", item.call_id or item.id, name, arguments, server, line_no
    )
    return True


def _custom_call(
    loader: _Loader, item: CustomToolCall, line: Envelope, line_no: int, offset: int, raw: bytes
) -> bool:
    call = loader.open_call("custom_tool_call", item.id, line_no, offset, line.timestamp)
    call_id = item.call_id or item.id
    server = item.execution == "server"
    loader.tool_call(call, "custom_tool_call", call_id, item.name, item.input, server, line_no)
    return True


def _output(
    loader: _Loader,
    item: FunctionOutput | CustomOutput,
    line: Envelope,
    line_no: int,
    offset: int,
    raw: bytes,
) -> bool:
    text = item.output
    if not loader.cap.fits(text):
        return False  # history keeps it cut: sized the plain way
    timestamp = line.timestamp
    estimate = _estimate(loader, text, raw, timestamp)
    if estimate is None:
        return False
    if type(item) is CustomOutput:
        failed = custom_output_error(text)
        loader.turns.last_item = ("custom_tool_call_output", line_no)
    else:
        failed = False
        loader.turns.last_item = ("function_call_output", line_no)
    call_id = item.call_id
    if call_id is None:
        call_id = ""
    loader.tool_output(call_id, text, failed, estimate, line_no, offset, timestamp)
    return True


def _token_count(
    loader: _Loader, event: TokenCount, line: Envelope, line_no: int, offset: int, raw: bytes
) -> bool:
    """``_Loader.token_count`` of a typed event (False: a figure without a request, read the
    plain way)."""
    info = event.info
    if info is None:
        return True  # a rate-limit-only event
    last = info.last_token_usage
    window = info.model_context_window
    if type(last) is not TokenUsage:  # left out or null: no usage to read
        if window != loader.facts.window:
            loader.recorded_window(window, line_no)
        return True
    prompt = last.input_tokens or 0
    output = last.output_tokens or 0
    if (prompt == 0 and output == 0) or (prompt == window and not output):
        return False
    if window != loader.facts.window:
        loader.recorded_window(window, line_no)
    total = info.total_token_usage
    if loader.repeated(None if total == NULL else total, last):
        return True
    total_tokens = last.total_tokens
    loader.call_usage(
        prompt,
        output,
        last.cached_input_tokens or 0,
        last.reasoning_output_tokens or 0,
        None if total_tokens is UNSET else total_tokens,
        line_no,
    )
    return True


_Read = Callable[["_Loader", Any, Any, int, int, bytes], bool]
"""A typed handler: ``(loader, payload, line struct, line number, offset, raw line)``, True
when it read the line, False (having changed nothing) to have it read the plain way."""

_ITEM, _EVENT = "response_item", "event_msg"
TYPED: dict[type, tuple[str, _Read] | None] = {
    MessageItem: (_ITEM, _message),
    ReasoningItem: (_ITEM, _reasoning),
    FunctionCall: (_ITEM, _function_call),
    CustomToolCall: (_ITEM, _custom_call),
    FunctionOutput: (_ITEM, _output),
    CustomOutput: (_ITEM, _output),
    TokenCount: (_EVENT, _token_count),
    TaskStarted: (_EVENT, _turn_start),
    TurnStarted: (_EVENT, _turn_start),
    UserEvent: (_EVENT, _user_event),
    TurnEnd: (_EVENT, _turn_end),
    TurnComplete: (_EVENT, _turn_end),
    TurnAborted: (_EVENT, _turn_end),
    **dict.fromkeys(PASSED_OVER),
}
"""The envelope type each typed payload is read in, and the function that reads it (see
:func:`read_typed_line`); None: an event passed over when
:func:`~core.formats.codex_lines.ignorable` says so (which only an ``event_msg`` line is)."""


_TEXT = attrgetter("text")
"""A piece's text (:class:`~core.formats.codex_typed.Part`)."""
_MESSAGE_TEXTS = ("input_text", "output_text")
"""The piece a one-piece message's text is (as ``content_text`` reads it)."""
_JOINED_TEXTS = ("input_text", "output_text", "text")
"""The pieces of a message joined as its text when each is one of these."""
