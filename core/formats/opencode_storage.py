"""opencode's JSON-file storage: one JSON file per session, message and part, in two layouts.

* **1.x** (opencode 0.6 – 1.1, ``~/.local/share/opencode/storage``)::

      session/<project>/<session id>.json
      message/<session id>/<message id>.json
      part/<message id>/<part id>.json

* **0.x** (before 0.6, one storage folder per project,
  ``~/.local/share/opencode/project/<project folder>/storage``)::

      session/info/<session id>.json
      session/message/<session id>/<message id>.json
      session/part/<session id>/<message id>/<part id>.json

  opencode's first storage migration (``storage/storage.ts``, ``MIGRATIONS[0]``) copies these
  files unchanged into the 1.x places, so the records have the same shape in both layouts.

Pass the storage folder, its parent, or one session's JSON file. Ids are time-ordered, so the
messages are sorted by ``time.created`` then id, and the parts by id.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import orjson

from core.formats.base import LoadError, ProgressCallback, SessionBuilder
from core.formats.opencode_messages import (
    MessageRecords,
    Record,
    as_dict,
    build_session,
    json_record,
    time_created,
)
from core.model.read_numbers import as_int
from core.model.session import Session, SourceFormat


class Layout(NamedTuple):
    """Where one storage layout keeps each kind of record, under its ``root`` folder."""

    root: Path
    version: str
    """``1.x`` or ``0.x``."""

    def session_files(self) -> Iterator[Path]:
        """Every session's JSON file."""
        if self.version == "0.x":
            yield from _json_files(self.root / "session" / "info")
            return
        folder = self.root / "session"
        for project in sorted(folder.iterdir()) if folder.is_dir() else []:
            if project.is_dir():
                yield from _json_files(project)

    def message_folder(self, session_id: str) -> Path:
        """The folder of one session's message files."""
        if self.version == "0.x":
            return self.root / "session" / "message" / session_id
        return self.root / "message" / session_id

    def part_folder(self, session_id: str, message_id: str) -> Path:
        """The folder of one message's part files."""
        if self.version == "0.x":
            return self.root / "session" / "part" / session_id / message_id
        return self.root / "part" / message_id


def _layout_at(root: Path) -> Layout | None:
    if (root / "session").is_dir() and (root / "message").is_dir():
        return Layout(root, "1.x")
    if (root / "session" / "info").is_dir() and (root / "session" / "message").is_dir():
        return Layout(root, "0.x")
    return None


def storage_layout(path: Path) -> tuple[Layout, Path | None] | None:
    """``(layout, session file or None)`` when ``path`` is a storage folder, its parent, or a
    session file in one; None otherwise."""
    if path.is_dir():
        for root in (path, path / "storage"):
            layout = _layout_at(root)
            if layout is not None:
                return layout, None
        return None
    if path.suffix != ".json":
        return None
    if path.parent.name == "info" and path.parent.parent.name == "session":
        layout = _layout_at(path.parent.parent.parent)
        if layout is not None and layout.version == "0.x":
            return layout, path
    if path.parent.parent.name == "session":
        layout = _layout_at(path.parent.parent.parent)
        if layout is not None and layout.version == "1.x":
            return layout, path
    return None


def _read_json_file(path: Path, builder: SessionBuilder) -> Record | None:
    try:
        data = path.read_bytes()
    except OSError as exc:
        builder.diagnostic(
            None, "unreadable", f"{path.name}: cannot read ({exc.strerror}), skipped"
        )
        return None
    return json_record(data, path.name, builder)


def _json_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
    except OSError:
        return []


def _choose_session(layout: Layout, wanted: str | None) -> Path:
    """The session file named ``wanted``, else the newest top-level session's."""
    candidates: list[tuple[int, int, str, Path]] = []
    for file in layout.session_files():
        if wanted is not None:
            if file.stem == wanted:
                return file
            continue
        try:
            info = orjson.loads(file.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if not isinstance(info, dict):
            continue
        top_level = 0 if info.get("parentID") else 1
        time = as_dict(info.get("time"))
        updated = as_int(time.get("updated")) or as_int(time.get("created"))
        candidates.append((top_level, updated, file.stem, file))
    if wanted is not None:
        raise LoadError(f"{layout.root}: no session {wanted!r} in this storage folder")
    if not candidates:
        raise LoadError(f"{layout.root}: the opencode storage folder holds no session")
    return max(candidates)[3]


def _records(layout: Layout, session_id: str, builder: SessionBuilder) -> list[MessageRecords]:
    loaded: list[tuple[int, str, Record]] = []
    for file in _json_files(layout.message_folder(session_id)):
        record = _read_json_file(file, builder)
        if record is not None:
            record.setdefault("id", file.stem)
            loaded.append((time_created(record), str(record["id"]), record))
    loaded.sort(key=lambda item: (item[0], item[1]))
    records: list[MessageRecords] = []
    for _, msg_id, record in loaded:
        parts: list[Record] = []
        for file in _json_files(layout.part_folder(session_id, msg_id)):
            part = _read_json_file(file, builder)
            if part is not None:
                part.setdefault("id", file.stem)
                parts.append(part)
        parts.sort(key=lambda p: str(p.get("id")))
        records.append((record, parts))
    return records


def load_storage(
    layout: Layout,
    session_file: Path | None,
    wanted: str | None,
    progress: ProgressCallback | None,
) -> Session:
    """The session ``session_file`` (else ``wanted``, else the newest top-level one)."""
    if session_file is None:
        session_file = _choose_session(layout, wanted)
    builder = SessionBuilder(SourceFormat.OPENCODE, session_file)
    info = _read_json_file(session_file, builder)
    if info is None:
        raise LoadError(f"{session_file}: the opencode session file is not readable JSON")
    session_id = str(info.get("id") or session_file.stem)
    records = _records(layout, session_id, builder)
    builder.metadata["source"] = "storage"
    if layout.version != "1.x":
        builder.metadata["storage_layout"] = layout.version
    builder.metadata["sessions_in_source"] = sum(1 for _ in layout.session_files())
    return build_session(builder, info, records, progress)
