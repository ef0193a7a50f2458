"""ctxscope's own session format: canonical JSON Lines, written by ``ctxscope convert``.

One JSON object a line, in this order:

1. a header: ``{"type": "session", "schema": "ctxscope", "version": 1, ...}`` with the
   :class:`~core.model.session.Session` fields other than its lists (``id``, ``format`` — the format the
   session was first loaded from —, ``path``, ``model``, ``context_window``, ``window_source``,
   ``max_output_tokens``, ``project``, ``started_at``, ``metadata``, ``parent_session_id``
   when set);
2. one ``{"type": "message", ...}`` line per :class:`~core.model.session.Message`, in order, with the
   message's fields (fields at their default value are left out; ``index``, ``id`` and ``role``
   are always written);
3. ``{"type": "compaction", ...}`` lines (:class:`~core.model.session.CompactionEvent` fields), each
   written just before the message at its ``message_index``;
4. ``{"type": "diagnostic", ...}`` lines (:class:`~core.model.session.Diagnostic` fields) at the end:
   what the original loader skipped or repaired.

Reading is as tolerant as the other loaders (a bad line is a diagnostic, reading goes on) and the
round trip is lossless: ``read(write(session)) == session``. A header whose ``version`` is newer
than :data:`VERSION` is read with an info diagnostic; unknown line types are skipped with one.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import msgspec
import orjson
from pydantic import BaseModel, ValidationError

from core.formats.base import LoadError, ProgressCallback, SessionBuilder
from core.formats.jsonl import read_jsonl
from core.formats.sniffers import CTXSCOPE_SCHEMA, sniff_ctxscope_jsonl
from core.model.json_text import printable_data
from core.model.read_numbers import plausible
from core.model.session import (
    CompactionEvent,
    Diagnostic,
    Message,
    Session,
    SourceFormat,
    from_record,
    to_record,
)

FORMAT = SourceFormat.CTXSCOPE
PARTIAL_READS = True
"""``load(..., head_bytes=N)`` reads only the complete lines of the first N bytes."""

SCHEMA = CTXSCOPE_SCHEMA
"""Value of the header's ``schema`` key, which tells this format apart from pi's header."""
VERSION = 1
"""Version of the format this module writes."""

_HEADER_FIELDS = (
    "id",
    "format",
    "path",
    "model",
    "context_window",
    "window_source",
    "window_evidence",
    "window_changes",
    "max_output_tokens",
    "agent_version",
    "provider",
    "project",
    "started_at",
    "metadata",
    "parent_session_id",
)
_HEADER_WHEN_SET = (
    "window_evidence",
    "window_changes",
    "agent_version",
    "provider",
    "parent_session_id",
)
"""Header fields added in version 1's lifetime: written only when set, so older files and the
files written for sessions without them stay as they were."""


# -- writing -------------------------------------------------------------------------------


def _dumps(obj: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
    except (orjson.JSONEncodeError, UnicodeEncodeError):
        # An integer beyond 64 bits in a value kept as recorded (a tool call's arguments, read
        # by the lenient parser of a line holding two records): the standard library writes it.
        # A file name that is not UTF-8 (lone surrogates): every non-ASCII character escaped.
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        try:
            return text.encode() + b"\n"
        except UnicodeEncodeError:
            return json.dumps(printable_data(obj), separators=(",", ":")).encode() + b"\n"


def _in_field_order(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its keys in ``model``'s field order, so the bytes written do not depend on
    how a loader happened to build the objects (messages are in field order by construction:
    :func:`~core.model.session.to_record`)."""
    return {name: data[name] for name in model.model_fields if name in data}


def header_record(session: Session) -> dict[str, Any]:
    """The header line's object for ``session``."""
    data = session.model_dump(mode="json", include=set(_HEADER_FIELDS))
    for name in _HEADER_WHEN_SET:
        if data.get(name) in (None, []):
            del data[name]
    return {
        "type": "session",
        "schema": SCHEMA,
        "version": VERSION,
        **_in_field_order(Session, data),
    }


def message_record(message: Message) -> dict[str, Any]:
    """The object of one message line: identity first, then the fields not at their default
    (in field order, nested parts too)."""
    return {"type": "message", **to_record(message)}


def _event_record(kind: str, model: CompactionEvent | Diagnostic) -> dict[str, Any]:
    return {"type": kind, **_in_field_order(type(model), model.model_dump(mode="json"))}


def iter_lines(session: Session) -> Iterator[bytes]:
    """The lines of ``session`` in ctxscope JSONL, each ending with a newline."""
    yield _dumps(header_record(session))
    by_index: dict[int, list[CompactionEvent]] = {}
    for event in session.compactions:
        by_index.setdefault(event.message_index, []).append(event)
    for message in session.messages:
        for event in by_index.pop(message.index, []):
            yield _dumps(_event_record("compaction", event))
        yield _dumps(message_record(message))
    for index in sorted(by_index):  # compactions after the last message
        for event in by_index[index]:
            yield _dumps(_event_record("compaction", event))
    for diagnostic in session.diagnostics:
        yield _dumps(_event_record("diagnostic", diagnostic))


def write_session(session: Session, target: Path | str | IO[bytes] | IO[str]) -> None:
    """Write ``session`` as ctxscope JSONL to a path (atomically) or an open stream.

    A text stream (``sys.stdout``) receives UTF-8 text; a binary stream receives bytes. A path
    is written through a temporary file in the same folder, then renamed over the target.
    """
    if isinstance(target, str | Path):
        destination = Path(target)
        fd, temp_name = tempfile.mkstemp(
            prefix=f".{destination.name}.", suffix=".tmp", dir=destination.parent or Path(".")
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                for line in iter_lines(session):
                    handle.write(line)
            os.replace(temp_name, destination)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp_name)
            raise
        return
    if isinstance(target, io.TextIOBase):
        for line in iter_lines(session):
            target.write(line.decode("utf-8"))
        return
    binary: IO[bytes] = target  # type: ignore[assignment]
    for line in iter_lines(session):
        binary.write(line)


def dumps_session(session: Session) -> bytes:
    """The whole session as ctxscope JSONL bytes."""
    return b"".join(iter_lines(session))


# -- reading -------------------------------------------------------------------------------


def _error_text(exc: ValidationError | msgspec.ValidationError) -> str:
    if isinstance(exc, msgspec.ValidationError):  # "Expected `int`, got `str` - at `$.index`"
        return str(exc).replace("`", "")
    first = exc.errors()[0] if exc.errors() else None
    if first is None:
        return "invalid record"
    where = ".".join(str(p) for p in first.get("loc", ())) or "record"
    return f"{where}: {first.get('msg', 'invalid')}"


_USAGE_COUNTS = ("input", "output", "cache_read", "cache_write", "reasoning", "total")
_MESSAGE_COUNTS = ("agent_estimate_tokens", "reasoning_estimate_tokens")
_COMPACTION_COUNTS = ("tokens_before", "tokens_after")


def _checked(builder: SessionBuilder, line: int, kind: Any, body: dict[str, Any]) -> dict[str, Any]:
    """A record's figures checked before it is validated: a count no session holds is clamped
    (or, where the field may be left out, dropped) with a ``bad-count`` diagnostic, as every
    loader does."""
    if kind == "message":
        usage = body.get("usage")
        if isinstance(usage, dict):
            body["usage"] = builder.counts(line, "usage", usage, _USAGE_COUNTS, ("total",))
        for key in _MESSAGE_COUNTS:
            if not plausible(body.get(key)):
                body[key] = builder.optional_count(line, key, body[key])
        if body.get("reasoning_estimate_tokens", 0) is None:
            body["reasoning_estimate_tokens"] = 0
    elif kind == "compaction":
        for key in _COMPACTION_COUNTS:
            if not plausible(body.get(key)):
                body[key] = builder.optional_count(line, key, body[key])
    return body


def load(
    path: Path, *, progress: ProgressCallback | None = None, head_bytes: int | None = None
) -> Session:
    """Read a ctxscope JSONL file back into the Session it was written from."""
    path = Path(path)
    builder = SessionBuilder(FORMAT, path)
    header: dict[str, Any] | None = None
    messages: list[Message] = []
    compactions: list[CompactionEvent] = []
    diagnostics: list[Diagnostic] = []
    for line, _offset, record in read_jsonl(
        path, builder, progress=progress, head_bytes=head_bytes
    ):
        kind = record.get("type")
        if header is None:
            if kind != "session" or record.get("schema") != SCHEMA:
                raise LoadError(
                    f"{path}: not a ctxscope session (no ctxscope header on line {line})"
                )
            header = record
            version = record.get("version")
            if isinstance(version, int) and version > VERSION:
                builder.info(
                    line,
                    "newer-version",
                    f"format version {version} is newer than {VERSION}; read as {VERSION}",
                )
            continue
        body = _checked(builder, line, kind, {k: v for k, v in record.items() if k != "type"})
        try:
            if kind == "message":
                message = from_record(body, Message)
                if message.index != len(messages):
                    builder.diagnostic(
                        line,
                        "index-mismatch",
                        f"message index {message.index} at position {len(messages)}; renumbered",
                    )
                    message.index = len(messages)
                messages.append(message)
            elif kind == "compaction":
                compactions.append(CompactionEvent.model_validate(body))
            elif kind == "diagnostic":
                diagnostics.append(Diagnostic.model_validate(body))
            else:
                builder.info(line, "unknown-record", f"record type {kind!r} not known, skipped")
        except (ValidationError, msgspec.ValidationError) as exc:
            builder.diagnostic(
                line, "invalid-record", f"invalid {kind} record skipped ({_error_text(exc)})"
            )
    if header is None:
        raise LoadError(f"{path}: not a ctxscope session (no header)")
    fields = _header_fields(header, builder)
    fields.setdefault("id", path.stem)
    fields.setdefault("format", FORMAT.value)
    try:
        session = Session.model_validate(fields)
    except ValidationError as exc:
        raise LoadError(f"{path}: invalid ctxscope header ({_error_text(exc)})") from None
    session.messages = messages
    session.compactions = compactions
    session.diagnostics = diagnostics + builder.build().diagnostics
    return session


def _header_fields(header: dict[str, Any], builder: SessionBuilder) -> dict[str, Any]:
    """The session fields of the header, its counts checked: a figure no session holds is
    dropped with a ``bad-count`` diagnostic; a window of 0 is kept for the window's resolution,
    which sets it aside with its own warning."""
    fields = {k: header[k] for k in _HEADER_FIELDS if k in header}
    for key in ("context_window", "max_output_tokens"):
        value = fields.get(key)
        if value == 0 and key == "context_window":
            continue
        if value == 0 or not plausible(value):
            fields[key] = builder.optional_count(1, key, value if value != 0 else -1)
    return fields


sniff = sniff_ctxscope_jsonl
"""Confidence that a path is this format (:mod:`core.formats.sniffers`)."""
