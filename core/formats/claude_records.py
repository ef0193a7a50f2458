"""What one line of a Claude Code transcript contributes: an :class:`Entry`, read at load time.

Only user, assistant and compact-boundary lines (and the attachments the model is sent) become
entries; the loader keeps them in file order and picks the active branch later
(:mod:`core.formats.claude_branches`). Content blocks are read here: text, thinking, tool calls,
tool results (as ``(call id, output, is_error)``), images and documents as placeholders.
"""

from __future__ import annotations

from collections.abc import Sequence
from sys import intern
from typing import Any, Protocol

import msgspec

from core.formats.base import as_text
from core.model.session import ToolCall, Usage, Utf8Text

# Entry kinds (one entry per useful line).
USER = 0
ASSISTANT = 1
BOUNDARY = 2
ATTACHMENT = 3
"""Context the agent injected (an ``attachment`` line): a meta user message for the model."""
API_ERROR = 4
"""A provider's context-overflow error (``system`` / ``api_error``): no message, but it tells
an overflow recovery from an automatic compaction."""


SIDECHAIN, META, SUMMARY = 1, 2, 4
"""The bits of :attr:`Entry.flags`."""

FLAGS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        tuple(sidechain * SIDECHAIN | meta * META | summary * SUMMARY for summary in (0, 1))
        for meta in (0, 1)
    )
    for sidechain in (0, 1)
)
"""``FLAGS[sidechain][meta][summary]``: :attr:`Entry.flags` of a line with these flags (both
reads look it up: three indexes by the bools, no arithmetic, no key made per line)."""


class Texts(Protocol):
    """What holds texts as an :class:`Entry` does: its one text as the string itself, else its
    texts (none or several) in ``more_texts``."""

    one_text: str | None
    more_texts: Sequence[str]


def texts_of(entry: Texts) -> Sequence[str]:
    """:attr:`Entry.texts` (the hot paths call it as a function: cheaper than the property)."""
    one = entry.one_text
    return entry.more_texts if one is None else (one,)


def set_texts(entry: Texts, texts: Sequence[str]) -> None:
    """``entry.texts = texts`` (the reads of a line call it as a function: cheaper than the
    property)."""
    if len(texts) == 1:
        entry.one_text = texts[0]
        if entry.more_texts:  # (a new entry's is empty: one field set, not two)
            entry.more_texts = ()
    else:
        if entry.one_text is not None:
            entry.one_text = None
        entry.more_texts = texts


class Entry(msgspec.Struct, eq=False):
    """What one user/assistant/boundary/attachment line contributes, extracted at read time
    (a struct: made in one call, the fields a line leaves empty at their defaults; the typed
    read passes the first eight by position, which msgspec takes faster than keywords).

    Its size is a message's (192 bytes with the collector's header: at most 20 fields): the
    assembly makes a message as it lets an entry go, and the message takes the entry's place
    (one field more and the freed entries stayed free: ``analyze --json`` of the 100 MB
    small-messages file peaked 20 MB higher). The line's flags are one int and its one text
    a string of its own (:attr:`texts` reads either way) for that reason.

    Tracked by the garbage collector (which the load pauses) although it never needs to be: an
    untracked entry is the size of a message, and the memory the entries free when the assembly
    lets them go then ends up scattered among the session's messages (``analyze --json`` of the
    100 MB small-messages file peaked 18 MB higher)."""

    kind: int
    line: int
    offset: int
    uuid: str
    parent: str | None
    timestamp: str | None = None
    flags: int = 0
    """:data:`SIDECHAIN`, :data:`META` and :data:`SUMMARY` (:attr:`sidechain` … read them)."""
    # Filled by the readers; most lines leave most of them empty (shared, never mutated).
    one_text: str | None = None
    """The line's text when it has exactly one (most lines): a container per line, held until
    the assembly, left its block free among what the session keeps (4.5 MB of a 100 MB
    Claude Code session). :attr:`texts` reads it as a sequence."""
    more_texts: Sequence[str] = ()
    """The line's texts when it has none or several."""
    reasoning: Sequence[str] = ()
    calls: Sequence[ToolCall] = ()
    results: Sequence[tuple[str, str | Utf8Text, bool]] = ()
    """Each result's call id, output (as :func:`~core.model.session.held_output` keeps it) and error flag."""
    usage: dict[str, Any] | None = None
    """The raw usage of an assistant line until the loader checks it (then ``call_usage``);
    a compact boundary's ``compactMetadata``."""
    call_usage: Usage | None = None
    """An assistant line's usage, checked and read (the raw dict is not kept)."""
    model: str | None = None
    stop_reason: str | None = None
    error: str | None = None
    message_id: str | None = None
    """An assistant line's API message id (the line's uuid when it has none)."""
    request_id: str | None = None
    """An assistant line's request id, when it has one."""

    texts = property(
        texts_of, set_texts, doc="The line's texts (the visible text parts, in order)."
    )

    @property
    def sidechain(self) -> bool:
        """Belongs to a sub-agent's transcript (``isSidechain``)."""
        return bool(self.flags & SIDECHAIN)

    @property
    def meta(self) -> bool:
        """Injected context, not typed by the user (``isMeta``, or made so by the reader)."""
        return bool(self.flags & META)

    @meta.setter
    def meta(self, meta: bool) -> None:
        self.flags = self.flags | META if meta else self.flags & ~META

    @property
    def summary(self) -> bool:
        """A compaction's summary (``isCompactSummary``)."""
        return bool(self.flags & SUMMARY)

    @property
    def key(self) -> tuple[str, str | None] | None:
        """``(message id, request id)``: what the block lines of one API message share (None for
        any other line). Made when asked: a tuple held by every assistant entry until the
        assembly left 52,000 free 64-byte blocks among what the session keeps (3.3 MB of a 100 MB
        Claude Code session, still free at the end of ``analyze``)."""
        message_id = self.message_id
        return None if message_id is None else (message_id, self.request_id)

    @classmethod
    def of(
        cls, kind: int, line: int, offset: int, uuid: str, parent: str | None, obj: dict[str, Any]
    ) -> Entry:
        """The entry of a line read as an object (its envelope's flags read here)."""
        ts = obj.get("timestamp")
        return cls(
            kind=kind,
            line=line,
            offset=offset,
            uuid=uuid,
            parent=parent,
            timestamp=ts if type(ts) is str else None,
            flags=FLAGS[obj.get("isSidechain") is True][obj.get("isMeta") is True][
                obj.get("isCompactSummary") is True
            ],
        )


def parent_of(obj: dict[str, Any]) -> str | None:
    parent = obj.get("parentUuid")
    if parent is None:
        parent = obj.get("logicalParentUuid")  # a compact boundary's pre-compaction leaf
    return parent if type(parent) is str else None


def _block_piece(block: dict[str, Any]) -> str | None:
    """What a text, image or document content block shows the model (None: another kind)."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if type(text) is str else None
    if kind == "image":
        return "[image]"
    if kind == "document":
        return "[document]"
    return None


def _block_text(content: Any) -> str:
    """Text of a tool_result ``content``: a string, or a list of text/image blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            piece = _block_piece(block) if isinstance(block, dict) else block
            if isinstance(piece, str):
                parts.append(piece)
        return "\n\n".join(parts)
    return as_text(content)


def _result_of(block: dict[str, Any], is_error: bool) -> tuple[str, str, bool]:
    """A tool result block as ``(call id, output, is_error)``."""
    call_id = block.get("tool_use_id")
    return (call_id if type(call_id) is str else "", _block_text(block.get("content")), is_error)


def read_user(entry: Entry, message: Any) -> None:
    content = message.get("content") if type(message) is dict else None
    if type(content) is str:
        entry.texts = (content,)
        return
    if not isinstance(content, list):
        return
    texts: list[str] = []
    results: list[tuple[str, str, bool]] = []
    for block in content:
        if type(block) is not dict:
            continue
        if block.get("type") == "tool_result":
            results.append(_result_of(block, block.get("is_error") is True))
            continue
        piece = _block_piece(block)
        if piece is not None:
            texts.append(piece)
    if texts:
        entry.texts = texts
    if results:
        entry.results = results


def request_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """The usage of the request whose reply the line holds: the last ``type: "message"`` entry of
    ``usage.iterations`` when there is one (2.1.2xx), else ``usage`` itself.

    A response that ran a server tool (the advisor) is several model passes: the top-level usage
    is the sum of the main model's passes, which counts the context twice, and the preserved
    copies a partial compaction rewrites have it zeroed. The last main-model pass is the context
    the conversation reached, and its output the reply that stays in it.
    """
    iterations = usage.get("iterations")
    if type(iterations) is list:
        for item in reversed(iterations):
            if type(item) is dict and item.get("type") == "message":
                return item
    return usage


def read_assistant(entry: Entry, obj: dict[str, Any], message: Any) -> None:
    if type(message) is not dict:
        return
    msg_id = message.get("id")
    request_id = obj.get("requestId")
    entry.message_id = msg_id if type(msg_id) is str else entry.uuid
    entry.request_id = request_id if type(request_id) is str else None
    model = message.get("model")
    if type(model) is str:
        entry.model = intern(model)  # (one string per name, not one per line)
    stop = message.get("stop_reason")
    if type(stop) is str:
        entry.stop_reason = intern(stop)
    usage = message.get("usage")
    if type(usage) is dict:
        entry.usage = request_usage(usage)
    content = message.get("content")
    texts: list[str] = []
    if type(content) is str:
        texts.append(content)
    elif isinstance(content, list):
        _read_assistant_blocks(entry, content, texts)
    if texts:
        entry.texts = texts
    if obj.get("isApiErrorMessage") is True or obj.get("error"):
        error = obj.get("error")
        entry.error = ("\n".join(texts) or (error if isinstance(error, str) else "")) or "API error"


def _read_assistant_blocks(entry: Entry, content: list[Any], texts: list[str]) -> None:
    """The blocks of an assistant line: text, thinking, tool calls, server tool results."""
    for block in content:
        if type(block) is not dict:
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if type(text) is str:
                texts.append(text)
        elif kind == "thinking":
            thinking = block.get("thinking")
            if type(thinking) is str:
                entry.reasoning = (*entry.reasoning, thinking)
        elif kind in ("tool_use", "server_tool_use"):
            call_id = block.get("id")
            name = block.get("name")
            call = ToolCall(
                id=call_id if type(call_id) is str else "",
                name=intern(name) if type(name) is str else "",
                arguments=block.get("input"),
            )
            entry.calls = (*entry.calls, call)
        elif type(kind) is str and kind.endswith("_tool_result"):
            # A server tool's result (web search …) arrives inside the assistant reply.
            entry.results = (*entry.results, _result_of(block, False))
