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
* **SQLite** ``opencode.db`` (opencode ≥ 1.2), opened read-only: see
  :mod:`core.formats.opencode_db`.

A folder or database holds many sessions: the newest top-level one (not a sub-agent session) is
loaded, or the one named after a ``#``: ``opencode.db#ses_abc`` / ``storage#ses_abc``.

The records become messages in :mod:`core.formats.opencode_messages`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson

from core.formats.base import LoadError, ProgressCallback, SessionBuilder
from core.formats.opencode_db import connect_readonly as connect_readonly
from core.formats.opencode_db import load_db
from core.formats.opencode_messages import (
    INTERRUPTED_TOOL_OUTPUT as INTERRUPTED_TOOL_OUTPUT,
)
from core.formats.opencode_messages import (
    MessageRecords,
    as_dict,
    build_session,
)
from core.formats.opencode_storage import load_storage, storage_layout
from core.formats.sniffers import SQLITE_MAGIC as SQLITE_MAGIC
from core.formats.sniffers import opencode_export_start, sniff_opencode_export
from core.model.session import Session, SourceFormat

FORMAT = SourceFormat.OPENCODE
PARTIAL_READS = False
"""An export is one JSON document and a database or folder is not read in order: no first part."""


def _split_fragment(path: Path) -> tuple[Path, str | None]:
    """``x.db#ses_1`` → ``(x.db, "ses_1")`` when ``x.db`` exists and the whole name does not."""
    text = str(path)
    if "#" in path.name and not path.exists():
        base, _, fragment = text.rpartition("#")
        if base and Path(base).exists():
            return Path(base), fragment or None
    return path, None


# -- export JSON ---------------------------------------------------------------------------


def _load_export(path: Path, progress: ProgressCallback | None) -> Session:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    builder = SessionBuilder(FORMAT, path)
    start = opencode_export_start(data)
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
    if {"session", "message", "part"} <= tables or {"session", "session_message"} <= tables:
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
        return sniff_opencode_export(head)
    except OSError:
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
            return load_db(path / "opencode.db", wanted, progress)
        raise LoadError(f"{path}: a folder that is neither opencode storage nor holds opencode.db")
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if magic == SQLITE_MAGIC:
        return load_db(path, wanted, progress)
    return _load_export(path, progress)
