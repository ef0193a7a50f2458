"""A session's sub-agents: where their transcripts are, and where in the parent they ran.

Every agent records a sub-agent's conversation as a session of its own; the loaders set
:attr:`~core.model.session.Session.parent_session_id` on the child. This module finds the other
direction, a parent's children, without loading them:

* Claude Code: ``<session>/subagents/agent-*.jsonl`` (and old ``agent-*.jsonl`` beside the
  parent), found by the loader (``metadata["subagent_files"]``); ``agent-acompact-*`` is the run
  of one of the parent's compactions (:func:`compaction_run_of`).
* Codex: rollouts whose ``session_meta`` names this thread as ``parent_thread_id`` /
  ``forked_from_id``, searched in the parent's folder and the day folders beside it.
* opencode: sessions whose ``parentID`` is this session, in the same database or storage folder.
* Copilot CLI: the ``agentId`` events of the same file (``<events.jsonl>#<agentId>``).

Only regular files are opened (:mod:`core.formats.file_kind`): a FIFO named like a transcript is passed
over, never opened.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

import orjson

from core.formats.file_kind import is_regular, open_regular
from core.model.session import Session, SourceFormat

CODEX_HEAD_BYTES = 16 * 1024
"""A Codex rollout's ``session_meta`` names its parent thread in its first few hundred bytes
(before its base instructions): this much of each candidate is read."""
MAX_CANDIDATES = 500
"""At most this many rollouts are looked at for a parent's children."""


def child_paths(session: Session) -> list[str]:
    """The paths of ``session``'s sub-agent sessions (what :func:`core.formats.load_session`
    takes), in the order the agent started them as far as the names tell; [] when it has none.
    Found once per session (Codex's are searched for on disk)."""
    cached = session.derived.get("subagent_paths")
    if cached is None:
        cached = session.derived["subagent_paths"] = tuple(_find_children(session))
    return list(cached)


def _find_children(session: Session) -> list[str]:
    metadata = session.metadata
    if session.format is SourceFormat.CLAUDE_CODE:
        return [str(p) for p in metadata.get("subagent_files") or []]
    if session.format is SourceFormat.COPILOT_CLI and session.path:
        file = session.path.rpartition("#")[0] if "#" in Path(session.path).name else session.path
        return [f"{file}#{agent}" for agent in metadata.get("subagent_ids") or []]
    if session.format is SourceFormat.CODEX and session.path:
        return _codex_children(Path(session.path), session.id)
    if session.format is SourceFormat.OPENCODE and session.path:
        return _opencode_children(session.path, session.id)
    return []


# -- Codex ------------------------------------------------------------------------------------


def _codex_folders(path: Path) -> list[Path]:
    """The parent's folder, and for ``sessions/YYYY/MM/DD`` the day folders of that month and
    the next (a child starts after its parent, maybe past midnight)."""
    folders = [path.parent]
    day = path.parent
    if day.name.isdigit() and day.parent.name.isdigit():
        month = day.parent
        folders += sorted(p for p in _dirs(month) if p.name > day.name)
        year = month.parent
        folders += [p for m in sorted(_dirs(year)) if m.name > month.name for p in _dirs(m)][:31]
    return folders


def _dirs(folder: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(folder) if e.is_dir()]
    except OSError:
        return []


def _codex_children(path: Path, thread_id: str) -> list[str]:
    pattern = re.compile(
        rb'"(?:parent_thread_id|forked_from_id)"\s*:\s*"' + re.escape(thread_id.encode()) + rb'"'
    )
    found: list[str] = []
    seen = 0
    for folder in _codex_folders(path):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if not name.endswith(".jsonl"):
                continue
            candidate = folder / name
            if candidate == path or not is_regular(candidate):
                continue
            seen += 1
            if seen > MAX_CANDIDATES:
                return found
            if _first_meta_matches(candidate, pattern):
                found.append(str(candidate))
    return found


def _first_meta_matches(path: Path, pattern: re.Pattern[bytes]) -> bool:
    """The rollout's first line (its own ``session_meta``) matches ``pattern``."""
    try:
        with open_regular(path) as f:
            head = f.read(CODEX_HEAD_BYTES)
    except OSError:
        return False
    first = head.split(b"\n", 1)[0]  # (cut by the head when the line is longer)
    return b'"session_meta"' in first and pattern.search(first) is not None


# -- opencode ---------------------------------------------------------------------------------


def _opencode_children(path: str, session_id: str) -> list[str]:
    base, _, _ = path.rpartition("#")
    if base and base.endswith(".db"):
        return _opencode_db_children(Path(base), session_id)
    file = Path(path)
    if file.suffix != ".json":
        return []
    found: list[str] = []
    try:
        names = sorted(os.listdir(file.parent))
    except OSError:
        return []
    for name in names:
        candidate = file.parent / name
        if not name.endswith(".json") or candidate == file or not is_regular(candidate):
            continue
        try:
            with open_regular(candidate) as f:
                info = orjson.loads(f.read(1024 * 1024))
        except (OSError, orjson.JSONDecodeError):
            continue
        if isinstance(info, dict) and info.get("parentID") == session_id:
            found.append(str(candidate))
    return found


def _opencode_db_children(db: Path, session_id: str) -> list[str]:
    from core.formats.opencode import connect_readonly

    try:
        conn = connect_readonly(db)
    except Exception:
        return []
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(session)")}
        if "parent_id" not in columns:
            return []
        rows = conn.execute(
            "SELECT id FROM session WHERE parent_id = ? ORDER BY id", (session_id,)
        ).fetchall()
    except Exception:
        return []
    finally:
        conn.close()
    return [f"{db}#{row[0]}" for row in rows]


# -- where a child ran in its parent ----------------------------------------------------------


def _time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else None


def calls_during(parent: Session, started: str | None, ended: str | None) -> tuple[int, int] | None:
    """The parent's model calls (0-based call indices, first and last) that ran while a child
    ran from ``started`` to ``ended`` (ISO times): the call that started it (the last one
    before ``started``) to the one that read its answer (the first after ``ended``); None when
    the times are unknown or the parent has no timed call."""
    start, end = _time(started), _time(ended) or _time(started)
    if start is None or end is None:
        return None
    first: int | None = None
    last: int | None = None
    for number, message in enumerate(parent.model_calls()):
        when = _time(message.timestamp)
        if when is None:
            continue
        if when <= start:
            first = number
        if when >= end and last is None:
            last = number
    if first is None and last is None:
        return None
    first = first if first is not None else last
    last = last if last is not None else first
    assert first is not None and last is not None
    return first, max(first, last)


COMPACTION_RUN_PREFIX = "acompact"
"""Claude Code names the transcript of a compaction's own model call ``agent-acompact-<id>``."""
COMPACTION_RUN_SECONDS = 120
"""A compaction's boundary is written within this many seconds after its run's answer."""


def is_compaction_run(child_id: str | None) -> bool:
    """``child_id`` is a Claude Code compaction's run, not a sub-agent the model started."""
    return bool(child_id) and str(child_id).startswith(COMPACTION_RUN_PREFIX)


def compaction_run_of(parent: Session, ended: str | None) -> int | None:
    """The index (in ``parent.compactions``) of the compaction a run that answered at
    ``ended`` produced: the first whose boundary message was written at or after it, within
    :data:`COMPACTION_RUN_SECONDS`."""
    end = _time(ended)
    if end is None:
        return None
    messages = parent.messages
    for number, event in enumerate(parent.compactions):
        if event.message_index >= len(messages):
            continue
        when = _time(messages[event.message_index].timestamp)
        if when is not None and 0 <= (when - end).total_seconds() <= COMPACTION_RUN_SECONDS:
            return number
    return None


# -- the parent's gauge -----------------------------------------------------------------------


_FIRST_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"([^"]{10,40})"')


def child_times(parent: Session, path: str) -> tuple[str | None, str | None]:
    """When the sub-agent at ``path`` started and when it last wrote (ISO times), read from a
    small head and tail of its file (a Copilot sub-agent's from the parent's own events)."""
    if "#" in Path(path).name and parent.format is SourceFormat.COPILOT_CLI:
        agent = path.rpartition("#")[2]
        for info in parent.metadata.get("subagents_info") or []:
            if info.get("id") == agent:
                return info.get("started_at"), info.get("ended_at")
        return None, None
    from core.formats.discovery import last_timestamp

    file = Path(path)
    if not is_regular(file):
        return None, None
    try:
        with open_regular(file) as f:
            head = f.read(64 * 1024)
    except OSError:
        return None, None
    match = _FIRST_TIMESTAMP.search(head)
    started = match.group(1).decode(errors="replace") if match else None
    last = last_timestamp(file)
    ended = datetime.fromtimestamp(last, UTC).isoformat() if last is not None else None
    return started, ended


def subagent_spans(session: Session) -> list[tuple[int, int]]:
    """Where each of ``session``'s sub-agents ran, as ``(first call, last call)`` of the parent
    (a compaction's run: the call before its compaction); computed once per session."""
    cached = session.derived.get("subagent_spans")
    if cached is not None:
        return list(cached)
    spans: list[tuple[int, int]] = []
    for path in child_paths(session):
        started, ended = child_times(session, path)
        name = Path(path).stem.removeprefix("agent-")
        if is_compaction_run(name):
            started = ended
        span = calls_during(session, started, ended)
        if span is not None:
            spans.append(span)
    session.derived["subagent_spans"] = tuple(spans)
    return spans
