"""opencode's SQLite database ``opencode.db`` (opencode ≥ 1.2), read-only.

Tables ``session``, ``message`` and ``part``; the ``data`` column of a message or part row holds
the record without its ids, which are merged back here. A session with no ``message`` rows is
read from opencode 2's ``session_message`` table when there is one
(:mod:`core.formats.opencode_v2`). The database is opened read-only
(``mode=ro``); when it is locked or cannot be opened that way, it is opened ``immutable`` and a
diagnostic says recent uncheckpointed writes may be missing. A database with no ``-wal`` or
``-journal`` file beside it (no write under way: every write is in the file) is opened
``immutable`` from the start, so that reading it creates no ``-wal`` or ``-shm`` file beside the user's database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson

from core.formats.base import LoadError, ProgressCallback, SessionBuilder
from core.formats.opencode_messages import MessageRecords, Record, build_session, json_record
from core.formats.opencode_v2 import Rows, session_message_records
from core.model.session import Session, SourceFormat

BUSY_TIMEOUT_S = 1.0
"""How long a read waits on a locked database before falling back to an immutable open."""


def connect_readonly(db_path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    """Open an SQLite database read-only (``mode=ro``, or ``immutable=1``), never writing it.

    The connection is checked with one query, so a locked or unreadable database raises
    :class:`sqlite3.Error` here rather than later.
    """
    real = db_path.resolve()
    if not any(Path(f"{real}{suffix}").exists() for suffix in ("-wal", "-journal")):
        immutable = True  # no write under way to miss; and mode=ro alone makes -wal and -shm
    uri = real.as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
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


def columns_of(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


_NEEDED = {
    "session": {"id"},
    "message": {"id", "session_id", "data"},
    "part": {"id", "message_id", "data"},
    "session_message": {"id", "session_id", "type", "data"},
}
"""The tables read and the columns each must have."""


def _check_schema(conn: sqlite3.Connection, db_path: Path) -> dict[str, set[str]]:
    """The columns of each readable table: ``session``, and ``message`` with ``part`` (1.x) or
    ``session_message`` (2.x) or both. A LoadError says what is missing otherwise."""
    tables = {
        str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    columns: dict[str, set[str]] = {}
    problems: dict[str, str] = {}
    for table, required in _NEEDED.items():
        if table not in tables:
            problems[table] = f"no '{table}' table"
            continue
        columns[table] = columns_of(conn, table)
        missing = required - columns[table]
        if missing:
            problems[table] = f"'{table}' lacks {', '.join(sorted(missing))}"
            del columns[table]
    v1 = "message" in columns and "part" in columns
    if "session" not in columns or not (v1 or "session_message" in columns):
        found = ", ".join(sorted(tables)) or "none"
        shown = [problems[t] for t in _NEEDED if t in problems and t != "session_message"]
        raise LoadError(
            f"{db_path}: not an opencode database this version of ctxscope can read "
            f"({'; '.join(shown)}; tables found: {found})"
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
            "model",
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


def load_db(db_path: Path, wanted: str | None, progress: ProgressCallback | None) -> Session:
    builder = SessionBuilder(SourceFormat.OPENCODE, db_path)
    conn = _open_db(db_path, builder)
    try:
        try:
            columns = _check_schema(conn, db_path)
            row = _choose_db_session(conn, columns["session"], wanted, db_path)
            session_id = str(row["id"])
            records: list[MessageRecords] = []
            where: list[str] | None = None
            if "message" in columns and "part" in columns:
                records = _db_records(conn, columns, session_id, builder)
            if not records and "session_message" in columns:
                rows = _session_message_rows(conn, columns["session_message"], session_id, builder)
                records, where = session_message_records(rows, builder)
                builder.metadata["table"] = "session_message"
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
        "model": _model_column(row.get("model")),
        "time": {"created": row.get("time_created"), "updated": row.get("time_updated")},
    }
    builder.metadata["source"] = "sqlite"
    builder.metadata["sessions_in_source"] = int(sessions_in_db)
    if not records:
        builder.diagnostic(
            None,
            "no-messages",
            f"session {session_id} has no rows in the message or session_message table",
        )
    return build_session(builder, info, records, progress, where)


def _model_column(value: Any) -> Any:
    """The session's ``model`` column (JSON ``{id, providerID, variant?}``), parsed."""
    if isinstance(value, str | bytes):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _session_message_rows(
    conn: sqlite3.Connection, columns: set[str], session_id: str, builder: SessionBuilder
) -> Rows:
    """The ``session_message`` rows of one session, in the order they were written."""
    order = next((c for c in ("seq", "time_created") if c in columns), "rowid")
    rows: Rows = []
    for row_id, kind, data in conn.execute(
        f"SELECT id, type, data FROM session_message WHERE session_id = ? ORDER BY {order}, id",
        (session_id,),
    ):
        record = json_record(data, f"session_message {row_id}", builder)
        if record is not None:
            rows.append((str(row_id), str(kind), record))
    return rows
