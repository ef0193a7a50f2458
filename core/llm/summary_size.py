"""The size of a head's summary request measured without writing its entries: what
compaction asks the offline summariser about a head that looks too large for it
(:meth:`core.algorithms.compact._Run._refused_at_last`), kept apart from the request's writing
(:mod:`core.llm.summary_request`), which is imported for every compaction.

:func:`entry_length` is the length of the entry :func:`~core.llm.summary_request.serialize_message`
writes, from the lengths the message holds; :class:`MeasuredHead` the lengths of a head's
request; :class:`LongerHeadFloor` a floor of those of every longer head that ends with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core.llm.summary_request import (
    MAX_TEXT_CHARS,
    call_names,
    cap_tool_output,
    capped_result_output,
    window_text,
)
from core.llm.summary_templates import (
    LABEL_ASSISTANT,
    LABEL_REASONING,
    LABEL_SYSTEM,
    LABEL_TOOL_CALL,
    LABEL_TOOL_ERROR,
    LABEL_TOOL_RESULT,
    LABEL_USER,
    SYSTEM_PROMPT,
    transcript_length,
)
from core.model.session import Message, Role, ToolResult
from core.model.tokens import arguments_text, utf8_length, utf16_length

_USER, _SYSTEM, _ASSISTANT = Role.USER, Role.SYSTEM, Role.ASSISTANT
"""(Read once, as :mod:`core.llm.summary_request` reads them.)"""


def entry_length(
    message: Message,
    tool_names: dict[str, str],
    max_output_chars: int,
    length: Callable[[str], int],
    *,
    output: str | None = None,
) -> int:
    """``length(serialize_message(message, tool_names, max_output_chars, output=output))``,
    without writing the entry (``length`` adds up over joined text and counts an ASCII
    character as one: characters, UTF-16 units or UTF-8 bytes): the labels are ASCII, a text
    or tool output is measured as it is held (an output held as UTF-8 by the lengths it is held
    with, not decoded); only a text windowed, an output cut or a call line whose end the
    serialiser strips is written to be measured. Zero for the empty entry and only for it."""
    if message.summary or message.synthetic:
        return 0
    role = message.role
    if role is _USER:
        label = LABEL_SYSTEM if message.meta else LABEL_USER
        return len(label) + 2 + _text_length(message.text, length)
    if role is _SYSTEM:
        text = message.text
        return len(LABEL_SYSTEM) + 2 + _text_length(text, length) if text else 0
    if role is _ASSISTANT:
        total = parts = 0
        if message.reasoning:
            total += len(LABEL_REASONING) + 2 + _text_length(message.reasoning, length)
            parts += 1
        if message.text:
            total += len(LABEL_ASSISTANT) + 2 + _text_length(message.text, length)
            parts += 1
        for call in message.tool_calls:
            arguments = arguments_text(call.arguments)
            if arguments and len(arguments) <= MAX_TEXT_CHARS and not arguments[-1].isspace():
                total += len(LABEL_TOOL_CALL) + 3 + _measured(call.name, length)
                total += _measured(arguments, length)
            else:  # (what the serialiser strips at the end: written and measured)
                total += length(f"{LABEL_TOOL_CALL}: {call.name} {window_text(arguments)}".rstrip())
            parts += 1
        return total + 2 * (parts - 1) if parts else 0
    result = message.tool_result
    if result is None:
        text = message.text
        return len(LABEL_TOOL_RESULT) + 7 + _text_length(text, length) if text else 0
    name = result.tool_name or tool_names.get(result.call_id) or "tool"
    label = LABEL_TOOL_ERROR if result.is_error else LABEL_TOOL_RESULT
    return (
        len(label)
        + 3
        + _measured(name, length)
        + _output_length(result, max_output_chars, length, output)
    )


def _output_length(
    result: ToolResult, max_output_chars: int, length: Callable[[str], int], output: str | None
) -> int:
    """``length`` of the output a result's entry carries (``output`` standing in for it when
    not None), cut to ``max_output_chars``."""
    if output is not None:
        if len(output) <= max_output_chars:
            return _measured(output, length)
        return length(cap_tool_output(output, max_output_chars))
    held = result.output_held
    if isinstance(held, str):
        if len(held) <= max_output_chars:
            return _measured(held, length)
    elif held.chars <= max_output_chars:
        if length is utf16_length:
            return held.units
        if length is utf8_length:
            return len(held.data)
        return length(result.output)
    # (cut: the start kept and the marker, written and measured)
    return length(capped_result_output(result, max_output_chars))


def _text_length(text: str, length: Callable[[str], int]) -> int:
    """``length(window_text(text))``."""
    if len(text) > MAX_TEXT_CHARS:
        return length(window_text(text))
    return len(text) if text.isascii() else length(text)


def _measured(text: str, length: Callable[[str], int]) -> int:
    """``length(text)`` (an ASCII text's is its ``len``)."""
    return len(text) if text.isascii() else length(text)


class MeasuredHead:
    """The size of the summary request of a head, measured without writing its entries
    (:func:`entry_length`; once for each ``length`` asked): :meth:`content_lengths` is
    :meth:`SentHead.content_lengths` of the same head."""

    __slots__ = ("_measured", "max_output_chars", "messages", "outputs")

    def __init__(
        self,
        messages: Sequence[Message],
        outputs: Sequence[str | None] | None,
        max_output_chars: int,
    ) -> None:
        self.messages = messages
        self.outputs = outputs
        self.max_output_chars = max_output_chars
        self._measured: tuple[Callable[[str], int], int, int, int] | None = None

    def _measure(self, length: Callable[[str], int]) -> tuple[int, int, int]:
        """The ``length`` of the entries, how many are not empty, and how many are results
        labelled ``tool`` for want of a call of the head naming them."""
        known = self._measured
        if known is not None and known[0] is length:
            return known[1], known[2], known[3]
        messages, outputs, cap = self.messages, self.outputs, self.max_output_chars
        names = call_names(messages)
        total = nonempty = unnamed = 0
        for k, message in enumerate(messages):
            size = entry_length(
                message, names, cap, length, output=outputs[k] if outputs is not None else None
            )
            if size:
                total += size
                nonempty += 1
                result = message.tool_result
                if result is not None and not result.tool_name and not names.get(result.call_id):
                    unnamed += 1
        self._measured = (length, total, nonempty, unnamed)
        return total, nonempty, unnamed

    def content_lengths(self, length: Callable[[str], int]) -> list[int]:
        """``length`` of the content of each message of the head's request."""
        total, nonempty, _unnamed = self._measure(length)
        return [length(SYSTEM_PROMPT), transcript_length(total, nonempty, length)]

    def longer_floor(self) -> LongerHeadFloor:
        """A floor of the size of the request of any head that ends with this one."""
        return LongerHeadFloor(self)


class LongerHeadFloor:
    """A floor of the size of the request of any head that ends with a measured head (older
    messages before it): each of the measured head's entries is in it, as long but for a
    result labelled ``tool`` for want of a call naming it, which an older call may name with a
    shorter name (no shorter than nothing: ``tool``'s length less); entries and separators
    are only added."""

    __slots__ = ("head",)

    def __init__(self, head: MeasuredHead) -> None:
        self.head = head

    def content_lengths(self, length: Callable[[str], int]) -> list[int]:
        """A floor of each message's ``length`` in such a head's request."""
        total, nonempty, unnamed = self.head._measure(length)
        entries = total - unnamed * length("tool")
        return [length(SYSTEM_PROMPT), transcript_length(entries, nonempty, length)]
