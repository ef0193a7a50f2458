"""opencode 2.x's ``session_message`` rows, read as the message records of opencode 1.x.

opencode 2 (the ``packages/core`` line) keeps a session's history in the ``session_message``
table of ``opencode.db``: ``id``, ``session_id``, ``type``, ``time_created`` (``seq`` in later
builds) and ``data``, the message without its ``id`` and ``type``
(``packages/opencode/src/session/session.sql.ts``, ``SessionMessageTable``). The types and their
fields (``packages/core/src/session-message.ts``, later ``session/message.ts``):

* ``user`` ``{text, files?}``; ``synthetic`` ``{text}`` and ``system`` ``{text}`` (injected);
  ``shell`` ``{command, output}`` (the user's ``!command``);
* ``assistant`` ``{agent, model: {id, providerID}, content: [text | reasoning | tool], finish?,
  cost?, tokens?: {input, output, reasoning, cache: {read, write}}, error?: {type, message}}``,
  one per model call; a tool is ``{id, name, state: {status, input, content: [{type: text,
  text}], error?}, time: {pruned?}}``;
* ``compaction`` ``{reason: auto | manual, summary, recent | include}``: the compaction and its
  summary in one row (the kept tail is serialised text, so there is no first kept id);
* ``agent-switched``, ``model-switched``: no context.

Each row becomes the records :func:`core.formats.opencode_messages.build_session` reads: a user
or assistant record with its parts; a compaction becomes a request (a ``compaction`` part with
its ``reason``) and a summary assistant record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.formats.base import SessionBuilder, as_str, as_text
from core.formats.opencode_messages import MessageRecords, Record, as_dict

Rows = list[tuple[str, str, Record]]
"""``(id, type, data)`` of each ``session_message`` row, in order."""


def _created(data: Record) -> dict[str, Any]:
    return {"created": as_dict(data.get("time")).get("created")}


def _user(row_id: str, data: Record) -> list[MessageRecords]:
    parts: list[Record] = []
    if isinstance(data.get("text"), str):
        parts.append({"id": f"{row_id}#text", "type": "text", "text": data["text"]})
    for number, file in enumerate(data.get("files") or []):
        file = as_dict(file)
        parts.append(
            {
                "id": f"{row_id}#file{number}",
                "type": "file",
                "mime": as_str(file.get("mime")),
                "filename": as_str(file.get("name")) or as_str(file.get("filename")),
                "url": as_str(file.get("uri")) or as_str(file.get("url")),
            }
        )
    return [({"id": row_id, "role": "user", "time": _created(data)}, parts)]


def _injected(row_id: str, data: Record) -> list[MessageRecords]:
    """``synthetic`` and ``system`` text: in the context, but nobody typed it."""
    part = {
        "id": f"{row_id}#text",
        "type": "text",
        "text": as_text(data.get("text")),
        "synthetic": True,
    }
    return [({"id": row_id, "role": "user", "time": _created(data)}, [part])]


def _shell(row_id: str, data: Record) -> list[MessageRecords]:
    text = f"$ {as_text(data.get('command'))}\n{as_text(data.get('output'))}".rstrip()
    part = {"id": f"{row_id}#text", "type": "text", "text": text}
    return [({"id": row_id, "role": "user", "time": _created(data)}, [part])]


def _tool(item: Record) -> Record:
    state = as_dict(item.get("state"))
    texts = [
        as_text(c.get("text"))
        for c in state.get("content") or []
        if as_dict(c).get("type") == "text"
    ]
    converted: Record = {"status": state.get("status"), "input": state.get("input")}
    if state.get("status") == "completed":
        converted["output"] = "\n".join(texts)
    elif state.get("status") == "error":
        converted["error"] = as_text(as_dict(state.get("error")).get("message")) or "\n".join(texts)
    pruned = as_dict(item.get("time")).get("pruned")
    if pruned is not None:
        converted["time"] = {"compacted": pruned}
    return {
        "type": "tool",
        "callID": as_str(item.get("id")),
        "tool": as_str(item.get("name")),
        "state": converted,
    }


_CONTENT: dict[str, Callable[[Record], Record]] = {
    "text": lambda item: {"type": "text", "text": as_text(item.get("text"))},
    "reasoning": lambda item: {"type": "reasoning", "text": as_text(item.get("text"))},
    "tool": _tool,
}


def _assistant(row_id: str, data: Record) -> list[MessageRecords]:
    model = as_dict(data.get("model"))
    record: Record = {
        "id": row_id,
        "role": "assistant",
        "time": _created(data),
        "modelID": as_str(model.get("id")),
        "providerID": as_str(model.get("providerID")),
        "agent": data.get("agent"),
        "finish": data.get("finish"),
        "cost": data.get("cost"),
        "tokens": data.get("tokens"),
    }
    error = as_dict(data.get("error"))
    if error:
        record["error"] = as_text(error.get("message")) or as_text(error)
    parts: list[Record] = [{"type": "step-start"}]
    for item in data.get("content") or []:
        item = as_dict(item)
        convert = _CONTENT.get(str(item.get("type")))
        if convert is not None:
            parts.append(convert(item))
    if isinstance(data.get("tokens"), dict):
        parts.append(
            {"type": "step-finish", "reason": data.get("finish"), "tokens": data["tokens"]}
        )
    for number, part in enumerate(parts):
        part.setdefault("id", f"{row_id}#{number}")
    return [(record, parts)]


def _compaction(row_id: str, data: Record) -> list[MessageRecords]:
    request: Record = {"id": row_id, "role": "user", "time": _created(data)}
    part = {"id": f"{row_id}#request", "type": "compaction", "reason": data.get("reason")}
    summary: Record = {
        "id": f"{row_id}#summary",
        "role": "assistant",
        "summary": True,
        "time": _created(data),
    }
    text = {"id": f"{row_id}#summary-text", "type": "text", "text": as_text(data.get("summary"))}
    return [(request, [part]), (summary, [text])]


_TYPES: dict[str, Callable[[str, Record], list[MessageRecords]]] = {
    "user": _user,
    "synthetic": _injected,
    "system": _injected,
    "shell": _shell,
    "assistant": _assistant,
    "compaction": _compaction,
    "agent-switched": lambda row_id, data: [],
    "model-switched": lambda row_id, data: [],
}
"""How each ``session_message`` type becomes records."""


def session_message_records(
    rows: Rows, builder: SessionBuilder
) -> tuple[list[MessageRecords], list[str]]:
    """The records of ``rows``, and where each came from (``session_message <id>``)."""
    records: list[MessageRecords] = []
    where: list[str] = []
    for row_id, kind, data in rows:
        convert = _TYPES.get(kind)
        if convert is None:
            builder.info(None, "unknown-record", f"session_message {row_id}: type {kind!r} skipped")
            continue
        for record in convert(row_id, data):
            records.append(record)
            where.append(f"session_message {row_id}")
    return records, where
