"""The summary request of a compaction (T12): the head serialised as one labelled transcript.

Each head message becomes an entry in the labelled layout of :mod:`core.llm.summary_templates`
(:func:`serialize_message`), each tool output cut to a number of characters with a marker
saying how many were cut (:func:`cap_tool_output`); the request is the system prompt and the
transcript (:func:`build_request`). :class:`EntryCache` keeps serialised entries across the
compactions of one session; :class:`SentHead` is the head of one request, which a compaction
shortens by its oldest message while the request overflows the summariser's context; its
size without its entries written is :mod:`core.llm.summary_size`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence

from core.llm.protocol import ChatMessage
from core.llm.summary_templates import (
    CUT_MARKER,
    LABEL_ASSISTANT,
    LABEL_REASONING,
    LABEL_SYSTEM,
    LABEL_TOOL_CALL,
    LABEL_TOOL_ERROR,
    LABEL_TOOL_RESULT,
    LABEL_USER,
    SYSTEM_PROMPT,
    build_transcript,
    forget_transcript,
    transcript_length,
)
from core.model.session import Message, Role, ToolResult, replace
from core.model.tokens import arguments_text, utf8_head

MAX_TEXT_CHARS = 400_000
"""Characters of one message's text, reasoning or tool-call arguments a summary request carries
at most (about 100k tokens: more than a model's window holds beside the rest). A longer text is
sent as a window of it, its first and last halves around a marker counting what was cut, so the
request, the summariser's work and what is kept of it stay bounded however huge one message is."""

TEXT_CUT_MARKER = "[... {n} more characters cut from the middle of this message]"
"""Between the two halves of a message text cut for the summary request."""


def window_text(text: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    """``text``, or when longer than ``max_chars`` its first and last ``max_chars // 2``
    characters around :data:`TEXT_CUT_MARKER`."""
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n\n{TEXT_CUT_MARKER.format(n=cut)}\n\n{text[len(text) - half :]}"


def windowed_message(message: Message, max_chars: int = MAX_TEXT_CHARS) -> Message:
    """``message`` with its text and reasoning as :func:`window_text` sends them (the message
    itself when nothing is cut): what a summary request carries of it."""
    if len(message.text) <= max_chars and len(message.reasoning) <= max_chars:
        return message
    return replace(
        message,
        text=window_text(message.text, max_chars),
        reasoning=window_text(message.reasoning, max_chars),
    )


def cap_tool_output(output: str, max_chars: int) -> str:
    """``output`` cut to ``max_chars`` characters, followed by a marker counting what was cut."""
    if len(output) <= max_chars:
        return output
    return _capped(output[:max_chars], len(output) - max_chars)


def _capped(start: str, cut: int) -> str:
    """The kept ``start`` of a tool output and the marker counting the ``cut`` characters."""
    return f"{start}\n\n{CUT_MARKER.format(n=cut)}"


def capped_result_output(result: ToolResult, max_chars: int) -> str:
    """``cap_tool_output(result.output, max_chars)``, without decoding a long output held as
    UTF-8 whole to keep its start: its length in characters is the one it is held with
    (:meth:`~core.model.session.ToolResult.output_chars`), and only the bytes that hold the first
    ``max_chars`` characters are decoded (2,000 characters of a 40 KB output). An output held
    as text is cut as it is (no copy of either end made in UTF-8 and decoded back)."""
    held = result.output_held
    if isinstance(held, str):
        return cap_tool_output(held, max_chars)
    chars = held.chars
    if chars <= max_chars:
        return result.output
    start, _end = result.output_ends_utf8(max_chars)
    return _capped(utf8_head(start, max_chars)[0], chars - max_chars)


_USER, _SYSTEM, _ASSISTANT = Role.USER, Role.SYSTEM, Role.ASSISTANT
"""(Read once: each read of an enum's member through its class costs ~0.4 µs on Python 3.11,
and a head of thousands of messages is serialised three reads a message.)"""


def serialize_message(
    message: Message,
    tool_names: dict[str, str],
    max_output_chars: int,
    *,
    output: str | None = None,
) -> str:
    """One head message as a labelled transcript entry ("" for messages the summary skips).

    ``output`` stands in for a tool result's output (a pruned output's placeholder, when the
    pruned copy was not made); the result's own output is cut by :func:`capped_result_output`.
    :func:`core.llm.summary_size.entry_length` measures this entry without writing it: a
    change of the layout here is made there too (a hypothesis test holds the two equal).
    """
    if message.summary or message.synthetic:
        return ""  # earlier summaries travel in the prompt; continue-nudges carry nothing
    message = windowed_message(message)
    role = message.role
    if role is _USER:
        return f"{LABEL_SYSTEM if message.meta else LABEL_USER}: {message.text}"
    if role is _SYSTEM:
        return f"{LABEL_SYSTEM}: {message.text}" if message.text else ""
    if role is _ASSISTANT:
        parts: list[str] = []
        if message.reasoning:
            parts.append(f"{LABEL_REASONING}: {message.reasoning}")
        if message.text:
            parts.append(f"{LABEL_ASSISTANT}: {message.text}")
        for call in message.tool_calls:
            parts.append(
                f"{LABEL_TOOL_CALL}: {call.name} {window_text(arguments_text(call.arguments))}".rstrip()
            )
        return "\n\n".join(parts)
    result = message.tool_result
    if result is None:
        return f"{LABEL_TOOL_RESULT}: tool\n{message.text}" if message.text else ""
    name = result.tool_name or tool_names.get(result.call_id) or "tool"
    label = LABEL_TOOL_ERROR if result.is_error else LABEL_TOOL_RESULT
    if output is None:
        text = capped_result_output(result, max_output_chars)
    else:
        text = cap_tool_output(output, max_output_chars)
    return f"{label}: {name}\n{text}"


class EntryCache:
    """Serialised head entries, kept across the compactions of one session (the replay engine
    compacts overlapping heads again and again, and serialising is a good part of a compaction).

    Keys that make a hit exact:

    * an **assistant message** or a **tool result** is keyed by the identity of the message
      object; the entry holds the message (so the id cannot be reused while it is cached), the
      character cap and the tool name it was written with, and is used only when they match.
      Messages are never modified once built (:mod:`core.model.session`), which is what makes an
      identity key safe; copies made by truncation or pruning are other objects;
    * a tool result whose output is **stood in for** (a pruned output's placeholder) is keyed by
      what its entry is made of — error flag, tool name, the text and the cap — so every pruned
      output of a tool shares one entry.

    User and system entries are a single format and not cached. The cache is bounded by the
    characters of the entries it holds (``max_chars``, plus a fixed weight per entry); the
    oldest entries go first.
    """

    ENTRY_OVERHEAD = 200
    """Weight of one entry besides its characters."""

    def __init__(
        self,
        max_chars: int = 16_000_000,
    ) -> None:
        self.max_chars = max_chars
        self._entries: dict[Hashable, tuple[Message | None, int, str | None, str]] = {}
        self._weight = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def entries(
        self,
        head: Sequence[Message],
        names: dict[str, str] | None,
        max_output_chars: int,
        outputs: Sequence[str | None] | None = None,
    ) -> list[str]:
        """:func:`serialize_message` of each head message (with ``outputs[k]`` standing in for
        the output of message ``k`` when given and not None), from the cache where it can.

        ``names`` maps the head's tool call ids to tool names (None: worked out here when a
        tool result does not name its tool)."""
        out: list[str] = []
        append = out.append
        data = self._entries
        assistant, tool = Role.ASSISTANT, Role.TOOL
        get = data.get
        with self._lock:
            for k, message in enumerate(head):
                if outputs is None or outputs[k] is None:
                    # The common case first: this very message, serialised before with this
                    # cap. Its entry is the cached one unless it is a result that names no tool
                    # (labelled from the head's calls, which may differ).
                    hit = get(id(message))
                    if (
                        hit is not None
                        and hit[0] is message
                        and hit[1] == max_output_chars
                        and (
                            hit[2] is None
                            or ((result := message.tool_result) is not None and result.tool_name)
                        )
                    ):
                        append(hit[3])
                        continue
                if message.summary or message.synthetic:
                    append("")
                    continue
                role = message.role
                result = message.tool_result
                name: str | None = None
                if role is tool and result is not None:
                    name = result.tool_name
                    if not name:
                        if names is None:
                            names = call_names(head)
                        name = names.get(result.call_id) or "tool"
                elif role is not assistant:
                    # User, system, or a tool message without a result: no tool name needed.
                    append(serialize_message(message, _NO_NAMES, max_output_chars))
                    continue
                output = outputs[k] if outputs is not None else None
                key: Hashable
                if output is None:
                    key = id(message)
                else:
                    assert result is not None
                    key = (result.is_error, name, output, max_output_chars)
                hit = data.get(key)
                if (
                    hit is not None
                    and hit[1] == max_output_chars
                    and hit[2] == name
                    and (hit[0] is message or output is not None)
                ):
                    append(hit[3])
                    continue
                entry = serialize_message(
                    message, _NO_NAMES if names is None else names, max_output_chars, output=output
                )
                append(entry)
                if hit is not None:
                    del data[key]
                    self._weight -= len(hit[3]) + self.ENTRY_OVERHEAD
                data[key] = (message if output is None else None, max_output_chars, name, entry)
                self._weight += len(entry) + self.ENTRY_OVERHEAD
                while self._weight > self.max_chars and data:
                    oldest = next(iter(data))
                    self._weight -= len(data.pop(oldest)[3]) + self.ENTRY_OVERHEAD
        return out


_NO_NAMES: dict[str, str] = {}
"""Call names for entries that name no tool (never written to)."""


def call_names(head: Sequence[Message]) -> dict[str, str]:
    """Tool call id -> tool name, over the head (how a result that does not name its tool is
    labelled)."""
    return {call.id: call.name for m in head for call in m.tool_calls}


def build_request(
    head: Sequence[Message],
    max_output_chars: int,
    *,
    cache: EntryCache | None = None,
    outputs: Sequence[str | None] | None = None,
) -> list[ChatMessage]:
    """The chat messages of a summary request: the system prompt and the head as one transcript.

    ``cache`` keeps serialised entries across requests (see :class:`EntryCache`); the request
    is the same with or without it. ``outputs``, one per head message, stand in for the tool
    outputs of the messages they are not None for (pruned outputs whose copy was not made).
    """
    return _request(_head_entries(head, max_output_chars, cache, outputs))


def _head_entries(
    head: Sequence[Message],
    max_output_chars: int,
    cache: EntryCache | None,
    outputs: Sequence[str | None] | None,
) -> list[str]:
    """The transcript entry of each head message (see :func:`build_request`)."""
    if cache is not None:
        return cache.entries(head, None, max_output_chars, outputs)
    names = call_names(head)
    stand_ins = outputs if outputs is not None else [None] * len(head)
    return [
        serialize_message(m, names, max_output_chars, output=o)
        for m, o in zip(head, stand_ins, strict=True)
    ]


def _request(entries: Sequence[str]) -> list[ChatMessage]:
    """The summary request made of a head's entries ("" entries are left out)."""
    return _request_of(build_transcript([e for e in entries if e]))


def _request_of(transcript: str) -> list[ChatMessage]:
    """The summary request carrying ``transcript``.

    The messages are made with ``model_construct`` (fields of the right types, nothing to
    validate): a replay with the offline mock then builds no pydantic validator, and starts
    without pydantic's plugin lookup (it reads every installed package's metadata)."""
    return [
        ChatMessage.model_construct(role="system", content=SYSTEM_PROMPT),
        ChatMessage.model_construct(role="user", content=transcript),
    ]


def _names_a_result(dropped: Message, rest: Sequence[Message]) -> bool:
    """A tool result in ``rest`` that does not name its tool answers a call ``dropped`` holds:
    its entry is labelled from that call, so it changes once ``dropped`` leaves the head."""
    ids = {call.id for call in dropped.tool_calls}
    return bool(ids) and any(
        (result := m.tool_result) is not None and not result.tool_name and result.call_id in ids
        for m in rest
    )


class _Lengths:
    """The ``length`` of each entry of a head, their sum and the number of non-empty entries:
    what the size of its request is worked out from (:meth:`SentHead.content_lengths`)."""

    __slots__ = ("each", "length", "nonempty", "total")

    def __init__(self, entries: Sequence[str], length: Callable[[str], int]) -> None:
        self.length = length
        self.each = [length(entry) if entry else 0 for entry in entries]
        self.total = sum(self.each)
        self.nonempty = sum(1 for entry in entries if entry)

    def drop_first(self, entry: str) -> None:
        """The oldest entry, ``entry``, is left out."""
        self.total -= self.each[0]
        self.nonempty -= bool(entry)
        self.each = self.each[1:]


class SentHead:
    """The head messages a summary request carries, and their transcript entries: serialised
    once, a shorter head after a drop is the same entries minus the first. The size of its
    request is known without building it (:meth:`content_lengths`): each entry is measured
    once, and a drop takes its entry's length off."""

    def __init__(
        self,
        messages: list[Message],
        outputs: list[str | None] | None,
        max_output_chars: int,
        cache: EntryCache | None,
    ) -> None:
        self.messages = messages
        self.outputs = outputs
        self.max_output_chars = max_output_chars
        self.cache = cache
        self.entries = _head_entries(messages, max_output_chars, cache, outputs)
        self._lengths: _Lengths | None = None
        self._transcript: str | None = None

    def request(self) -> list[ChatMessage]:
        """The summary request carrying these messages. The transcript of the request built
        before is forgotten first (:func:`core.llm.summary_templates.forget_transcript`): a
        request is built again only once the one before was refused, and of the head's
        transcripts (megabytes at 100 MB) one at a time is remembered."""
        if self._transcript is not None:
            forget_transcript(self._transcript)
            self._transcript = None
        transcript = build_transcript([e for e in self.entries if e])
        self._transcript = transcript
        return _request_of(transcript)

    def content_lengths(self, length: Callable[[str], int]) -> list[int]:
        """``length`` of the content of each message of :meth:`request` (a length that adds up
        over joined text), worked out from the entries' lengths rather than the request."""
        lengths = self._lengths
        if lengths is None or lengths.length is not length:
            lengths = self._lengths = _Lengths(self.entries, length)
        transcript = transcript_length(lengths.total, lengths.nonempty, length)
        return [length(SYSTEM_PROMPT), transcript]

    def drop_oldest(self) -> str:
        """Leave the oldest message out; its id."""
        gone = self.messages[0]
        self.messages = self.messages[1:]
        if self.outputs is not None:
            self.outputs = self.outputs[1:]
        if _names_a_result(gone, self.messages):
            self.entries = _head_entries(
                self.messages, self.max_output_chars, self.cache, self.outputs
            )
            self._lengths = None  # (entries after the first changed: measured again)
        else:
            if self._lengths is not None:
                self._lengths.drop_first(self.entries[0])
            self.entries = self.entries[1:]
        return gone.id
