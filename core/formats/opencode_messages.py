"""opencode's records → :class:`~core.model.session.Message` objects: the part every source shares.

The export, the storage folder and the database (:mod:`core.formats.opencode`) all end in the same
list of message records, each with its parts; :func:`build_session` walks that list in order.

Mapping to :class:`~core.model.session.Message`:

* a user message → one ``user`` message (text parts; ``synthetic`` when all its text parts are
  synthetic; file parts as ``[Attached mime: name]``). ``user.summary`` is opencode's per-turn
  *diff* summary and is ignored — it is not a compaction.
* a user message holding a ``compaction`` part is the compaction *request*: a ``meta`` user
  message; the compaction itself is recorded when its summary arrives.
* an assistant message → one ``assistant`` message per step (``step-start`` … ``step-finish``)
  with its text, reasoning and tool calls, and the step's ``tokens`` as
  ``Usage(convention=OPENCODE)``; then one ``tool`` message per tool part of that step
  (completed → its output; error → the error text, ``is_error``; pending/running → the
  interrupted placeholder the model was sent). ``state.time.compacted`` →
  ``ToolResult.compacted_at_ms``; ``metadata.truncated`` → ``truncated_by_tool``.
  The first step keeps the message id; later steps are ``<id>#step<N>``.
* an assistant message with ``summary: true`` is a compaction summary: a
  :class:`~core.model.session.CompactionEvent` is recorded at its index (trigger and its evidence from
  the request's ``auto`` / ``overflow``, see :func:`compaction_trigger`; ``first_kept_id`` from
  ``tail_start_id``; ``tokens_before`` from the last model call before it, which is the figure
  opencode compared against its threshold).
* before an ``overflow`` compaction, the call with no usage and no ``finish`` is the request the
  provider refused: its error says so in words the overflow recogniser knows
  (:func:`mark_refused_call`).
* the session's provider, model and version are the last call's (:class:`_Calls`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from time import gmtime, strftime
from typing import Any

import orjson

from core.agents.overflow_errors import is_context_overflow_message
from core.formats.base import ProgressCallback, SessionBuilder, as_str, as_text
from core.model.read_numbers import MAX_COUNT, as_int
from core.model.session import (
    CompactionTrigger,
    Message,
    Role,
    Session,
    ToolCall,
    ToolResult,
    Usage,
    UsageConvention,
)

INTERRUPTED_TOOL_OUTPUT = "[Tool execution was interrupted]"
"""What opencode sends the model for a tool part that never finished."""
COMPACTION_REQUEST_TEXT = "What did we do so far?"
"""What opencode sends the model for a ``compaction`` part."""
OVERFLOW_ERROR_NAME = "ContextOverflowError"
"""The name opencode gives a provider error it classified as a context overflow."""
OVERFLOW_NOTE = " (opencode: context window exceeded)"
"""Added to an overflow error whose wording the overflow recogniser does not know."""
REFUSED_CALL_ERROR = (
    "the provider refused the request (context window exceeded): opencode compacted with "
    "overflow=true right after this call; no error text was recorded"
)
"""The error of a refused call that recorded none (see :func:`mark_refused_call`)."""

Record = dict[str, Any]
MessageRecords = tuple[Record, list[Record]]


_EXACT_MS = 2**32 * 1000
"""Below this many epoch milliseconds (the year 2106), ``value / 1000`` as a float is within
half a microsecond of the exact time: :func:`iso_ms` writes a whole millisecond as it is."""


_MINUTES: dict[int, str] = {}
"""``YYYY-MM-DDTHH:MM:`` of each epoch minute met lately (emptied when it passes
:data:`_MAX_MINUTES`: a session's records fall in a few thousand minutes)."""
_MAX_MINUTES = 8_192
_SECONDS: tuple[str, ...] = ()
"""``SS.`` of each second of a minute (made with the first minute: not at import)."""
_MILLIS: tuple[str, ...] = ()
"""``mmmZ`` of each millisecond of a second (made with the first minute)."""


def _minute(minute: int) -> str:
    """``YYYY-MM-DDTHH:MM:`` of an epoch minute (kept in :data:`_MINUTES`)."""
    global _SECONDS, _MILLIS  # (made once, when the first time is read)
    if not _MILLIS:
        _SECONDS = tuple(f"{second:02d}." for second in range(60))
        _MILLIS = tuple(f"{millis:03d}Z" for millis in range(1000))
    if len(_MINUTES) >= _MAX_MINUTES:
        _MINUTES.clear()
    text = _MINUTES[minute] = strftime("%Y-%m-%dT%H:%M:", gmtime(minute * 60))
    return text


def iso_ms(value: Any) -> str | None:
    """Epoch milliseconds → ISO-8601 UTC (None when not a positive number)."""
    if type(value) is int and 0 < value < _EXACT_MS:  # the usual record: no datetime object
        seconds, millis = divmod(value, 1000)
        minute, second = divmod(seconds, 60)
        return (_MINUTES.get(minute) or _minute(minute)) + _SECONDS[second] + _MILLIS[millis]
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    try:
        moment = datetime.fromtimestamp(value / 1000.0, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def as_dict(value: Any) -> Record:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def time_created(record: Record) -> int:
    """A record's ``time.created`` in epoch ms (0 when missing)."""
    return as_int(as_dict(record.get("time")).get("created"))


_TOKEN_COUNTS = ("input", "output", "reasoning", "total")
_CACHE_COUNTS = ("read", "write")


def usage_from_tokens(tokens: Any, builder: SessionBuilder, where: str) -> Usage | None:
    """``{input, output, reasoning, cache: {read, write}, total?}`` → Usage (OPENCODE); a
    figure no session holds is clamped with a ``bad-count`` diagnostic naming ``where``."""
    if not isinstance(tokens, dict):
        return None
    cache = tokens.get("cache")
    if not (
        _plain(tokens, _TOKEN_COUNTS) and (type(cache) is not dict or _plain(cache, _CACHE_COUNTS))
    ):
        tokens = builder.counts(None, f"{where} tokens", tokens, _TOKEN_COUNTS, optional=("total",))
        cache = builder.counts(
            None, f"{where} tokens.cache", as_dict(tokens.get("cache")), _CACHE_COUNTS
        )
    elif type(cache) is not dict:
        cache = {}
    get = tokens.get
    prompt = as_int(get("input")), as_int(cache.get("read")), as_int(cache.get("write"))
    output, total = as_int(get("output")), as_int(get("total"), None)
    if not (output or total or any(prompt)):
        return None  # an all-zero record (an aborted step) says nothing about the context
    return Usage(
        input=prompt[0],
        output=output,
        reasoning=as_int(get("reasoning")),
        cache_read=prompt[1],
        cache_write=prompt[2],
        total=total,
        convention=_OPENCODE_USAGE,
    )


_OPENCODE_USAGE = UsageConvention.OPENCODE


def _plain(record: Record, keys: tuple[str, ...]) -> bool:
    """Every one of ``keys`` in ``record`` is missing or a plausible count: what
    :meth:`SessionBuilder.counts` leaves as it is."""
    get = record.get
    for key in keys:
        value = get(key)
        if value is not None and (type(value) is not int or not 0 <= value <= MAX_COUNT):
            return False
    return True


# -- records → messages --------------------------------------------------------------------


def _loads(data: Any) -> Any:
    if isinstance(data, str | bytes | bytearray | memoryview):
        return orjson.loads(bytes(data) if isinstance(data, memoryview) else data)
    return data


def json_record(data: Any, what: str, builder: SessionBuilder) -> Record | None:
    """``data`` (a file's bytes, a database row's ``data`` column) as a record; None, with a
    diagnostic naming ``what``, when it is not a JSON object."""
    try:
        record = _loads(data)
    except orjson.JSONDecodeError as exc:
        builder.diagnostic(None, "invalid-json", f"{what}: invalid JSON ({exc.msg}), skipped")
        return None
    if not isinstance(record, dict):
        builder.diagnostic(None, "not-an-object", f"{what}: not a JSON object, skipped")
        return None
    return record


def _steps(parts: Iterable[Record]) -> list[list[Record]]:
    """An assistant message's parts split into model-call steps: a ``step-start`` begins a new
    step once the current one holds a part of another type (a message without parts is one
    empty step)."""
    current: list[Record] = []
    steps = [current]
    filled = False  # the current step holds a part that is not a step-start
    for part in parts:
        if part.get("type") == "step-start":
            if filled:
                current = []
                steps.append(current)
                filled = False
        else:
            filled = True
        current.append(part)
    return steps


def _error_text(error: Any) -> str | None:
    if error is None or error is False:
        return None
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        name = error.get("name")
        data = as_dict(error.get("data"))
        message = data.get("message") or error.get("message")
        if name and message:
            return f"{name}: {message}"
        return str(name or message or as_text(error))
    return as_text(error)


def call_error(error: Any) -> str | None:
    """An assistant message's ``error`` as text. When opencode classified it as a
    ``ContextOverflowError`` in words :func:`is_context_overflow_message` does not know, the text
    says so (:data:`OVERFLOW_NOTE`), so that the call is recognised as overflowed."""
    text = _error_text(error)
    if (
        text
        and as_dict(error).get("name") == OVERFLOW_ERROR_NAME
        and not is_context_overflow_message(text)
    ):
        text += OVERFLOW_NOTE
    return text


def _json_flag(value: Any) -> str:
    if isinstance(value, bool | None):
        return orjson.dumps(value).decode()
    return value if isinstance(value, str) else repr(value)


def compaction_trigger(part: Record, where: str) -> tuple[CompactionTrigger, str]:
    """Why opencode compacted, from its ``compaction`` part, and the evidence in one sentence.

    ``auto: false`` is ``/compact`` (manual); ``auto: true`` with ``overflow: true`` is the
    recovery after the provider refused a request (opencode passes ``overflow: !finish`` of the
    failed call); ``auto: true`` alone is its threshold. opencode 2 writes a ``reason`` (``auto``
    or ``manual``) on its compaction message instead (:mod:`core.formats.opencode_v2`).
    """
    if "reason" in part and "auto" not in part:
        reason = part.get("reason")
        evidence = f"compaction message reason={_json_flag(reason)} in {where}"
        if reason == "auto":
            return "auto", evidence
        return ("manual" if reason == "manual" else "unknown"), evidence
    auto = part.get("auto")
    flags = "".join(
        f" {key}={_json_flag(part[key])}" for key in ("auto", "overflow") if key in part
    )
    evidence = f"compaction part{flags} in {where}"
    if auto is False:
        return "manual", evidence
    if auto is True:
        return ("overflow" if part.get("overflow") is True else "auto"), evidence
    return "unknown", f"{evidence} (no auto flag)"


def mark_refused_call(message: Message) -> bool:
    """Make the call before an overflow compaction recognisable as overflowed.

    opencode writes ``overflow: true`` when the call before the compaction has no ``finish``: the
    provider refused it. Such a call has no usage; its error text (when any) is kept and marked,
    else :data:`REFUSED_CALL_ERROR` stands for it. False (nothing changed) for a call that
    finished or recorded a usage: that one was not refused.
    """
    if message.usage is not None or message.stop_reason:
        return False
    if not (message.error and is_context_overflow_message(message.error)):
        message.error = f"{message.error}{OVERFLOW_NOTE}" if message.error else REFUSED_CALL_ERROR
    return True


def build_session(
    builder: SessionBuilder,
    info: Record,
    records: list[MessageRecords],
    progress: ProgressCallback | None,
    where: list[str] | None = None,
) -> Session:
    """The Session of ``records`` (message records with their parts, in order) and the session
    ``info``. ``where`` names each record in evidence sentences (``messages[52]`` in an export);
    by default ``message <id>``."""
    _session_facts(builder, info)
    walker = _Walker(builder, info)
    total = len(records)
    for number, (record, parts) in enumerate(records, 1):
        walker.where = where[number - 1] if where else f"message {record.get('id')}"
        role = record.get("role")
        handler = _ROLES.get(role) if type(role) is str else None
        if handler is not None:
            handler(walker, record, parts)
        else:
            builder.diagnostic(
                None, "unknown-role", f"message {record.get('id')}: role {role!r} skipped"
            )
        if progress is not None and (number % 500 == 0 or number == total):
            progress(number, total, len(builder.messages))
    return walker.finish()


def _session_facts(builder: SessionBuilder, info: Record) -> None:
    """The id, folder, start time, title and the like of the session ``info`` record."""
    builder.session_id = str(info.get("id") or builder.session_id or "opencode")
    directory = info.get("directory")
    builder.project = directory if isinstance(directory, str) else None
    builder.started_at = iso_ms(time_created(info))
    for key in ("title", "version", "slug", "projectID", "parentID"):
        value = info.get(key)
        if isinstance(value, str) and value:
            builder.metadata[key if key != "parentID" else "parent_id"] = value


def _model_ref(model: Any) -> tuple[str | None, str | None]:
    """``(providerID, model id)`` of a model object (``{providerID, modelID | id}``)."""
    ref = as_dict(model)
    return as_str(ref.get("providerID")), as_str(ref.get("modelID")) or as_str(ref.get("id"))


class _Calls:
    """Who served the model calls, as the records say: provider, model, cost and version."""

    def __init__(self, info: Record) -> None:
        self.fallback = _model_ref(info.get("model"))  # the session's model, for a bare session
        self.models: list[tuple[str | None, str]] = []  # each (provider, model), when it changed
        self.costs = 0  # calls that recorded a cost
        self.paid = False  # some cost was not zero
        self.versions: list[str] = []
        self._version(info)

    def user(self, record: Record) -> None:
        """The model a user message asked for stands until an assistant says who answered."""
        provider, model = _model_ref(record.get("model"))
        if model and not self.models:
            self.fallback = (provider, model)
        self._version(record)

    def assistant(self, record: Record) -> None:
        """A model call's provider, model and cost. A summary's cost counts but its model does
        not: opencode may summarise with another model than the session's."""
        cost = record.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            self.costs += 1
            self.paid = self.paid or cost != 0
        self._version(record)
        model = as_str(record.get("modelID"))
        if model is None or record.get("summary") is True:
            return
        served = (as_str(record.get("providerID")), model)
        if not self.models or self.models[-1] != served:
            self.models.append(served)

    def _version(self, record: Record) -> None:
        version = as_str(record.get("version"))
        if version and (not self.versions or self.versions[-1] != version):
            self.versions.append(version)

    def apply(self, session: Session) -> None:
        """The model, provider, version and subscription facts, onto the built session."""
        provider, model = self.models[-1] if self.models else self.fallback
        session.model = model
        session.provider = provider
        session.agent_version = self.versions[-1] if self.versions else None
        if len(self.models) > 1:
            session.metadata["model_changes"] = len(self.models) - 1
            session.metadata["models"] = [f"{p or '?'}/{m}" for p, m in self.models]
        if len(self.versions) > 1:
            session.metadata["versions"] = list(self.versions)
        if provider == "openai" and self.costs and not self.paid:
            # The API bills every call; a ChatGPT login (the Codex plugin) records cost 0.
            session.metadata["subscription"] = True


class _Walker:
    """Turns the message records into messages, in order: one method per role (:data:`_ROLES`)."""

    def __init__(self, builder: SessionBuilder, info: Record) -> None:
        self.builder = builder
        self.where = ""  # the record being read, for evidence sentences
        self.pending_compaction: Record | None = None  # a request whose summary is still due
        self.pending_trigger: tuple[CompactionTrigger, str] = ("unknown", "")
        self.last_usage: Usage | None = None  # the last model call's, for tokens_before
        self.last_call: tuple[Message, str] | None = None  # the record just read, if a call
        self.calls = _Calls(info)

    def user(self, record: Record, parts: list[Record]) -> None:
        """A user message; one holding a ``compaction`` part is a compaction request."""
        compaction = next((p for p in parts if p.get("type") == "compaction"), None)
        if compaction is not None:
            self._request(compaction)
        self.last_call = None
        _add_user(self.builder, record, parts, compaction is not None)
        self.calls.user(record)

    def _request(self, part: Record) -> None:
        trigger, evidence = compaction_trigger(part, self.where)
        if trigger == "overflow" and self.last_call is not None:
            message, where = self.last_call
            if mark_refused_call(message):
                evidence += f"; {where} is the call the provider refused (no usage, no finish)"
        self.pending_compaction = part
        self.pending_trigger = (trigger, evidence)

    def assistant(self, record: Record, parts: list[Record]) -> None:
        """An assistant message: a compaction's summary, or one message per model call."""
        self.calls.assistant(record)
        if record.get("summary") is True:
            self._summary(record, parts)
            return
        if self.pending_compaction is not None:
            self.builder.info(
                None,
                "compaction-without-summary",
                f"compaction request {self.pending_compaction.get('messageID') or ''} has no "
                "summary message after it (failed or interrupted)",
            )
            self.pending_compaction = None
        step_usage, last_step = _add_assistant(self.builder, record, parts)
        if step_usage is not None:
            self.last_usage = step_usage
        self.last_call = (last_step, self.where)

    def _summary(self, record: Record, parts: list[Record]) -> None:
        """A compaction's summary: the compaction, with the trigger its request gave."""
        trigger, evidence = self.pending_trigger
        tail_start = None
        if self.pending_compaction is None:
            trigger = "unknown"
            evidence = f"a summary message with no compaction request before it in {self.where}"
        else:
            tail_start = as_str(self.pending_compaction.get("tail_start_id"))
        _add_summary(self.builder, record, parts, self.last_usage, tail_start)
        event = self.builder.compactions[-1]
        event.trigger = trigger
        event.trigger_evidence = evidence
        self.pending_compaction = None
        self.last_call = None

    def finish(self) -> Session:
        """The Session; the window is left to the caller unless the records state it."""
        if self.pending_compaction is not None:
            self.builder.info(
                None, "compaction-without-summary", "the last compaction request has no summary"
            )
        session = self.builder.build()
        self.calls.apply(session)
        parent = session.metadata.get("parent_id")
        session.parent_session_id = parent if isinstance(parent, str) else None
        return session


_ROLES: dict[str, Callable[[_Walker, Record, list[Record]], None]] = {
    "user": _Walker.user,
    "assistant": _Walker.assistant,
}
"""The method that reads the messages of each role."""


def _add_user(
    builder: SessionBuilder, record: Record, parts: list[Record], is_compaction_request: bool
) -> None:
    texts: list[str] = []
    synthetic_flags: list[bool] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text":
            if part.get("ignored"):
                continue
            text = part.get("text")
            if isinstance(text, str):
                texts.append(text)
                synthetic_flags.append(bool(part.get("synthetic")))
        elif kind == "file":
            name = part.get("filename") or part.get("url") or "file"
            texts.append(f"[Attached {part.get('mime') or 'file'}: {name}]")
            synthetic_flags.append(False)
        elif kind == "subtask":
            prompt = part.get("prompt")
            if isinstance(prompt, str):
                texts.append(prompt)
                synthetic_flags.append(False)
        elif kind == "compaction":
            texts.append(COMPACTION_REQUEST_TEXT)
    synthetic = bool(synthetic_flags) and all(synthetic_flags)
    builder.append(
        Message(
            index=0,
            role=Role.USER,
            id=str(record.get("id")),
            parent_id=as_str(record.get("parentID")),
            timestamp=iso_ms(time_created(record)),
            text="\n\n".join(texts),
            meta=is_compaction_request,
            synthetic=synthetic,
            model=as_str(as_dict(record.get("model")).get("modelID")),
        )
    )


def _add_assistant(
    builder: SessionBuilder, record: Record, parts: list[Record]
) -> tuple[Usage | None, Message]:
    """One message per step of an assistant record (each followed by its tool results): the
    last usage they recorded, and the last step's message."""
    get = record.get
    msg_id = str(get("id"))
    steps = _steps(parts)
    model = as_str(get("modelID"))
    parent_id = as_str(get("parentID"))
    created = iso_ms(time_created(record))
    error = call_error(get("error"))
    where = f"message {msg_id}"
    tokens = get("tokens")
    # The message's own tokens stand for a last step that records none: read where needed,
    # or at once when reading them writes a diagnostic (in the order the records give).
    message_usage = _UNREAD if _quiet_tokens(tokens) else usage_from_tokens(tokens, builder, where)
    finished = get("finish")
    last_usage: Usage | None = None
    count = len(steps)
    append = builder.append
    for number, step in enumerate(steps, 1):
        step_id = msg_id if number == 1 else f"{msg_id}#step{number}"
        texts: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        tools: list[tuple[Record, Record, ToolCall]] = []
        usage: Usage | None = None
        finish: str | None = None
        for part in step:
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                if isinstance(text, str) and text:
                    texts.append(text)
            elif kind == "reasoning":
                text = part.get("text")
                if isinstance(text, str) and text:
                    reasoning.append(text)
            elif kind == "tool":
                state = as_dict(part.get("state"))
                call = ToolCall(
                    id=str(part.get("callID") or part.get("id")),
                    name=str(part.get("tool") or "tool"),
                    arguments=state.get("input"),
                )
                calls.append(call)
                tools.append((part, state, call))
            elif kind == "step-finish":
                usage = usage_from_tokens(part.get("tokens"), builder, where) or usage
                reason = part.get("reason")
                finish = reason if isinstance(reason, str) else finish
        is_last = number == count
        stop = finish
        if is_last:
            if usage is None:
                if message_usage is _UNREAD:
                    message_usage = usage_from_tokens(tokens, builder, where)
                usage = message_usage  # (read by now)
            if isinstance(finished, str):
                stop = finished
        message = append(
            Message(
                index=0,
                role=Role.ASSISTANT,
                id=step_id,
                parent_id=parent_id,
                timestamp=created,
                text="\n\n".join(texts),
                reasoning="\n\n".join(reasoning),
                tool_calls=calls or (),
                usage=usage,
                model=model,
                stop_reason=stop,
                error=error if is_last else None,
            )
        )
        if usage is not None:
            last_usage = usage
        for part, state, call in tools:
            _add_tool(builder, part, state, call, step_id)
    return last_usage, message


_UNREAD: Any = object()
"""A message's tokens not read yet (:func:`_add_assistant`)."""


def _quiet_tokens(tokens: Any) -> bool:
    """:func:`usage_from_tokens` reads ``tokens`` without a diagnostic."""
    if not isinstance(tokens, dict):
        return True
    cache = tokens.get("cache")
    return _plain(tokens, _TOKEN_COUNTS) and (
        type(cache) is not dict or _plain(cache, _CACHE_COUNTS)
    )


def _add_tool(
    builder: SessionBuilder, part: Record, state: Record, call: ToolCall, parent_id: str
) -> None:
    """The result of a tool part (``state``: its state; ``call``: the call it answers)."""
    status = state.get("status")
    time = as_dict(state.get("time"))
    metadata = as_dict(state.get("metadata"))
    call_id, tool = call.id, call.name
    if status == "completed":
        output, is_error = as_text(state.get("output")), False
    elif status == "error":
        output, is_error = as_text(state.get("error")), True
    else:
        output, is_error = INTERRUPTED_TOOL_OUTPUT, True
        builder.info(
            None,
            "tool-not-finished",
            f"tool part {part.get('id')} ({tool}) is {status or 'without a state'}; "
            "shown as interrupted",
        )
    result = ToolResult(
        call_id=call_id,
        tool_name=tool,
        output=output,
        is_error=is_error,
        truncated_by_tool=metadata.get("truncated") is True,
        compacted_at_ms=as_int(time.get("compacted"), None),
    )
    builder.append(
        Message(
            index=0,
            role=Role.TOOL,
            id=str(part.get("id") or f"{parent_id}:{call_id}"),
            parent_id=parent_id,
            timestamp=iso_ms(as_int(time.get("end")) or as_int(time.get("start"))),
            tool_result=result,
        )
    )


def _add_summary(
    builder: SessionBuilder,
    record: Record,
    parts: list[Record],
    last_usage: Usage | None,
    tail_start: str | None,
) -> None:
    text = "\n\n".join(
        p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str)
    )
    builder.add_compaction(
        tokens_before=last_usage.context_tokens if last_usage else None,
        summary=text or None,
        first_kept_id=tail_start,
    )
    builder.append(
        Message(
            index=0,
            role=Role.ASSISTANT,
            id=str(record.get("id")),
            parent_id=as_str(record.get("parentID")),
            timestamp=iso_ms(time_created(record)),
            text=text,
            usage=usage_from_tokens(record.get("tokens"), builder, f"message {record.get('id')}"),
            model=as_str(record.get("modelID")),
            stop_reason=as_str(record.get("finish")),
            error=call_error(record.get("error")),
            summary=True,
        )
    )
