"""opencode sessions: ``opencode export`` JSON, the legacy storage folder and ``opencode.db``.

Three sources hold the same records (a session ``info``, its messages, and each message's parts):

* **export JSON** — the output of ``opencode export [id]``:
  ``{"info": {...}, "messages": [{"info": {...}, "parts": [...]}, ...]}``. Anything before the
  first ``{`` (a progress line that ended up in the file) is ignored.
* **storage folder** (opencode ≤ 1.1): one JSON file per session, message and part, in the 1.x
  layout (``storage/session/<project>/<id>.json``, ``storage/message/<session>/<msg>.json``,
  ``storage/part/<msg>/<part>.json``) or the 0.x one (``project/<folder>/storage/session/info``,
  ``…/session/message``, ``…/session/part``): see :mod:`core.formats.opencode_storage`. Pass the
  ``storage`` folder, its parent or one session's JSON file.
* **SQLite** ``opencode.db`` (opencode ≥ 1.2): tables ``session``, ``message`` and ``part``
  whose ``data`` column holds the record without its ids (merged back here). The database is
  opened read-only (``mode=ro``); when it is locked or cannot be opened that way, it is opened
  ``immutable`` and a diagnostic says recent uncheckpointed writes may be missing.

A folder or database holds many sessions: the newest top-level one (not a sub-agent session) is
loaded, or the one named after a ``#``: ``opencode.db#ses_abc`` / ``storage#ses_abc``.

The records become messages in :mod:`core.formats.opencode_messages`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import orjson

from core.formats.base import LoadError, ProgressCallback, SessionBuilder
from core.formats.opencode_messages import (
    INTERRUPTED_TOOL_OUTPUT as INTERRUPTED_TOOL_OUTPUT,
)
from core.formats.opencode_messages import (
    MessageRecords,
    Record,
    as_dict,
    build_session,
    json_record,
)
from core.formats.opencode_storage import load_storage, storage_layout
from core.models import Session, SourceFormat

FORMAT = SourceFormat.OPENCODE
PARTIAL_READS = False
"""An export is one JSON document and a database or folder is not read in order: no first part."""

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 1.0
"""How long a read waits on a locked database before falling back to an immutable open."""


def _split_fragment(path: Path) -> tuple[Path, str | None]:
    """``x.db#ses_1`` → ``(x.db, "ses_1")`` when ``x.db`` exists and the whole name does not."""
    text = str(path)
    if "#" in path.name and not path.exists():
        base, _, fragment = text.rpartition("#")
        if base and Path(base).exists():
            return Path(base), fragment or None
    return path, None


# -- SQLite --------------------------------------------------------------------------------


def connect_readonly(db_path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    """Open an SQLite database read-only (``mode=ro``, or ``immutable=1``), never writing it.

    The connection is checked with one query, so a locked or unreadable database raises
    :class:`sqlite3.Error` here rather than later.
    """
    uri = db_path.resolve().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def _open_db(db_path: Path, builder: SessionBuilder) -> sqlite3.Connection:
    try:
        return connect_readonly(db_path)
    except sqlite3.Error as exc:
        first_error = str(exc)
        if "not a database" in first_error or "malformed" in first_error:
            raise LoadError(f"{db_path}: not a readable SQLite database ({first_error})") from None
    try:
        conn = connect_readonly(db_path, immutable=True)
    except sqlite3.Error as exc:
        raise LoadError(
            f"{db_path}: cannot open the opencode database read-only ({first_error}; "
            f"immutable open: {exc})"
        ) from None
    builder.diagnostic(
        None,
        "db-immutable",
        f"the database could not be opened normally ({first_error}); it was read as an "
        "immutable snapshot, so writes still in its write-ahead log may be missing",
    )
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


def _check_schema(conn: sqlite3.Connection, db_path: Path) -> dict[str, set[str]]:
    tables = {
        str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    needed = {
        "session": {"id"},
        "message": {"id", "session_id", "data"},
        "part": {"id", "message_id", "data"},
    }
    columns: dict[str, set[str]] = {}
    problems: list[str] = []
    for table, required in needed.items():
        if table not in tables:
            problems.append(f"no '{table}' table")
            continue
        columns[table] = _columns(conn, table)
        missing = required - columns[table]
        if missing:
            problems.append(f"'{table}' lacks {', '.join(sorted(missing))}")
    if problems:
        found = ", ".join(sorted(tables)) or "none"
        raise LoadError(
            f"{db_path}: not an opencode database this version of ctxscope can read "
            f"({'; '.join(problems)}; tables found: {found})"
        )
    return columns


def _choose_db_session(
    conn: sqlite3.Connection, columns: set[str], wanted: str | None, db_path: Path
) -> Record:
    fields = [
        c
        for c in (
            "id",
            "title",
            "directory",
            "parent_id",
            "version",
            "time_created",
            "time_updated",
            "slug",
            "project_id",
        )
        if c in columns
    ]
    select = f"SELECT {', '.join(fields)} FROM session"
    if wanted is not None:
        row = conn.execute(select + " WHERE id = ?", (wanted,)).fetchone()
        if row is None:
            raise LoadError(f"{db_path}: no session {wanted!r} in this database")
        return dict(zip(fields, row, strict=True))
    order = next((c for c in ("time_updated", "time_created") if c in columns), "id")
    queries = [select + f" ORDER BY {order} DESC, id DESC LIMIT 1"]
    if "parent_id" in columns:
        queries.insert(
            0, select + f" WHERE parent_id IS NULL ORDER BY {order} DESC, id DESC LIMIT 1"
        )
    for query in queries:
        row = conn.execute(query).fetchone()
        if row is not None:
            return dict(zip(fields, row, strict=True))
    raise LoadError(f"{db_path}: the opencode database holds no session")


def _db_records(
    conn: sqlite3.Connection,
    columns: dict[str, set[str]],
    session_id: str,
    builder: SessionBuilder,
) -> list[MessageRecords]:
    message_order = "time_created, id" if "time_created" in columns["message"] else "id"
    messages: list[MessageRecords] = []
    by_id: dict[str, list[Record]] = {}
    for msg_id, data in conn.execute(
        f"SELECT id, data FROM message WHERE session_id = ? ORDER BY {message_order}",
        (session_id,),
    ):
        record = json_record(data, f"message {msg_id}", builder)
        if record is None:
            continue
        record = {**record, "id": msg_id, "sessionID": session_id}
        parts: list[Record] = []
        by_id[str(msg_id)] = parts
        messages.append((record, parts))
    if "session_id" in columns["part"]:
        part_rows = conn.execute(
            "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id",
            (session_id,),
        )
    else:
        part_rows = conn.execute(
            "SELECT id, message_id, data FROM part WHERE message_id IN "
            "(SELECT id FROM message WHERE session_id = ?) ORDER BY message_id, id",
            (session_id,),
        )
    for part_id, msg_id, data in part_rows:
        record = json_record(data, f"part {part_id}", builder)
        if record is None:
            continue
        owner = by_id.get(str(msg_id))
        if owner is None:
            builder.diagnostic(
                None, "orphan-part", f"part {part_id}: its message {msg_id} is missing"
            )
            continue
        owner.append({**record, "id": part_id, "sessionID": session_id, "messageID": msg_id})
    return messages


def _load_db(db_path: Path, wanted: str | None, progress: ProgressCallback | None) -> Session:
    builder = SessionBuilder(FORMAT, db_path)
    conn = _open_db(db_path, builder)
    try:
        try:
            columns = _check_schema(conn, db_path)
            row = _choose_db_session(conn, columns["session"], wanted, db_path)
            session_id = str(row["id"])
            records = _db_records(conn, columns, session_id, builder)
            sessions_in_db = conn.execute("SELECT count(*) FROM session").fetchone()[0]
        except sqlite3.Error as exc:
            raise LoadError(f"{db_path}: cannot read the opencode database ({exc})") from None
    finally:
        conn.close()
    builder.path = f"{db_path}#{session_id}"
    info: Record = {
        "id": session_id,
        "title": row.get("title"),
        "directory": row.get("directory"),
        "parentID": row.get("parent_id"),
        "version": row.get("version"),
        "slug": row.get("slug"),
        "projectID": row.get("project_id"),
        "time": {"created": row.get("time_created"), "updated": row.get("time_updated")},
    }
    builder.metadata["source"] = "sqlite"
    builder.metadata["sessions_in_source"] = int(sessions_in_db)
    if not records:
        builder.diagnostic(
            None,
            "no-messages",
            f"session {session_id} has no rows in the message table (a newer opencode may keep "
            "it in a table ctxscope does not read)",
        )
    return build_session(builder, info, records, progress)


# -- export JSON ---------------------------------------------------------------------------


def _export_start(data: bytes) -> int:
    return data.find(b"{")


def _load_export(path: Path, progress: ProgressCallback | None) -> Session:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    builder = SessionBuilder(FORMAT, path)
    start = _export_start(data)
    if start < 0:
        raise LoadError(f"{path}: not an opencode export (no JSON object in the file)")
    if start > 0:
        builder.info(1, "leading-text", f"{start} bytes before the JSON object ignored")
    try:
        document = orjson.loads(data[start:])
    except orjson.JSONDecodeError as exc:
        raise LoadError(
            f"{path}: not valid JSON at line {exc.lineno} ({exc.msg}); a truncated export?"
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        raise LoadError(f"{path}: not an opencode export (no 'info' and 'messages')")
    info = as_dict(document.get("info"))
    records: list[MessageRecords] = []
    where: list[str] = []
    for number, entry in enumerate(document["messages"], 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("info"), dict):
            builder.diagnostic(
                None, "bad-message", f"messages[{number - 1}] has no 'info', skipped"
            )
            continue
        raw_parts = entry.get("parts")
        parts = [p for p in raw_parts if isinstance(p, dict)] if isinstance(raw_parts, list) else []
        records.append((entry["info"], parts))
        where.append(f"messages[{number - 1}]")
    builder.metadata["source"] = "export"
    return build_session(builder, info, records, progress, where)


# -- registry interface --------------------------------------------------------------------


def _sniff_db(path: Path) -> float:
    try:
        conn = connect_readonly(path)
    except sqlite3.Error:
        try:
            conn = connect_readonly(path, immutable=True)
        except sqlite3.Error:
            return 0.3
    try:
        tables = {
            str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    except sqlite3.Error:
        return 0.3
    finally:
        conn.close()
    if {"session", "message", "part"} <= tables:
        return 0.95
    return 0.55 if path.name.startswith("opencode") else 0.1


def sniff(path: Path, head: bytes) -> float:
    """Confidence that ``path`` is an opencode export, storage folder/file or database."""
    try:
        path, _ = _split_fragment(Path(path))
        if storage_layout(path) is not None:
            return 0.9
        if path.is_dir():
            return 0.85 if (path / "opencode.db").is_file() else 0.0
        if head.startswith(SQLITE_MAGIC):
            return _sniff_db(path)
        return _sniff_export(head)
    except OSError:
        return 0.0


def _sniff_export(head: bytes) -> float:
    start = _export_start(head)
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


def load(path: Path, *, progress: ProgressCallback | None = None) -> Session:
    """Load an opencode session from an export, a storage folder/file or ``opencode.db``.

    ``path#<session id>`` selects one session of a database or storage folder; without it the
    newest top-level session is loaded. Nothing is ever written.
    """
    path, wanted = _split_fragment(Path(path))
    if not path.exists():
        raise LoadError(f"{path}: no such file or directory")
    storage = storage_layout(path)
    if storage is not None:
        layout, session_file = storage
        return load_storage(layout, session_file, wanted, progress)
    if path.is_dir():
        if (path / "opencode.db").is_file():
            return _load_db(path / "opencode.db", wanted, progress)
        raise LoadError(f"{path}: a folder that is neither opencode storage nor holds opencode.db")
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if magic == SQLITE_MAGIC:
        return _load_db(path, wanted, progress)
    return _load_export(path, progress)


def iter_db_session_ids(db_path: Path) -> Iterator[str]:
    """Ids of every session in an opencode database (read-only), newest first."""
    conn = connect_readonly(db_path)
    try:
        columns = _columns(conn, "session")
        order = "time_updated" if "time_updated" in columns else "id"
        rows = conn.execute(f"SELECT id FROM session ORDER BY {order} DESC").fetchall()
    finally:
        conn.close()
    for (session_id,) in rows:
        yield str(session_id)
