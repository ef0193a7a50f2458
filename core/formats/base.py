"""What every loader shares: the error it raises, its progress callback and a Session builder.

A format module (``core/formats/<name>.py``) exposes three things the registry uses:

* ``FORMAT: SourceFormat`` — which format it reads;
* ``sniff(path, head) -> float`` — confidence in 0..1 that ``path`` is in this format, from at
  most the first 64 KB (``head``) and the path layout; never raises;
* ``load(path, *, progress=None) -> Session`` — read the file (read-only) into a Session, or
  raise :class:`LoadError` with one clear sentence.

Loaders append messages through :class:`SessionBuilder`, which assigns indices, flags the
message after a compaction, collects diagnostics (capped per code so a broken 100 MB file does
not produce a million of them) and builds the :class:`~core.model.session.Session` without revalidating
what the loader already typed.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from pathlib import Path
from typing import Any

from core.model import read_numbers as numbers
from core.model.deep_json import bounded
from core.model.fastmodel import build as build_model
from core.model.session import (
    CompactionEvent,
    CompactionTrigger,
    Diagnostic,
    Message,
    Role,
    Session,
    Severity,
    SourceFormat,
    WindowSource,
    keep_message_flags,
    message_flag,
)
from core.model.tokens import arguments_text

ProgressCallback = Callable[[int, int, int], None]
"""Called now and then while loading with ``(bytes_read, total_bytes, messages_so_far)``."""

BAD_COUNT = "bad-count"
"""The code of a number no real session holds (every loader checks its counts the same way)."""

_AGENT_ESTIMATE = attrgetter("agent_estimate_tokens")
_REASONING_ESTIMATE = attrgetter("reasoning_estimate_tokens")
_TOOL_CALLS = attrgetter("tool_calls")

MAX_DIAGNOSTICS_PER_CODE = 200
"""Beyond this many diagnostics with the same code, only a count is kept."""


def as_text(value: Any) -> str:
    """A value read from a record as the text it stands for: a string as it is, None as "",
    anything else as compact JSON — what the model is sent for a tool call's arguments too."""
    return arguments_text(value)


def as_str(value: Any) -> str | None:
    """A value read from a record as a name or an id: a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


SHARED_ARGUMENT_CHARS = 200
"""The longest argument value a session holds once however many calls pass it (a path, a
command, a pattern: a 100 MB Claude Code session's 26,000 calls passed 58 values, 1.6 MB as
objects of their own); longer ones (a file's new content) rarely repeat."""


class LoadError(Exception):
    """A file could not be loaded at all. The message is one sentence naming what was tried."""


class SessionBuilder:
    """Collects what a loader reads and produces the :class:`Session`.

    The builder trusts its caller: :meth:`add` uses :func:`construct` (no validation),
    so the loader passes already-typed values (a :class:`Role`, :class:`ToolCall` objects …).
    """

    def __init__(self, fmt: SourceFormat, path: Path | str | None, session_id: str | None = None):
        self.format = fmt
        self.path = str(path) if path is not None else None
        self.session_id = session_id
        self.model: str | None = None
        self.context_window: int | None = None
        self.window_source: WindowSource = "unknown"
        self.max_output_tokens: int | None = None
        self.project: str | None = None
        self.started_at: str | None = None
        self.messages: list[Message] = []
        self.flags = bytearray()
        """:func:`~core.model.session.message_flag` of each message so far, written as it is
        appended (:meth:`append`; a loader that changes a message's role or flags after that
        calls :meth:`reflag`): the session keeps the column (:func:`keep_message_flags`) and the
        index of its calls is made from it in C, not by asking every message again."""
        self.compactions: list[CompactionEvent] = []
        self.metadata: dict[str, Any] = {}
        self._diagnostics: list[Diagnostic] = []
        self._per_code: dict[str, int] = {}
        self._boundary_pending = False
        self._lines: list[int | None] = []
        """``_lines[n]``: the int object a message holds as its source line ``n`` (None: no
        message's so far), while loading (:meth:`append`); as long as the lines an index below
        :attr:`_room` may be looked up at (``2 * _room + 64``)."""
        self._room = 0
        self._shared_values: dict[str, str] = {}
        """The short argument values of the calls so far (:meth:`share_arguments`)."""
        self.arguments_ready = False
        """Set by a loader that makes every call's arguments ready as it reads them: bounded
        (:func:`bounded`), and shared where it chooses to (:meth:`share_arguments`, which does
        both); :meth:`build` then does not walk them again."""
        self.estimates_derived = True
        """The messages may hold estimates the loader derived (``agent_estimate_tokens``,
        ``reasoning_estimate_tokens``), which :meth:`build` holds to a count's bound; a loader
        that never gives a message one (Claude Code) sets it False: no pass over the messages
        for them."""

    # -- numbers ------------------------------------------------------------------------

    def share_arguments(self, arguments: Any) -> Any:
        """A call's ``arguments`` as the session holds them: each short string value of a dict
        replaced by the equal one an earlier call holds, then :func:`bounded` (the JSON text of
        arguments too deep for recursive code). :meth:`build` does it for every call; a loader
        that does it as it reads a call (:attr:`arguments_ready`) lets the copy go at once (its
        place is taken by what the next line holds, not left free among what the session
        keeps), and spares :meth:`build` a pass over the messages."""
        if type(arguments) is dict:
            share = self._shared_values.setdefault
            for key, value in arguments.items():
                if type(value) is str and len(value) <= SHARED_ARGUMENT_CHARS:
                    # (an existing key: the dict keeps its size)
                    arguments[key] = share(value, value)
        return bounded(arguments)

    # -- messages -----------------------------------------------------------------------

    def add(self, role: Role, *, id: str | None = None, **fields: Any) -> Message:  # noqa: A002
        """Append a message built from ``fields`` (Message field names) and return it.

        ``index`` is assigned here; ``id`` defaults to ``line-<source_line>`` (or
        ``msg-<index>``). The first message after :meth:`add_compaction` gets
        ``compaction_boundary=True``.
        """
        if id is None:
            line = fields.get("source_line")
            id = f"line-{line}" if line is not None else f"msg-{len(self.messages)}"  # noqa: A001
        fields["index"] = 0  # (set by append)
        fields["id"] = id
        fields["role"] = role
        return self.append(Message(**fields))

    def append(self, message: Message, flag: int | None = None) -> Message:
        """Append an already-built message, re-indexing it (and flagging a boundary if due).
        ``flag``: its :func:`~core.model.session.message_flag`, which a loader that knows it
        (a model call's reply, a tool result) passes (one call fewer per message), else worked
        out here.

        Its index is the int object an earlier message holds as its source line when one has
        that value: a message's index and the line numbers take the same values (a 100 MB
        Claude Code session's 105,000 messages held 2 x 105,000 int objects for them: one each
        is kept now). Inline, not a method of its own: one call fewer per message."""
        messages = self.messages
        index = len(messages)
        if index >= self._room:  # (now and then: grown by a quarter, not checked a message)
            self._room = index + index // 4 + 64
            self._lines.extend([None] * (2 * self._room + 64 - len(self._lines)))
        line = message.source_line
        lines = self._lines
        # (a line far past the messages is not one an index will take: not kept, so that the
        # table stays short when the lines outnumber the messages, as in Codex rollouts)
        if line is not None and line < 2 * index + 64:
            lines[line] = line
        held = lines[index]
        message.index = index if held is None else held
        if self._boundary_pending:
            message.compaction_boundary = True
            self._boundary_pending = False
        messages.append(message)
        self.flags.append(message_flag(message) if flag is None else flag)
        return message

    def reflag(self, message: Message) -> None:
        """Write again the flags of ``message``, appended earlier, whose role, side chain,
        summary, synthetic or meta field the loader has since changed."""
        self.flags[message.index] = message_flag(message)

    # -- compactions --------------------------------------------------------------------

    def add_compaction(
        self,
        *,
        trigger: CompactionTrigger = "unknown",
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        summary: str | None = None,
        first_kept_id: str | None = None,
        source_line: int | None = None,
    ) -> CompactionEvent:
        """Record a compaction at the current position; the next message is its boundary."""
        event = build_model(  # (typed values: no validation, nor its schema built for one event)
            CompactionEvent,
            {
                "message_index": len(self.messages),
                "trigger": trigger,
                "trigger_evidence": None,
                "phase": None,
                "tokens_before": tokens_before,
                "tokens_after": tokens_after,
                "summary": summary,
                "first_kept_id": first_kept_id,
                "source_line": source_line,
                "rewound": False,
            },
        )
        self.compactions.append(event)
        self._boundary_pending = True
        return event

    # -- diagnostics --------------------------------------------------------------------

    def diagnostic(
        self,
        line: int | None,
        code: str,
        message: str,
        severity: Severity = Severity.WARNING,
    ) -> None:
        """Note something skipped or repaired (``line`` is 1-based, None for the whole file)."""
        seen = self._per_code.get(code, 0)
        self._per_code[code] = seen + 1
        if seen < MAX_DIAGNOSTICS_PER_CODE:
            self._diagnostics.append(
                Diagnostic(line=line, severity=severity, code=code, message=message)
            )

    def count(self, line: int | None, what: str, value: Any) -> int:
        """A token or byte count read at ``line``: missing is 0; a figure no real session holds
        (not a number, negative, not finite, above 10^9) is clamped, with a ``bad-count``
        diagnostic naming ``what`` (the field) — the one check of every loader's numbers."""
        taken, problem = numbers.count(value)
        if problem is not None:
            self.diagnostic(line, BAD_COUNT, f"{what}: {problem}")
        return taken

    def optional_count(self, line: int | None, what: str, value: Any) -> int | None:
        """:meth:`count` for a figure a record may leave out: missing or unusable is None."""
        taken, problem = numbers.optional_count(value)
        if problem is not None:
            self.diagnostic(line, BAD_COUNT, f"{what}: {problem}")
        return taken

    def counts(
        self,
        line: int | None,
        where: str,
        record: dict[str, Any],
        fields: tuple[str, ...],
        optional: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """``record`` with its count ``fields`` checked by :meth:`count` (those among
        ``optional`` by :meth:`optional_count`): the record itself when every figure is
        plausible (the usual case, no copy), else a copy with the bad figures clamped or
        dropped (a ``bad-count`` diagnostic each)."""
        get = record.get
        top = numbers.MAX_COUNT
        for key in fields:  # the usual case, once per call of a 100 MB file: no function calls
            value = get(key)
            if value is not None and (type(value) is not int or not 0 <= value <= top):
                break
        else:
            return record
        cleaned = dict(record)
        for key in fields:
            value = get(key)
            if value is not None:
                check = self.optional_count if key in optional else self.count
                cleaned[key] = check(line, f"{where}.{key}", value)
        return cleaned

    def info(self, line: int | None, code: str, message: str) -> None:
        """A diagnostic of severity info (expected, harmless)."""
        self.diagnostic(line, code, message, Severity.INFO)

    def error(self, line: int | None, code: str, message: str) -> None:
        """A diagnostic of severity error (data was lost)."""
        self.diagnostic(line, code, message, Severity.ERROR)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """The diagnostics kept so far (without the suppression notes :meth:`build` adds)."""
        return self._diagnostics

    # -- result -------------------------------------------------------------------------

    def _clamp_derived(self) -> None:
        """Derived estimates and compaction sizes above :data:`~core.model.read_numbers.MAX_COUNT`
        clamped to it, with a ``bad-count`` diagnostic each (as a figure read is)."""
        top = numbers.MAX_COUNT
        messages = self.messages
        # (a test over the columns first, in C: the figures are nearly always far below it)
        estimates = filter(None, map(_AGENT_ESTIMATE, messages))
        if self.estimates_derived and (
            max(estimates, default=0) > top
            or max(map(_REASONING_ESTIMATE, messages), default=0) > top
        ):
            self._clamp_messages(top)
        for event in self.compactions:
            for key in ("tokens_before", "tokens_after"):
                value = getattr(event, key)
                if value is not None and value > top:
                    setattr(event, key, self.count(event.source_line, f"compaction {key}", value))

    def _clamp_messages(self, top: int) -> None:
        for message in self.messages:
            estimate = message.agent_estimate_tokens
            if estimate is not None and estimate > top:
                message.agent_estimate_tokens = self.count(
                    None, f"message {message.index}: estimate", estimate
                )
            if message.reasoning_estimate_tokens > top:
                message.reasoning_estimate_tokens = self.count(
                    None,
                    f"message {message.index}: reasoning estimate",
                    message.reasoning_estimate_tokens,
                )

    def build(self) -> Session:
        """The Session (messages are not revalidated; they were typed by the loader). The
        figures a loader derived rather than read (an estimate from a redaction's kept length,
        a compaction's size from a call's context) are held to what a count may be, as every
        figure read is: the session holds nothing its ctxscope file would not read back."""
        self._clamp_derived()
        self._lines, self._room = [], 0  # (the messages keep the ints they hold)
        diagnostics = list(self._diagnostics)
        for code, count in self._per_code.items():
            if count > MAX_DIAGNOSTICS_PER_CODE:
                diagnostics.append(
                    Diagnostic(
                        line=None,
                        severity=Severity.WARNING,
                        code=code,
                        message=(
                            f"{count - MAX_DIAGNOSTICS_PER_CODE} more '{code}' diagnostics "
                            f"not listed ({count} in all)"
                        ),
                    )
                )
        session_id = self.session_id
        if not session_id:
            session_id = Path(self.path).stem if self.path else "session"
        if not self.arguments_ready:  # (shared, and too deep for recursive code made text)
            share = self.share_arguments
            for message in filter(_TOOL_CALLS, self.messages):
                for call in message.tool_calls:
                    call.arguments = share(call.arguments)
        self._shared_values = {}
        self.metadata = {key: bounded(value) for key, value in self.metadata.items()}
        session = Session.model_construct(
            id=session_id,
            format=self.format,
            path=self.path,
            model=self.model,
            context_window=self.context_window,
            window_source=self.window_source,
            max_output_tokens=self.max_output_tokens,
            project=self.project,
            started_at=self.started_at,
            messages=self.messages,
            diagnostics=diagnostics,
            compactions=self.compactions,
            metadata=self.metadata,
        )
        keep_message_flags(session, self.flags)
        return session
