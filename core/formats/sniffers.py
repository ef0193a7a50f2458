"""Every format's sniffer, in light code: telling a file's format imports no loader.

``detect_format`` asks each format how sure it is that a file is its own, from the file's first
64 KB and its place on disk. Those questions need a few key names, not the loaders (which pull in
SQLite, typed record structs and regular expressions), so they live here and
:mod:`core.formats` imports only the loader of the format chosen. Each loader module still
offers its ``sniff`` (the function of this module for its format).

opencode's storage folders, ``.json`` files, ``<db>#<session>`` names and SQLite databases are
judged by :func:`core.formats.opencode.sniff` itself (it looks at the layout on disk or opens
the database: :func:`opencode_needs_loader`); every other file only by its head, here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from core.formats.jsonl import head_records, looks_binary

Record = dict[str, Any]

CODEX_ENVELOPE_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state"}
)
"""The ``type`` of a Codex rollout line that wraps a ``payload``."""
CODEX_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
"""The response items of a Codex rollout (bare, in the legacy form)."""
QWEN_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
"""The ``type`` of a Qwen Code chat-log line."""
PI_ENTRY_TYPES = frozenset(
    {
        "message",
        "compaction",
        "model_change",
        "thinking_level_change",
        "branch_summary",
        "custom_message",
        "session_info",
        "custom",
        "label",
    }
)
"""The entry types of a pi session file (the keys of :data:`core.formats.pi._ENTRIES`)."""
PI_ROLES = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "hookMessage",
        "branchSummary",
        "compactionSummary",
    }
)
"""The message roles of a pi session file (the keys of :data:`core.formats.pi._MESSAGES`)."""
COPILOT_EVENT_PREFIXES = (
    "session.",
    "user.",
    "assistant.",
    "tool.",
    "hook.",
    "system.",
    "subagent.",
)
"""How the ``type`` of a Copilot CLI event begins."""
CTXSCOPE_SCHEMA = "ctxscope"
"""Value of the ctxscope JSONL header's ``schema`` key, which tells it apart from pi's header."""
GEMINI_METADATA_KEYS = ("sessionId", "projectHash")
"""The keys of the first line of a Gemini CLI chat in its JSON Lines form."""
SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first bytes of an SQLite database (opencode's ``opencode.db``)."""


def is_qwen_record(record: Record) -> bool:
    """Whether a JSON line is Qwen Code's: the envelope around a Gemini-style ``message.parts``
    payload, a ``tool_result`` line or a ``systemPayload``."""
    kind = record.get("type")
    if not isinstance(record.get("uuid"), str) or type(kind) is not str or kind not in QWEN_TYPES:
        return False
    message = record.get("message")
    if isinstance(message, dict) and (
        isinstance(message.get("parts"), list) or message.get("role") == "model"
    ):
        return True
    return record.get("type") == "tool_result" or "systemPayload" in record


def sniff_qwen_code(path: Path, head: bytes) -> float:
    """Confidence that ``path`` is a Qwen Code chat log."""
    records = head_records(head, 32)
    if any(is_qwen_record(record) for record in records):
        return 0.97
    return 0.0


def sniff_claude_code(path: Path, head: bytes) -> float:
    """Confidence that ``path`` is a Claude Code transcript (from its first lines and location)."""
    if not head:
        return 0.0
    in_projects = ".claude" in path.parts or "projects" in path.parts
    score = 0.0
    for record in head_records(head, 32):
        if "payload" in record:  # Codex envelope
            continue
        if is_qwen_record(record):  # Qwen Code: the same envelope around Gemini-style parts
            return 0.0
        kind = record.get("type")
        if kind in ("user", "assistant", "system") and (
            "parentUuid" in record or "sessionId" in record
        ):
            return 0.95
        if kind in ("file-history-snapshot", "queue-operation", "progress", "ai-title") or (
            kind == "summary" and "leafUuid" in record
        ):
            score = max(score, 0.8)
    if score == 0.0 and b'"parentUuid"' in head and b'"sessionId"' in head:
        score = 0.7  # first line longer than the head: judge from its keys
    if score and in_projects:
        score = min(1.0, score + 0.1)
    return score


def _codex_record_score(index: int, record: Record) -> float:
    """How much one head line looks like a legacy rollout's (0.75 header, 0.6 bare item)."""
    kind = record.get("type")
    if "record_type" in record or (
        index == 0
        and kind is None
        and "id" in record
        and "timestamp" in record
        and ("instructions" in record or "git" in record)
    ):
        return 0.75
    if kind in CODEX_ITEM_TYPES and "payload" not in record:
        content = record.get("content")
        if kind != "message" or (
            isinstance(content, list)
            and any(
                isinstance(c, dict) and c.get("type") in ("input_text", "output_text")
                for c in content
            )
        ):
            return 0.6
    return 0.0


def sniff_codex(path: Path, head: bytes) -> float:
    """Confidence that ``path`` is a Codex rollout (enveloped or legacy)."""
    if not head:
        return 0.0
    named = path.name.startswith("rollout-")
    score = 0.0
    for index, record in enumerate(head_records(head, 32)):
        if record.get("type") in CODEX_ENVELOPE_TYPES and "payload" in record:
            return 1.0 if named else 0.95
        score = max(score, _codex_record_score(index, record))
    if score == 0.0 and b'"type":"session_meta","payload"' in head:
        score = 0.8  # the first line is longer than the head
    if score and named:
        score = min(1.0, score + 0.15)
    return score


def sniff_pi(path: Path, head: bytes) -> float:
    """Confidence that ``path`` is a pi session file (header ``type: session`` with a ``cwd``)."""
    records = head_records(head, limit=8)
    if not records:
        return 0.0
    first = records[0]
    if first.get("type") != "session" or "schema" in first:
        return 0.0
    score = 0.6 if isinstance(first.get("cwd"), str) else 0.3
    if isinstance(first.get("version"), int) or "modelId" in first or "provider" in first:
        score += 0.2
    for record in records[1:]:
        kind = record.get("type")
        if kind in PI_ENTRY_TYPES:
            message = record.get("message")
            if kind != "message" or (isinstance(message, dict) and message.get("role") in PI_ROLES):
                return min(1.0, score + 0.15)
    if "/.pi/" in str(path).replace("\\", "/"):
        score += 0.1
    return min(score, 0.9)


def opencode_export_start(data: bytes) -> int:
    """Where the JSON object of an opencode export begins (-1: none)."""
    return data.find(b"{")


def sniff_opencode_export(head: bytes) -> float:
    """Confidence that a file with first bytes ``head`` is an opencode export."""
    start = opencode_export_start(head)
    if start < 0:
        return 0.0
    body = head[start:]
    first_line = body.split(b"\n", 1)[0]
    try:
        first = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        first = None
    if isinstance(first, dict):  # a complete object on one line: JSON Lines, or a compact export
        return 0.9 if isinstance(first.get("messages"), list) and "info" in first else 0.0
    top = body[:4096]
    if b'"info"' not in top:
        return 0.0
    if b'"messages"' in body and (b'"sessionID"' in body or b'"parts"' in body):
        return 0.9
    if b'"ses_' in top and (b'"directory"' in top or b'"slug"' in top):
        return 0.6
    return 0.0


def opencode_needs_loader(path: Path, head: bytes) -> bool:
    """Whether only the opencode loader's own sniffer can judge ``path``: a folder, a ``.json``
    file (of a storage folder, perhaps), a ``<db>#<session>`` name or an SQLite database. Any
    other file can only be an export, judged from its head by :func:`sniff_opencode_export`."""
    return (
        "#" in path.name or path.suffix == ".json" or head.startswith(SQLITE_MAGIC) or path.is_dir()
    )


def is_gemini_jsonl(head: bytes) -> bool:
    """The JSON Lines form of a Gemini CLI chat: the first line is a whole JSON object without
    ``messages``."""
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    try:
        obj = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(obj, dict) and not isinstance(obj.get("messages"), list)


def sniff_gemini_cli(path: Path, head: bytes) -> float:
    """Confidence that ``path`` is a Gemini CLI chat, in either form."""
    if not head or looks_binary(head):
        return 0.0
    named = "/.gemini/" in str(path).replace("\\", "/") or path.name.startswith("session-")
    if is_gemini_jsonl(head):
        records = head_records(head, 16)
        first = records[0] if records else {}
        if all(isinstance(first.get(k), str) for k in GEMINI_METADATA_KEYS) and "type" not in first:
            return 0.97
        if any("$rewindTo" in r or "$set" in r for r in records) and named:
            return 0.8
        return 0.0
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not body.startswith(b"{"):
        return 0.0
    has_messages = b'"messages"' in head
    if has_messages and b'"projectHash"' in head and b'"sessionId"' in head:
        return 0.95
    if has_messages and (b'"type": "gemini"' in head or b'"type":"gemini"' in head):
        return 0.9
    return 0.3 if has_messages and named else 0.0


def sniff_copilot(path: Path, head: bytes) -> float:
    """Confidence that ``path`` is a Copilot CLI event log: ``{type, data, id, timestamp}``
    events whose first is ``session.start`` from the ``copilot-agent`` producer."""
    records = head_records(head, limit=8)
    if not records:
        return 0.0
    first = records[0]
    data = first.get("data")
    if (
        first.get("type") == "session.start"
        and isinstance(data, dict)
        and (data.get("producer") == "copilot-agent" or "copilotVersion" in data)
    ):
        return 0.95
    events = [
        r
        for r in records
        if isinstance(r.get("type"), str)
        and r["type"].startswith(COPILOT_EVENT_PREFIXES)
        and isinstance(r.get("data"), dict)
        and "parentId" in r
    ]
    if len(events) == len(records):
        return 0.8 if "session-state" in str(path) else 0.6
    return 0.0


def sniff_ctxscope_jsonl(path: Path, head: bytes) -> float:
    """Confidence that ``path`` is ctxscope JSONL: its first line is our header."""
    records = head_records(head, limit=1)
    if (
        records
        and records[0].get("type") == "session"
        and records[0].get("schema") == CTXSCOPE_SCHEMA
    ):
        return 0.99
    return 0.0


__all__ = [
    "CODEX_ENVELOPE_TYPES",
    "CODEX_ITEM_TYPES",
    "COPILOT_EVENT_PREFIXES",
    "CTXSCOPE_SCHEMA",
    "GEMINI_METADATA_KEYS",
    "PI_ENTRY_TYPES",
    "PI_ROLES",
    "QWEN_TYPES",
    "SQLITE_MAGIC",
    "is_gemini_jsonl",
    "is_qwen_record",
    "opencode_export_start",
    "opencode_needs_loader",
    "sniff_claude_code",
    "sniff_codex",
    "sniff_copilot",
    "sniff_ctxscope_jsonl",
    "sniff_gemini_cli",
    "sniff_opencode_export",
    "sniff_pi",
    "sniff_qwen_code",
]
