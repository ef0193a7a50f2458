"""Find the agent sessions recorded on this machine, newest first, without parsing them.

Where each agent keeps its sessions (and the environment variable that moves them):

========== ====================================================================================
Claude     ``$CLAUDE_CONFIG_DIR/projects/*/*.jsonl`` (comma-separated list allowed), and the
           defaults ``~/.claude/projects`` and ``~/.config/claude/projects``. Sub-agent
           transcripts (``agent-*.jsonl``) are not listed on their own.
Codex      ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` and
           ``$CODEX_HOME/archived_sessions/rollout-*.jsonl`` (``CODEX_HOME`` defaults to
           ``~/.codex``).
pi         ``$PI_CODING_AGENT_SESSION_DIR``, else ``$PI_CODING_AGENT_DIR/sessions``, else
           ``~/.pi/agent/sessions``; one folder per working directory holding ``*.jsonl``.
opencode   ``$XDG_DATA_HOME/opencode`` (default ``~/.local/share/opencode``): every session of
           ``opencode*.db`` (listed as ``<db>#<session id>``) and the legacy
           ``storage/session/<project>/<id>.json`` files not already in a database.
Gemini CLI ``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl`` and ``*.json``
           (``GEMINI_CLI_HOME`` replaces the home folder, default ``~``). Sub-agent chats
           (``chats/<parent id>/<id>.jsonl``) are not listed on their own.
Qwen Code  ``<base>/projects/<sanitised cwd>/chats/<session id>.jsonl`` where ``<base>`` is
           ``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else ``~/.qwen``.
========== ====================================================================================

Codex rollouts compressed by Codex 0.137 and later (``rollout-*.jsonl.zst``) are listed like
plain ones; their head is decompressed as it is read, and their own time is the file's
modification time (a compressed file's end cannot be read without reading all of it).

Discovery stats files and reads at most a small head of the ones it returns (for the project and
the first prompt) and a small tail (for the session's own time: its last timestamp); it never
parses a whole transcript and never writes anything. Only regular files are listed (a FIFO, a
device or a socket with a session's name is skipped, never opened). A folder it
cannot read is skipped silently: discovery is a convenience, not a check.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from core.formats.base import as_str
from core.formats.compressed import is_compressed_name, open_session
from core.formats.file_kind import open_regular
from core.model.session import SourceFormat

HEAD_BYTES = 64 * 1024
"""How much of a transcript is read for its title and project."""
CODEX_HEAD_BYTES = 256 * 1024
"""Codex puts the whole base prompt in its first line, so its head budget is larger."""
TITLE_CHARS = 120
"""Titles are cut to this many characters (on one line)."""
TAIL_BYTES = (32 * 1024, 256 * 1024)
"""How much of a transcript's end is read for its last timestamp: the first size, then the
second when the first holds none (one long last line)."""


class DiscoveredSession(BaseModel):
    """One session found on disk (or in an opencode database)."""

    path: str
    """What to pass to ``ctxscope`` / ``load_session``: a file, or ``<opencode.db>#<id>``."""
    format: SourceFormat
    project: str | None = None
    """Working directory the agent ran in, when known."""
    modified: float
    """Last modification, epoch seconds."""
    size_bytes: int | None = None
    """Size of the transcript file; None for a session inside a database."""
    title: str | None = None
    """A title the agent stored, or the first user prompt, on one line."""
    session_id: str | None = None
    parent_session_id: str | None = None
    """The session that started this one (a sub-agent's parent), when the layout or a small
    head of the file says so; None for a top-level session."""
    last_active: float | None = None
    """The session's own time: its last recorded timestamp, epoch seconds (None: the end of the
    file records none, or it was not read)."""

    @property
    def when(self) -> float:
        """The session's own time when known, else the file's modification time."""
        return self.last_active if self.last_active is not None else self.modified

    @property
    def modified_iso(self) -> str:
        """The modification time as local ISO-8601 (seconds)."""
        return _iso(self.modified)

    @property
    def when_iso(self) -> str:
        """:attr:`when` as local ISO-8601 (seconds)."""
        return _iso(self.when)


LATEST_EPOCH_MS = 253_402_300_799_000
"""The last millisecond of the year 9999: a later recorded time (``9e18``) is not a time."""


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).astimezone().isoformat(timespec="seconds")


# -- locations ---------------------------------------------------------------------------


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


def claude_project_dirs() -> list[Path]:
    """The ``projects`` folders Claude Code may write to (env override first)."""
    roots: list[Path] = []
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "")
    for part in configured.split(","):
        if part.strip():
            roots.append(Path(part.strip()).expanduser() / "projects")
    roots.append(_home() / ".claude" / "projects")
    xdg_config = os.environ.get("XDG_CONFIG_HOME")
    config_home = Path(xdg_config) if xdg_config else _home() / ".config"
    roots.append(config_home / "claude" / "projects")
    return _unique(roots)


def codex_home() -> Path:
    """``$CODEX_HOME`` or ``~/.codex``."""
    configured = os.environ.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else _home() / ".codex"


def pi_sessions_dir() -> Path:
    """pi's session folder, honouring ``PI_CODING_AGENT_SESSION_DIR`` and ``PI_CODING_AGENT_DIR``."""
    session_dir = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    if session_dir:
        return Path(session_dir).expanduser()
    agent_dir = os.environ.get("PI_CODING_AGENT_DIR")
    if agent_dir:
        return Path(agent_dir).expanduser() / "sessions"
    return _home() / ".pi" / "agent" / "sessions"


def copilot_home() -> Path:
    """``$COPILOT_HOME`` or ``~/.copilot`` (GitHub's Copilot CLI configuration directory
    reference names ``~/.copilot``; the override is the one Copilot CLI honours for its root)."""
    configured = os.environ.get("COPILOT_HOME")
    return Path(configured).expanduser() if configured else _home() / ".copilot"


def opencode_data_dir() -> Path:
    """``$XDG_DATA_HOME/opencode`` (default ``~/.local/share/opencode``)."""
    xdg_data = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg_data).expanduser() if xdg_data else _home() / ".local" / "share"
    return base / "opencode"


def gemini_tmp_dir() -> Path:
    """Gemini CLI's ``tmp`` folder: ``$GEMINI_CLI_HOME/.gemini/tmp`` (the variable replaces the
    home folder), else ``~/.gemini/tmp``."""
    configured = os.environ.get("GEMINI_CLI_HOME")
    home = Path(configured).expanduser() if configured else _home()
    return home / ".gemini" / "tmp"


def qwen_projects_dir() -> Path:
    """Qwen Code's ``projects`` folder: under ``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else
    ``~/.qwen``."""
    for name in ("QWEN_RUNTIME_DIR", "QWEN_HOME"):
        configured = os.environ.get(name)
        if configured:
            return Path(configured).expanduser() / "projects"
    return _home() / ".qwen" / "projects"


def _unique(paths: list[Path]) -> list[Path]:
    seen: set[str] = set()
    out: list[Path] = []
    for path in paths:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


# -- safe file system walking ------------------------------------------------------------


def _entries(folder: Path) -> Iterator[os.DirEntry[str]]:
    """Directory entries of ``folder``; nothing when it is missing or unreadable."""
    try:
        with os.scandir(folder) as it:
            yield from list(it)
    except OSError:
        return


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_regular(entry: os.DirEntry[str]) -> bool:
    """A regular file (a link to one too), by ``stat``: a FIFO, a device or a socket is never
    listed, so nothing ever opens one (opening a FIFO blocks until someone writes to it)."""
    try:
        return entry.is_file()
    except OSError:
        return False


def _files(
    folder: Path, depth: int, suffix: str | tuple[str, ...], prefix: str = ""
) -> Iterator[Path]:
    """Regular files named ``prefix*suffix`` (one of the suffixes) exactly ``depth`` folders
    below ``folder``."""
    if depth == 0:
        for entry in _entries(folder):
            if entry.name.endswith(suffix) and entry.name.startswith(prefix) and _is_regular(entry):
                yield Path(entry.path)
        return
    for entry in _entries(folder):
        if _is_dir(entry):
            yield from _files(Path(entry.path), depth - 1, suffix, prefix)


def _found(path: Path, fmt: SourceFormat) -> DiscoveredSession | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return DiscoveredSession(
        path=str(path), format=fmt, modified=st.st_mtime, size_bytes=st.st_size
    )


# -- per agent ----------------------------------------------------------------------------


def _claude() -> Iterator[DiscoveredSession]:
    for root in claude_project_dirs():
        for path in _files(root, 1, ".jsonl"):
            if path.name.startswith("agent-"):
                continue  # an old-style sub-agent transcript; it belongs to its parent session
            found = _found(path, SourceFormat.CLAUDE_CODE)
            if found:
                found.session_id = path.stem
                yield found
        # <project>/<session id>/subagents/agent-<id>.jsonl: a sub-agent of that session
        for path in _files(root, 3, ".jsonl", "agent-"):
            if path.parent.name != "subagents":
                continue
            found = _found(path, SourceFormat.CLAUDE_CODE)
            if found:
                found.session_id = path.stem.removeprefix("agent-")
                found.parent_session_id = path.parent.parent.name
                yield found


def _copilot() -> Iterator[DiscoveredSession]:
    for path in _files(copilot_home() / "session-state", 1, "events.jsonl"):
        if path.name != "events.jsonl":
            continue
        found = _found(path, SourceFormat.COPILOT_CLI)
        if found:
            found.session_id = path.parent.name
            yield found


def _codex() -> Iterator[DiscoveredSession]:
    home = codex_home()
    paths = list(_files(home / "sessions", 3, _ROLLOUT_SUFFIXES, "rollout-"))
    paths += list(_files(home / "archived_sessions", 0, _ROLLOUT_SUFFIXES, "rollout-"))
    for path in paths:
        found = _found(path, SourceFormat.CODEX)
        if found:
            yield found


_ROLLOUT_SUFFIXES = (".jsonl", ".jsonl.zst")
"""A rollout as Codex writes it, and as it compresses it after a week idle."""


def _gemini() -> Iterator[DiscoveredSession]:
    for project in _entries(gemini_tmp_dir()):
        if not _is_dir(project):
            continue
        chats = Path(project.path) / "chats"
        for path in _files(chats, 0, (".jsonl", ".json"), "session-"):
            found = _found(path, SourceFormat.GEMINI_CLI)
            if found:
                yield found


def _qwen() -> Iterator[DiscoveredSession]:
    for project in _entries(qwen_projects_dir()):
        if not _is_dir(project):
            continue
        for path in _files(Path(project.path) / "chats", 0, ".jsonl"):
            found = _found(path, SourceFormat.QWEN_CODE)
            if found:
                found.session_id = path.stem
                yield found


def _pi() -> Iterator[DiscoveredSession]:
    root = pi_sessions_dir()
    for path in [*_files(root, 1, ".jsonl"), *_files(root, 0, ".jsonl")]:
        found = _found(path, SourceFormat.PI)
        if found:
            yield found


def _opencode() -> Iterator[DiscoveredSession]:
    data_dir = opencode_data_dir()
    seen_ids: set[str] = set()
    for entry in sorted(_entries(data_dir), key=lambda e: e.name):
        if entry.name.startswith("opencode") and entry.name.endswith(".db") and _is_regular(entry):
            for in_db in _opencode_db_sessions(Path(entry.path)):
                if in_db.session_id:
                    seen_ids.add(in_db.session_id)
                yield in_db
    for path in _files(data_dir / "storage" / "session", 1, ".json"):
        if path.stem in seen_ids:
            continue  # already migrated into the database
        found = _found(path, SourceFormat.OPENCODE)
        if found is None:
            continue
        found.session_id = path.stem
        info = _read_small_json(path)
        if isinstance(info, dict):
            parent = info.get("parentID")
            found.parent_session_id = parent if isinstance(parent, str) and parent else None
            found.title = _one_line(info.get("title"))
            directory = info.get("directory")
            found.project = directory if isinstance(directory, str) else None
            found.last_active = _opencode_time(info.get("time"))
        yield found


def _opencode_time(times: Any) -> float | None:
    """An opencode session's own time (``time.updated``, else ``time.created``; ms)."""
    if not isinstance(times, dict):
        return None
    value = times.get("updated") or times.get("created")
    return _epoch(value) if isinstance(value, int | float) else None


def _opencode_db_sessions(db_path: Path) -> list[DiscoveredSession]:
    """Top-level sessions of an opencode database, read-only; [] when it cannot be read."""
    from core.formats.opencode import connect_readonly

    try:
        conn = connect_readonly(db_path)
    except Exception:
        return []
    found: list[DiscoveredSession] = []
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(session)")}
        if "id" not in columns:
            return []
        wanted = [
            c
            for c in ("title", "directory", "time_updated", "time_created", "parent_id")
            if c in columns
        ]
        query = f"SELECT id, {', '.join(wanted) or 'NULL'} FROM session"
        try:
            fallback_mtime = db_path.stat().st_mtime
        except OSError:
            fallback_mtime = 0.0
        for row in conn.execute(query):
            record = dict(zip(["id", *wanted], row, strict=False))
            updated = record.get("time_updated") or record.get("time_created")
            plausible = isinstance(updated, int | float) and 0 <= updated <= LATEST_EPOCH_MS
            modified = float(updated) / 1000.0 if plausible and updated else fallback_mtime
            directory = record.get("directory")
            found.append(
                DiscoveredSession(
                    path=f"{db_path}#{record['id']}",
                    format=SourceFormat.OPENCODE,
                    project=directory if isinstance(directory, str) else None,
                    modified=modified,
                    title=_one_line(record.get("title")),
                    session_id=str(record["id"]),
                    parent_session_id=as_str(record.get("parent_id")),
                    last_active=modified if plausible else None,
                )
            )
    except sqlite3.Error:
        return found
    finally:
        conn.close()
    return found


# -- titles and projects from a small head -------------------------------------------------


def _read_small_json(path: Path, max_bytes: int = HEAD_BYTES) -> Any:
    try:
        with open_regular(path) as handle:
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            return None
        return orjson.loads(data)
    except (OSError, orjson.JSONDecodeError):
        return None


def _head_records(path: Path, max_bytes: int) -> Iterator[dict[str, Any]]:
    """Parsed complete JSON lines within the first ``max_bytes`` of ``path``."""
    try:
        with open_session(path) if is_compressed_name(path) else open_regular(path) as handle:
            data = handle.read(max_bytes)
            at_eof = len(data) < max_bytes
    except OSError:
        return
    lines = data.split(b"\n")
    if not at_eof:
        lines = lines[:-1]  # the last piece may be cut short
    for line in lines:
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            yield record


def _one_line(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    flat = " ".join(text.split())
    if not flat:
        return None
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1] + "…"


def _content_text(content: Any) -> str | None:
    """Text of a message content: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            block.get("text")
            for block in content
            if isinstance(block, dict)
            and block.get("type") in {"text", "input_text"}
            and isinstance(block.get("text"), str)
        ]
        return "\n".join(t for t in texts if t) or None
    return None


_INJECTED_PREFIXES = (
    "<environment_context",
    "<user_instructions",
    "<permissions",
    "# agents.md",
    "<command-",
    "<local-command",
    "caveat:",
    "<system-reminder",
)


def _is_injected(text: str) -> bool:
    return text.lstrip().lower().startswith(_INJECTED_PREFIXES)


def _describe_claude(found: DiscoveredSession) -> None:
    for record in _head_records(Path(found.path), HEAD_BYTES):
        kind = record.get("type")
        if kind == "summary" and found.title is None:
            found.title = _one_line(record.get("summary"))
        if found.project is None and isinstance(record.get("cwd"), str):
            found.project = record["cwd"]
        if (
            kind == "user"
            and found.title is None
            and not record.get("isMeta")
            and not record.get("isCompactSummary")
            and not record.get("isSidechain")
        ):
            message = record.get("message")
            text = _content_text(message.get("content")) if isinstance(message, dict) else None
            if text and not _is_injected(text):
                found.title = _one_line(text)
        if found.title and found.project:
            return


def _describe_codex(found: DiscoveredSession) -> None:
    fallback: str | None = None
    for record in _head_records(Path(found.path), CODEX_HEAD_BYTES):
        payload = record.get("payload") if "payload" in record else record
        if not isinstance(payload, dict):
            continue
        kind, inner = record.get("type"), payload.get("type")
        if kind == "session_meta" or (kind is None and "instructions" in record):
            if found.session_id is None:
                found.parent_session_id = _codex_parent(payload)
            found.session_id = found.session_id or as_str(payload.get("id"))
            found.project = found.project or as_str(payload.get("cwd"))
        elif kind == "turn_context":
            found.project = found.project or as_str(payload.get("cwd"))
        elif kind == "event_msg" and inner == "user_message":
            text = as_str(payload.get("message"))
            if text and not _is_injected(text):
                found.title = _one_line(text)
        elif inner == "message" and payload.get("role") == "user" and fallback is None:
            text = _content_text(payload.get("content"))
            if text and not _is_injected(text):
                fallback = text
        if found.title and found.project:
            return
    if found.title is None:
        found.title = _one_line(fallback)


def _codex_parent(meta: dict[str, Any]) -> str | None:
    """The thread that spawned a Codex sub-agent (``source.subagent.thread_spawn``)."""
    source = meta.get("source")
    spawn = source.get("subagent") if isinstance(source, dict) else None
    if isinstance(spawn, dict) and isinstance(spawn.get("thread_spawn"), dict):
        return as_str(spawn["thread_spawn"].get("parent_thread_id"))
    return None


def _describe_pi(found: DiscoveredSession) -> None:
    for record in _head_records(Path(found.path), HEAD_BYTES):
        kind = record.get("type")
        if kind == "session":
            found.session_id = as_str(record.get("id"))
            found.project = as_str(record.get("cwd"))
        elif kind == "session_info" and as_str(record.get("name")):
            found.title = _one_line(record.get("name"))
            return
        elif kind == "message" and found.title is None:
            message = record.get("message")
            if isinstance(message, dict) and message.get("role") == "user":
                found.title = _one_line(_content_text(message.get("content")))
    return


def _describe_copilot(found: DiscoveredSession) -> None:
    """A Copilot CLI log's folder (``session.start``'s ``context.cwd``) and its first prompt
    (the main agent's first ``user.message``; a sub-agent's carry an ``agentId``)."""
    for record in _head_records(Path(found.path), HEAD_BYTES):
        data = record.get("data")
        if not isinstance(data, dict):
            continue
        kind = record.get("type")
        if kind == "session.start":
            context = data.get("context")
            if isinstance(context, dict):
                found.project = found.project or as_str(context.get("cwd"))
        elif kind == "user.message" and "agentId" not in record:
            found.title = _one_line(data.get("content"))
            return


# -- the session's own time, from the end of its file ------------------------------------------

_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*(?:"([^"]{10,40})"|(\d{10,13}(?:\.\d+)?))')
"""A record's timestamp as Claude Code, Codex and pi write it: ISO-8601 text, or epoch seconds
or milliseconds (pi's messages)."""


def last_timestamp(path: Path) -> float | None:
    """The last timestamp recorded near the end of a JSONL transcript (epoch seconds), read from
    its tail only; None when there is none there (or the file is compressed)."""
    if is_compressed_name(path):
        return None
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            for length in TAIL_BYTES:
                handle.seek(max(0, size - length))
                found = _last_match(handle.read(length))
                if found is not None or length >= size:
                    return found
    except OSError:
        return None
    return None


def _last_match(data: bytes) -> float | None:
    for match in reversed(list(_TIMESTAMP.finditer(data))):
        iso, number = match.groups()
        value = _parse_iso(iso.decode("utf-8", "replace")) if iso else _epoch(float(number))
        if value is not None:
            return value
    return None


def _parse_iso(text: str) -> float | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def _epoch(value: float) -> float:
    """Epoch seconds from seconds or milliseconds."""
    return value / 1000.0 if value > 100_000_000_000 else float(value)


def _describe_gemini(found: DiscoveredSession) -> None:
    """The id, first prompt and (for the JSON Lines form) the directory of a Gemini CLI chat;
    the older single-JSON form is read whole when it is small, else its id is found in its
    head."""
    if found.path.endswith(".json"):
        _describe_gemini_single(found)
        return
    for record in _head_records(Path(found.path), HEAD_BYTES):
        if isinstance(record.get("sessionId"), str) and "projectHash" in record:
            found.session_id = record["sessionId"]
            directories = record.get("directories")
            if isinstance(directories, list) and directories and isinstance(directories[0], str):
                found.project = directories[0]
        elif record.get("type") == "user" and found.title is None:
            text = _gemini_text(record.get("content"))
            if text:
                found.title = _one_line(text)
        if found.title and found.session_id:
            return


_GEMINI_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"]{1,200})"')


def _describe_gemini_single(found: DiscoveredSession) -> None:
    record = _read_small_json(Path(found.path))
    if not isinstance(record, dict):
        with contextlib.suppress(OSError), open_regular(found.path) as handle:
            match = _GEMINI_SESSION_ID.search(handle.read(HEAD_BYTES))
            if match:
                found.session_id = match.group(1).decode("utf-8", "replace")
        return
    found.session_id = as_str(record.get("sessionId"))
    messages = record.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("type") == "user":
            text = _gemini_text(message.get("content"))
            if text:
                found.title = _one_line(text)
                return


def _describe_qwen(found: DiscoveredSession) -> None:
    """The working directory and first prompt of a Qwen Code chat log."""
    for record in _head_records(Path(found.path), HEAD_BYTES):
        found.project = found.project or as_str(record.get("cwd"))
        message = record.get("message")
        if record.get("type") == "user" and found.title is None and isinstance(message, dict):
            text = _gemini_text(message.get("parts"))
            if text:
                found.title = _one_line(text)
        if found.title and found.project:
            return


def _gemini_text(content: Any) -> str | None:
    """The text of Gemini-style content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and not p.get("thought")]
        return "\n".join(t for t in texts if isinstance(t, str) and t) or None
    return None


_DESCRIBERS = {
    SourceFormat.CLAUDE_CODE: _describe_claude,
    SourceFormat.CODEX: _describe_codex,
    SourceFormat.PI: _describe_pi,
    SourceFormat.GEMINI_CLI: _describe_gemini,
    SourceFormat.QWEN_CODE: _describe_qwen,
    SourceFormat.COPILOT_CLI: _describe_copilot,
}


# -- entry point ---------------------------------------------------------------------------


def discover_sessions(
    *, limit: int | None = None, describe: bool = True
) -> list[DiscoveredSession]:
    """Sessions of Claude Code, Codex, pi, opencode, Gemini CLI, Qwen Code and Copilot CLI found
    on this machine, newest first (sub-agents too, with their ``parent_session_id``).

    ``limit`` keeps the newest N by the session's own time (files are read newest first until no
    older file can hold a newer session; with ``describe=False``, by modification time). With
    ``describe`` (the default) the project and a title (the stored title or the first user prompt) are read from a small head
    of each *returned* file, and the session's own time (:attr:`DiscoveredSession.last_active`)
    from a small tail; they are then ordered by that time (the modification time where the file
    records none). Nothing else is read. Unreadable folders and files are skipped.
    """
    found: list[DiscoveredSession] = []
    for source in (_claude, _codex, _pi, _opencode, _gemini, _qwen, _copilot):
        with contextlib.suppress(OSError):
            found.extend(source())
    found.sort(key=lambda s: s.modified, reverse=True)
    if not describe:
        return found if limit is None else found[: max(limit, 0)]
    if limit is not None:
        found = _newest_by_session_time(found, max(limit, 0))
    for session in found:
        describer = _DESCRIBERS.get(session.format)
        if describer is not None and session.title is None:
            with contextlib.suppress(OSError, ValueError):
                describer(session)
        _read_session_time(session)
    found.sort(key=lambda s: s.when, reverse=True)
    return found


def _read_session_time(session: DiscoveredSession) -> None:
    """Set the session's own last time from a small tail of its file (once)."""
    if session.format in _DESCRIBERS and session.last_active is None:
        session.last_active = last_timestamp(Path(session.path))


def _newest_by_session_time(
    by_mtime: list[DiscoveredSession], limit: int
) -> list[DiscoveredSession]:
    """The ``limit`` sessions newest by their own time, from a list newest by file time.

    A file is written when its session records something, so a session's time is no later
    than its file's: once ``limit`` sessions are at least as new as the next file, no later
    file can be newer. A copied file (new file time, old session time) is read past, not kept.
    """
    kept: list[DiscoveredSession] = []
    if limit <= 0:
        return kept
    for session in by_mtime:
        if len(kept) >= limit and kept[limit - 1].when >= session.modified:
            break
        _read_session_time(session)
        kept.append(session)
        kept.sort(key=lambda s: s.when, reverse=True)
    return kept[:limit]
