"""The data model every part of ctxscope speaks: a recorded agent session.

Loaders (``core.formats``) turn an agent's transcript into a :class:`Session`; the algorithms
(truncate, prune, split, compaction, replay) read it and never mutate it; the TUI and the CLI
draw what the algorithms return.

Conventions that hold across the model:

* One **assistant** :class:`Message` is one model call (one provider response). Loaders merge
  the pieces a format writes separately (Claude's one-line-per-content-block, Codex's
  reasoning / message / function_call items) into that one message, and attach the call's
  :class:`Usage` to it once.
* One **tool** message holds one tool result (:class:`ToolResult`), joined to its call by id.
* A **turn** starts at a real user message (:attr:`Message.is_turn_start`) and runs to the next.
* Large strings are held once. The raw source record is *not* kept in memory: a message keeps
  :attr:`Message.source_line` / :attr:`Message.source_offset` so the detail view can re-read
  it from the (read-only) file on demand.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from enum import StrEnum
from itertools import accumulate, repeat
from operator import add, attrgetter, is_, is_not, mul
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar, cast

import msgspec
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from core.model.lazy_types import lazy_field_types, rebuild_defining_lazy_types

if TYPE_CHECKING:
    from core.model.window_change import WindowChange as WindowChange

# (only Codex records a window change: another agent's session never creates its class)
__getattr__ = lazy_field_types(__name__, WindowChange="core.model.window_change")


class Role(StrEnum):
    """Who a message is from, as the model sees it."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


_USER, _ASSISTANT = Role.USER, Role.ASSISTANT
"""The roles the per-message properties below compare with, read once (an enum member read off
its class costs a look-up through the enum's metaclass: ~95 ns, for each of a 100 MB session's
10^5 messages every time a walk asks)."""


class SourceFormat(StrEnum):
    """The transcript format a session was loaded from."""

    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    PI = "pi"
    OPENCODE = "opencode"
    GEMINI_CLI = "gemini-cli"
    QWEN_CODE = "qwen-code"
    CTXSCOPE = "ctxscope"
    COPILOT_CLI = "copilot-cli"


class UsageConvention(StrEnum):
    """Which provider's accounting a :class:`Usage` was recorded in.

    The numbers are normalised on load (``input`` never includes cached tokens). The convention
    decides which figure is *the* context of a call: for Anthropic usage the prompt as sent (what
    Claude Code's transcripts are read by), for the others the provider's total after the reply.
    Threshold checks compare the size after the reply in every agent (see ``core.algorithms.overflow``).
    """

    ANTHROPIC = "anthropic"
    """Claude Code: ``input + cache_creation + cache_read`` is the prompt (before the reply)."""
    OPENAI = "openai"
    """Codex ``last_token_usage``: ``input_tokens`` (cached included) before, ``total_tokens`` after."""
    PI = "pi"
    """pi: ``totalTokens`` (includes the output) or the sum of its parts."""
    OPENCODE = "opencode"
    """opencode: ``tokens.total`` or ``input + output + cache.read + cache.write``."""
    GEMINI = "gemini"
    """Gemini CLI and Qwen Code (``usageMetadata``): ``promptTokenCount`` (cached included) is the
    prompt as sent, and the prompt is what their compression check compares (before the reply)."""


BEFORE_REPLY_CONVENTIONS = frozenset({UsageConvention.ANTHROPIC, UsageConvention.GEMINI})
"""The conventions whose context figure is the prompt before the reply (the others: the
provider's total after it)."""


class Provenance(StrEnum):
    """Where a token figure comes from. Every number the UI shows carries one."""

    RECORDED = "recorded"
    """Reported by the provider and stored in the transcript."""
    COUNTED = "counted"
    """Counted here with a real tokenizer (tiktoken)."""
    ESTIMATED = "estimated"
    """Estimated here with a characters- or bytes-per-token rule."""


# The rule of each figure of a usage, written once: each property of Usage is one of these
# functions (no second frame to set up per read), and :func:`usage_columns` calls them from a
# comprehension over many usages (no property look-up per figure, and no figure worked out twice).


def _prompt(usage: Usage) -> int:
    """Context size *before* the reply: everything the model was sent."""
    return usage.input + usage.cache_read + usage.cache_write


def prompt_column(
    inputs: Iterable[int], cache_reads: Iterable[int], cache_writes: Iterable[int]
) -> Iterator[int]:
    """:attr:`Usage.prompt_tokens` of many usages from three of their figures as columns (their
    ``input``, ``cache_read`` and ``cache_write``), added in C: the sum :func:`_prompt` makes of
    one (``tests/unit/test_usage_columns.py`` holds the two equal)."""
    return map(add, map(add, inputs, cache_reads), cache_writes)


def _after_reply(usage: Usage) -> int:
    """Context size *after* the reply: the prompt plus what the model generated (the
    provider's total when it gave one)."""
    return usage.total or _prompt(usage) + usage.output


def _context(usage: Usage) -> int:
    """The context figure this provider's convention reports for a call (see UsageConvention)."""
    if usage.convention in BEFORE_REPLY_CONVENTIONS:
        return _prompt(usage)
    return _after_reply(usage)


class Usage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """Token usage of one model call, normalised across providers.

    ``input`` excludes cached tokens in every convention; ``cache_read`` and ``cache_write``
    hold them. ``total`` is the provider's own total when it gave one.
    """

    input: int = 0
    """Uncached prompt tokens."""
    output: int = 0
    """Generated tokens (for OpenAI-style usage this already includes ``reasoning``)."""
    cache_read: int = 0
    """Prompt tokens served from the provider's cache."""
    cache_write: int = 0
    """Prompt tokens written to the provider's cache (Anthropic ``cache_creation``)."""
    reasoning: int = 0
    """Reasoning tokens, as reported (informational; see ``output``)."""
    total: int | None = None
    """The provider's total when recorded (Codex ``total_tokens``, pi ``totalTokens``, opencode ``total``)."""
    convention: UsageConvention = UsageConvention.ANTHROPIC
    """The accounting the numbers were recorded in."""

    if TYPE_CHECKING:  # (each property is its rule's function: one frame a read)

        @property
        def prompt_tokens(self) -> int: ...
        @property
        def context_after_reply(self) -> int: ...
        @property
        def context_tokens(self) -> int: ...

    else:
        prompt_tokens = property(_prompt, doc=_prompt.__doc__)
        context_after_reply = property(_after_reply, doc=_after_reply.__doc__)
        context_tokens = property(_context, doc=_context.__doc__)


class UsageColumns(NamedTuple):
    """The figures of a sequence of usages, one list per figure (None where there is no usage)."""

    context: list[int | None]
    """:attr:`Usage.context_tokens` of each usage."""
    prompt: list[int | None]
    """:attr:`Usage.prompt_tokens` of each usage."""
    after: list[int | None]
    """:attr:`Usage.context_after_reply` of each usage."""
    convention: list[UsageConvention | None]
    """:attr:`Usage.convention` of each usage."""


def usage_columns(usages: Sequence[Usage | None]) -> UsageColumns:
    """The figures of every usage of ``usages`` as columns: what each of its properties says of
    it, by the same rules, made column by column (each usage's fields read once, the sums added
    in C: no function called per usage; the context is the prompt or the context after the
    reply of the same usage). A reader of every call's figures (the calls of a replay) reads
    these rather than three properties a call."""
    known: Sequence[Usage] = cast("Sequence[Usage]", usages)
    missing = any(map(is_, usages, repeat(None)))
    if missing:
        known = [usage for usage in usages if usage is not None]
    prompt = list(
        prompt_column(
            [usage.input for usage in known],
            [usage.cache_read for usage in known],
            [usage.cache_write for usage in known],
        )
    )
    totals = [usage.total for usage in known]
    after = _after_column(prompt, [usage.output for usage in known], totals)
    conventions: list[UsageConvention | None] = [usage.convention for usage in known]
    rule = _context_rule(known)
    if rule is _after_reply:
        context = after.copy()
    elif rule is _prompt:
        context = prompt.copy()
    else:  # (both sides in one session, rare: the convention of each usage decides)
        context = [_context(usage) for usage in known]
    figures = cast("tuple[list[int | None], ...]", (context, prompt, after))  # (no None in them)
    columns = UsageColumns(figures[0], figures[1], figures[2], conventions)
    if not missing:
        return columns
    # each usage's figures in its place among the Nones: a column read through each usage's
    # number among those recorded (-1, the None each column is given at its end, for none)
    flags = list(map(is_not, usages, repeat(None)))
    slots = list(map(add, repeat(-1), map(mul, accumulate(flags), flags)))
    return UsageColumns(*(list(map([*column, None].__getitem__, slots)) for column in columns))


def _after_column(prompt: list[int], outputs: list[int], totals: list[int | None]) -> list[int]:
    """:func:`_after_reply` of usages whose prompts, outputs and totals are these columns: the
    provider's total where it gave one (not 0), else the prompt plus the output."""
    if totals.count(None) == len(totals):  # (no total recorded: Claude Code's)
        return list(map(add, prompt, outputs))
    if all(totals):  # (every usage's own total: Codex's, pi's)
        return cast("list[int]", totals)
    return [
        total or figure + output
        for total, figure, output in zip(totals, prompt, outputs, strict=True)
    ]


def context_column(usages: Sequence[Usage | None]) -> list[int | None]:
    """:attr:`Usage.context_tokens` of every usage of ``usages`` (None where there is none): the
    one column of :func:`usage_columns` a reader of the context alone (the gauge) needs."""
    rule = _context_rule(usages)
    return [None if usage is None else rule(usage) for usage in usages]


def _context_rule(usages: Iterable[Usage | None]) -> Callable[[Usage], int]:
    """The rule of :attr:`Usage.context_tokens` of ``usages``: the prompt's or the context after
    the reply's when they are all recorded on one side of the reply (as in nearly every
    session), else the rule that asks each usage's convention."""
    conventions = set(map(_CONVENTION, filter(None, usages)))  # (a usage is never false)
    sides = {convention in BEFORE_REPLY_CONVENTIONS for convention in conventions}
    if sides == {True}:
        return _prompt
    if sides == {False}:
        return _after_reply
    return _context


_CONVENTION = attrgetter("convention")


class ToolCall(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """One tool call an assistant message asked for."""

    id: str
    """The call id that joins the call to its result."""
    name: str
    """The tool's name as the agent registered it (``bash``, ``read``, ``exec_command`` …)."""
    arguments: Any = None
    """Arguments as recorded: a dict when they parsed as JSON, else the raw string."""


class Utf8Text:
    """A tool output held as its UTF-8 bytes (see :class:`ToolResult`), with its length in
    characters and in UTF-16 code units, which the string it was made from had at hand: a reader
    that needs only a length or a cut at a character reads them without decoding the bytes. Made
    only by :func:`held_output`; :attr:`ToolResult.output` reads it as its ``str``. Not ``bytes``,
    so that an encoder that meets one fails (msgspec: "Encoding objects of type Utf8Text is
    unsupported") instead of writing it as base64. Two are equal when their bytes are (the
    lengths follow from them)."""

    __slots__ = ("_astral", "_extra", "data")

    def __init__(self, data: bytes, chars: int, units: int) -> None:
        self.data = data
        """The text's UTF-8."""
        # (kept as what the lengths add to or take from the bytes' count: small numbers, which
        # Python keeps one object each of, where the lengths would be a new int per output)
        self._extra = len(data) - chars
        self._astral = units - chars

    @property
    def chars(self) -> int:
        """The text's length in characters (``len``)."""
        return len(self.data) - self._extra

    @property
    def units(self) -> int:
        """The text's length in UTF-16 code units (JavaScript's ``String.length``): one more
        than :attr:`chars` for each character past U+FFFF."""
        return len(self.data) - self._extra + self._astral

    def __eq__(self, other: object) -> bool:
        if type(other) is not Utf8Text:
            return NotImplemented
        return self.data == other.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"Utf8Text({self.data!r}, {self.chars}, {self.units})"


_NARROW_BASE = sys.getsizeof("\xe9") - 1
"""``sys.getsizeof`` of a 1-byte (Latin-1), non-ASCII string less its length: a string of ``n``
characters that holds more than this plus ``n`` is 2 or 4 bytes a character (UCS-2, UCS-4)."""

_FOUR_BYTE_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")
"""The first bytes of the UTF-8 of a character past U+FFFF (4 bytes of UTF-8, 2 units of UTF-16)."""


def held_output(text: str) -> str | Utf8Text:
    """``text`` as a :class:`ToolResult` holds it: its UTF-8 bytes when the string is 2 or 4 bytes
    a character and they are fewer (a mostly-ASCII output with one ``→``: half), else ``text``.
    A loader that keeps outputs until it makes their results keeps this (the string can go at
    once) and passes it as ``output=``. The bytes come with the string's length, known here
    without reading it, and its UTF-16 length: the same as its length for a string of 2 bytes
    a character (none past U+FFFF), counted from the bytes for one of 4."""
    if text.isascii():  # (a flag of the string: no scan)
        return text
    chars = len(text)
    size = sys.getsizeof(text) - _NARROW_BASE  # n (Latin-1), 2n + 1 (UCS-2), 4n + 3 (UCS-4)
    if size > chars:
        data = text.encode()
        if len(data) < size:
            if size != 2 * chars + 1:  # (UCS-4, or a string carrying a cached copy: counted)
                return Utf8Text(data, chars, chars + sum(map(data.count, _FOUR_BYTE_LEADS)))
            return Utf8Text(data, chars, chars)
    return text


class ToolResult(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """The result of one tool call, as the model was sent it.

    An output with a character past U+00FF (Claude Code's ``→`` in every Read output) makes
    CPython hold the whole string 2 or 4 bytes a character: such an output is kept as its UTF-8
    bytes (:class:`Utf8Text`) when they are fewer (half, for mostly-ASCII text), and
    :attr:`output` decodes it when read. Every reader gets the ``str``; equality, :func:`replace`,
    :func:`to_record` and :func:`from_record` see the text as before. Made with ``output=`` as
    any field: the text, or what :func:`held_output` made of it (the keeping happens in
    ``__post_init__``); an output is never assigned to. A reader that needs only a measure of
    the output asks for it (:meth:`output_chars`, :meth:`output_utf8_size`, :meth:`output_lines`,
    :meth:`output_ends_utf8`; :meth:`core.model.tokens.TokenCounter.output_tokens`): an output
    held as UTF-8 is then not decoded.
    """

    call_id: str
    """Id of the :class:`ToolCall` this answers."""
    tool_name: str | None = None
    """The tool's name (copied from the call when the format does not repeat it)."""
    output: str = ""
    """The text the model saw (for a recording: already truncated by the agent, if it did).
    A property after the class (see :func:`_output`): the field itself may hold the text's UTF-8
    bytes."""
    is_error: bool = False
    """The tool reported failure."""
    truncated_by_tool: bool = False
    """The tool truncated its own output (opencode ``metadata.truncated``): T15 must not re-truncate."""
    compacted_at_ms: int | None = None
    """Epoch ms at which the recording agent pruned this output (opencode ``time.compacted``)."""

    def __post_init__(self) -> None:
        text = self.output_held
        if type(text) is str:
            if not text.isascii():
                self.output_held = held_output(text)
        elif type(text) is not Utf8Text:
            raise TypeError(f"a tool output is a str, not {type(text).__name__}")

    if TYPE_CHECKING:  # (what msgspec makes, with ``output`` in the form a loader may keep)

        def __init__(
            self,
            *,
            call_id: str,
            tool_name: str | None = None,
            output: str | Utf8Text = "",
            is_error: bool = False,
            truncated_by_tool: bool = False,
            compacted_at_ms: int | None = None,
        ) -> None: ...

        # (the field's slot under a second name, set after the class)

        @property
        def output_held(self) -> str | Utf8Text:
            """The field as held: the text, or its UTF-8 bytes with their lengths. For a reader
            that measures or cuts the output without decoding it (the token counter, the
            summariser's cut, pruning); readers of the text read :attr:`output`. Set only by
            ``__post_init__``."""

        @output_held.setter
        def output_held(self, value: str | Utf8Text) -> None: ...

    def output_utf8_size(self) -> int:
        """``len(self.output.encode())`` without decoding an output held as UTF-8."""
        held = self.output_held
        if isinstance(held, str):
            return len(held) if held.isascii() else len(held.encode())
        return len(held.data)

    def output_chars(self) -> int:
        """``len(self.output)`` without decoding an output held as UTF-8 (held with its length)."""
        held = self.output_held
        return len(held) if isinstance(held, str) else held.chars

    def output_ends(self, count: int) -> tuple[str, str | None]:
        """``(output[:count], output[-count:])`` (the second None when the output has no more
        than ``count`` characters: its end is in its start), decoding only the ends of a long
        output held as UTF-8 (a reader looking for a marker at either end of a 40 KB output).

        A character is 1 to 4 bytes of UTF-8: the first ``count`` characters are within the
        first ``4 * count`` bytes, the last within the last ``4 * count``, and more than
        ``4 * count`` bytes are more than ``count`` characters."""
        held = self.output_held
        if isinstance(held, str) or len(held.data) <= 8 * count:
            text = self.output
            return text[:count], (text[-count:] if len(text) > count else None)
        window = 4 * count
        data = held.data
        head = data[:window].decode(errors="ignore")[:count]  # (drops a character cut at its end)
        tail = data[-window:]
        start = 0
        while start < 3 and tail[start] & 0xC0 == 0x80:  # (a character cut at its start)
            start += 1
        return head, tail[start:].decode()[-count:]

    def output_ends_utf8(self, count: int) -> tuple[bytes, bytes]:
        """UTF-8 that holds the output's start and UTF-8 that holds its end, ``count``
        characters each (the whole output when shorter), read without decoding an output held
        as UTF-8: its first and last ``count`` bytes and as many as the whole output has past
        one a character (at most ``4 * count``), or the whole output's bytes, the same object
        twice, when it has no more than twice that. They hold both ends of :meth:`output_ends`:
        a reader that finds no marker there need not decode them (nor find where their
        characters end: a mostly-ASCII output's windows are little more than its ends)."""
        held = self.output_held
        if isinstance(held, str):
            return held[:count].encode(), held[-count:].encode()
        window = min(4 * count, count + held._extra)  # (no count characters take more bytes)
        data = held.data
        if len(data) <= 2 * window:
            return data, data
        return data[:window], data[-window:]

    def output_lines(self) -> int:
        """``self.output.count("\\n") + 1`` without decoding an output held as UTF-8 (a newline is
        one byte of UTF-8 and no part of another character)."""
        held = self.output_held
        if isinstance(held, str):
            return held.count("\n") + 1
        return held.data.count(b"\n") + 1


_HELD_OUTPUT = ToolResult.__dict__["output"]
"""The slot msgspec made for the ``output`` field (msgspec itself reaches fields by offset: it
encodes, compares, copies and reads what the slot holds)."""


def _output(result: ToolResult) -> str:
    """:attr:`ToolResult.output`: the text, decoded when it is held as UTF-8."""
    held = result.output_held
    if isinstance(held, str):
        return held
    return held.data.decode()


# The field keeps its name for msgspec (``output=`` makes one, ``replace(result, output=…)``
# copies one, the record's key is ``output``); the attribute reads the text.
ToolResult.output_held = _HELD_OUTPUT  # type: ignore[method-assign]
ToolResult.output = property(_output)  # type: ignore[assignment]


class Message(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """One message of the conversation, in the order the model saw them.

    A slotted msgspec struct, not a pydantic model: a session holds hundreds of thousands of
    them, built by the loaders from values they typed themselves (no validation), copied with
    :func:`replace` and written with :func:`to_record`; the ctxscope reader validates what it
    reads with :func:`from_record`.
    """

    index: int
    """Position in :attr:`Session.messages` (0-based)."""
    id: str
    """Stable id: the format's own id, or a synthesised ``line-N`` one."""
    parent_id: str | None = None
    """Parent id in formats that keep a tree (Claude Code, pi v2+, opencode)."""
    role: Role
    timestamp: str | None = None
    """ISO-8601 time as recorded, when the format has one."""
    text: str = ""
    """The visible text parts, joined with blank lines."""
    reasoning: str = ""
    """Thinking / reasoning text the format kept in clear (encrypted reasoning is not text)."""
    tool_calls: Sequence[ToolCall] = ()
    """Tool calls (assistant messages only). Never mutated: a message without calls shares the
    one empty tuple (an empty list each took 72 bytes: 5.7 MB of a 100 MB Claude Code session);
    a loader may pass a list or a tuple (:func:`to_record` writes either as the same record)."""
    tool_result: ToolResult | None = None
    """The tool result (tool messages only)."""
    usage: Usage | None = None
    """Usage of the model call that produced this message (assistant messages only)."""
    model: str | None = None
    """Model that produced this message, when recorded."""
    stop_reason: str | None = None
    """Provider stop reason (``length`` marks an output/context overflow)."""
    error: str | None = None
    """Provider error text recorded for a failed call (used to recognise overflows)."""
    summary: bool = False
    """A compaction summary (Claude ``isCompactSummary``, pi/opencode/Codex summaries, ours)."""
    synthetic: bool = False
    """Injected by the agent, not typed by the user (a continue-after-compaction message)."""
    meta: bool = False
    """An injected meta/context message (Claude ``isMeta``, Codex environment/AGENTS.md)."""
    compaction_boundary: bool = False
    """The first message after a recorded compaction."""
    sidechain: bool = False
    """Belongs to a sub-agent transcript, not to the main conversation."""
    source_line: int | None = None
    """1-based line of the source file this message starts at, when it came from a file."""
    source_offset: int | None = None
    """Byte offset of that line, so the raw record can be re-read on demand."""
    agent_estimate_tokens: int | None = None
    """The recording agent's own estimate of this message's size in its context, when the agent
    measures items by their serialised size (Codex: bytes/4 of the item as its history holds it).
    None: the policy's estimator measures it."""
    reasoning_estimate_tokens: int = 0
    """The recording agent's estimate of the encrypted reasoning this call kept in the context
    (Codex adds it to its compaction check); 0 when there is none or it is in clear."""

    @property
    def is_turn_start(self) -> bool:
        """A real user message: not a tool result, a summary, a synthetic or a meta message."""
        return (
            self.role is _USER
            and not self.summary
            and not self.synthetic
            and not self.meta
            and not self.sidechain
        )

    @property
    def is_model_call(self) -> bool:
        """This message is the reply of one model call."""
        return self.role is _ASSISTANT and not self.summary


FLAG_MAIN, FLAG_CALL, FLAG_TURN = 1, 2, 4
"""The bits of a message's flags (:func:`message_flag`): of the main conversation (not a side
chain), the reply of a model call (:attr:`Message.is_model_call`), a turn's start
(:attr:`Message.is_turn_start`)."""
CALL_FLAGS = FLAG_MAIN | FLAG_CALL
"""The flags of a model call's reply of the main conversation (an assistant message, not a
summary): what a loader that makes one passes to its builder's ``append``."""
IS_MAIN_CALL = bytes(code == CALL_FLAGS for code in range(256))
"""A ``bytes.translate`` table for :func:`message_flags`: a main conversation's model call 1,
every other message 0 (the calls' index and the TUI's message table read the calls so, in C)."""


def message_flag(message: Message) -> int:
    """What :class:`~core.replay.calls.Calls` reads of a message, as one byte: 0 for a side
    chain's message (the index of the calls reads the main conversation alone), else
    :data:`FLAG_MAIN`, with :data:`FLAG_CALL` for a model call's reply or :data:`FLAG_TURN` for a
    turn's start (the rules of :attr:`Message.is_model_call` and :attr:`Message.is_turn_start`,
    read from the fields in one frame: the loaders' builder calls it for every message it is
    given, ``tests/unit/test_message_flags.py`` holds the two readings equal)."""
    if message.sidechain:
        return 0
    role = message.role
    if role is _ASSISTANT:
        return FLAG_MAIN if message.summary else FLAG_MAIN | FLAG_CALL
    if role is _USER and not (message.summary or message.synthetic or message.meta):
        return FLAG_MAIN | FLAG_TURN
    return FLAG_MAIN


_FLAGS_KEY = "message_flags"
"""Where a session keeps its loader's column of :func:`message_flag` (:attr:`Session.derived`)."""


def keep_message_flags(session: Session, flags: bytes | bytearray) -> None:
    """Keep ``flags`` (:func:`message_flag` of each of ``session``'s messages, in order, as its
    loader made them) with a copy of the list of messages they describe (8 bytes a message):
    :func:`message_flags` reads them while the session's messages are still those."""
    session.derived[_FLAGS_KEY] = (list(session.messages), flags)


def message_flags(session: Session) -> bytes | bytearray:
    """:func:`message_flag` of every message of ``session``: the column its loader kept
    (:func:`keep_message_flags`) while the session's messages are the ones it was made for (the
    lists compared in C, a pointer a message: a list replaced, sliced, filtered, cut or grown
    since is read again; a message is not changed once its session is built), else worked
    out here, message by message (a session made by other means: the ctxscope reader, a
    test)."""
    kept = session.derived.get(_FLAGS_KEY)
    messages = session.messages
    if kept is not None and kept[0] == messages:
        flags: bytes | bytearray = kept[1]
        return flags
    return bytearray(map(message_flag, messages))


StructT = TypeVar("StructT", bound=msgspec.Struct)


def replace(struct: StructT, **changes: Any) -> StructT:
    """A copy of a message (or usage, tool call, tool result) with ``changes`` applied: the one
    way to copy them (what ``model_copy(update=...)`` was)."""
    return msgspec.structs.replace(struct, **changes)


def to_record(struct: msgspec.Struct) -> dict[str, Any]:
    """A message (or its parts) as JSON-ready builtins, fields at their default left out, in
    field order (enums as their values, nested parts as dicts): what the ctxscope format
    writes, and a deep snapshot for comparing."""
    record: dict[str, Any] = msgspec.to_builtins(struct, enc_hook=_text_of)
    calls = record.get("tool_calls")
    if calls is not None:  # (a message's calls as one record whatever sequence holds them)
        if not calls:
            del record["tool_calls"]  # an empty list a loader passed: absent, as the default is
        elif type(calls) is tuple:
            record["tool_calls"] = list(calls)
    return record


def _text_of(value: Any) -> str:
    """An output held as UTF-8 (:class:`Utf8Text`) as the text it is, for msgspec's ``enc_hook``."""
    if type(value) is Utf8Text:
        return value.data.decode()
    raise NotImplementedError(type(value))


def from_record(record: dict[str, Any], kind: type[StructT]) -> StructT:
    """A message (or a part) from an untrusted record, every field's type checked (a
    ``msgspec.ValidationError`` names the first bad one); unknown keys are ignored."""
    return msgspec.convert(record, kind)


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


_DEFERRED = ConfigDict(defer_build=True)
"""The session's pydantic models build their validator and serialiser when one is first used,
not when the module is imported: ``analyze --json`` of a session without diagnostics never
validates one (the schema of each costs a few milliseconds of every command's start)."""


class Diagnostic(BaseModel):
    """Something a loader skipped, repaired or could not understand."""

    model_config = _DEFERRED

    line: int | None = None
    """1-based line (or record number) in the source; None for file-level notes."""
    severity: Severity = Severity.WARNING
    code: str
    """Short machine-readable reason, e.g. ``invalid-json``, ``orphan-tool-result``."""
    message: str
    """One human sentence saying what happened and what was done about it."""


CompactionTrigger = Literal["auto", "manual", "overflow", "hook", "unknown"]
"""Why a recorded compaction ran: ``auto`` (the agent's threshold), ``manual`` (the user's
``/compact``), ``overflow`` (the provider refused the request and the agent compacted to retry),
``hook`` (an extension or hook wrote the summary), ``unknown`` (the recording does not say, and
nothing decides it yet)."""


class CompactionEvent(BaseModel):
    """A compaction the recording itself contains."""

    model_config = _DEFERRED

    message_index: int
    """Index in :attr:`Session.messages` of the first message after the compaction (the summary
    message when there is one); everything before it was in context before the compaction."""
    trigger: CompactionTrigger = "unknown"
    """Why it ran (see :data:`CompactionTrigger`)."""
    trigger_evidence: str | None = None
    """What the trigger rests on, in one sentence (the field the agent wrote, or the order of
    the records around it)."""
    phase: str | None = None
    """Where in the agent's loop it ran, when that tells triggers apart: ``mid-turn`` (after a
    tool output, before the turn ended) or ``pre-turn`` (before the turn's first request)."""
    tokens_before: int | None = None
    """Context size the agent measured before compacting (``preTokens`` / ``tokensBefore``)."""
    tokens_after: int | None = None
    """Context size after, when recorded (``postTokens``)."""
    summary: str | None = None
    """The summary text, when recorded in clear."""
    first_kept_id: str | None = None
    """Id of the first message kept verbatim (pi ``firstKeptEntryId``, opencode ``tail_start_id``)."""
    source_line: int | None = None
    """1-based line of the record in the source file."""
    rewound: bool = False
    """The conversation went on from before it (the user rewound past it): it never took
    effect, and the replay does not apply it."""


WindowSource = Literal["recorded", "table", "inferred", "user", "unknown"]
"""Where a context window comes from: the session file, our table of (provider, model), the
recording's own evidence (usage above the table's figure, an overflow error), ``--window``, or
nowhere."""


class Session(BaseModel):
    """A recorded agent session, normalised."""

    # messages are msgspec structs; the schema is built when first needed (see _DEFERRED)
    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)
    model_rebuild = classmethod(rebuild_defining_lazy_types)  # type: ignore[pydantic-field]

    id: str
    format: SourceFormat
    path: str | None = None
    """Where it was loaded from (a file, a folder or a database)."""
    model: str | None = None
    """The main model, when recorded (the last one when it changed)."""
    context_window: int | None = None
    """Context window in tokens; None when unknown (see ``window_source``)."""
    window_source: WindowSource = "unknown"
    """Where ``context_window`` came from: the file, our model table, the user, or nowhere."""
    window_evidence: str | None = None
    """Why the window is what it is, when more than a table row says so (one sentence)."""
    window_changes: list[WindowChange] = Field(default_factory=list)
    """Where the recorded window changed after the start (``context_window`` is the first)."""
    max_output_tokens: int | None = None
    """The model's output limit when known (used by the opencode threshold rule)."""
    agent_version: str | None = None
    """Version of the agent that recorded the session (Claude Code ``version``, Codex
    ``cli_version``, opencode's version), when recorded."""
    provider: str | None = None
    """Who served the model (``anthropic``, ``openai``, ``openai-codex``, ``github-copilot``,
    ``amazon-bedrock``, ``opencode`` …), when recorded or evident; windows depend on it."""
    project: str | None = None
    """Working directory / project the agent ran in."""
    started_at: str | None = None
    """ISO-8601 time of the first record."""
    messages: list[Message] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    compactions: list[CompactionEvent] = Field(default_factory=list)
    """Compactions the recording holds, in order."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Format-specific facts worth showing (agent version, Codex truncation policy …)."""
    parent_session_id: str | None = None
    """The id of the session that started this one (a sub-agent's parent); None for a top-level session."""

    _derived: dict[str, Any] = PrivateAttr(default_factory=dict)
    """What is computed from the session once and read by the replay and several parts of one
    report (its calls and compactions as :func:`core.replay.recorded.placed` places them), with
    the session's size it was computed at: it lives and dies with the session."""

    def __eq__(self, other: object) -> bool:
        """Two sessions are equal when their fields are: what was derived from either
        (:attr:`derived`: its loader's flags, its placed calls) is not compared."""
        if not isinstance(other, Session):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # (as a pydantic model's: not hashable)

    @property
    def derived(self) -> dict[str, Any]:
        """What is computed from the session once and read by several parts of one report (see
        ``_derived``)."""
        return self._derived

    def model_calls(self) -> list[Message]:
        """The assistant messages, one per model call, in order."""
        return [m for m in self.messages if m.is_model_call]

    def turn_starts(self) -> list[int]:
        """Indices of the messages that start a turn."""
        return [m.index for m in self.messages if m.is_turn_start]
